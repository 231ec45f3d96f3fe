"""When the runtime asks the model again (langop_infra.agent._retry)."""

from __future__ import annotations

from datetime import datetime, timezone
from email.utils import format_datetime

import httpx

from langop_infra.agent._retry import RETRY_AFTER_CAP, retriable, retry_after, retry_delay

NOW = datetime(2026, 11, 29, 3, 0, tzinfo=timezone.utc).timestamp()


def test_retry_after_reads_seconds_and_http_dates() -> None:
    later = format_datetime(datetime(2026, 11, 29, 3, 0, 12, tzinfo=timezone.utc), usegmt=True)
    assert retry_after("3", NOW) == 3.0
    assert retry_after(later, NOW) == 12.0
    assert retry_after("-4", NOW) == 0.0
    assert [retry_after(v, NOW) for v in (None, "", "soon")] == [None, None, None]


def test_what_is_retried() -> None:
    assert [retriable(s) for s in (429, 500, 502, 503, 504)] == [True] * 5
    assert [retriable(s) for s in (400, 401, 404, 413, 501)] == [False] * 5
    request = httpx.Request("POST", "http://m/chat/completions")
    assert retriable(error=httpx.ConnectError("refused", request=request))
    assert retriable(error=httpx.RemoteProtocolError("closed", request=request))
    assert not retriable(error=httpx.ReadTimeout("slow", request=request))


def test_the_delay_is_what_retry_after_asked_up_to_the_cap_else_a_backoff() -> None:
    assert retry_delay(0, 7.0) == 7.0
    assert retry_delay(0, 3600.0) == RETRY_AFTER_CAP
    assert [0.25 <= retry_delay(0) <= 0.5, 2.0 <= retry_delay(3) <= 4.0] == [True, True]
    assert 4.0 <= retry_delay(10) <= 8.0  # capped
