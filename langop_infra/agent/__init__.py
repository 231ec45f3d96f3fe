"""The agent-side library that agent images import: read ``/etc/agent/config.yaml`` and
``MCP_SERVERS``, and offer every server's tools through one registry. Knows nothing of Pulumi
or Kubernetes objects."""
