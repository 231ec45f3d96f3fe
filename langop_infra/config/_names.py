"""Names the package gives things, in one place: env vars an agent reads, paths every pod
mounts, and the names of generated objects. Validation checks against these and the builders
use them, so a rule and the thing it guards cannot drift apart.
"""

import re

CONFIG_DIR = "/etc/agent"
CONFIG_PATH = "/etc/agent/config.yaml"
DEFAULT_MCP_PATH = "/mcp"
TMP_DIR = "/tmp"
# Mounted in every pod by the components: /tmp (writable), /etc/agent (config.yaml).
RESERVED_MOUNTS = (TMP_DIR, CONFIG_DIR)

MCP_SERVERS_ENV = "MCP_SERVERS"
AGENT_MCP_SERVERS_ENV = "AGENT_MCP_SERVERS"
AGENT_WEBHOOK_TOOLS_ENV = "AGENT_WEBHOOK_TOOLS"
AGENT_CONFIG_PATH_ENV = "AGENT_CONFIG_PATH"
# A2A, scheduled mode and memory (docs/agent-contract.md).
A2A_ENV = ("A2A_PORT", "A2A_PATH", "A2A_AGENT_CARD", "A2A_PEERS")
SCHEDULE_ENV = ("AGENT_MODE", "AGENT_INPUT")
MEMORY_ENV = ("AGENT_MEMORY_ENDPOINT", "AGENT_MEMORY_TYPE")
RESERVED_AGENT_ENV = frozenset(
    {
        MCP_SERVERS_ENV,
        AGENT_MCP_SERVERS_ENV,
        AGENT_WEBHOOK_TOOLS_ENV,
        AGENT_CONFIG_PATH_ENV,
        *A2A_ENV,
        *SCHEDULE_ENV,
        *MEMORY_ENV,
    }
)
HEADER_ENV_PREFIX = "ARK_MCP_"
WEBHOOK_ENV_PREFIX = "AGENT_WEBHOOK_"
TOOL_HEADER_ENV_PREFIX = "LANGOP_TOOL_"
PEER_HEADER_ENV_PREFIX = "A2A_PEER_"
MEMORY_HEADER_ENV_PREFIX = "AGENT_MEMORY_HEADER_"
RESERVED_AGENT_ENV_PREFIXES = (
    HEADER_ENV_PREFIX,
    WEBHOOK_ENV_PREFIX,
    TOOL_HEADER_ENV_PREFIX,
    PEER_HEADER_ENV_PREFIX,
    MEMORY_HEADER_ENV_PREFIX,
)
A2A_CARD_DIR = "/etc/agent/a2a"
A2A_CARD_FILE = "agent-card.json"

DEFAULT_DENY_NAME = "default-deny-ingress"


def env_token(text: str) -> str:
    """Upper case, every character outside ``A-Z0-9`` turned into ``_`` (ark's env naming)."""
    return re.sub(r"[^A-Z0-9]", "_", text.upper())


def header_env_name(server: str, header: str) -> str:
    """``ARK_MCP_<SERVER>_HEADER_<HEADER>``: the env var that carries an MCP server's header."""
    return f"{HEADER_ENV_PREFIX}{env_token(server)}_HEADER_{env_token(header)}"


def tool_header_env_name(tool: str, header: str) -> str:
    """``LANGOP_TOOL_<TOOL>_HEADER_<HEADER>``: a header an agent sends to a LanguageTool."""
    return f"{TOOL_HEADER_ENV_PREFIX}{env_token(tool)}_HEADER_{env_token(header)}"


def webhook_auth_env_name(tool: str) -> str:
    """``AGENT_WEBHOOK_<TOOL>_AUTH``: the env var carrying a webhook tool's credential."""
    return f"{WEBHOOK_ENV_PREFIX}{env_token(tool)}_AUTH"


def workload_secret_name(workload: str) -> str:
    """The Secret holding a tool's or agent's literal secret values, keyed by env var name."""
    return f"{workload}-env"


def config_map_name(agent: str) -> str:
    return f"{agent}-config"


def http_tool_config_map_name(tool: str) -> str:
    """``<tool>.http-tool``: an HttpTool's ConfigMap. Other generated names hold no '.', so
    this clashes with none of them."""
    return f"{tool}.http-tool"


def tool_ingress_name(tool: str) -> str:
    return f"{tool}-ingress"


def agent_ingress_name(agent: str) -> str:
    return f"{agent}-ingress"


def agent_egress_name(agent: str) -> str:
    return f"{agent}-egress"


def tool_egress_name(tool: str) -> str:
    return f"{tool}-egress"


def cross_namespace_name(tool: str, agent_namespace: str, agent: str) -> str:
    """``<tool>.from.<ns>.<agent>``: tool, namespace and agent names hold no '.', so the name
    is injective (``x-y`` in ``n`` and ``y`` in ``n-x`` stay apart) and, unlike every other
    generated policy name, contains dots, so it cannot equal one of them."""
    return f"{tool}.from.{agent_namespace}.{agent}"


def workspace_claim_name(agent: str) -> str:
    return f"{agent}-workspace"


def initial_files_name(agent: str) -> str:
    """The ConfigMap holding an agent's ``workspace.initialFiles``."""
    return f"{agent}-initial-files"


def peer_header_env_name(peer: str, header: str) -> str:
    """``A2A_PEER_<PEER>_HEADER_<HEADER>``: a header an agent sends to an A2A peer."""
    return f"{PEER_HEADER_ENV_PREFIX}{env_token(peer)}_HEADER_{env_token(header)}"


def caller_token_env_name(caller: str) -> str:
    """``A2A_CALLER_<CALLER>_TOKEN``: a caller's bearer token, on the agent it calls."""
    return f"A2A_CALLER_{env_token(caller)}_TOKEN"


def caller_identity_env_name(caller: str) -> str:
    """``A2A_CALLER_<CALLER>_IDENTITY``: the subject a caller's verified token must name."""
    return f"A2A_CALLER_{env_token(caller)}_IDENTITY"


def peer_token_file_env_name(peer: str) -> str:
    """``A2A_PEER_<PEER>_TOKEN_FILE``: where an agent reads the projected service-account
    token it sends to a peer that lists it by identity."""
    return f"{PEER_HEADER_ENV_PREFIX}{env_token(peer)}_TOKEN_FILE"


def peer_token_env_name(peer: str) -> str:
    """``A2A_PEER_<PEER>_TOKEN``: the bearer token an agent sends to an A2A peer of the stack."""
    return f"{PEER_HEADER_ENV_PREFIX}{env_token(peer)}_TOKEN"


def memory_header_env_name(header: str) -> str:
    """``AGENT_MEMORY_HEADER_<HEADER>``: a header an agent sends to its external memory."""
    return f"{MEMORY_HEADER_ENV_PREFIX}{env_token(header)}"


def a2a_card_config_map_name(agent: str) -> str:
    """The ConfigMap holding an A2A agent's card (key ``agent-card.json``)."""
    return f"{agent}-a2a-card"


def a2a_ingress_name(agent: str) -> str:
    """The policy admitting an A2A agent's same-namespace callers to its A2A port."""
    return f"{agent}-a2a-ingress"


def a2a_cross_namespace_name(callee: str, caller_namespace: str, caller: str) -> str:
    """``<callee>.a2a-from.<ns>.<caller>``: dotted like :func:`cross_namespace_name`, and
    apart from it by ``a2a-from``."""
    return f"{callee}.a2a-from.{caller_namespace}.{caller}"
