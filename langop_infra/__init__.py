"""langop-infra: Pulumi components for MCP tool servers and the agents that use them."""

from __future__ import annotations

__version__ = "0.1.0"
