"""Built-in tools of the tool kit (AgentLab's ``agentlab/mcp/tools``)."""

from langop_infra.toolkit.tools._datetime_tool import DateTimeTool

__all__ = ["DateTimeTool"]
