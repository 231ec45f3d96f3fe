"""A time budget for one authorization's network requests, a person's time left out.

Every request of the flow (resource and authorization server metadata, registration, the
token request) is bounded per request by httpx's timeout, but a server that sends one byte
a second never trips a per-read timeout. The budget bounds them all together; the time a
person spends at a login page is not counted (the redirect handler bounds that itself).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from langop_infra.mcp._http import display_url
from langop_infra.mcp._timeouts import timeout_after
from langop_infra.mcp.oauth._errors import OAuthError


class Budget:
    """``seconds`` to share between the blocks run under :meth:`spend` (None: unbounded)."""

    def __init__(self, seconds: float | None, url: str) -> None:
        self.seconds = seconds
        self.left = seconds
        self._url = url

    def spent(self) -> bool:
        """Whether the budget has run out."""
        return self.left is not None and self.left <= 0

    @asynccontextmanager
    async def spend(self) -> AsyncGenerator[None, None]:
        """Run the block within what is left; raise :class:`OAuthError` when it runs out."""
        started = time.monotonic()
        try:
            async with timeout_after(None if self.left is None else max(self.left, 0.0)):
                yield
        except TimeoutError:
            shown = display_url(self._url)
            raise OAuthError(
                f"authorizing for {shown} did not finish within the {self.seconds:g}s "
                "deadline: its resource metadata, authorization server or token endpoint "
                "is too slow; check them, or raise the deadline (--timeout)",
                target=shown,
            ) from None
        finally:
            if self.left is not None:
                self.left -= time.monotonic() - started
