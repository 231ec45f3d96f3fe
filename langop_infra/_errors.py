"""The root of every exception langop-infra raises on purpose, and nothing else.

It imports nothing, so every layer, the standalone MCP client included, can derive from it.
"""


class LangopError(Exception):
    """Root of every exception langop-infra raises on purpose."""
