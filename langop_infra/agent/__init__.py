"""The agent-side library that agent images import: read ``/etc/agent/config.yaml`` and
``MCP_SERVERS``, and offer every server's tools through one registry; and the built-in agent
runtime (``python -m langop_infra.agent serve``). Knows nothing of Pulumi or Kubernetes
objects.

a2a-sdk is used without its gRPC parts, which cannot share a process with Pulumi's SDK:
``_a2a_sdk`` imports it so, and leaves ``sys.modules`` as it was.
"""
