"""ark-operator (``arkonis.dev/v1alpha1``) ArkAgent: ``model``, ``systemPrompt``,
``mcpServers`` (headers included) and ``tools`` (inline webhook tools) are read by an agent
entry as written; the rest is mapped or noted. The fields follow ark's ArkAgent reference
page and ``api/v1alpha1/arkagent_types.go`` (docs/migration.md names the commit)."""

from __future__ import annotations

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
)

GROUP = "arkonis.dev"
# ark's runtime reads these from env (internal/agent/config/config.go): the limits carry over.
_LIMIT_ENV = {"maxTokensPerCall": "AGENT_MAX_TOKENS", "timeoutSeconds": "AGENT_TIMEOUT_SECONDS"}


def _mcp_servers(out: Imported, spec: Json) -> list[Json]:
    servers: list[Json] = []
    for server in map(mapping, items(spec.get("mcpServers"))):
        for header in map(mapping, items(server.get("headers"))):
            ref = mapping(mapping(header.get("valueFrom")).get("secretKeyRef"))
            if ref:
                out.secret(str(ref.get("name")))
        servers.append(server)
    return servers


def _limits(out: Imported, m: Manifest, entry: Json) -> None:
    limits = mapping(m.spec.get("limits"))
    env: dict[str, str] = {}
    for key, value in limits.items():
        if key in _LIMIT_ENV:
            env[_LIMIT_ENV[key]] = str(value)
        else:
            note(
                out,
                m,
                f"spec.limits.{key}",
                "ark's operator enforces it; nothing here does",
                "leave it out, or enforce it in the agent",
            )
    entry["env"] = env


def ark_agent(m: Manifest, out: Imported) -> None:
    spec = m.spec
    entry: Json = {"name": m.name, "namespace": m.namespace}
    entry["image"] = out.agent_image
    if not entry["image"]:
        note(
            out,
            m,
            "spec",
            "ark's operator chooses the agent image; a stack names it",
            "set image to ark's agent runtime image, or pass --agent-image",
        )
    entry["replicas"] = spec.get("replicas")
    entry["model"] = spec.get("model")
    entry["systemPrompt"] = spec.get("systemPrompt")
    entry["mcpServers"] = _mcp_servers(out, spec)
    entry["tools"] = items(spec.get("tools"))  # webhook tools: the agent entry reads them
    _limits(out, m, entry)
    handled = {"replicas", "model", "systemPrompt", "mcpServers", "tools", "limits"}
    leftovers(
        out,
        m,
        spec,
        handled,
        {
            "livenessProbe": ("semantic probes are ark's", "set probes with an httpGet probe"),
            "systemPromptRef": (
                "a prompt is read from a ConfigMap at reconcile time upstream",
                "copy the ConfigMap's text into instructions",
            ),
            "configRef": ("ArkSettings have no equivalent", "merge them into instructions"),
            "memoryRef": ("ArkMemory has no equivalent", "run the memory store as a tool"),
        },
    )
    drop_status(out, m)
    out.add("agents", compact(entry))


CONVERTERS: dict[tuple[str, str], Converter] = {(GROUP, "ArkAgent"): ark_agent}
