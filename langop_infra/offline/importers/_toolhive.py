"""ToolHive (``toolhive.stacklok.dev``) MCPServer: a tool, as
``cmd/thv-operator/api/v1beta1/mcpserver_types.go`` defines it (docs/migration.md names the
commit). ToolHive runs a stdio server behind its own proxy; here the mcp-proxy bridge in
the tool's container does, so a stdio server needs the command that starts it (from the
manifest's ``mcp`` container, else ``--tool-command``)."""

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

GROUP = "toolhive.stacklok.dev"


def _secrets(out: Imported, m: Manifest) -> dict[str, Json]:
    """``secrets: [{name, key, targetEnvName}]`` as ``secretEnv`` references."""
    found: dict[str, Json] = {}
    for ref in map(mapping, items(m.spec.get("secrets"))):
        env = str(ref.get("targetEnvName") or str(ref.get("key", "")).upper().replace("-", "_"))
        found[env] = {"secretKeyRef": {"name": ref.get("name"), "key": ref.get("key")}}
        out.secret(str(ref.get("name")))
    return found


def _mcp_container(spec: Json) -> Json:
    """The ``mcp`` container of ``podTemplateSpec``: where a manifest names the server's own
    command and probes (ToolHive's proxy answers ``/health`` itself, the server need not)."""
    pod = mapping(mapping(spec.get("podTemplateSpec")).get("spec"))
    found = [c for c in map(mapping, items(pod.get("containers"))) if c.get("name") == "mcp"]
    return found[0] if found else {}


def _probes(entry: Json, container: Json, port: object) -> None:
    """Probes that the server answers: its own HTTP health path when the manifest's ``mcp``
    container names one, else a TCP probe on its port (never ``GET /health``)."""
    path = mapping(mapping(container.get("readinessProbe")).get("httpGet")).get("path")
    if entry.get("transport") == "stdio":
        return  # the bridge serves its own /status
    if isinstance(path, str) and path.startswith("/"):
        entry["healthPath"] = path
        return
    # One dict per probe: a shared one would be written as a YAML anchor and alias.
    entry["probes"] = {
        kind: {"tcpSocket": {"port": port or 8080}} for kind in ("liveness", "readiness", "startup")
    }


def _stdio(entry: Json, m: Manifest, out: Imported, container: Json) -> None:
    """A stdio server behind the mcp-proxy bridge: the command from the ``mcp`` container
    when the manifest gives one (image unchanged), else from ``--tool-command``; with
    neither the import is refused, since ToolHive runs the image's entrypoint, which the
    manifest does not name."""
    entry["transport"] = "stdio"
    entry["port"] = m.spec.get("proxyPort")
    command = [str(c) for c in items(container.get("command"))] or out.tool_commands.get(m.name)
    if not command:
        refuse(
            out,
            m,
            "spec.transport",
            "a stdio server runs here under the mcp-proxy bridge, which starts it from its "
            "command line; ToolHive runs the image's entrypoint, which the manifest does not name",
            f"pass --tool-command '{m.name}=<the entrypoint and its arguments>' (and "
            f"--tool-image {m.name}=<an image that also holds mcp-proxy 0.13.0> unless this "
            "one does)",
        )
        return
    entry["command"] = command
    note(
        out,
        m,
        "spec.transport",
        "ToolHive attaches its proxy to the container's stdio; here mcp-proxy starts the "
        "server's command in the same container",
        "the image must also hold mcp-proxy 0.13.0 (docs/deploying.md); "
        f"if it does not, pass --tool-image {m.name}=<one that does>",
    )


def mcp_server(m: Manifest, out: Imported) -> None:
    spec = m.spec
    entry: Json = {"name": m.name, "namespace": m.namespace, "image": spec.get("image")}
    transport = spec.get("transport", "stdio")
    container = _mcp_container(spec)
    entry["args"] = spec.get("args")
    if transport == "stdio":
        _stdio(entry, m, out, container)
        if spec.get("proxyMode") == "sse":
            note(
                out,
                m,
                "spec.proxyMode",
                "the bridge serves streamable HTTP at /mcp, not SSE",
                "nothing to do for the agents here: they speak streamable HTTP",
            )
    else:
        entry["port"] = spec.get("mcpPort") or spec.get("proxyPort")
        if transport == "sse":
            note(
                out,
                m,
                "spec.transport",
                "a tool here serves streamable HTTP on mcpPath; "
                "legacy SSE servers are reached by the agent's client, not synced",
                "set mcpPath to the server's SSE path, or disable schemaSync",
            )
    _probes(entry, container, entry.get("port"))
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
            "podTemplateSpec": (
                "only the mcp container's command and readinessProbe path carry over",
                "set the rest with the tool's pod settings (probes, volumes, nodeSelector)",
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
