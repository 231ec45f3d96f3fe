"""OAuth client authentication as a strict token endpoint reads it (RFC 6749 §2.3.1).

The test token endpoints (tests/mcp/test_http_tools.py's ``Recorder``, the client-credentials
stand-in in tests/mcp/servers/oauth_servers.py) read credentials through this module.
"""

from __future__ import annotations

import base64
import binascii
from urllib.parse import unquote, unquote_plus


def basic_credentials(header: str) -> tuple[str, str]:
    """The client id and secret of a ``client_secret_basic`` ``Authorization`` header.

    RFC 6749 §2.3.1: the id and secret are form-urlencoded, then joined by ``:`` and base64
    encoded. Form decoding reads ``+`` as a space; the MCP SDK's server
    (mcp/server/auth/middleware/client_auth.py) decodes with ``unquote``, which keeps it. A
    client must be understood by both, so both decodings must agree: a raw ``+``, or an
    undecoded ``%`` that happens to look like an escape, fails here. ``ValueError`` for any
    header that is not Basic, not base64, not UTF-8, has no ``:`` or decodes two ways.
    """
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        raise ValueError("not Basic authentication")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError("not base64 of UTF-8") from None
    if ":" not in decoded:
        raise ValueError("no ':' between client id and secret")
    raw_id, raw_secret = decoded.split(":", 1)
    parts = []
    for raw in (raw_id, raw_secret):
        try:
            form, url = unquote_plus(raw, errors="strict"), unquote(raw, errors="strict")
        except UnicodeDecodeError:
            raise ValueError("a %-escape that is not UTF-8") from None
        if form != url:
            raise ValueError("'+' is ambiguous: not form-urlencoded as RFC 6749 §2.3.1 says")
        parts.append(form)
    return parts[0], parts[1]
