"""Output options as kubectl and helm spell them: ``-o/--output`` on every command that prints
data, ``--json``/``--format``/``--out`` as deprecated aliases, ``--show-only`` and
``-l/--selector`` on render, the render's banner, and a subcommand's own usage for a bad flag."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.cli.main import main
from langop_infra.offline._select import SelectionError, label_selector
from tests.support.user_project import run_cli

ROOT = Path(__file__).resolve().parents[1]


def stream(out: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(out) if d]


@pytest.mark.parametrize("command", ["validate", "outputs", "graph"])
def test_every_stack_command_prints_json_and_yaml_with_dash_o(command: str) -> None:
    code, as_json, err = run_cli(ROOT, command, "--stack", "dev", "-o", "json")
    assert (code, err) == (0, "")
    code, as_yaml, err = run_cli(ROOT, command, "--stack", "dev", "--output", "yaml")
    assert (code, err) == (0, "")
    assert json.loads(as_json) == yaml.safe_load(as_yaml)


def test_render_json_is_a_kubernetes_list_of_the_same_objects() -> None:
    _, as_json, _ = run_cli(ROOT, "render", "--stack", "dev", "-o", "json")
    _, as_yaml, _ = run_cli(ROOT, "render", "--stack", "dev")
    document = json.loads(as_json)
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    assert document["items"] == stream(as_yaml)
    # Keys sorted, as the YAML stream and `kubectl get -o json` (Go's map order) print them.
    assert list(document) == ["apiVersion", "items", "kind"]
    for item in document["items"]:
        assert list(item) == sorted(item) and next(iter(item)) == "apiVersion", list(item)
        assert list(item["metadata"]) == sorted(item["metadata"])


def test_the_render_stream_opens_with_a_banner_naming_the_stack() -> None:
    _, out, _ = run_cli(ROOT, "render", "--stack", "staging")
    banner = out.split("---\n", 1)[0]
    assert banner.splitlines() == [
        "# Rendered offline by langop-infra from stack 'staging' (stacks/Pulumi.staging.yaml).",
        "# For review and diff, not for `kubectl apply`: Secret values are redacted as [secret],",
        "# and values known only at `pulumi up` show as [unknown].",
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [(["--json"], ["-o", "json"]), (["--format", "json"], ["-o", "json"])],
)
def test_old_spellings_still_work_with_a_deprecation_warning(
    old: list[str], new: list[str]
) -> None:
    command = "validate" if old == ["--json"] else "graph"
    code, out, err = run_cli(ROOT, command, "--stack", "dev", *old)
    assert code == 0
    assert err == (
        f"langop-infra {command}: warning: {old[0]} is deprecated and goes away in the next "
        "release; use -o json\n"
    )
    assert out == run_cli(ROOT, command, "--stack", "dev", *new)[1]


def test_output_dir_and_its_old_name(tmp_path: Path) -> None:
    code, _, err = run_cli(ROOT, "render", "--stack", "dev", "--output-dir", str(tmp_path / "a"))
    assert code == 0 and err.startswith("wrote 30 objects")
    code, _, err = run_cli(ROOT, "render", "--stack", "dev", "--out", str(tmp_path / "b"))
    assert code == 0
    assert "--out is deprecated and goes away in the next release; use --output-dir" in err
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.yaml"))
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.yaml"))


def test_show_only_picks_objects_by_kind_and_name() -> None:
    argv = ["render", "--stack", "dev", "--show-only", "deployment/memory"]
    code, out, err = run_cli(ROOT, *argv, "--show-only", "Service/memory")
    assert (code, err) == (0, "")
    assert [(d["kind"], d["metadata"]["name"]) for d in stream(out)] == [
        ("Service", "memory"),
        ("Deployment", "memory"),
    ]


def test_show_only_of_a_missing_object_lists_what_there_is() -> None:
    code, out, err = run_cli(ROOT, "render", "--stack", "dev", "--show-only", "Deployment/nope")
    assert (code, out) == (2, "")
    assert err.startswith(
        "langop-infra render: error: --show-only Deployment/nope: no such object in this render; "
        "objects: ConfigMap/"
    )
    assert "Deployment/memory" in err


def test_selector_keeps_only_matching_labels() -> None:
    selector = "app.kubernetes.io/component=tool,app.kubernetes.io/instance in (memory,docs)"
    code, out, _ = run_cli(ROOT, "render", "--stack", "dev", "-l", selector)
    assert code == 0
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in stream(out))
    assert kinds and all(name.startswith("memory") for _, name in kinds)
    assert ("Deployment", "memory") in kinds


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("a=1", {"a": "1"}, True),
        ("a==1", {"a": "2"}, False),
        ("a!=1", {}, True),
        ("a", {"a": ""}, True),
        ("!a", {"a": "x"}, False),
        ("a in (x, y),b notin (z)", {"a": "y", "b": "w"}, True),
        ("a in (x,y),b notin (z)", {"a": "y", "b": "z"}, False),
    ],
)
def test_label_selector_semantics(selector: str, labels: dict[str, str], matches: bool) -> None:
    assert label_selector(selector)(labels) is matches


def test_a_bad_selector_is_a_usage_error_before_rendering() -> None:
    with pytest.raises(SelectionError, match=re.escape("cannot read selector requirement 'a=(b'")):
        label_selector("a=(b")
    code, out, err = run_cli(ROOT, "render", "--stack", "dev", "-l", "a=(b")
    assert (code, out) == (2, "")
    assert err.startswith("langop-infra render: error: --selector: cannot read selector")


def test_an_unknown_flag_shows_the_subcommands_usage() -> None:
    with pytest.raises(SystemExit) as exited:
        run_cli(ROOT, "render", "--stack", "dev", "--bogus")
    assert exited.value.code == 2


def test_an_unknown_flag_message_is_the_subcommands(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["validate", "--stack", "dev", "--bogus"])
    err = capsys.readouterr().err
    assert err.startswith("usage: langop-infra validate ")
    assert err.endswith("langop-infra validate: error: unrecognized arguments: --bogus\n")


def test_diff_prints_json_and_yaml(tmp_path: Path) -> None:
    _, head, _ = run_cli(ROOT, "render", "--stack", "dev")
    (tmp_path / "new.yaml").write_text(head)
    (tmp_path / "old.yaml").write_text(head.replace("memory-mcp:main", "memory-mcp:v1.3.0"))
    argv = ["diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml")]
    as_json, as_yaml = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(as_json):
        assert main([*argv, "-o", "json"]) == 1
    with contextlib.redirect_stdout(as_yaml):
        assert main([*argv, "-o", "yaml"]) == 1
    assert json.loads(as_json.getvalue()) == yaml.safe_load(as_yaml.getvalue())
    assert "v1.3.0" in as_json.getvalue()
