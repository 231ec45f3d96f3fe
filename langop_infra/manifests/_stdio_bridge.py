"""A stdio-only MCP server as an ordinary tool: its command runs under mcp-proxy, which
serves MCP over streamable HTTP at ``/mcp`` on the tool's port (and ``GET /status``).

mcp-proxy (PyPI, sparfenyuk/mcp-proxy) keeps one long-lived child for every session and
takes the server's command as argv (no shell quoting); see docs/design.md for the choice.
The container keeps the restricted settings: npx/uvx get a writable HOME and caches on an
emptyDir, the root filesystem stays read-only.
"""

from __future__ import annotations

from langop_infra.config.tool import ToolSpec
from langop_infra.manifests._contract import EnvVar
from langop_infra.manifests._k8s_types import ContainerDict, VolumeDict

# The bridge release the builder's arguments are written for (and CI tests against).
MCP_PROXY_VERSION = "0.13.0"
BRIDGE_COMMAND = "mcp-proxy"
BRIDGE_HEALTH_PATH = "/status"
BRIDGE_HOME = "/home/mcp"
BRIDGE_HOME_VOLUME = "bridge-home"


def bridge_args(tool: ToolSpec) -> list[str]:
    """mcp-proxy's arguments: every interface of the pod on the tool's port, the container's
    env passed to the server, then the server's own command line after ``--``."""
    return [
        "--host",
        "0.0.0.0",
        "--port",
        str(tool.port),
        "--pass-environment",
        "--",
        *(tool.command or ()),
        *(tool.args or ()),
    ]


def bridge_env(tool: ToolSpec) -> list[EnvVar]:
    """HOME and the npm/uv/XDG caches on the writable emptyDir; the user's env wins."""
    values = {
        "HOME": BRIDGE_HOME,
        "npm_config_cache": f"{BRIDGE_HOME}/.npm",
        "XDG_CACHE_HOME": f"{BRIDGE_HOME}/.cache",
        "XDG_DATA_HOME": f"{BRIDGE_HOME}/.local/share",
        "UV_CACHE_DIR": f"{BRIDGE_HOME}/.cache/uv",
    }
    user = set(tool.env) | set(tool.secret_env)
    return [EnvVar(name, value=value) for name, value in values.items() if name not in user]


def bridged(container: ContainerDict, tool: ToolSpec) -> ContainerDict:
    """The tool's container running its stdio server behind the bridge."""
    out: ContainerDict = {**container}
    out["command"] = [BRIDGE_COMMAND]
    out["args"] = bridge_args(tool)
    out["env"] = [v.manifest() for v in bridge_env(tool)] + list(container["env"])
    out["volumeMounts"] = [
        *container["volumeMounts"],
        {"name": BRIDGE_HOME_VOLUME, "mountPath": BRIDGE_HOME},
    ]
    return out


def home_volume() -> VolumeDict:
    return {"name": BRIDGE_HOME_VOLUME, "emptyDir": {}}
