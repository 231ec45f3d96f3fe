"""Errors that point at the source, in a user's project outside this repository: a stack
file's problems at ``file:line:column`` of their key, a Python API error at the user's line
that built the component, pydantic's wording replaced by the fix, one problem per fault."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.user_project import make_project, run_cli

STACK_PROGRAM = "from langop_infra.program.stack import main\nmain()\n"
PROJECT = "name: langop-infra\nruntime: python\n"
STACK = """\
config:
  langop-infra:namespace: apps
  langop-infra:tools:
    - name: memory
      image: ghcr.io/acme/memory:1
      port: 0
    - name: files
      deploymentMode: sidecarr
      replicas: many
      colour: blue
  langop-infra:agents:
    - name: helper
      image: ghcr.io/acme/helper:1
      tools:
        - name: memroy
"""


def stack_project(folder: Path, stack: str = STACK) -> Path:
    project = make_project(folder, STACK_PROGRAM, stack)
    (project / "Pulumi.yaml").write_text(PROJECT)
    return project


def key_at(text: str, line: int, column: int) -> str:
    """What the file holds at a 1-based line and column."""
    return text.splitlines()[line - 1][column - 1 :]


def test_every_stack_file_problem_carries_the_line_and_column_of_its_key(tmp_path: Path) -> None:
    project = stack_project(tmp_path / "p")
    code, out, _ = run_cli(project, "validate", "--stack", "dev", "-o", "json")
    assert code == 2
    problems = {p["path"]: p for p in json.loads(out)["problems"]}
    expected_keys = {
        "langop-infra:tools[0].port": "port: 0",
        "langop-infra:tools[1].image": "name: files",  # missing: the item that lacks it
        "langop-infra:tools[1].deploymentMode": "deploymentMode: sidecarr",
        "langop-infra:tools[1].replicas": "replicas: many",
        "langop-infra:tools[1].colour": "colour: blue",
        "langop-infra:agents[0].tools[0].name": "name: memroy",
    }
    assert set(problems) == set(expected_keys)
    for path, key in expected_keys.items():
        problem = problems[path]
        assert problem["file"] == str(project / "Pulumi.dev.yaml")
        assert key_at(STACK, problem["line"], problem["column"]).startswith(key), path


def test_the_text_form_leads_with_file_line_column(tmp_path: Path) -> None:
    project = stack_project(tmp_path / "p")
    code, _, err = run_cli(project, "validate", "--stack", "dev")
    assert code == 2
    assert f"  - {project / 'Pulumi.dev.yaml'}:6:7: langop-infra:tools[0].port: " in err


def test_pydantic_wording_is_replaced_by_the_fix(tmp_path: Path) -> None:
    project = stack_project(tmp_path / "p")
    _, out, _ = run_cli(project, "validate", "--stack", "dev", "-o", "json")
    messages = {p["path"]: p["message"] for p in json.loads(out)["problems"]}
    assert "Input should" not in json.dumps(messages)
    assert messages["langop-infra:tools[0].port"] == "must be at least 1, got 0; change the value"
    assert messages["langop-infra:tools[1].replicas"] == (
        "expected a whole number, got a string 'many'; write the value as such"
    )
    assert messages["langop-infra:tools[1].deploymentMode"] == (
        "'sidecarr' is not one of 'service', 'sidecar'; did you mean 'sidecar'?"
    )
    assert messages["langop-infra:tools[1].image"] == "required field is missing; add it"
    assert messages["langop-infra:tools[1].colour"].startswith("unknown field")
    assert "did you mean 'memory'?" in messages["langop-infra:agents[0].tools[0].name"]


def test_a_yaml_error_is_at_its_place_without_pyyaml_internals(tmp_path: Path) -> None:
    broken = "config:\n  langop-infra:tools:\n    - name: a\n     image: b\n"
    project = stack_project(tmp_path / "p", broken)
    code, _, err = run_cli(project, "validate", "--stack", "dev")
    assert code == 2
    assert "<unicode string>" not in err
    assert err.splitlines()[1] == (
        f"  - {project / 'Pulumi.dev.yaml'}:4:6: not valid YAML: while parsing a block "
        "collection (from line 3); did not find expected '-' indicator"
    )


def test_one_duplicate_name_is_one_problem(tmp_path: Path) -> None:
    twice = (
        "config:\n  langop-infra:namespace: apps\n  langop-infra:tools:\n"
        "    - {name: memory, image: ghcr.io/acme/m:1}\n"
        "    - {name: memory, image: ghcr.io/acme/m:1}\n"
    )
    code, out, _ = run_cli(
        stack_project(tmp_path / "p", twice), "validate", "-s", "dev", "-o", "json"
    )
    assert code == 2
    [problem] = json.loads(out)["problems"]
    assert problem["path"] == "langop-infra:tools[1].name"
    assert problem["message"].startswith("duplicate tool name 'memory' in namespace 'apps'")


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_python_api_error_names_the_users_line_and_the_component(
    tmp_path: Path, output: str
) -> None:
    program = """\
        import pulumi
        from langop_infra import LanguageTool

        def tools():
            LanguageTool("files", image="ghcr.io/acme/files:1", namespace="apps", port=70000)

        tools()
    """
    project = make_project(tmp_path / "p", program)
    argv = ["validate", "--stack", "dev", *(["-o", "json"] if output == "json" else [])]
    code, out, err = run_cli(project, *argv)
    assert code == 2
    built_at = f"{project / '__main__.py'}:5"
    if output == "text":
        assert err.splitlines() == [
            f"langop-infra validate: error: invalid LanguageTool 'files': 1 problem "
            f"(built at {built_at})",
            "  - port: must be at most 65535, got 70000; change the value",
        ]
        return
    [problem] = json.loads(out)["problems"]
    assert problem == {
        "path": "port",
        "message": "must be at most 65535, got 70000; change the value",
        "kind": "less_than_equal",
        "component": "LanguageTool 'files'",
        "builtAt": built_at,
    }
    assert re.fullmatch(r".*__main__\.py:5", problem["builtAt"])


@pytest.mark.parametrize(
    ("files", "where", "expected"),
    [
        (
            {"__main__.py": "import pulumi\nx = (1,\ny = 2\n"},
            "__main__.py:2:5",
            "SyntaxError: '(' was never closed\n    x = (1,\n        ^",
        ),
        (
            {"__main__.py": "import helper\n", "helper.py": "def f():\n  return 1\n    x = 2\n"},
            "helper.py:3:4",
            "IndentationError: unexpected indent\n    x = 2",
        ),
    ],
    ids=["main", "imported-module"],
)
def test_a_syntax_error_in_the_users_program_is_reported_as_theirs(
    tmp_path: Path, files: dict[str, str], where: str, expected: str
) -> None:
    """Their file, line and column and their line of code; none of runpy's or our frames."""
    project = make_project(tmp_path / "p", files["__main__.py"])
    for name, text in files.items():
        (project / name).write_text(text)
    code, out, err = run_cli(project, "render", "--stack", "dev")
    assert (code, out) == (1, "")
    assert err == (
        f"langop-infra render: error: your program does not compile: {project / where}: "
        f"{expected}\n"
    )
