"""ToolHive (``toolhive.stacklok.dev``) MCPServer: a tool, as
``cmd/thv-operator/api/v1beta1/mcpserver_types.go`` defines it (docs/migration.md names the
commit). ToolHive runs a stdio server behind its own proxy; here the mcp-proxy bridge in
the tool's container does, so a stdio server needs the command that starts it."""

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
    resources,
)

GROUP = "toolhive.stacklok.dev"


def _secrets(out: Imported, m: Manifest) -> dict[str, Json]:
    """``secrets: [{name, key, targetEnvName}]`` as ``secretEnv`` references."""
    found: dict[str, Json] = {}
    for ref in map(mapping, items(m.spec.get("secrets"))):
        env = str(ref.get("targetEnvName") or str(ref.get("key", "")).upper().replace("-", "_"))
        found[env] = {"secretKeyRef": {"name": ref.get("name"), "key": ref.get("key")}}
        out.secret(str(ref.get("name")))
    return found


def mcp_server(m: Manifest, out: Imported) -> None:
    spec = m.spec
    entry: Json = {"name": m.name, "namespace": m.namespace, "image": spec.get("image")}
    transport = spec.get("transport", "stdio")
    if transport == "stdio":
        entry["transport"] = "stdio"
        entry["port"] = spec.get("proxyPort")
        note(
            out,
            m,
            "spec.transport",
            "the image's entrypoint is the stdio server; here the mcp-proxy bridge starts it",
            "set command to the server's command line, in an image that also holds mcp-proxy",
        )
        entry["args"] = spec.get("args")
    else:
        entry["port"] = spec.get("mcpPort") or spec.get("proxyPort")
        entry["args"] = spec.get("args")
        if transport == "sse":
            note(
                out,
                m,
                "spec.transport",
                "a tool here serves streamable HTTP on mcpPath; "
                "legacy SSE servers are reached by the agent's client, not synced",
                "set mcpPath to the server's SSE path, or disable schemaSync",
            )
    env, secret_env = env_map(out, m, spec.get("env"), "spec.env")
    entry["env"] = env
    entry["secretEnv"] = {**secret_env, **_secrets(out, m)}
    entry["resources"] = resources(spec.get("resources"))
    entry["replicas"] = spec.get("replicas")
    handled = {
        "image",
        "transport",
        "proxyPort",
        "mcpPort",
        "args",
        "env",
        "secrets",
        "resources",
        "replicas",
        "proxyMode",
    }
    leftovers(
        out,
        m,
        spec,
        handled,
        {
            "toolsFilter": (
                "the filter belongs to each agent here",
                "set allowedTools on the agents' tool references",
            ),
            "toolConfigRef": (
                "overrides belong to each agent here",
                "set overrides on the agents' tool references",
            ),
            "permissionProfile": (
                "pods get the restricted Pod Security profile here",
                "use egress/egressTo for network permissions",
            ),
            "oidcConfigRef": (
                "the tool authenticates its own callers here",
                "give agents headers on their tool references",
            ),
        },
    )
    drop_status(out, m)
    out.add("tools", compact(entry))


CONVERTERS: dict[tuple[str, str], Converter] = {(GROUP, "MCPServer"): mcp_server}
