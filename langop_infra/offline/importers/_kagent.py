"""kagent (``kagent.dev``): Agent (declarative or BYO), ModelConfig, RemoteMCPServer, and
kmcp's MCPServer, as ``go/api/v1alpha2`` and ``v1alpha3`` define them (docs/migration.md
names the commit). A RemoteMCPServer becomes an ``mcpServers`` entry of each agent that
references it; an MCPServer becomes a tool, and a reference to it a tool reference."""

from __future__ import annotations

from langop_infra.offline.importers._common import (
    Converter,
    Imported,
    Json,
    Manifest,
    compact,
    drop_status,
    env_map,
    items,
    leftovers,
    mapping,
    note,
    refuse,
    resources,
)

GROUP = "kagent.dev"
PROVIDERS = {
    "OpenAI": "openai",
    "Anthropic": "anthropic",
    "AzureOpenAI": "azure",
    "Ollama": "ollama",
    "Bedrock": "bedrock",
    "GeminiVertexAI": "vertex",
    "AnthropicVertexAI": "vertex",
}
# The images kmcp's controller picks when a manifest names none (transportadapter_translator).
_KMCP_IMAGES = "node:24-alpine3.21 for npx, ghcr.io/astral-sh/uv:debian for uvx"
_PROVIDER_BLOCKS = {
    "openAI": "baseUrl",
    "anthropic": "baseUrl",
    "ollama": "host",
    "azureOpenAI": "azureEndpoint",
}


def _number(value: object) -> float | int | None:
    """kagent writes temperatures as strings ("0.7")."""
    if value is None or value == "":
        return None
    try:
        number = float(str(value))
    except ValueError:
        return None
    return int(number) if number.is_integer() and not isinstance(value, str) else number


def model_config(m: Manifest, out: Imported) -> None:
    spec = m.spec
    provider = str(spec.get("provider", ""))
    entry: Json = {
        "name": m.name,
        "namespace": m.namespace,
        "provider": PROVIDERS.get(provider, provider.lower()),
        "modelName": spec.get("model"),
    }
    if provider not in PROVIDERS:
        note(
            out,
            m,
            "spec.provider",
            f"{provider!r} has no equivalent provider here",
            "use openai-compatible with its endpoint, or custom",
        )
    if spec.get("apiKeySecret"):
        key = spec.get("apiKeySecretKey") or "api-key"
        entry["apiKey"] = {"secretKeyRef": {"name": spec["apiKeySecret"], "key": key}}
        out.secret(str(spec["apiKeySecret"]))
    handled = {"provider", "model", "apiKeySecret", "apiKeySecretKey"}
    for block, url_key in _PROVIDER_BLOCKS.items():
        settings = mapping(spec.get(block))
        if not settings:
            continue
        handled.add(block)
        entry["endpoint"] = settings.get(url_key)
        entry["configuration"] = compact(
            {
                "temperature": _number(settings.get("temperature")),
                "topP": _number(settings.get("topP")),
                "maxTokens": settings.get("maxTokens"),
            }
        )
        for key in sorted(set(settings) - {url_key, "temperature", "topP", "maxTokens"}):
            note(
                out,
                m,
                f"spec.{block}.{key}",
                "the gateway takes no such setting here",
                "leave it out, or configure LiteLLM directly",
            )
    leftovers(
        out,
        m,
        spec,
        handled,
        {
            "tls": ("the gateway trusts the system CAs", "build a gateway image with your CA"),
            "defaultHeaders": ("no per-model headers here", "configure LiteLLM directly"),
        },
    )
    drop_status(out, m)
    out.add("models", compact(entry))


# Fields kagent shows in its UI that have no place on an agent here, each with what to do.
_STREAM = (
    "kagent streams the answer to its UI; an agent here answers each A2A message whole",
    "nothing to do (a2a.streaming advertises streaming, for a runtime that streams)",
)
_DESCRIPTION = (
    "an agent's description here is its A2A card's, and the agent serves A2A only with a2a",
    "if it serves A2A, set a2a.description (and a2a.skills) to it",
)


def remote_mcp_server(m: Manifest, out: Imported) -> None:
    spec = m.spec
    server: Json = {"name": m.name, "url": spec.get("url"), "timeout": spec.get("timeout")}
    headers: list[Json] = []
    for i, ref in enumerate(map(mapping, items(spec.get("headersFrom")))):
        source = mapping(ref.get("valueFrom"))
        if ref.get("value") is not None:
            headers.append({"name": ref.get("name"), "value": ref.get("value")})
        elif source.get("type") == "Secret":
            headers.append(
                {
                    "name": ref.get("name"),
                    "valueFrom": {
                        "secretKeyRef": {"name": source.get("name"), "key": source.get("key")}
                    },
                }
            )
            out.secret(str(source.get("name")))
        else:
            note(
                out,
                m,
                f"spec.headersFrom[{i}]",
                "only literal and Secret headers carry over",
                "give the header a value or a Secret",
            )
    server["headers"] = headers
    if spec.get("protocol") == "SSE":
        note(
            out,
            m,
            "spec.protocol",
            "SSE is the legacy MCP transport",
            "the agent's client falls back to it on its own; nothing to do",
        )
    out.remote_servers[(m.namespace, m.name)] = compact(server)
    leftovers(
        out,
        m,
        spec,
        {"url", "timeout", "headersFrom", "protocol"},
        {
            "description": (
                "an external MCP server here has no description; the agent reads its tools'",
                "keep it as a comment in the stack file if you want it",
            ),
            "sseReadTimeout": ("one timeout per server here", "timeout covers it"),
            "terminateOnClose": ("sessions end with the agent here", "nothing to do"),
        },
    )
    drop_status(out, m)


def mcp_server(m: Manifest, out: Imported) -> None:
    """kmcp's MCPServer: a workload, so a tool."""
    spec = m.spec
    deployment = mapping(spec.get("deployment"))
    entry: Json = {
        "name": m.name,
        "namespace": m.namespace,
        "image": deployment.get("image") or out.tool_images.get(m.name),
        "port": deployment.get("port"),
    }
    if not entry["image"]:
        refuse(
            out,
            m,
            "spec.deployment.image",
            f"kmcp picks an image from cmd ({_KMCP_IMAGES}); a stack names it, and the image "
            "must also hold mcp-proxy 0.13.0, the bridge that serves a stdio server here",
            f"pass --tool-image {m.name}=<an image holding {deployment.get('cmd') or 'the command'}"
            " and mcp-proxy 0.13.0>",
        )
    command = [str(deployment["cmd"])] if deployment.get("cmd") else []
    if spec.get("transportType", "stdio") == "stdio":
        entry["transport"] = "stdio"
        entry["command"] = command or None
        entry["args"] = deployment.get("args")
    else:
        entry["command"] = command or None
        entry["args"] = deployment.get("args")
        path = mapping(spec.get("httpTransport")).get("path")
        entry["mcpPath"] = path
    entry["env"], entry["secretEnv"] = env_map(out, m, deployment.get("env"), "spec.deployment.env")
    entry["resources"] = resources(deployment.get("resources"))
    leftovers(
        out,
        m,
        deployment,
        {"image", "port", "cmd", "args", "env", "resources"},
        {},
        prefix="spec.deployment",
    )
    leftovers(out, m, spec, {"deployment", "transportType", "stdioTransport", "httpTransport"}, {})
    drop_status(out, m)
    out.add("tools", compact(entry))


def _tool_refs(out: Imported, m: Manifest, tools: list[Json], entry: Json) -> None:
    refs: list[Json] = []
    servers: list[Json] = []
    for i, item in enumerate(tools):
        server = mapping(item.get("mcpServer"))
        kind = server.get("kind", "MCPServer")
        names = server.get("toolNames")
        ns = server.get("namespace") or m.namespace
        if item.get("type", "McpServer") != "McpServer" or not server:
            note(
                out,
                m,
                f"spec.declarative.tools[{i}]",
                "agent-to-agent tools are not wired here",
                "call the other agent over A2A from your agent",
            )
        elif kind == "RemoteMCPServer":
            found = out.remote_servers.get((ns, str(server.get("name"))))
            if found is None:
                note(
                    out,
                    m,
                    f"spec.declarative.tools[{i}]",
                    "its RemoteMCPServer was not among the imported files",
                    "import it in the same run",
                )
                continue
            # The filter is the agent's, not the server's: each agent gets its own copy.
            servers.append({**found, "allowedTools": names} if names else found)
        else:
            refs.append(compact({"name": server.get("name"), "allowedTools": names}))
    entry["tools"], entry["mcpServers"] = refs, servers


def agent(m: Manifest, out: Imported) -> None:
    spec = m.spec
    declarative = mapping(spec.get("declarative"))
    byo = mapping(mapping(spec.get("byo")).get("deployment"))
    deployment = byo or mapping(declarative.get("deployment"))
    entry: Json = {
        "name": m.name,
        "namespace": m.namespace,
        "image": byo.get("image") or out.agent_image,
    }
    if not entry["image"]:
        note(
            out,
            m,
            "spec.declarative",
            "kagent runs declarative agents on its own runtime image",
            "set image to your agent's image, or pass --agent-image",
        )
    entry["instructions"] = declarative.get("systemMessage")
    entry["model"] = declarative.get("modelConfig")
    if entry["model"] and not any(e["name"] == entry["model"] for e in out.entries["models"]):
        note(
            out,
            m,
            "spec.declarative.modelConfig",
            f"ModelConfig {entry['model']!r} was not among the imported files",
            "import it in the same run, or declare the model",
        )
    _tool_refs(out, m, [mapping(t) for t in items(declarative.get("tools"))], entry)
    entry["replicas"] = deployment.get("replicas")
    entry["command"] = [byo["cmd"]] if byo.get("cmd") else None
    entry["args"] = byo.get("args")
    entry["env"], entry["secretEnv"] = env_map(out, m, deployment.get("env"), "spec.deployment.env")
    entry["resources"] = resources(deployment.get("resources"))
    handled = {"systemMessage", "modelConfig", "tools", "deployment"}
    leftovers(out, m, declarative, handled, {"stream": _STREAM}, prefix="spec.declarative")
    leftovers(out, m, spec, {"type", "declarative", "byo"}, {"description": _DESCRIPTION})
    drop_status(out, m)
    out.add("agents", compact(entry))


CONVERTERS: dict[tuple[str, str], Converter] = {
    (GROUP, "Agent"): agent,
    (GROUP, "SandboxAgent"): agent,
    (GROUP, "ModelConfig"): model_config,
    (GROUP, "RemoteMCPServer"): remote_mcp_server,
    (GROUP, "MCPServer"): mcp_server,
}
