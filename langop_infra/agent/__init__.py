"""The agent-side library that agent images import: read ``/etc/agent/config.yaml`` and
``MCP_SERVERS``, and offer every server's tools through one registry; and the built-in agent
runtime (``python -m langop_infra.agent serve``). Knows nothing of Pulumi or Kubernetes
objects.

a2a-sdk is used without its gRPC parts: its gRPC handler and transport load googleapis'
``google/rpc/status.proto``, whose ``google.rpc.Status`` Pulumi's SDK also defines (as
``google/protobuf/status.proto``), and one protobuf descriptor pool cannot hold both, so a
process that imported one could not import the other. The runtime speaks A2A over JSON-RPC
only, and a2a-sdk treats a gRPC module that cannot be imported as gRPC not installed.
"""

import sys

for _grpc_module in (
    "a2a.server.request_handlers.grpc_handler",
    "a2a.client.transports.grpc",
    "a2a.utils.grpc_status",
):
    sys.modules.setdefault(_grpc_module, None)  # pyright: ignore[reportArgumentType]
