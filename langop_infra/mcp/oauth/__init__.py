"""OAuth 2.1 for the MCP client, as the MCP authorization spec asks of clients.

    auth = OAuth2Auth(client_id="ci", client_secret=os.environ["SECRET"])  # client credentials
    auth = OAuth2Auth(redirect=LoopbackRedirect(open_browser=True))         # a person logs in
    async with Session(url, ClientOptions(auth=auth)) as session: ...

Tokens live in the ``OAuth2Auth`` object's memory only, per server origin; they are never
logged, and never part of an error message.
"""

from __future__ import annotations

from langop_infra.mcp.oauth._errors import OAuthError
from langop_infra.mcp.oauth._flow import GRANTS, OAuth2Auth
from langop_infra.mcp.oauth._redirect import FollowRedirect, LoopbackRedirect, RedirectHandler

__all__ = [
    "GRANTS",
    "FollowRedirect",
    "LoopbackRedirect",
    "OAuth2Auth",
    "OAuthError",
    "RedirectHandler",
]
