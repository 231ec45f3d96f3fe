"""The root of every exception langop-infra raises on purpose, and the one mark that stands
for a secret an error message (or a render, or an output) leaves out.

It imports nothing, so every layer, the standalone MCP client included, can use both.
"""

# The one mark that stands for a secret wherever one is left out: rendered manifests,
# outputs, scrubbed error messages.
REDACTED = "[secret]"


class LangopError(Exception):
    """Root of every exception langop-infra raises on purpose."""
