"""The one map of URL schemes to their default ports, and a URL's effective port.

In the MCP client because it imports nothing of the package but the error root; the other
layers import it from here.
"""

from __future__ import annotations

from typing import overload

DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443}


@overload
def effective_port(scheme: str, port: int | None) -> int | None: ...
@overload
def effective_port(scheme: str, port: int | None, default: int) -> int: ...


def effective_port(scheme: str, port: int | None, default: int | None = None) -> int | None:
    """``port`` when the URL names one, else its scheme's default port (``default`` for a
    scheme without one)."""
    return port or DEFAULT_PORTS.get(scheme.lower(), default)
