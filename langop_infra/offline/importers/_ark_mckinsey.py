"""McKinsey's Ark (``ark.mckinsey.com``, ``v1alpha1`` and ``v1prealpha1``), as
``ark/api/v1alpha1/*_types.go`` of ``mckinsey/agents-at-scale-ark`` defines it: an Agent
becomes an agent (``prompt`` its instructions, ``modelRef`` its model, ark's model named
``default`` when it names none); a Model a model; an MCPServer an ``mcpServers`` entry of each
agent whose ``mcp`` tools name it (those tools its ``allowedTools``); an http Tool an inline
webhook tool of each agent that names it. What has no equivalent here (Team, Memory,
A2AServer, Query, Evaluator, Evaluation, ExecutionEngine) is noted by kind."""

from __future__ import annotations

import re

from langop_infra.offline.importers._common import (
    Converter,
    Imported,
    Json,
    Manifest,
    compact,
    drop_status,
    items,
    leftovers,
    mapping,
    note,
    stack_label,
)

GROUP = "ark.mckinsey.com"
_PROVIDERS = {"openai": "openai", "azure": "azure", "bedrock": "bedrock", "anthropic": "anthropic"}
_UNMAPPED = {
    "Team": "a team runs its members in turn inside ark's controller; here each agent is "
    "deployed alone",
    "Memory": "ark's broker keeps conversation memory; here memory is a tool (memory:)",
    "A2AServer": "an external A2A agent; here peers are agents of the stack (a2a:)",
    "Query": "a query is a request to run, not configuration",
    "Evaluator": "evaluations are not deployed here",
    "Evaluation": "evaluations are not deployed here",
    "ExecutionEngine": "agents run langop-infra's or your image's runtime here",
}
_DESCRIBED = {
    "description": ("shown in ark's dashboard; nothing here shows it", "keep it as a comment"),
}
# Ark's tools and MCP servers by (namespace, name), for the agents read after them.
_SERVERS = "ark.mckinsey.com/MCPServer"
_TOOLS = "ark.mckinsey.com/Tool"


def _value(out: Imported, m: Manifest, field: Json, path: str) -> object:
    """A ``{value}`` or ``{valueFrom: {secretKeyRef}}`` field: the value, or the reference
    (its Secret listed); any other source is noted."""
    if "value" in field:
        return field["value"]
    ref = mapping(mapping(field.get("valueFrom")).get("secretKeyRef"))
    if ref:
        out.secret(str(ref.get("name")))
        return {"secretKeyRef": {"name": ref.get("name"), "key": ref.get("key")}}
    if field:
        note(out, m, path, "only a value or a Secret carries over", "set it by hand")
    return None


def model(m: Manifest, out: Imported) -> None:
    spec = m.spec
    kind = str(spec.get("type", ""))
    config = mapping(mapping(spec.get("config")).get(kind))
    entry: Json = {"name": stack_label(m.name), "namespace": m.namespace}
    entry["provider"] = _PROVIDERS.get(kind, "openai-compatible")
    entry["modelName"] = _value(out, m, mapping(spec.get("model")), "spec.model")
    endpoint = _value(out, m, mapping(config.get("baseUrl")), f"spec.config.{kind}.baseUrl")
    entry["endpoint"] = endpoint if isinstance(endpoint, str) else None
    key = _value(out, m, mapping(config.get("apiKey")), f"spec.config.{kind}.apiKey")
    entry["apiKey"] = key if isinstance(key, dict) else None
    if kind not in _PROVIDERS:
        note(out, m, "spec.type", f"{kind!r} is read as an OpenAI-compatible API", "check it")
    for field in sorted(set(config) - {"baseUrl", "apiKey"}):
        note(
            out,
            m,
            f"spec.config.{kind}.{field}",
            "the gateway takes no such setting here",
            "configure LiteLLM directly",
        )
    leftovers(out, m, spec, {"type", "model", "config"}, {})
    drop_status(out, m)
    out.add("models", compact(entry))


def mcp_server(m: Manifest, out: Imported) -> None:
    spec = m.spec
    address = mapping(spec.get("address"))
    service = mapping(mapping(address.get("valueFrom")).get("serviceRef"))
    url = address.get("value")
    if service:
        port = service.get("port")
        # A named Service port is the Service's business; 80 is what "http" usually is.
        number = f":{port}" if isinstance(port, int) else ""
        url = f"http://{service.get('name')}{number}{service.get('path', '')}"
        if port is not None and not isinstance(port, int):
            note(
                out,
                m,
                "spec.address.valueFrom.serviceRef.port",
                f"the Service's port named {port!r} is taken as port 80",
                "put the port's number in the agents' mcpServers url if it differs",
            )
    server: Json = {"name": m.name, "url": url, "timeout": spec.get("timeout")}
    headers = [
        {"name": h.get("name"), **_header(out, m, mapping(h.get("value")), i)}
        for i, h in enumerate(map(mapping, items(spec.get("headers"))))
    ]
    server["headers"] = headers
    if spec.get("transport") == "sse":
        note(
            out,
            m,
            "spec.transport",
            "SSE is the legacy MCP transport",
            "the agent's client falls back to it on its own; nothing to do",
        )
    out.extras.setdefault(_SERVERS, {})[(m.namespace, m.name)] = compact(server)
    _after_agents(out, m, "mcpServers")
    leftovers(out, m, spec, {"address", "timeout", "transport", "headers"}, _DESCRIBED)
    drop_status(out, m)


def _header(out: Imported, m: Manifest, value: Json, i: int) -> Json:
    found = _value(out, m, value, f"spec.headers[{i}].value")
    if isinstance(found, dict):
        return {"valueFrom": found}
    return {"value": found}


def tool(m: Manifest, out: Imported) -> None:
    spec = m.spec
    if spec.get("type") != "http":
        note(
            out,
            m,
            "spec.type",
            f"{spec.get('type')!r} tools run inside ark's controller",
            "serve it as a tool (tools:) or an HTTP tool",
        )
        return
    http = mapping(spec.get("http"))
    webhook: Json = {
        "name": m.name,
        "description": spec.get("description"),
        "url": http.get("url"),
        "method": http.get("method", "GET"),
        "inputSchema": spec.get("inputSchema"),
    }
    if re.search(r"\{[^}]+\}", str(http.get("url", ""))):
        note(
            out,
            m,
            "spec.http.url",
            "ark fills {placeholders} from the arguments; here a GET sends them as query "
            "parameters and a body method as JSON",
            "rewrite the URL without placeholders, or serve the API behind a tool",
        )
    out.extras.setdefault(_TOOLS, {})[(m.namespace, m.name)] = compact(webhook)
    _after_agents(out, m, "webhookTools")
    leftovers(out, m, spec, {"type", "http", "description", "inputSchema"}, {})
    leftovers(out, m, http, {"url", "method"}, {}, prefix="spec.http")
    drop_status(out, m)


def agent(m: Manifest, out: Imported) -> None:
    spec = m.spec
    ref = mapping(spec.get("modelRef"))
    entry: Json = {"name": m.name, "namespace": m.namespace, "image": out.agent_image}
    if not out.agent_image:
        note(
            out,
            m,
            "spec",
            "ark's controller runs the agent; a stack names its image",
            "set image to your agent runtime's image, or pass --agent-image",
        )
    entry["model"] = stack_label(str(ref.get("name") or "default"))
    entry["instructions"] = spec.get("prompt")
    handled = {"prompt", "modelRef", "tools"}
    leftovers(
        out,
        m,
        spec,
        handled,
        {
            "executionEngine": (_UNMAPPED["ExecutionEngine"], "set the agent's image"),
            "parameters": ("the prompt is used as written here", "write the values into prompt"),
            **_DESCRIBED,
        },
    )
    drop_status(out, m)
    out.add("agents", entry)
    out.finishers.append(lambda done: _agent_tools(done, m, entry))


def _agent_tools(out: Imported, m: Manifest, entry: Json) -> None:
    servers = out.extras.get(_SERVERS, {})
    tools = out.extras.get(_TOOLS, {})
    webhooks: list[Json] = []
    wired: dict[str, Json] = {}
    for i, item in enumerate(map(mapping, items(m.spec.get("tools")))):
        name, kind = str(item.get("name", "")), item.get("type")
        found = _server_of(servers, m.namespace, name) if kind == "mcp" else None
        if kind == "http" and (m.namespace, name) in tools:
            webhooks.append(tools[(m.namespace, name)])
        elif found is not None:
            server, tool_name = found
            copy = wired.setdefault(server["name"], {**server, "allowedTools": []})
            # Ark names a Tool after the server's tool with "_" spelt "-" (read_file:
            # read-file); both spellings are allowed, no other tool is.
            for spelling in dict.fromkeys([tool_name, tool_name.replace("-", "_")]):
                copy["allowedTools"].append(spelling)
        else:
            missing = kind in ("http", "mcp")
            why = "its Tool or MCPServer was not imported" if missing else "ark runs it itself"
            note(
                out,
                m,
                f"spec.tools[{i}]",
                f"a {kind} tool: {why}",
                "import it in the same run, or add it by hand",
            )
    entry["webhookTools"], entry["mcpServers"] = webhooks, list(wired.values())
    kept = compact(entry)  # the entry is already listed: trimmed in place
    entry.clear()
    entry.update(kept)


def _server_of(
    servers: dict[tuple[str | None, str], Json], namespace: str | None, tool: str
) -> tuple[Json, str] | None:
    """The MCPServer an ark mcp tool ``<server>-<tool>`` belongs to, and the tool's name."""
    for (ns, name), server in servers.items():
        if ns == namespace and tool.startswith(f"{name}-"):
            return server, tool[len(name) + 1 :]
    return None


def _after_agents(out: Imported, m: Manifest, section: str) -> None:
    """Once the agents have taken their tools (their finishers), a note when none took this
    one: it is not in the stack. A finisher added by a finisher runs after all the others."""

    def check(done: Imported) -> None:
        taken = {
            (a.get("namespace"), item.get("name"))
            for a in done.entries["agents"]
            for item in a.get(section, [])
        }
        if (m.namespace, m.name) not in taken:
            note(
                done,
                m,
                "metadata.name",
                f"no imported agent names this {m.kind}",
                "import the agents that use it in the same run",
            )

    out.finishers.append(lambda done: done.finishers.append(check))


def unmapped(m: Manifest, out: Imported) -> None:
    note(out, m, "kind", _UNMAPPED[m.kind], "not imported; see docs/migration.md")


CONVERTERS: dict[tuple[str, str], Converter] = {
    (GROUP, "Agent"): agent,
    (GROUP, "Model"): model,
    (GROUP, "MCPServer"): mcp_server,
    (GROUP, "Tool"): tool,
    **{(GROUP, kind): unmapped for kind in _UNMAPPED},
}
