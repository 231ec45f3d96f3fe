"""The agent runtime's a2a-sdk is imported without its gRPC parts (they cannot share a
descriptor pool with Pulumi's ``google.rpc.Status``), and the process is left as it was:
importing ``langop_infra.agent`` or its A2A modules marks no module as missing for good."""

from __future__ import annotations

import json
import subprocess
import sys

GRPC = (
    "a2a.server.request_handlers.grpc_handler",
    "a2a.client.transports.grpc",
    "a2a.utils.grpc_status",
)


def run(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_runtime_leaves_sys_modules_as_it_was() -> None:
    found = run(
        "import json, sys\n"
        "import langop_infra.agent\n"
        "import langop_infra.agent._a2a_server, langop_infra.agent._a2a_client\n"
        f"marks = {{m: m in sys.modules for m in {GRPC!r}}}\n"
        "from a2a.server.request_handlers import GrpcHandler\n"
        "import a2a.utils.grpc_status  # another library's import still works\n"
        "print(json.dumps({'marks': marks, 'placeholder': 'Placeholder' in GrpcHandler.__doc__}))"
    )
    assert found == {"marks": dict.fromkeys(GRPC, False), "placeholder": True}


def test_the_runtime_and_pulumis_status_share_a_process() -> None:
    found = run(
        "import json\n"
        "import langop_infra.agent._a2a_server, langop_infra.agent._a2a_client\n"
        "import pulumi.runtime.proto.status_pb2 as status\n"
        "print(json.dumps({'status': status.DESCRIPTOR.name}))"
    )
    assert found == {"status": "google/protobuf/status.proto"}
