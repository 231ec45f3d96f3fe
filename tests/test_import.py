"""``langop-infra import``: the seeds' manifests and each replaced system's own examples
(tests/fixtures/import/, sources in SOURCES.md), verbatim, imported and then rendered: the
round trip gives the objects the manifests describe (names, env, ports, policies)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.cli.main import main
from langop_infra.program.stack import main as stack_program
from tests.support.manifests import Rendered

FIXTURES = Path(__file__).parent / "fixtures" / "import"
AGENT_IMAGE = "ghcr.io/acme/agent:1.0.0"


def imported(
    capsys: pytest.CaptureFixture[str], *names: str, extra: tuple[str, ...] = ()
) -> tuple[dict[str, Any], list[str]]:
    files = [str(FIXTURES / n) for n in names]
    code = main(["import", *files, *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    notes = [line for line in captured.err.splitlines() if line.startswith("langop-infra import")]
    return yaml.safe_load(captured.out)["config"], notes


def rendered(render: Any, config: dict[str, Any]) -> Rendered:
    flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    return render(stack_program, config=flat)


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def test_seed_000_languagetool_round_trip(render, capsys) -> None:
    config, notes = imported(capsys, "seed000-languagetool.yaml")
    assert notes == []
    out = rendered(render, config)
    deployment = out.find("Deployment", "mem0-memory", "language-operator-myapp")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "myregistry/mem0-mcp:latest"
    assert [p["containerPort"] for p in container["ports"]] == [8080]
    service = out.find("Service", "mem0-memory", "language-operator-myapp")
    assert service["spec"]["type"] == "ClusterIP"
    assert [p["port"] for p in service["spec"]["ports"]] == [8080]
    out.find("NetworkPolicy", "mem0-memory-ingress", "language-operator-myapp")


def test_language_operator_simple_agent_round_trip(render, capsys) -> None:
    names = [
        f"langop-simple-agent-{k}.yaml" for k in ("cluster", "tool", "model", "persona", "agent")
    ]
    config, notes = imported(capsys, *names)
    assert config["langop-infra:partOf"] == "demo"
    assert any("spec.egress[0].to.dns" in n for n in notes)
    assert any("spec.executionMode" in n for n in notes)
    out = rendered(render, config)
    pod = out.find("Deployment", "demo-agent", "demo")["spec"]["template"]["spec"]
    agent = pod["containers"][0]
    env = env_of(agent)
    # The sidecar tool joins the agent's pod on its port; the agent is told where.
    sidecars = [
        c
        for c in pod.get("initContainers", []) + pod["containers"]
        if c["image"] == "ghcr.io/language-operator/tool:latest"
    ]
    assert [p["containerPort"] for p in sidecars[0]["ports"]] == [80]
    assert env["MCP_SERVERS"] == "http://localhost:80"
    assert env["AGENT_CLUSTER_NAME"] == "demo"  # upstream: the LanguageCluster's name
    assert env["AGENT_INSTRUCTIONS"].startswith("Your goal is to search")
    assert env["AGENT_PERSONA"] == "Tone: professional."
    assert env["MODEL_ENDPOINT"] == "http://gateway.demo.svc.cluster.local:8000"
    # The model's CIDR egress rule is carried (it admits the gateway's calls to LM Studio).
    assert config["langop-infra:models"][0]["egressTo"] == [
        {"cidr": "192.168.68.0/24", "ports": [{"port": 1234, "protocol": "TCP"}]}
    ]


def test_toolhive_fetch_round_trip(render, capsys) -> None:
    config, notes = imported(capsys, "toolhive-mcpserver_fetch.yaml")
    assert notes == []
    out = rendered(render, config)
    container = out.find("Deployment", "fetch", "toolhive-system")["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["resources"] == {
        "requests": {"cpu": "50m", "memory": "64Mi"},
        "limits": {"cpu": "100m", "memory": "128Mi"},
    }
    assert [
        p["port"] for p in out.find("Service", "fetch", "toolhive-system")["spec"]["ports"]
    ] == [8080]


def test_toolhive_stdio_secret_is_referenced_and_its_command_taken_from_the_option(
    capsys,
) -> None:
    config, notes = imported(
        capsys,
        "toolhive-mcpserver_github.yaml",
        extra=("--tool-command", "github=/server/github-mcp-server stdio"),
    )
    tool = config["langop-infra:tools"][0]
    assert tool["secretEnv"] == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": {"secretKeyRef": {"name": "github-token", "key": "token"}}
    }
    assert config["langop-infra:externalSecrets"] == ["github-token"]
    assert (tool["command"], tool["image"]) == (
        ["/server/github-mcp-server", "stdio"],
        "ghcr.io/github/github-mcp-server",
    )
    [note] = [n for n in notes if "spec.transport" in n]
    assert note.endswith("if it does not, pass --tool-image github=<one that does>")


def test_a_stdio_server_without_its_command_is_refused_in_one_line(capsys) -> None:
    """ToolHive runs the image's entrypoint, which the manifest does not name: no stack
    that validates can be made, so the import stops, naming the field and the option."""
    code = main(["import", str(FIXTURES / "toolhive-mcpserver_github.yaml")])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    [line] = captured.err.splitlines()
    assert line.startswith(
        "langop-infra import: error: "
        + str(FIXTURES / "toolhive-mcpserver_github.yaml")
        + ": MCPServer/github: spec.transport: a stdio server runs here under the mcp-proxy "
        "bridge"
    )
    assert "pass --tool-command 'github=<the entrypoint and its arguments>'" in line


def test_tool_options_must_name_an_imported_tool_and_hold_a_value(capsys) -> None:
    seed = str(FIXTURES / "seed000-languagetool.yaml")
    assert main(["import", seed, "--tool-image", "mem0=ghcr.io/acme/mem0:1"]) == 2
    assert capsys.readouterr().err == (
        "langop-infra import: error: --tool-image mem0: no imported tool is named 'mem0' "
        "(imported: mem0-memory)\n"
    )
    assert main(["import", seed, "--tool-command", "mem0-memory"]) == 2
    assert capsys.readouterr().err == (
        "langop-infra import: error: --tool-command 'mem0-memory': write it as "
        "--tool-command TOOL=VALUE\n"
    )
    assert main(["import", seed, "--tool-command", "mem0-memory=run 'x"]) == 2
    assert capsys.readouterr().err == (
        "langop-infra import: error: --tool-command mem0-memory: No closing quotation; "
        "quote it as a shell would\n"
    )


def test_a_kmcp_server_without_an_image_takes_the_option_or_is_refused(capsys) -> None:
    source = FIXTURES / "kagent-everything-mcp-server.yaml"
    assert main(["import", str(source)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert ": MCPServer/everything-mcp-server: spec.deployment.image: kmcp picks an image " in line
    assert line.endswith(
        "pass --tool-image everything-mcp-server=<an image holding npx and mcp-proxy 0.13.0>"
    )
    config, notes = imported(
        capsys,
        source.name,
        extra=("--tool-image", "everything-mcp-server=ghcr.io/acme/node-mcp-proxy:1"),
    )
    assert notes == []
    assert config["langop-infra:tools"] == [
        {
            "name": "everything-mcp-server",
            "image": "ghcr.io/acme/node-mcp-proxy:1",
            "port": 3000,
            "transport": "stdio",
            "command": ["npx"],
            "args": ["-y", "@modelcontextprotocol/server-everything@2026.1.14"],
        }
    ]


def test_kagent_agent_with_its_remote_server_round_trip(render, capsys) -> None:
    config, notes = imported(
        capsys,
        "kagent-server-everything-agent.yaml",
        "kagent-server-everything-remote-mcpserver.yaml",
        "kagent-architecture-modelconfig.yaml",
        extra=("--agent-image", AGENT_IMAGE),
    )
    agent = config["langop-infra:agents"][0]
    assert agent["mcpServers"] == [
        {
            "name": "server-everything",
            "url": "https://servereverything.dev/mcp",
            "timeout": "30s",
            "allowedTools": [
                "show-weather-dashboard",
                "echo",
                "get-sum",
                "get-tiny-image",
                "get-structured-content",
            ],
        }
    ]
    assert not any("toolNames" in n for n in notes)  # carried, so not noted
    # The agent names kagent's default model config; the doc's ModelConfig is my-model.
    agent["model"] = "my-model"
    out = rendered(render, config)
    env = env_of(
        out.find("Deployment", "server-everything-agent", "kagent")["spec"]["template"]["spec"][
            "containers"
        ][0]
    )
    assert [(s["name"], s["url"]) for s in json.loads(env["AGENT_MCP_SERVERS"])] == [
        ("server-everything", "https://servereverything.dev/mcp")
    ]
    assert env["AGENT_INSTRUCTIONS"].startswith("You are a helpful assistant")


def test_kagent_model_config_references_its_secret(capsys) -> None:
    config, _ = imported(capsys, "kagent-architecture-modelconfig.yaml")
    model = config["langop-infra:models"][0]
    assert model["apiKey"] == {"secretKeyRef": {"name": "my-api-key-secret", "key": "api-key"}}
    assert model["configuration"] == {"temperature": 0.7, "maxTokens": 4096}


def test_ark_reference_example_round_trip(render, capsys) -> None:
    config, notes = imported(
        capsys, "ark-arkagent-reference.yaml", extra=("--agent-image", AGENT_IMAGE)
    )
    assert any("spec.limits.maxConcurrentTasks" in n for n in notes)
    out = rendered(render, config)
    deployment = out.find("Deployment", "research-agent", "default")
    assert deployment["spec"]["replicas"] == 2
    env = env_of(deployment["spec"]["template"]["spec"]["containers"][0])
    assert env["AGENT_MODEL"] == "claude-sonnet-4-20250514"
    assert env["AGENT_MAX_TOKENS"] == "8000" and env["AGENT_TIMEOUT_SECONDS"] == "120"
    assert [t["name"] for t in json.loads(env["AGENT_WEBHOOK_TOOLS"])] == ["fetch_news"]
    assert json.loads(env["AGENT_MCP_SERVERS"]) == [
        {"name": "web-search", "url": "https://search.mcp.internal/sse"}
    ]


def test_seed_004_examples_round_trip(render, capsys) -> None:
    config, _ = imported(capsys, "seed004-examples.yaml")
    assert config["langop-infra:externalSecrets"] == ["salesforce-oauth", "openai-key"]
    out = rendered(render, config)
    for name, namespace in (
        ("echo", "tenant-demo"),
        ("salesforce-query", "tenant-enterprise"),
        ("openai-completion", "tenant-ai"),
    ):
        out.find("ConfigMap", f"{name}.http-tool", namespace)


def test_seed_004_complete_example_drops_status_and_refuses_the_placeholder(
    capsys, tmp_path
) -> None:
    source = FIXTURES / "seed004-complete.yaml"
    assert main(["import", str(source)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"langop-infra import: error: {source}: Tool/payment-create: spec.endpoint: "
        "'https://api.<YOUR_DOMAIN>/acme/payment-api/v2/payments' holds the placeholder "
        "<YOUR_DOMAIN>, which no stack deploys; replace it with the real URL in the manifest, "
        "then import again\n"
    )
    # With the domain filled in, as the error says, the rest of the page imports.
    filled = tmp_path / "complete.yaml"
    filled.write_text(source.read_text().replace("<YOUR_DOMAIN>", "example.com"))
    config, notes = imported(capsys, str(filled))
    tool = config["langop-infra:httpTools"][0]
    assert "status" not in tool
    assert tool["endpoint"] == "https://api.example.com/acme/payment-api/v2/payments"
    assert tool["authentication"]["secretRef"] == {"name": "payment-api-token", "key": "token"}
    assert [n.split(": ", 5)[4:] for n in notes] == [
        [
            "status",
            "status is what a controller observed, not configuration; dropped; langop-infra "
            "reports its own (stack outputs, `langop-infra outputs`)",
        ]
    ]


@pytest.mark.parametrize("command", ["validate", "render", "check"])
def test_commands_given_a_manifest_name_import(command, capsys, tmp_path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: langop-infra\nruntime: python\n")
    manifest = FIXTURES / "seed000-languagetool.yaml"
    code = main([command, "--project-dir", str(tmp_path), "--config", str(manifest)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Kubernetes manifest (LanguageTool (language-operator)), not a stack file" in err
    assert "convert it with `langop-infra import " in err
    assert "seed000-languagetool.yaml` (add --into stacks/Pulumi.<env>.yaml" in err
    assert "namespace" not in err.split("not a stack file")[0]


def test_validate_json_names_the_kind_of_problem(capsys, tmp_path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: langop-infra\nruntime: python\n")
    manifest = FIXTURES / "seed004-examples.yaml"  # three documents
    code = main(
        ["validate", "--project-dir", str(tmp_path), "--config", str(manifest), "-o", "json"]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 2 and report["valid"] is False
    [problem] = report["problems"]
    assert problem["kind"] == "langop_manifest_not_stack"
    assert "Tool (STOA)" in problem["message"]


def test_into_keeps_comments_and_other_keys(capsys, tmp_path) -> None:
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(
        "# the dev stack\nconfig:\n  kubernetes:context: dev  # our cluster\n"
        "  langop-infra:namespace: apps\n  langop-infra:tools:\n"
        "    - name: memory   # keep me\n      image: ghcr.io/acme/memory:1\n"
    )
    code = main(["import", str(FIXTURES / "seed000-deployment-pattern.yaml"), "--into", str(stack)])
    assert code == 0, capsys.readouterr().err
    text = stack.read_text()
    assert text.startswith("# the dev stack\n")
    assert "kubernetes:context: dev  # our cluster" in text
    assert "- name: memory   # keep me" in text
    config = yaml.safe_load(text)["config"]
    assert config["langop-infra:namespace"] == "apps"
    assert [t["name"] for t in config["langop-infra:tools"]] == ["memory", "mem0-memory"]
    assert config["langop-infra:tools"][1]["namespace"] == "language-operator-myapp"
    # Importing again replaces the entry instead of adding a second one.
    assert (
        main(["import", str(FIXTURES / "seed000-deployment-pattern.yaml"), "--into", str(stack)])
        == 0
    )
    assert len(yaml.safe_load(stack.read_text())["config"]["langop-infra:tools"]) == 2


def test_a_file_with_no_known_manifest_is_refused(capsys, tmp_path) -> None:
    other = tmp_path / "deploy.yaml"
    other.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
    assert main(["import", str(other)]) == 2
    assert "no manifest import reads" in capsys.readouterr().err


def test_json_output_carries_the_notes(capsys) -> None:
    assert main(["import", str(FIXTURES / "langop-simple-agent-persona.yaml"), "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["langop-infra:personas"] == [
        {"name": "helpful-assistant", "tone": "professional"}
    ]
    fields = [n["field"] for n in report["notes"]]
    assert fields == ["spec.systemPrompt", "spec.displayName", "spec.description", "spec.language"]


def test_a_secret_in_the_input_is_never_copied(capsys, tmp_path) -> None:
    canary = "canary-6f1d2c-not-to-be-copied"
    mixed = tmp_path / "with-secret.yaml"
    mixed.write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: payment-api-token}\n"
        f"stringData: {{token: {canary}}}\n---\n" + (FIXTURES / "seed004-examples.yaml").read_text()
    )
    for output in ("yaml", "json"):
        assert main(["import", str(mixed), "-o", output]) == 0
        captured = capsys.readouterr()
        assert canary not in captured.out + captured.err
        assert "v1 Secret is not a kind import reads" in captured.out + captured.err


def test_stdin_is_read_with_a_dash(capsys, monkeypatch) -> None:
    import io
    import sys

    text = (FIXTURES / "seed000-deployment-pattern.yaml").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    assert main(["import", "-"]) == 0
    config = yaml.safe_load(capsys.readouterr().out)["config"]
    assert config["langop-infra:tools"] == [
        {"name": "mem0-memory", "image": "myregistry/mem0-mcp:latest", "port": 8080}
    ]


def test_a_kagent_agent_whose_model_config_is_missing_is_noted(capsys) -> None:
    _, notes = imported(
        capsys,
        "kagent-server-everything-agent.yaml",
        "kagent-server-everything-remote-mcpserver.yaml",
        extra=("--agent-image", AGENT_IMAGE),
    )
    assert any(
        "ModelConfig 'default-model-config' was not among the imported files" in n for n in notes
    )


def test_language_operators_workspace_config_map_becomes_initial_files(
    render, capsys, tmp_path
) -> None:
    # language-operator names it workspace.seedConfigMapRef; here it is initialFilesConfigMap.
    path = tmp_path / "agent.yaml"
    path.write_text(
        "apiVersion: langop.io/v1alpha1\nkind: LanguageAgent\n"
        "metadata: {name: demo-agent, namespace: demo}\n"
        f"spec: {{image: {AGENT_IMAGE}, workspace: {{size: 1Gi, "
        "seedConfigMapRef: {name: starter-files}}}\n"
    )
    config, _ = imported(capsys, str(path))
    workspace = config["langop-infra:agents"][0]["workspace"]
    assert workspace == {"size": "1Gi", "initialFilesConfigMap": "starter-files"}
    pod = rendered(render, config).find("Deployment", "demo-agent")["spec"]["template"]["spec"]
    assert pod["initContainers"][0]["name"] == "init-workspace"
    assert {"name": "initial-files", "configMap": {"name": "starter-files"}} in pod["volumes"]


def test_stdin_is_read_no_further_than_the_cap() -> None:
    """``import -`` fed 64 MiB of YAML comments: it stops reading one byte past 4 MiB and
    refuses; the bytes the pipe took are the measure (before: all 64 MiB were read)."""
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "langop_infra", "import", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stderr is not None
    chunk, sent = b"# " + b"x" * (64 * 1024 - 3) + b"\n", 0
    try:
        while sent < 64 * 1024 * 1024:
            process.stdin.write(chunk)
            sent += len(chunk)
        process.stdin.close()
    except BrokenPipeError:
        pass
    err = process.stderr.read().decode()
    assert process.wait() == 2
    assert sent < 5 * 1024 * 1024, sent
    assert err == (
        "langop-infra import: error: <stdin>: over 4194304 bytes; import reads at most that "
        "much a file: split the manifests into several files\n"
    )


def test_a_credential_env_literal_becomes_a_secret_reference_with_a_note(capsys, tmp_path) -> None:
    """Issue 49 §6: ``import`` copied credential literals into plain ``env:``."""
    manifest = tmp_path / "tool.yaml"
    manifest.write_text(
        "apiVersion: langop.io/v1alpha1\nkind: LanguageTool\n"
        "metadata: {name: search, namespace: apps}\n"
        "spec:\n  image: ghcr.io/acme/search:1\n  deployment:\n    env:\n"
        "      - {name: LOG_LEVEL, value: info}\n"
        "      - {name: OPENAI_API_KEY, value: sk-import-canary-1}\n"
        "      - {name: DB_PASSWORD, value: '${DB_PASSWORD}'}\n"
        "      - {name: GITHUB_TOKEN, value: ''}\n"
    )
    assert main(["import", str(manifest), "-o", "json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    [tool] = report["config"]["langop-infra:tools"]
    assert tool["env"] == {"LOG_LEVEL": "info", "DB_PASSWORD": "${DB_PASSWORD}", "GITHUB_TOKEN": ""}
    assert tool["secretEnv"] == {
        "OPENAI_API_KEY": {"secretKeyRef": {"name": "search-credentials", "key": "OPENAI_API_KEY"}}
    }
    assert "search-credentials" in report["config"]["langop-infra:externalSecrets"]
    [note] = [n for n in report["notes"] if n["field"] == "spec.deployment.env[1].value"]
    assert note["why"] == (
        "OPENAI_API_KEY is a credential written as a literal; it is not copied into the stack file"
    )
    assert "kubectl create secret generic search-credentials" in note["todo"]
    assert "canary" not in out


def test_kagents_stream_and_descriptions_are_noted_not_dropped(capsys) -> None:
    """Issue 51 §5: each field kagent has and a stack cannot carry gets a note."""
    _, notes = imported(
        capsys,
        "kagent-server-everything-agent.yaml",
        "kagent-server-everything-remote-mcpserver.yaml",
        extra=("--agent-image", AGENT_IMAGE),
    )
    # langop-infra import: note: <file>: <Kind>/<name>: <field>: <why>; <what to do>
    fields = {tuple(n.split(": ", 5)[3:5]): n.split(": ", 5)[5] for n in notes}
    agent = "SandboxAgent/server-everything-agent"
    assert fields[(agent, "spec.declarative.stream")] == (
        "kagent streams the answer to its UI; an agent here answers each A2A message whole; "
        "nothing to do (a2a.streaming advertises streaming, for a runtime that streams)"
    )
    assert fields[(agent, "spec.description")].endswith(
        "; if it serves A2A, set a2a.description (and a2a.skills) to it"
    )
    assert fields[("RemoteMCPServer/server-everything", "spec.description")].startswith(
        "an external MCP server here has no description"
    )


def test_into_writes_multi_line_values_as_block_scalars(capsys, tmp_path) -> None:
    """Issue 51 §5: the imported agent's instructions as a ``|-`` block, as without --into;
    the file's own block scalar stays one too."""
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(
        "config:\n  langop-infra:namespace: apps\n  langop-infra:agents:\n"
        "    - name: old\n      image: ghcr.io/acme/old:1\n"
        "      instructions: |\n        line one\n        line two\n"
    )
    source = FIXTURES / "kagent-server-everything-agent.yaml"
    code = main(["import", str(source), "--agent-image", AGENT_IMAGE, "--into", str(stack)])
    assert code == 0, capsys.readouterr().err
    text = stack.read_text()
    assert "      instructions: |\n        line one\n        line two\n" in text
    message = yaml.safe_load(source.read_text())["spec"]["declarative"]["systemMessage"]
    block = "".join(f"        {line}\n" if line else "\n" for line in message.split("\n"))
    assert f"      instructions: |-\n{block}" in text
    [_, agent] = yaml.safe_load(text)["config"]["langop-infra:agents"]
    assert agent["instructions"] == message


def test_a_refused_import_leaves_the_stack_file_as_it_was(capsys, tmp_path) -> None:
    stack = tmp_path / "Pulumi.dev.yaml"
    text = "config:\n  langop-infra:namespace: apps  # ours\n"
    stack.write_text(text)
    files = [str(FIXTURES / "seed000-languagetool.yaml"), str(FIXTURES / "seed004-complete.yaml")]
    assert main(["import", *files, "--into", str(stack)]) == 2
    assert "spec.endpoint" in capsys.readouterr().err
    assert stack.read_text() == text
