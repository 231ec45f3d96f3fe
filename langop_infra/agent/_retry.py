"""When to ask the model again: on HTTP 429 and 5xx and on connection errors, after a
backoff that grows with each attempt (with jitter) or what the model's ``Retry-After`` says,
and never past the turn's deadline."""

from __future__ import annotations

import random
from email.utils import parsedate_to_datetime

import httpx

__all__ = ["MAX_RETRIES", "RETRY_AFTER_CAP", "retriable", "retry_after", "retry_delay"]

MAX_RETRIES = 3
BASE_SECONDS = 0.5
CAP_SECONDS = 8.0
RETRY_AFTER_CAP = 60.0  # a Retry-After longer than this is not waited for
RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
# The request never reached the model, or the connection broke: asking again is safe. A read
# timeout is not retried: the model may still be working on the first request.
RETRIED_ERRORS = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)


def retriable(status: int | None = None, error: Exception | None = None) -> bool:
    """Whether an answer with ``status``, or a request that raised ``error``, is retried."""
    if error is not None:
        return isinstance(error, RETRIED_ERRORS)
    return status in RETRIED_STATUS


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date, against the
    epoch time ``now``); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError, IndexError):
        return None


def retry_delay(attempt: int, asked: float | None = None) -> float:
    """Seconds before retry number ``attempt + 1``: what ``Retry-After`` asked (up to
    ``RETRY_AFTER_CAP``), else an exponential backoff with jitter (agents that failed together
    do not ask again in step)."""
    if asked is not None:
        return min(asked, RETRY_AFTER_CAP)
    return min(CAP_SECONDS, BASE_SECONDS * 2**attempt) * random.uniform(0.5, 1.0)
