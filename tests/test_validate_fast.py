"""``validate`` of a stack-file project reads the stack file alone (no Pulumi imported) and
reports exactly what a run of the stack program under the mock engine reports.

Each case runs ``langop-infra validate`` twice in this process, once from the stack file
(the default) and once with ``LANGOP_INFRA_VALIDATE_RUN=1`` (the program under the mock
engine, as before), in the default, ``-o json`` and ``--strict`` modes; exit codes, stdout and
stderr must be equal. The cases: the repository's stacks, every case of the bad-input matrix
(``tests/test_bad_input.py``), the stack files of ``tests/test_problems_at_once.py`` and
stacks that provoke each kind of warning.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from langop_infra.cli import _validate as validate_command
from langop_infra.cli._stack import CommandError
from langop_infra.cli.main import build_parser, main as cli_main
from langop_infra.core.problems import SpecError
from langop_infra.offline._validate import is_stack_program, validate_stack_file
from tests import test_bad_input as bad, test_problems_at_once as at_once

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
MODES: list[list[str]] = [[], ["-o", "json"], ["--strict"], ["--strict", "-o", "json"]]
UNPINNED = "ghcr.io/acme/memory-mcp:1.4.0"


def run_cli(argv: list[str], *, run_program: bool) -> tuple[int, str, str]:
    """``langop-infra validate ARGV`` in-process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    before = os.environ.get("LANGOP_INFRA_VALIDATE_RUN")
    os.environ["LANGOP_INFRA_VALIDATE_RUN"] = "1" if run_program else "0"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(["validate", *argv])
    finally:
        if before is None:
            del os.environ["LANGOP_INFRA_VALIDATE_RUN"]
        else:
            os.environ["LANGOP_INFRA_VALIDATE_RUN"] = before
    return code, out.getvalue(), err.getvalue()


def outcome(argv: list[str], *, run_program: bool) -> tuple[object, str, str]:
    """What ``validate ARGV`` found, before any mode formats it: the warnings, or the error
    (exit code, message, problems); with what was printed meanwhile."""
    args = build_parser(["validate"]).parse_args(["validate", *argv])
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LANGOP_INFRA_VALIDATE_RUN", "1" if run_program else "0")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                found: object = ("warnings", validate_command.found_warnings(args))
            except CommandError as exc:
                found = ("error", exc.code, str(exc), exc.problems)
    return found, out.getvalue(), err.getvalue()


def assert_same_both_ways(argv: list[str]) -> list[tuple[int, str, str]]:
    """Both ways find the same; returns every mode's exit code, stdout and stderr. The modes
    only format what was found (``test_every_mode_prints_the_same_both_ways``), so one run of
    the program, not one per mode, tells whether they agree."""
    fast = outcome(argv, run_program=False)
    assert fast == outcome(argv, run_program=True), "validate differs from the program's run"
    return [run_cli([*argv, *mode], run_program=False) for mode in MODES]


@pytest.mark.parametrize("name", ["repository-dev", "warnings", "problems"])
def test_every_mode_prints_the_same_both_ways(name: str, tmp_path: Path) -> None:
    """Each mode run in full both ways: the same exit code, stdout and stderr."""
    argv = ["--project-dir", str(REPO), "--stack", "dev"]
    if name != "repository-dev":
        document = warning_documents()["unpinned-image"] if name == "warnings" else None
        text = stack_of(document or bad.CASES[0].document)
        argv[2:] = ["--config", str(write(tmp_path, text))]
    for mode in MODES:
        fast = run_cli([*argv, *mode], run_program=False)
        assert fast == run_cli([*argv, *mode], run_program=True), mode
        assert fast[0] == {
            "repository-dev": 0,
            "warnings": 2 if mode[:1] == ["--strict"] else 0,
        }.get(name, 2)


def assert_read_from_the_file(path: Path) -> None:
    """The fast way was taken: it answered (warnings, or the problems it raised)."""
    try:
        warnings = validate_stack_file(REPO, config_file=path)
    except SpecError:
        return
    assert warnings is not None, "validate fell back to running the program"


def write(tmp_path: Path, text: str | None) -> Path:
    path = tmp_path / "Pulumi.bad.yaml"
    if text is not None:
        path.write_text(text)
    return path


def stack_of(document: dict[str, Any]) -> str:
    return bad.stack_text({f"{bad.PREFIX}{k}": v for k, v in document.items()})


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_repository_stacks_validate_the_same_both_ways(stack: str) -> None:
    results = assert_same_both_ways(["--stack", stack, "--project-dir", str(REPO)])
    assert results[1][0] == 0
    report = json.loads(results[1][1])
    assert report["valid"] is True
    assert validate_stack_file(REPO, stack=stack) == report["warnings"]


@pytest.mark.parametrize("case", bad.params(bad.CASES))
def test_each_bad_input_case_validates_the_same_both_ways(case: bad.Case, tmp_path: Path) -> None:
    path = write(tmp_path, stack_of(case.document))
    results = assert_same_both_ways(["--config", str(path), "--project-dir", str(REPO)])
    code, out, _ = results[1]
    assert code == 2
    paths = [p["path"] for p in json.loads(out)["problems"]]
    assert bad.PREFIX + case.path in paths
    assert_read_from_the_file(path)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in bad.STACK_CASES])
def test_each_bad_stack_file_validates_the_same_both_ways(
    case: bad.StackCase, tmp_path: Path
) -> None:
    path = write(tmp_path, case.text)
    results = assert_same_both_ways(["--config", str(path), "--project-dir", str(REPO)])
    assert results[0][0] == 2
    assert case.path.replace("{file}", str(path)) in results[0][2]


def warning_documents() -> dict[str, dict[str, Any]]:
    """Valid documents, each provoking one kind of warning (none without a cause)."""
    base = bad.BASE
    literal = bad.doc((f"{bad.HDR0}", {"name": "Authorization", "value": "Bearer canary-1"}))
    unpinned = bad.doc(("tools[0].image", UNPINNED))
    restricted = ("agents[0].egress", "restricted")
    not_admitted = bad.doc(restricted, ("agents[0].egressTo", [{"cidr": "10.0.0.0/8"}]))
    open_egress = bad.doc(restricted, ("agents[0].egressTo", [{"cidr": "0.0.0.0/0"}]))
    passthrough = bad.doc(("agents[0].model", "gpt-4o-mini"))
    override = bad.doc(("agents[0].env", {"AGENT_NAME": "mine"}))
    strict = copy.deepcopy(not_admitted)
    strict["defaults"] = {**strict["defaults"], "strictEgress": True}
    return {
        "base": base,
        "literal-credential-header": literal,
        "unpinned-image": unpinned,
        "egress-not-admitted": not_admitted,
        "world-open-egress": open_egress,
        "passthrough-model": passthrough,
        "env-overrides-injected": override,
        "strict-egress": strict,
    }


# Exit code and whether there are warnings, by document; the rest are valid and warn.
EXPECTED = {"base": (0, False), "strict-egress": (2, False)}


@pytest.mark.parametrize("name", list(warning_documents()))
def test_warnings_are_the_same_both_ways(name: str, tmp_path: Path) -> None:
    path = write(tmp_path, stack_of(warning_documents()[name]))
    results = assert_same_both_ways(["--config", str(path), "--project-dir", str(REPO)])
    warnings = json.loads(results[1][1])["warnings"]
    assert (results[0][0], bool(warnings)) == EXPECTED.get(name, (0, True))
    assert results[2][0] == (2 if warnings or results[0][0] else 0)
    assert_read_from_the_file(path)


def test_the_stack_files_of_problems_at_once_validate_the_same_both_ways(
    tmp_path: Path,
) -> None:
    texts = [
        at_once.STACK,
        "config:\n  langop-infra:namespace: a\n  langop-infra:tools:\n"
        "    - name: m\n      port: 1\n      port: 2\n",
        "config:\n  langop-infra:namespace: apps\n  langop-infra:tools:\n"
        f"    - {{name: memory, image: '{UNPINNED}'}}\n",
    ]
    for text in texts:
        path = write(tmp_path, text)
        results = assert_same_both_ways(["--config", str(path), "--project-dir", str(REPO)])
        assert results[1][0] in (0, 2) and results[1][1]


def test_a_users_own_program_still_runs_under_the_mock_engine(tmp_path: Path) -> None:
    """A program that is not the stack program is run: its own checks count."""
    (tmp_path / "Pulumi.yaml").write_text("name: langop-infra\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "from langop_infra.program.stack import main\n"
        "main()\n"
        "raise ValueError('the project checks this itself')\n"
    )
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(stack_of(bad.BASE))
    assert not is_stack_program(tmp_path / "__main__.py")
    assert validate_stack_file(tmp_path, stack="dev") is None
    code, out, err = run_cli(["--stack", "dev", "--project-dir", str(tmp_path)], run_program=False)
    assert (code, out) == (1, "")
    assert "the project checks this itself" in err


def test_the_stack_program_is_recognised_with_or_without_its_docstring(tmp_path: Path) -> None:
    main = tmp_path / "__main__.py"
    main.write_text((REPO / "__main__.py").read_text())
    assert is_stack_program(main)
    main.write_text("from langop_infra.program.stack import main\n\nmain()\n")
    assert is_stack_program(main)
    main.write_text("from langop_infra.program.stack import main\nmain()\nprint('more')\n")
    assert not is_stack_program(main)


def test_stacks_that_read_other_stacks_run_the_program(tmp_path: Path) -> None:
    document = {**bad.BASE, "toolsFrom": [{"stack": "acme/langop-infra/shared"}]}
    path = write(tmp_path, stack_of(document))
    assert validate_stack_file(REPO, config_file=path) is None


def test_validate_of_a_stack_file_project_imports_no_pulumi() -> None:
    """Nor jsonschema (issue 41): the dev stack's inline inputSchema is plain draft-07, checked
    without it; nor the manifest importers, which only a Kubernetes manifest needs."""
    code = (
        "import sys\n"
        "from langop_infra.cli.main import main\n"
        f"status = main(['validate', '--stack', 'dev', '--project-dir', {str(REPO)!r}])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pulumi', 'pulumi_kubernetes', 'grpc', 'jsonschema', 'referencing'))\n"
        "loaded += [m for m in sys.modules if m.startswith('langop_infra.offline.importers')]\n"
        "print(status, loaded)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGOP_INFRA_VALIDATE")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0 []"


def test_a_stack_with_every_feature_validates_the_same_both_ways(tmp_path: Path) -> None:
    """The dev stack (a managed memory, A2A, a schedule, the gateway) unpinned, with an
    HttpTool: the same both ways, each image warned of once, where the user wrote it."""
    import re

    import yaml

    text = re.sub(r"@sha256:[0-9a-f]+", "", (REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    stack = yaml.safe_load(text)
    config = stack["config"]
    config[f"{bad.PREFIX}memories"][0]["image"] = UNPINNED
    config[f"{bad.PREFIX}httpTools"] = [
        {
            "name": "lookup",
            "displayName": "Lookup",
            "description": "Looks a record up",
            "endpoint": "https://api.acme.example/lookup",
            "method": "GET",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
        }
    ]
    path = write(tmp_path, yaml.safe_dump(stack, sort_keys=False))
    results = assert_same_both_ways(["--config", str(path), "--project-dir", str(REPO)])
    warnings = json.loads(results[1][1])["warnings"]
    images = [w.split(": image ")[0] for w in warnings if "has no digest" in w]
    assert len(images) == len(set(images)) and f"{bad.PREFIX}memories[0].image" in images
    tools = len(config[f"{bad.PREFIX}tools"])
    assert not any(f"tools[{tools}]" in w for w in warnings)  # the memory's is not a tool
    assert_read_from_the_file(path)
