"""Imports that deploy what the source deployed (issue 52 §3): ToolHive servers probed as
their transport allows (ToolHive's proxy answers ``/health``, its servers need not), stdio
servers under the bridge, kagent's ``toolNames`` kept as the agent's allowed tools (never
wider), language-operator's fallbacks as model names that validate, and every dropped field
noted. Each import is followed by ``validate`` as a user would run it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.agent._servers import offered
from langop_infra.agent.runtime import load_agent_servers
from langop_infra.cli.main import main
from tests.test_import import AGENT_IMAGE, FIXTURES, env_of, imported, rendered

ROOT = Path(__file__).resolve().parents[1]


def validate(config: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``langop-infra validate`` on ``config`` as a stack file; its stderr (asserts exit 0)."""
    (tmp_path / "Pulumi.yaml").write_text("name: langop-infra\nruntime: python\n")
    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(yaml.safe_dump({"config": config}))
    code = main(["validate", "--project-dir", str(tmp_path), "--config", str(stack)])
    err = capsys.readouterr().err
    assert code == 0, err
    return err


def field_of(line: str) -> str:
    """The manifest field a note names: ``langop-infra import: note: <file>: <Kind>/<name>:
    <field>: <why>; <todo>``."""
    return line.split(": ")[4]


def containers(out: Any, name: str, namespace: str) -> list[dict[str, Any]]:
    return out.find("Deployment", name, namespace)["spec"]["template"]["spec"]["containers"]


# --- ToolHive -------------------------------------------------------------------------


def test_toolhive_servers_are_probed_on_their_port_not_get_health(
    render: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, notes = imported(capsys, "toolhive-mcpserver_fetch.yaml")
    assert notes == []
    validate(config, tmp_path, capsys)
    container = containers(rendered(render, config), "fetch", "toolhive-system")[0]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["tcpSocket"] == {"port": 8080}, probe
        assert "httpGet" not in container[probe], probe


THV_HEALTH = """\
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPServer
metadata: {name: osv, namespace: tools}
spec:
  image: ghcr.io/stackloklabs/osv-mcp/server:0.1.0
  transport: streamable-http
  mcpPort: 9090
  podTemplateSpec:
    spec:
      containers:
        - name: mcp
          readinessProbe: {httpGet: {path: /healthz, port: 9090}}
"""

THV_STDIO = """\
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPServer
metadata: {name: everything, namespace: tools}
spec:
  image: ghcr.io/acme/everything-bridge:1.0.0
  transport: stdio
  proxyMode: sse
  proxyPort: 8080
  args: [stdio]
  podTemplateSpec:
    spec:
      containers:
        - name: mcp
          command: [npx, -y, "@modelcontextprotocol/server-everything"]
"""


def import_text(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], list[str]]:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text)
    assert main(["import", str(manifest)]) == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if line.startswith("langop-infra import")]
    return yaml.safe_load(captured.out)["config"], notes


def test_a_health_path_the_manifest_names_is_the_probe(
    render: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, notes = import_text(THV_HEALTH, tmp_path, capsys)
    assert config["langop-infra:tools"][0]["healthPath"] == "/healthz"
    assert [field_of(n) for n in notes] == ["spec.podTemplateSpec"]
    validate(config, tmp_path, capsys)
    container = containers(rendered(render, config), "osv", "tools")[0]
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": 9090}


def test_a_stdio_server_with_its_command_runs_under_the_bridge_in_its_own_image(
    render: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, notes = import_text(THV_STDIO, tmp_path, capsys)
    tool = config["langop-infra:tools"][0]
    assert (tool["transport"], tool["command"], tool["args"]) == (
        "stdio",
        ["npx", "-y", "@modelcontextprotocol/server-everything"],
        ["stdio"],
    )
    assert any("spec.transport" in n and "mcp-proxy 0.13.0" in n for n in notes)
    assert "spec.proxyMode" in [field_of(n) for n in notes]  # its clients spoke SSE
    validate(config, tmp_path, capsys)
    container = containers(rendered(render, config), "everything", "tools")[0]
    assert container["image"] == "ghcr.io/acme/everything-bridge:1.0.0"
    assert container["command"] == ["mcp-proxy"]
    assert container["args"][-4:] == [
        "npx",
        "-y",
        "@modelcontextprotocol/server-everything",
        "stdio",
    ]
    assert container["readinessProbe"]["httpGet"]["path"] == "/status"  # the bridge's own


# --- kagent ---------------------------------------------------------------------------

EVERYTHING_TOOLS = [
    "show-weather-dashboard",
    "echo",
    "get-sum",
    "get-tiny-image",
    "get-structured-content",
]


def test_kagent_tool_names_become_the_agents_allowed_tools(
    render: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, notes = imported(
        capsys,
        "kagent-server-everything-agent.yaml",
        "kagent-server-everything-remote-mcpserver.yaml",
        "kagent-architecture-modelconfig.yaml",
        extra=("--agent-image", AGENT_IMAGE),
    )
    assert not any("toolNames" in n for n in notes)
    agent = config["langop-infra:agents"][0]
    assert agent["mcpServers"][0]["allowedTools"] == EVERYTHING_TOOLS
    agent["model"] = "my-model"  # the agent names kagent's default config, not the doc's
    validate(config, tmp_path, capsys)
    out = rendered(render, config)
    env = env_of(containers(out, "server-everything-agent", "kagent")[0])
    assert json.loads(env["AGENT_MCP_SERVERS"])[0]["allowedTools"] == EVERYTHING_TOOLS
    document = yaml.safe_load(
        out.find("ConfigMap", "server-everything-agent-config", "kagent")["data"]["config.yaml"]
    )
    assert document["mcpServers"][0]["allowedTools"] == EVERYTHING_TOOLS
    # The agent's runtime reads the filter back and offers no other tool.
    entry = load_agent_servers(document, env={}).servers[0]
    listed: list[dict[str, object]] = [{"name": n} for n in ["print-env", *EVERYTHING_TOOLS]]
    assert [t["name"] for t in offered(entry, listed)] == EVERYTHING_TOOLS


# --- language-operator ----------------------------------------------------------------


def test_language_operator_fallbacks_validate_and_conditions_are_noted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, notes = imported(capsys, "langop-model-multi-endpoint-loadbalanced.yaml")
    fields = [field_of(n) for n in notes]
    assert "spec.fallbacks[0].conditions" in fields
    assert (
        "LanguageModel 'gpt-3-5-turbo' was not among the imported files; dropped; "
        "import it in the same run to keep the fallback"
    ) in [n.split(": ", 5)[5] for n in notes]
    assert "fallbacks" not in config["langop-infra:models"][0]
    validate(config, tmp_path, capsys)


DOTTED_MODELS = """\
apiVersion: langop.io/v1alpha1
kind: LanguageModel
metadata: {name: gpt4-ha, namespace: demo}
spec:
  provider: openai
  modelName: gpt-4
  fallbacks:
    - modelRef: gpt-3.5-turbo
---
apiVersion: langop.io/v1alpha1
kind: LanguageModel
metadata: {name: gpt-3.5-turbo, namespace: demo}
spec: {provider: openai, modelName: gpt-3.5-turbo}
---
apiVersion: langop.io/v1alpha1
kind: LanguageAgent
metadata: {name: helper, namespace: demo}
spec:
  image: ghcr.io/acme/agent:1.0.0
  models: [{name: gpt-3.5-turbo}]
"""


def test_dotted_model_names_are_renamed_alike_everywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, notes = import_text(DOTTED_MODELS, tmp_path, capsys)
    models = {m["name"]: m for m in config["langop-infra:models"]}
    assert models["gpt4-ha"]["fallbacks"] == ["gpt-3-5-turbo"]
    assert models["gpt-3-5-turbo"]["modelName"] == "gpt-3.5-turbo"
    assert config["langop-infra:agents"][0]["models"] == [{"name": "gpt-3-5-turbo"}]
    renamed = [field_of(n) for n in notes if "renamed 'gpt-3-5-turbo'" in n]
    assert renamed == ["spec.fallbacks[0].modelRef", "metadata.name", "spec.models[0].name"]
    validate(config, tmp_path, capsys)


# --- every fixture: imported, validated, counted ---------------------------------------

# Files that only make sense together are imported in one run, as docs/migration.md says.
GROUPS: list[tuple[str, ...]] = [
    tuple(
        f"langop-simple-agent-{k}.yaml" for k in ("cluster", "tool", "model", "persona", "agent")
    ),
    (
        "kagent-server-everything-agent.yaml",
        "kagent-server-everything-remote-mcpserver.yaml",
        "kagent-architecture-modelconfig.yaml",
    ),
    tuple(
        f"ark-mckinsey-harel-{n}.yaml"
        for n in ("weather-agent", "get-coordinates", "get-forecast", "azure-gpt4o")
    ),
]
# What a manifest does not say and the import asks for, passed as its error says: ToolHive
# runs the image's entrypoint on stdio (github-mcp-server's Dockerfile names it; ko puts
# yardstick's binary at /ko-app/<name>), and kmcp picks an image from cmd.
OPTIONS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("toolhive-mcpserver_github.yaml",): (
        "--tool-command=github=/server/github-mcp-server stdio",
        "--tool-image=github=ghcr.io/acme/github-mcp-server-bridge:1.0.0",
    ),
    ("toolhive-mcpserver_yardstick_stdio.yaml",): (
        "--tool-command=yardstick=/ko-app/yardstick-server",
        "--tool-image=yardstick=ghcr.io/acme/yardstick-bridge:1.1.1",
    ),
    ("kagent-everything-mcp-server.yaml",): (
        "--tool-image=everything-mcp-server=ghcr.io/acme/node-mcp-proxy:1.0.0",
    ),
}
# The page's own placeholder (<YOUR_DOMAIN>): no stack deploys it, so import stops there.
REFUSED = {("seed004-complete.yaml",): "spec.endpoint: 'https://api.<YOUR_DOMAIN>/"}


def _runs() -> list[tuple[str, ...]]:
    grouped = {name for group in GROUPS for name in group}
    alone = [(p.name,) for p in sorted(FIXTURES.glob("*.yaml")) if p.name not in grouped]
    return [*GROUPS, *alone]


def _import(run: tuple[str, ...], *options: str) -> int:
    files = [str(FIXTURES / n) for n in run]
    return main(["import", *files, "--agent-image", AGENT_IMAGE, *options])


def test_every_fixture_imports_validates_and_renders_or_is_refused_in_one_line(
    render: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: langop-infra\nruntime: python\n")
    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    valid: list[tuple[str, ...]] = []
    for run in _runs():
        code = _import(run)
        captured = capsys.readouterr()
        if run in REFUSED:
            [line] = captured.err.splitlines()
            assert (code, captured.out) == (2, ""), run
            assert REFUSED[run] in line and line.endswith("then import again"), line
            continue
        if run in OPTIONS:  # without them: exit 2, one line naming the option
            [line] = captured.err.splitlines()
            assert code == 2 and "pass --tool-" in line, (run, line)
            code = _import(run, *OPTIONS[run])
            captured = capsys.readouterr()
        assert code == 0, (run, captured.err)
        config = yaml.safe_load(captured.out)["config"]
        config.setdefault("langop-infra:namespace", "imported")  # a lone model names none
        stack = tmp_path / "Pulumi.dev.yaml"
        stack.write_text(yaml.safe_dump({"config": config}))
        code = main(["validate", "--project-dir", str(tmp_path), "--config", str(stack)])
        assert code == 0, (run, capsys.readouterr().err[-300:])
        capsys.readouterr()
        out = rendered(render, config)
        assert out.manifests, run
        valid.append(run)
    # 29 files in 20 runs (three groups of files that go together): 19 import, validate and
    # render (3 of them with the options their error names), 1 is refused.
    assert (len(list(FIXTURES.glob("*.yaml"))), len(_runs()), len(valid)) == (29, 20, 19)
