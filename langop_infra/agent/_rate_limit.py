"""An HTTP tool's rate limit: ``rateLimit`` read strictly, and the token bucket that keeps it.

A hand-edited ``config.yaml`` must not turn a rate limit into none: 0, a negative number or
a string in ``requestsPerMinute`` or ``burst`` makes the tool unusable with a message naming
the field (:func:`rate_limit`), instead of meaning "unlimited" or crashing the registry.
"""

from __future__ import annotations

import time
from typing import Any, cast

from langop_infra._errors import LangopError


class RateLimitProblem(LangopError):
    """A ``rateLimit`` the agent cannot keep; the message names the field."""


def rate_limit(where: str, limit: object) -> tuple[int | None, int | None]:
    """``rateLimit``'s requestsPerMinute and burst: whole numbers of at least 1, or absent."""
    if limit is None:
        return None, None
    if not isinstance(limit, dict):
        raise RateLimitProblem(f"{where}.rateLimit: must be a mapping (requestsPerMinute, burst)")
    found: list[int | None] = []
    for key in ("requestsPerMinute", "burst"):
        value: object = cast("dict[str, Any]", limit).get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise RateLimitProblem(
                f"{where}.rateLimit.{key}: must be a whole number of at least 1 (remove "
                "rateLimit for no limit)"
            )
        found.append(value)
    return found[0], found[1]


class TokenBucket:
    """``burst`` tokens, refilled at ``per_minute`` a minute; a caller reserves the next one.

    :meth:`reserve` answers how long to wait for a token, or ``None`` when that is longer
    than the caller may wait (then nothing is taken). Reserving ahead keeps concurrent
    callers in order without a lock held across the wait.
    """

    def __init__(self, per_minute: float, burst: int, clock: Any = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(burst)
        self.tokens = float(burst)
        self._clock = clock
        self._updated = clock()

    def reserve(self, max_wait: float) -> float | None:
        now = self._clock()
        self.tokens = min(self.capacity, self.tokens + (now - self._updated) * self.rate)
        self._updated = now
        wait = 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate
        if wait > max_wait:
            return None
        self.tokens -= 1
        return wait
