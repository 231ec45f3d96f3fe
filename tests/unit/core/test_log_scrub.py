"""The one log handler: what it masks, which levels it sets, and what it gives back."""

from __future__ import annotations

import logging

import pytest

from langop_infra._errors import LangopError
from langop_infra.core import _log_scrub
from langop_infra.core._log_scrub import log_level, scrub_log_text, scrubbed_logging, watch
from langop_infra.core._redact import Scrubber


def test_levels_are_checked_and_folded() -> None:
    assert log_level(None, "INFO") == "INFO"
    assert log_level(" debug ", "INFO") == "DEBUG"
    with pytest.raises(LangopError, match=r"LANGOP_LOG_LEVEL='loud': use one of DEBUG, INFO"):
        log_level("loud", "WARNING")


def test_the_block_sets_and_gives_back_levels_and_handlers() -> None:
    root, httpx_log = logging.getLogger(), logging.getLogger("httpx")
    before = (root.level, list(root.handlers), httpx_log.level)
    with scrubbed_logging("INFO") as handler:
        assert (root.level, httpx_log.level, logging.getLogger("httpcore").level) == (
            logging.INFO,
            logging.WARNING,
            logging.WARNING,
        )
        assert root.handlers[-1] is handler
    with scrubbed_logging("DEBUG"):
        assert (root.level, httpx_log.level) == (logging.DEBUG, logging.NOTSET)
    assert (root.level, list(root.handlers), httpx_log.level) == before


def test_lines_are_masked_keeping_newlines_and_escaping_controls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    watch(Scrubber("known-credential-77"))
    with scrubbed_logging("WARNING", "%(levelname)s %(message)s"):
        logging.getLogger("x").warning("a %s\nb \x1b[2J c", "known-credential-77 sent")
        logging.getLogger("x").info("not shown")
    assert capsys.readouterr().err == "WARNING a [secret] sent\nb \\u001b[2J c\n"


def test_a_scrubber_is_watched_once_and_learns_later() -> None:
    scrubber = Scrubber()
    count = len(_log_scrub._WATCHED)  # pyright: ignore[reportPrivateUsage]
    assert watch(scrubber) is scrubber and watch(scrubber) is scrubber
    assert len(_log_scrub._WATCHED) == count + 1  # pyright: ignore[reportPrivateUsage]
    scrubber.add("learned-afterwards-99")
    assert scrub_log_text("x learned-afterwards-99 y") == "x [secret] y"
    assert scrub_log_text("GET http://u:p@h/a?apikey=v&b=w") == (
        "GET http://[secret]@h/a?apikey=[secret]&b=[secret]"
    )
