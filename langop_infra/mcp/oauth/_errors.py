"""The OAuth error, and scrubbing secrets out of anything that becomes a message."""

from __future__ import annotations

from collections.abc import Iterable

from langop_infra._errors import REDACTED
from langop_infra.mcp._errors import MCPClientError


class OAuthError(MCPClientError):
    """Authorization failed: discovery, registration, the user's consent or a token request.

    The message never carries a token, a client secret or an authorization code.
    """

    kind = "oauth"


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-trivial secret value replaced by the redaction mark."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return text
