"""The commands beside render and diff: validate, outputs, graph, config-schema, completion,
run through the CLI as a user would."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from langop_infra.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_FILE = ROOT / "schemas" / "stack-config.schema.json"
STACKS = ("dev", "staging", "prod")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def stack_with(tmp_path: Path, edit: object) -> Path:
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    edit(config["config"])  # type: ignore[operator]
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def two_problems(config: dict) -> None:
    config["langop-infra:tools"][0]["deploymentMod"] = "sidecar"
    config["langop-infra:agents"][1]["tools"][0]["name"] = "memry"


# --- validate ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_validate_is_silent_on_a_valid_stack(stack: str, capsys: pytest.CaptureFixture) -> None:
    assert run(capsys, "validate", "--stack", stack, "--project-dir", str(ROOT)) == (0, "", "")


def test_validate_lists_every_problem_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = stack_with(tmp_path, two_problems)
    code, out, err = run(capsys, "validate", "--config", str(path), "--project-dir", str(ROOT))
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == "langop-infra validate: error: invalid configuration: 2 problems"
    # Each problem opens with file:line:column of its key, as a compiler's would.
    first = f"  - {path}:"
    assert lines[1].startswith(first) and lines[1].endswith(
        ": langop-infra:tools[0].deploymentMod: unknown field; did you mean 'deploymentMode'?"
    )
    line, column = (int(n) for n in lines[1][len(first) :].split(":")[:2])
    assert path.read_text().splitlines()[line - 1][column - 1 :].startswith("deploymentMod:")
    assert lines[2].startswith(f"  - {path}:")
    assert ": langop-infra:agents[1].tools[0].name: no tool named 'memry'" in lines[2]


def test_validate_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = stack_with(tmp_path, two_problems)
    argv = ("validate", "-o", "json", "--project-dir", str(ROOT))
    code, out, err = run(capsys, *argv, "--config", str(path))
    assert (code, err) == (2, "")
    report = json.loads(out)
    assert report["valid"] is False
    assert [p["path"] for p in report["problems"]] == [
        "langop-infra:tools[0].deploymentMod",
        "langop-infra:agents[1].tools[0].name",
    ]
    text = path.read_text().splitlines()
    for problem, key in zip(report["problems"], ("deploymentMod:", "name: memry"), strict=True):
        assert problem["file"] == str(path)
        assert text[problem["line"] - 1][problem["column"] - 1 :].startswith(key)
    code, out, err = run(capsys, *argv, "--stack", "dev")
    assert (code, json.loads(out), err) == (0, {"valid": True, "problems": [], "warnings": []}, "")


# --- outputs -----------------------------------------------------------------------------------


def test_outputs_show_endpoints_phases_env_names_and_config_yaml(
    capsys: pytest.CaptureFixture,
) -> None:
    code, out, err = run(capsys, "outputs", "--stack", "prod", "--project-dir", str(ROOT))
    assert (code, err) == (0, "")
    outputs = yaml.safe_load(out)
    assert outputs["namespace"] == "research"
    assert outputs["tools"]["memory"] == {
        "endpoint": "http://memory.research.svc.cluster.local:8080",
        "deploymentMode": "service",
        "phase": "Pending",  # offline, schema sync never runs
        "toolNames": "[unknown]",  # known once schema sync has run, at `pulumi up`
    }
    researcher = outputs["agents"]["researcher"]
    assert "MCP_SERVERS" in researcher["envNames"]
    assert "ARK_MCP_WEB_SEARCH_HEADER_AUTHORIZATION" in researcher["envNames"]
    config = yaml.safe_load(researcher["configYaml"])
    assert list(config["tools"]) == ["memory", "docs-search", "workspace-files"]
    # config.yaml prints as a block, readable as is
    assert "  researcher:\n    configYaml: |\n      tools:\n" in out
    code, as_json, _ = run(
        capsys, "outputs", "--stack", "prod", "-o", "json", "--project-dir", str(ROOT)
    )
    assert json.loads(as_json)["agents"]["researcher"] == researcher


def test_outputs_give_a_scheduled_agent_its_env_names(capsys: pytest.CaptureFixture) -> None:
    """A scheduled agent's env is read from its CronJob's pod template."""
    code, out, err = run(capsys, "outputs", "--stack", "dev", "--project-dir", str(ROOT))
    assert (code, err) == (0, "")
    digest = yaml.safe_load(out)["agents"]["morning-digest"]
    assert digest["envNames"][:2] == ["MCP_SERVERS", "AGENT_MCP_SERVERS"]
    assert "AGENT_MODE" in digest["envNames"]


def test_outputs_never_show_a_secret_value(capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run(
        capsys, "outputs", "--stack", "dev", "-o", "json", "--project-dir", str(ROOT)
    )
    assert code == 0
    for value in ("dev-search-token-not-for-prod", "dev-ticketing-token-not-for-prod"):
        assert value not in out


# --- graph -------------------------------------------------------------------------------------


def test_graph_text_of_prod(capsys: pytest.CaptureFixture) -> None:
    code, out, err = run(capsys, "graph", "--stack", "prod", "--project-dir", str(ROOT))
    assert (code, err) == (0, "")
    ranges = "198.51.100.0/24, 203.0.113.0/24"
    assert out.splitlines() == [
        "agent researcher",
        "  may reach tool research/docs-search:9090",
        "  may reach gateway research/gateway:8000",
        "  may reach tool research/memory:8080",
        "  may reach sidecar workspace-files:8181 (localhost)",
        "  may reach external mcp web-search (search.mcp.example.com):443 "
        f"(only if search.mcp.example.com resolves into {ranges})",
        "  may reach external webhook fetch_ticket (tickets.example.com):443 "
        f"(only if tickets.example.com resolves into {ranges})",
        "agent triage",
        "  may reach tool research/memory:8080",
    ]


def test_graph_all_shows_blocked_pairs_and_open_egress_in_dev(
    capsys: pytest.CaptureFixture,
) -> None:
    code, out, _ = run(capsys, "graph", "--stack", "dev", "--all", "--project-dir", str(ROOT))
    assert code == 0
    assert out.endswith(
        "agent triage\n"
        "  blocked: tool research-dev/docs-search:9090\n"
        "  blocked: gateway research-dev/gateway:8000\n"
        "  may reach tool research-dev/memory:8080\n"
        "  may reach agent research-dev/researcher:8080\n"  # its A2A peer
        "  may reach tool research-dev/team-notes:8080\n"  # its managed memory (#38)
    )
    assert "fetch_ticket (tickets.example.com):443 (open egress)" in out


def test_graph_shows_scheduled_agents_and_a2a_peers(capsys: pytest.CaptureFixture) -> None:
    """A scheduled agent (a CronJob) is a source like any agent; an agent serving A2A is a
    target its callers may reach on its `a2a` port, and no one else may."""
    code, out, _ = run(capsys, "graph", "--stack", "dev", "--all", "--project-dir", str(ROOT))
    assert code == 0
    sections = ("\n" + out).split("\nagent ")
    digest = next(s for s in sections if s.startswith("morning-digest\n"))
    assert digest.splitlines() == [
        "morning-digest",
        "  blocked: tool research-dev/docs-search:9090",
        "  may reach gateway research-dev/gateway:8000",
        "  blocked: tool research-dev/memory:8080",
        "  may reach agent research-dev/researcher:8080",
        "  may reach tool research-dev/team-notes:8080",
    ]
    researcher = next(s for s in sections if s.startswith("researcher\n"))
    assert "research-dev/researcher:" not in researcher  # never its own peer
    assert "  may reach agent research-dev/researcher:8080\n" in out.split("agent triage\n")[1]
    # in the flowchart, the agent called and the agent calling are one node
    code, out, _ = run(
        capsys, "graph", "--stack", "dev", "-o", "mermaid", "--project-dir", str(ROOT)
    )
    lines = out.splitlines()
    assert [line for line in lines if "researcher[" in line] == [
        '  agent_research_dev_researcher["agent researcher"]'
    ]
    assert "  agent_research_dev_triage -->|8080| agent_research_dev_researcher" in lines
    assert "  agent_research_dev_researcher -->|9090| tool_research_dev_docs_search" in lines


def test_graph_mermaid_and_json(capsys: pytest.CaptureFixture) -> None:
    argv = ("graph", "--stack", "prod", "--project-dir", str(ROOT), "--all")
    code, out, _ = run(capsys, *argv, "-o", "mermaid")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "flowchart LR"
    assert "  agent_research_triage -->|8080| tool_research_memory" in lines
    assert "  agent_research_triage --x|9090 blocked| tool_research_docs_search" in lines
    assert "  agent_research_researcher -->|localhost:8181| sidecar_workspace_files" in lines
    code, out, _ = run(capsys, *argv, "-o", "json")
    edges = json.loads(out)
    assert {
        "agent": "triage",
        "kind": "tool",
        "target": "research/docs-search",
        "port": 9090,
        "allowed": False,
        "detail": "",
        "namespace": "research",
    } in edges


# --- config-schema -----------------------------------------------------------------------------


def generated_schema(capsys: pytest.CaptureFixture) -> str:
    code, out, err = run(capsys, "config-schema")
    assert (code, err) == (0, "")
    return out


def test_the_committed_schema_is_current(capsys: pytest.CaptureFixture) -> None:
    assert SCHEMA_FILE.read_text() == generated_schema(capsys), (
        "schemas/stack-config.schema.json is stale: regenerate it with "
        "`langop-infra config-schema > schemas/stack-config.schema.json`"
    )


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stacks_point_at_the_schema_and_satisfy_it(stack: str) -> None:
    path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
    first = path.read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../schemas/stack-config.schema.json"
    assert (path.parent / first.split("=", 1)[1]).resolve() == SCHEMA_FILE
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(yaml.safe_load(path.read_text())))
    assert errors == []


def test_the_schema_refuses_what_render_refuses(capsys: pytest.CaptureFixture) -> None:
    schema = json.loads(generated_schema(capsys))
    validator = jsonschema.Draft7Validator(schema)
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    config = document["config"]
    config["langop-infra:tools"][0]["deploymentMod"] = "sidecar"
    config["langop-infra:agnets"] = []
    config["langop-infra:agents"][0]["mcpServers"][0]["timeout"] = "soon"
    config["aws:region"] = "eu-west-1"  # another provider's key: fine
    errors = list(validator.iter_errors(document))
    found = sorted((list(e.absolute_path), e.validator) for e in errors)
    assert found == [
        (["config"], "anyOf"),  # the key's name, checked by propertyNames
        (["config", "langop-infra:agents", 0, "mcpServers", 0, "timeout"], "anyOf"),
        (["config", "langop-infra:tools", 0], "additionalProperties"),
    ]
    assert any("'langop-infra:agnets'" in e.message for e in errors)


# --- completion --------------------------------------------------------------------------------


def test_bash_completion_completes_commands_options_and_stacks(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code, script, _ = run(capsys, "completion", "bash")
    assert code == 0
    (tmp_path / "c.bash").write_text(script)
    probe = """
source c.bash
cd "$1"
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _langop_infra;
  echo "${COMPREPLY[*]}"; }
complete_words langop-infra val
complete_words langop-infra render --stack ''
complete_words langop-infra diff --output ''
complete_words langop-infra graph --o
"""
    (tmp_path / "probe.sh").write_text(probe)
    done = subprocess.run(
        ["bash", "probe.sh", str(ROOT / "stacks")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "validate",
        "dev prod staging",
        "text markdown json yaml",
        "--output",
    ]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts(shell: str, capsys: pytest.CaptureFixture) -> None:
    code, script, _ = run(capsys, "completion", shell)
    assert code == 0
    for command in ("render", "validate", "outputs", "graph", "config-schema", "completion"):
        assert command in script
    assert "fingerprint-key-env" in script and "markdown" in script
    binary = shutil.which(shell)
    if binary is not None:  # a syntax check where the shell is installed
        flag = ["-n"]
        done = subprocess.run(
            [binary, *flag], input=script, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr


def test_completion_of_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as done:
        main(["completion", "tcsh"])
    assert done.value.code == 2
    assert "langop-infra completion: error: argument shell: invalid choice" in (
        capsys.readouterr().err
    )
