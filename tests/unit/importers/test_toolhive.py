"""``offline/importers/_toolhive.py``: a ToolHive MCPServer as a tool entry and its notes."""

from __future__ import annotations

from typing import Any

from langop_infra.offline.importers._common import Imported, Manifest, Note
from langop_infra.offline.importers._toolhive import CONVERTERS, GROUP, mcp_server

SOURCE = "f.yaml: MCPServer/osv"


def converted(spec: dict[str, Any], out: Imported | None = None, **document: Any) -> Imported:
    out = out or Imported()
    manifest = Manifest(
        {
            "apiVersion": f"{GROUP}/v1beta1",
            "kind": "MCPServer",
            "metadata": {"name": "osv", "namespace": "tools"},
            "spec": spec,
            **document,
        },
        "f.yaml",
    )
    mcp_server(manifest, out)
    return out


def tool_of(out: Imported) -> dict[str, Any]:
    [tool] = out.entries["tools"]
    return tool


def tcp(port: int) -> dict[str, Any]:
    return {k: {"tcpSocket": {"port": port}} for k in ("liveness", "readiness", "startup")}


def test_the_converter_is_registered_for_toolhives_group() -> None:
    assert GROUP == "toolhive.stacklok.dev"
    assert {("toolhive.stacklok.dev", "MCPServer"): mcp_server} == CONVERTERS


def test_a_streamable_http_server_is_probed_on_its_mcp_port() -> None:
    out = converted(
        {
            "image": "ghcr.io/a/osv:1",
            "transport": "streamable-http",
            "mcpPort": 9090,
            "proxyPort": 8080,
            "args": ["--verbose"],
            "replicas": 2,
            "resources": {"limits": {"cpu": "1", "memory": "1Gi", "gpu": "1"}},
        }
    )
    assert tool_of(out) == {
        "name": "osv",
        "namespace": "tools",
        "image": "ghcr.io/a/osv:1",
        "args": ["--verbose"],
        "port": 9090,
        "probes": tcp(9090),
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
        "replicas": 2,
    }
    assert out.notes == [] and out.refusals == []
    probes = tool_of(out)["probes"]
    assert probes["liveness"] is not probes["readiness"]  # no YAML anchors


def test_the_proxy_port_serves_when_there_is_no_mcp_port_and_8080_when_neither() -> None:
    out = converted({"image": "i:1", "transport": "streamable-http", "proxyPort": 7070})
    assert (tool_of(out)["port"], tool_of(out)["probes"]) == (7070, tcp(7070))
    out = converted({"image": "i:1", "transport": "streamable-http"})
    assert "port" not in tool_of(out)
    assert tool_of(out)["probes"] == tcp(8080)


def test_a_readiness_path_of_the_mcp_container_is_the_health_path() -> None:
    containers = [
        {"name": "other", "readinessProbe": {"httpGet": {"path": "/other"}}},
        {"name": "mcp", "readinessProbe": {"httpGet": {"path": "/healthz", "port": 9090}}},
        {"name": "mcp", "readinessProbe": {"httpGet": {"path": "/second"}}},
    ]
    out = converted(
        {
            "image": "i:1",
            "transport": "streamable-http",
            "mcpPort": 9090,
            "podTemplateSpec": {"spec": {"containers": containers}},
        }
    )
    tool = tool_of(out)
    assert (tool["healthPath"], "probes" in tool) == ("/healthz", False)
    assert out.notes == [
        Note(
            SOURCE,
            "spec.podTemplateSpec",
            "only the mcp container's command and readinessProbe path carry over",
            "set the rest with the tool's pod settings (probes, volumes, nodeSelector)",
        )
    ]


def test_a_relative_or_missing_path_gives_tcp_probes() -> None:
    for probe in ({"httpGet": {"path": "healthz"}}, {"httpGet": {"path": 8}}, {"exec": {}}):
        pod = {"spec": {"containers": [{"name": "mcp", "readinessProbe": probe}]}}
        spec = {
            "image": "i:1",
            "transport": "streamable-http",
            "mcpPort": 9,
            "podTemplateSpec": pod,
        }
        tool = tool_of(converted(spec))
        assert (tool["probes"], "healthPath" in tool) == (tcp(9), False), probe


def test_an_sse_server_is_noted() -> None:
    out = converted({"image": "i:1", "transport": "sse", "mcpPort": 9})
    assert tool_of(out)["probes"] == tcp(9)
    assert out.notes == [
        Note(
            SOURCE,
            "spec.transport",
            "a tool here serves streamable HTTP on mcpPath; legacy SSE servers are reached by "
            "the agent's client, not synced",
            "set mcpPath to the server's SSE path, or disable schemaSync",
        )
    ]


BRIDGE_NOTE = Note(
    SOURCE,
    "spec.transport",
    "ToolHive attaches its proxy to the container's stdio; here mcp-proxy starts the server's "
    "command in the same container",
    "the image must also hold mcp-proxy 0.13.0 (docs/deploying.md); if it does not, pass "
    "--tool-image osv=<one that does>",
)


def test_stdio_is_the_default_transport_and_needs_a_command() -> None:
    out = converted({"image": "i:1", "proxyPort": 8080, "mcpPort": 9})
    assert tool_of(out) == {
        "name": "osv",
        "namespace": "tools",
        "image": "i:1",
        "transport": "stdio",
        "port": 8080,
    }
    assert out.notes == []
    assert out.refusals == [
        Note(
            SOURCE,
            "spec.transport",
            "a stdio server runs here under the mcp-proxy bridge, which starts it from its "
            "command line; ToolHive runs the image's entrypoint, which the manifest does not "
            "name",
            "pass --tool-command 'osv=<the entrypoint and its arguments>' (and --tool-image "
            "osv=<an image that also holds mcp-proxy 0.13.0> unless this one does)",
        )
    ]


def test_a_stdio_command_comes_from_the_mcp_container_before_the_option() -> None:
    pod = {"spec": {"containers": [{"name": "mcp", "command": ["npx", 1]}]}}
    given = Imported(tool_commands={"osv": ["given"]})
    out = converted(
        {"image": "i:1", "transport": "stdio", "args": ["a"], "podTemplateSpec": pod}, given
    )
    tool = tool_of(out)
    assert (tool["command"], tool["args"], "probes" in tool) == (["npx", "1"], ["a"], False)
    assert out.notes[0] == BRIDGE_NOTE and out.refusals == []


def test_a_stdio_command_comes_from_the_option() -> None:
    out = converted({"image": "i:1"}, Imported(tool_commands={"osv": ["/bin/osv", "stdio"]}))
    assert tool_of(out)["command"] == ["/bin/osv", "stdio"]
    assert (out.notes, out.refusals) == ([BRIDGE_NOTE], [])


def test_an_sse_proxy_mode_is_noted_for_stdio_servers() -> None:
    given = Imported(tool_commands={"osv": ["x"]})
    out = converted({"image": "i:1", "transport": "stdio", "proxyMode": "sse"}, given)
    assert out.notes[1:] == [
        Note(
            SOURCE,
            "spec.proxyMode",
            "the bridge serves streamable HTTP at /mcp, not SSE",
            "nothing to do for the agents here: they speak streamable HTTP",
        )
    ]
    out = converted(
        {"image": "i:1", "proxyMode": "streamable-http"}, Imported(tool_commands={"osv": ["x"]})
    )
    assert out.notes == [BRIDGE_NOTE]


def test_env_and_secrets_become_env_and_secret_references() -> None:
    out = converted(
        {
            "image": "i:1",
            "transport": "streamable-http",
            "env": [{"name": "LOG_LEVEL", "value": "info"}],
            "secrets": [
                {"name": "gh", "key": "token", "targetEnvName": "GITHUB_TOKEN"},
                {"name": "db", "key": "db-pass-word"},
            ],
        }
    )
    tool = tool_of(out)
    assert tool["env"] == {"LOG_LEVEL": "info"}
    assert tool["secretEnv"] == {
        "GITHUB_TOKEN": {"secretKeyRef": {"name": "gh", "key": "token"}},
        "DB_PASS_WORD": {"secretKeyRef": {"name": "db", "key": "db-pass-word"}},
    }
    assert out.external_secrets == ["gh", "db"]
    assert out.notes == []


def test_a_secret_without_key_or_target_gets_an_empty_name_validate_refuses() -> None:
    out = converted(
        {"image": "i:1", "secrets": [{"name": "gh"}]}, Imported(tool_commands={"osv": ["x"]})
    )
    assert tool_of(out)["secretEnv"] == {"": {"secretKeyRef": {"name": "gh", "key": None}}}


def test_a_credential_literal_in_env_is_noted_at_its_path() -> None:
    out = converted(
        {
            "image": "i:1",
            "transport": "streamable-http",
            "env": [{"name": "A", "value": "1"}, {"name": "API_TOKEN", "value": "t0ken"}],
        }
    )
    assert tool_of(out)["secretEnv"] == {
        "API_TOKEN": {"secretKeyRef": {"name": "osv-credentials", "key": "API_TOKEN"}}
    }
    [note] = out.notes
    assert (note.source, note.field) == (SOURCE, "spec.env[1].value")


def test_a_secret_overrides_an_env_reference_of_the_same_name() -> None:
    out = converted(
        {
            "image": "i:1",
            "transport": "streamable-http",
            "env": [{"name": "T", "valueFrom": {"secretKeyRef": {"name": "a", "key": "k"}}}],
            "secrets": [{"name": "b", "key": "k", "targetEnvName": "T"}],
        }
    )
    assert tool_of(out)["secretEnv"] == {"T": {"secretKeyRef": {"name": "b", "key": "k"}}}


def test_every_other_field_is_noted_with_its_reason() -> None:
    out = converted(
        {
            "image": "i:1",
            "transport": "streamable-http",
            "toolsFilter": ["a"],
            "toolConfigRef": {"name": "c"},
            "permissionProfile": {"type": "builtin"},
            "oidcConfigRef": {"name": "o"},
            "telemetry": {},
        },
        status={"phase": "Running"},
    )
    assert [(n.field, n.why, n.todo) for n in out.notes] == [
        (
            "spec.toolsFilter",
            "the filter belongs to each agent here",
            "set allowedTools on the agents' tool references",
        ),
        (
            "spec.toolConfigRef",
            "overrides belong to each agent here",
            "set overrides on the agents' tool references",
        ),
        (
            "spec.permissionProfile",
            "pods get the restricted Pod Security profile here",
            "use egress/egressTo for network permissions",
        ),
        (
            "spec.oidcConfigRef",
            "the tool authenticates its own callers here",
            "give agents headers on their tool references",
        ),
        (
            "spec.telemetry",
            "langop-infra has no equivalent field",
            "set what it does by hand, or leave it out",
        ),
        (
            "status",
            "status is what a controller observed, not configuration",
            "dropped; langop-infra reports its own (stack outputs, `langop-infra outputs`)",
        ),
    ]
