"""``langop-infra diff OLD NEW`` and ``manifest_diff`` on hand-made and real renders."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra._errors import REDACTED
from langop_infra.cli.main import main
from langop_infra.core.problems import SpecError
from langop_infra.offline._diff_report import report
from langop_infra.offline._manifest_diff import (
    FieldChange,
    describe,
    diff_renders,
    field_changes,
    load_render,
    object_key,
)
from langop_infra.offline._render import dump_stream

ROOT = Path(__file__).parents[1]
DEPLOYMENT_KEY = ("apps/v1", "Deployment", "shop", "seller")


def deployment(**changes: Any) -> dict[str, Any]:
    """A Deployment with two containers, each with env; ``changes`` edits the main one."""
    main_container: dict[str, Any] = {
        "name": "seller",
        "image": "ghcr.io/acme/seller:1",
        "args": ["--verbose", "--port=8080"],
        "env": [
            {"name": "MODE", "value": "fast"},
            {"name": "REGION", "value": "eu"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "seller-env", "key": "T"}}},
        ],
    }
    main_container.update(changes)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "seller", "namespace": "shop", "labels": {"app": "seller"}},
        "spec": {
            "replicas": 1,
            "template": {
                "spec": {
                    "containers": [
                        main_container,
                        {"name": "files", "image": "ghcr.io/acme/files:1", "env": []},
                    ]
                }
            },
        },
    }


def secret(**values: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "api-keys", "namespace": "shop"},
        "stringData": values,
    }


def namespace(name: str = "shop") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def keyed(*manifests: dict[str, Any]) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    return {object_key(m): m for m in manifests}


def changes_of(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(c.path, c.old, c.new) for c in field_changes(old, new)]


def write_stream(path: Path, *manifests: dict[str, Any]) -> Path:
    path.write_text(dump_stream(list(manifests)))
    return path


def run_diff(old: Path, new: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["diff", str(old), str(new)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@cache
def render_stream(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["render", "--project-dir", str(ROOT), *argv])
    assert code == 0, err.getvalue()
    return out.getvalue()


# --- manifest_diff ----------------------------------------------------------------------------


def test_identical_renders_have_no_differences() -> None:
    old = keyed(namespace(), deployment(), secret(token=REDACTED))
    result = diff_renders(old, copy.deepcopy(old))
    assert result.equal
    assert (result.added, result.removed, result.changed) == ([], [], {})
    assert result.unseen_secrets == 1
    assert report(result).splitlines() == [
        "note: 1 secret value is redacted, so secret changes cannot be seen; "
        "render both with --fingerprint-key-env VAR",
        "no differences",
    ]


def test_added_removed_and_changed_objects() -> None:
    old = keyed(namespace(), deployment(), secret(token=REDACTED))
    new = keyed(namespace(), deployment(image="ghcr.io/acme/seller:2"), namespace("extra"))
    result = diff_renders(old, new)
    assert not result.equal
    assert result.added == [("v1", "Namespace", "", "extra")]
    assert result.removed == [("v1", "Secret", "shop", "api-keys")]
    assert result.changed == {
        DEPLOYMENT_KEY: [
            FieldChange(
                "spec.template.spec.containers[name=seller].image",
                "ghcr.io/acme/seller:1",
                "ghcr.io/acme/seller:2",
            )
        ]
    }
    assert report(result) == (
        "+ Namespace extra\n"
        "- Secret shop/api-keys\n"
        "~ Deployment shop/seller\n"
        "    spec.template.spec.containers[name=seller].image: "
        "ghcr.io/acme/seller:1 -> ghcr.io/acme/seller:2\n"
        "1 added, 1 removed, 1 changed (1 field)\n"
    )


def test_named_lists_are_matched_by_name() -> None:
    """An entry inserted first does not make every later entry look changed."""
    env = [
        {"name": "DEBUG", "value": "1"},
        {"name": "MODE", "value": "fast"},
        {"name": "REGION", "value": "us"},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "seller-env", "key": "T"}}},
    ]
    assert changes_of(deployment(), deployment(env=env)) == [
        ("spec.template.spec.containers[name=seller].env[name=REGION].value", "eu", "us"),
        (
            "spec.template.spec.containers[name=seller].env[name=DEBUG]",
            _absent(),
            {"name": "DEBUG", "value": "1"},
        ),
    ]
    # DEBUG was inserted, nothing moved: MODE, REGION and TOKEN keep their order.


def test_removed_named_entry_and_nested_change_inside_it() -> None:
    env = [
        {"name": "MODE", "value": "fast"},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "seller-env", "key": "U"}}},
    ]
    changes = changes_of(deployment(), deployment(env=env))
    prefix = "spec.template.spec.containers[name=seller].env"
    assert changes == [
        (f"{prefix}[name=REGION]", {"name": "REGION", "value": "eu"}, _absent()),
        (f"{prefix}[name=TOKEN].valueFrom.secretKeyRef.key", "T", "U"),
    ]


def test_unnamed_lists_are_compared_by_position() -> None:
    changes = changes_of(deployment(), deployment(args=["--verbose", "--port=9090", "--x"]))
    prefix = "spec.template.spec.containers[name=seller].args"
    assert changes == [
        (f"{prefix}[1]", "--port=8080", "--port=9090"),
        (f"{prefix}[2]", _absent(), "--x"),
    ]


def test_a_change_of_type_is_a_change() -> None:
    assert changes_of({"replicas": 1}, {"replicas": "1"}) == [("replicas", 1, "1")]
    assert changes_of({"a": {"b": 1}}, {"a": {"b": 1}}) == []
    assert changes_of({"a": {"b": 1}}, {}) == [("a", {"b": 1}, _absent())]


def test_report_shows_absent_values_and_describes_cluster_scoped_objects() -> None:
    old = keyed(deployment())
    new = keyed(deployment(workingDir="/srv"))
    text = report(diff_renders(old, new))
    assert "    spec.template.spec.containers[name=seller].workingDir: (absent) -> /srv\n" in text
    assert describe(("v1", "Namespace", "", "shop")) == "Namespace shop"
    assert describe(DEPLOYMENT_KEY) == "Deployment shop/seller"


def test_long_values_are_shortened_around_where_they_differ() -> None:
    old = keyed(deployment(image="ghcr.io/acme/" + "x" * 400 + "-old" + "y" * 300))
    new = keyed(deployment(image="ghcr.io/acme/" + "x" * 400 + "-new" + "y" * 300))
    line = report(diff_renders(old, new)).splitlines()[1]
    before, after = line.split(": ", 1)[1].split(" -> ")
    assert before.startswith("...x") and before.endswith("y...")
    assert "-old" in before and "-new" in after
    assert len(before) < 200 and len(after) < 200


def _absent() -> Any:
    from langop_infra.offline import _manifest_diff as manifest_diff

    return manifest_diff._MISSING


# --- the diff command -------------------------------------------------------------------------


def test_diff_command_exit_codes_on_stream_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write_stream(tmp_path / "old.yaml", namespace(), deployment(), secret(token=REDACTED))
    same = write_stream(tmp_path / "same.yaml", namespace(), deployment(), secret(token=REDACTED))
    new = write_stream(
        tmp_path / "new.yaml", namespace(), deployment(image="ghcr.io/acme/seller:2")
    )
    code, out, err = run_diff(old, same, capsys)
    assert (code, out.splitlines()[-1], err) == (0, "no differences", "")
    code, out, err = run_diff(old, new, capsys)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "- Secret shop/api-keys",
        "~ Deployment shop/seller",
        "    spec.template.spec.containers[name=seller].image: "
        "ghcr.io/acme/seller:1 -> ghcr.io/acme/seller:2",
        "0 added, 1 removed, 1 changed (1 field)",
    ]
    code, out, _ = run_diff(new, old, capsys)
    assert code == 1
    assert out.splitlines()[0] == "+ Secret shop/api-keys"


def test_diff_command_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_stream(tmp_path / "good.yaml", namespace())
    missing = tmp_path / "missing.yaml"
    code, out, err = run_diff(good, missing, capsys)
    assert (code, out) == (2, "")
    assert str(missing) in err and "no such file or directory" in err
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    code, out, err = run_diff(good, empty, capsys)
    assert (code, out) == (2, "")
    assert err == (
        "langop-infra diff: error: invalid render: 1 problem\n"
        f"  - {empty}: holds no Kubernetes objects (did the render fail?): not a render\n"
    )
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "values.yaml").write_text("replicas: 2\n")
    code, out, err = run_diff(folder, good, capsys)
    assert (code, out) == (2, "")
    assert f"{folder}: a folder without .langop-render (written by render --out)" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("---\n- just\n- a list\n")
    code, _, err = run_diff(good, bad, capsys)
    assert code == 2
    assert str(bad) in err and "not an object" in err
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: [unclosed\n")
    code, _, err = run_diff(broken, good, capsys)
    assert code == 2
    assert str(broken) in err and "not valid YAML" in err
    with pytest.raises(SpecError):
        load_render(missing)


def test_secrets_stay_redacted_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two renders of the dev stack whose secrets differ: the report shows the Secret's
    changed keys, never a value."""
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    secrets = config["config"]["langop-infra:secrets"]
    secrets["search-credentials"]["token"] = "rotated-search-token"
    secrets["search-credentials"]["backup"] = "plain-backup-token"
    changed = tmp_path / "Pulumi.rotated.yaml"
    changed.write_text(yaml.safe_dump(config, sort_keys=False))
    old = tmp_path / "dev.yaml"
    old.write_text(render_stream("--stack", "dev"))
    new = tmp_path / "rotated.yaml"
    new.write_text(render_stream("--config", str(changed)))
    code, out, _ = run_diff(old, new, capsys)
    assert code == 1
    # The rotated token is invisible without fingerprints, and the report says so.
    assert out == (
        "~ Secret research-dev/search-credentials\n"
        f"    stringData.backup: (absent) -> '{REDACTED}'\n"
        "note: 2 secret values are redacted, so secret changes cannot be seen; "
        "render both with --fingerprint-key-env VAR\n"
        "0 added, 0 removed, 1 changed (1 field)\n"
    )
    for value in ("rotated-search-token", "plain-backup-token", "dev-search-token-not-for-prod"):
        assert value not in out


# --- real renders -----------------------------------------------------------------------------


def test_stream_and_out_directory_of_one_render_are_equal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = tmp_path / "dev.yaml"
    stream.write_text(render_stream("--stack", "dev"))
    tree = tmp_path / "dev"
    assert (
        main(["render", "--stack", "dev", "--project-dir", str(ROOT), "--output-dir", str(tree)])
        == 0
    )
    capsys.readouterr()
    assert len(load_render(tree)) == len(load_render(stream)) == 30
    for pair in ((stream, tree), (tree, stream)):
        code, out, err = run_diff(*pair, capsys)
        assert (code, out.splitlines()[-1], err) == (0, "no differences", "")


def test_diff_of_dev_and_prod_renders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dev = tmp_path / "dev"
    assert (
        main(["render", "--stack", "dev", "--project-dir", str(ROOT), "--output-dir", str(dev)])
        == 0
    )
    prod = tmp_path / "prod.yaml"
    prod.write_text(render_stream("--stack", "prod"))
    capsys.readouterr()
    code, out, err = run_diff(dev, prod, capsys)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    # Different namespaces: every object is new in prod, every dev object is gone.
    assert lines[-1] == "33 added, 30 removed, 0 changed"
    assert not any(line.startswith("note:") for line in lines)  # no object in both
    added = {line[2:] for line in lines if line.startswith("+ ")}
    removed = {line[2:] for line in lines if line.startswith("- ")}
    assert {
        "NetworkPolicy research/default-deny-ingress",
        "NetworkPolicy research/researcher-egress",
        "NetworkPolicy research/triage-egress",
        "Namespace research",
    } <= added
    assert {"Namespace research-dev", "Deployment research-dev/researcher"} <= removed
    assert not any(line.startswith("~ ") for line in lines)


def test_diff_of_prod_settings_applied_to_the_dev_namespace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """prod's stack file with dev's namespace: the diff shows what prod changes, field by
    field, on the same objects."""
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    config["config"]["langop-infra:namespace"] = "research-dev"
    for tool in config["config"]["langop-infra:tools"]:
        tool["env"] = {
            k: v.replace("research.svc", "research-dev.svc") for k, v in tool["env"].items()
        }
    like_prod = tmp_path / "Pulumi.prodlike.yaml"
    like_prod.write_text(yaml.safe_dump(config, sort_keys=False))
    old = tmp_path / "dev.yaml"
    old.write_text(render_stream("--stack", "dev"))
    new = tmp_path / "prodlike.yaml"
    new.write_text(render_stream("--config", str(like_prod)))
    result = diff_renders(load_render(old), load_render(new))
    # prod's models bring their keys' Secrets (the agents' own gateway keys among them) and
    # the gateway's egress policy.
    assert [describe(k) for k in result.added] == [
        "NetworkPolicy research-dev/default-deny-ingress",
        "NetworkPolicy research-dev/docs-search-egress",
        "NetworkPolicy research-dev/gateway-egress",
        "NetworkPolicy research-dev/memory-egress",
        "NetworkPolicy research-dev/researcher-egress",
        "NetworkPolicy research-dev/triage-egress",
        "PodDisruptionBudget research-dev/docs-search",
        "PodDisruptionBudget research-dev/researcher",
        "PodDisruptionBudget research-dev/triage",
        "Secret research-dev/anthropic",
        "Secret research-dev/model-gateway",
        "Secret research-dev/model-gateway-agents",
        "Secret research-dev/openai",
    ]
    # dev's A2A card and Service, scheduled agent and managed memory (#38): not in prod
    assert sorted(describe(k) for k in result.removed) == [
        "ConfigMap research-dev/morning-digest-config",
        "ConfigMap research-dev/researcher-a2a-card",
        "CronJob research-dev/morning-digest",
        "Deployment research-dev/team-notes",
        "NetworkPolicy research-dev/morning-digest-ingress",
        "NetworkPolicy research-dev/researcher-a2a-ingress",
        "NetworkPolicy research-dev/team-notes-ingress",
        "PersistentVolumeClaim research-dev/team-notes-data",
        "Service research-dev/researcher",
        "Service research-dev/team-notes",
    ]
    docs = {
        c.path: (c.old, c.new)
        for c in result.changed[("apps/v1", "Deployment", "research-dev", "docs-search")]
    }
    container = "spec.template.spec.containers[name=docs-search]"
    assert docs["spec.replicas"] == (1, 3)
    assert docs[f"{container}.imagePullPolicy"] == ("Always", "IfNotPresent")
    assert docs[f"{container}.image"][1].startswith("ghcr.io/acme/docs-search-mcp@sha256:")
    assert docs[f"{container}.resources.limits.memory"] == ("256Mi", "2Gi")
    claim = result.changed[("v1", "PersistentVolumeClaim", "research-dev", "memory-data")]
    assert {c.path: (c.old, c.new) for c in claim} == {
        "spec.resources.requests.storage": ("1Gi", "10Gi"),
        "spec.storageClassName": (_absent(), "ssd"),
        # dev's image has the tag `main`; prod's only a digest, so no version label
        "metadata.labels.app.kubernetes.io/version": ("main", _absent()),
    }
    # Both Secrets are redacted in both renders: nothing to report there.
    assert not any(k[1] == "Secret" for k in result.changed)
    code, out, _ = run_diff(old, new, capsys)
    assert code == 1
    assert "    spec.replicas: 1 -> 3\n" in out
    assert f"13 added, 10 removed, {len(result.changed)} changed (" in out.splitlines()[-1]


# --- review features: line diffs, moves, formats, colour, secret rotation ---------------------


def config_map(text: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "seller-config", "namespace": "shop"},
        "data": {"config.yaml": text},
    }


CONFIG_BEFORE = (
    "tools:\n  kb-search:\n    endpoint: http://kb:8080\nmcpServers:\n- name: s\n"
    "  timeoutSeconds: 20\n"
)


def test_multi_line_strings_get_a_line_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The change itself shows, not two strings cut at the same place."""
    old = write_stream(tmp_path / "old.yaml", config_map(CONFIG_BEFORE))
    new = write_stream(tmp_path / "new.yaml", config_map(CONFIG_BEFORE.replace("20", "45")))
    code, out, _ = run_diff(old, new, capsys)
    assert code == 1
    assert out.splitlines() == [
        "~ ConfigMap shop/seller-config",
        "    data.config.yaml:",
        "      @@ -4,3 +4,3 @@",
        "       mcpServers:",
        "       - name: s",
        "      -  timeoutSeconds: 20",
        "      +  timeoutSeconds: 45",
        "0 added, 0 removed, 1 changed (1 field)",
    ]


def test_named_entries_that_moved_are_reported_as_moves() -> None:
    env = [
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "seller-env", "key": "T"}}},
        {"name": "MODE", "value": "fast"},
        {"name": "REGION", "value": "eu"},
    ]
    result = diff_renders(keyed(deployment()), keyed(deployment(env=env)))
    (changes,) = result.changed.values()
    prefix = "spec.template.spec.containers[name=seller].env"
    assert changes == [FieldChange(f"{prefix}[name=TOKEN]", 2, 0, "moved")]
    assert "    " + prefix + "[name=TOKEN]: moved from position 2 to 0" in report(result)
    assert report(result).splitlines()[-1] == "0 added, 0 removed, 1 changed (1 moved)"


def test_an_insertion_moves_nothing() -> None:
    env = [
        {"name": "FIRST", "value": "1"},
        *deployment()["spec"]["template"]["spec"]["containers"][0]["env"],
    ]
    changes = diff_renders(keyed(deployment()), keyed(deployment(env=env))).changed
    assert [c.kind for c in changes[DEPLOYMENT_KEY]] == ["added"]


def test_markdown_format_is_a_comment_with_a_summary_and_a_diff_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write_stream(tmp_path / "old.yaml", config_map(CONFIG_BEFORE + "x: '```'\n"))
    new = write_stream(tmp_path / "new.yaml", config_map(CONFIG_BEFORE.replace("20", "45")))
    code = main(["diff", str(old), str(new), "-o", "markdown"])
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "**langop-infra diff**: 0 added, 0 removed, 1 changed (1 field)"
    # The body holds a run of three backticks: the fence is longer, so it stays one block.
    assert lines[2] == "````diff" and lines[-1] == "````"
    assert "      +  timeoutSeconds: 45" in lines
    assert "      -x: '```'" in lines


def test_json_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write_stream(tmp_path / "old.yaml", namespace(), deployment())
    new = write_stream(tmp_path / "new.yaml", deployment(image="ghcr.io/acme/seller:2"))
    assert main(["diff", str(old), str(new), "-o", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["equal"] is False
    assert report["summary"] == "0 added, 1 removed, 1 changed (1 field)"
    assert report["removed"] == [
        {"apiVersion": "v1", "kind": "Namespace", "namespace": "", "name": "shop"}
    ]
    assert report["changed"][0]["changes"] == [
        {
            "path": "spec.template.spec.containers[name=seller].image",
            "kind": "changed",
            "old": "ghcr.io/acme/seller:1",
            "new": "ghcr.io/acme/seller:2",
        }
    ]


def _diff_on_a_terminal(old: Path, new: Path, env: dict[str, str]) -> str:
    """Run the diff as a process whose stdout is a pseudo-terminal; return what it wrote."""
    import os
    import sys

    from tests.support.terminal import run_on_a_terminal

    done, out = run_on_a_terminal(
        [sys.executable, "-m", "langop_infra", "diff", str(old), str(new)],
        stream="stdout",
        env={**os.environ, **env},
    )
    assert done.returncode == 1, done.stderr
    return out


def test_colour_on_a_terminal_unless_no_color(tmp_path: Path) -> None:
    old = write_stream(tmp_path / "old.yaml", namespace(), deployment())
    new = write_stream(tmp_path / "new.yaml", deployment(image="ghcr.io/acme/seller:2"))
    # An empty NO_COLOR counts as unset (no-color.org).
    coloured = _diff_on_a_terminal(old, new, {"NO_COLOR": ""})
    assert "\x1b[31m- Namespace shop\x1b[0m" in coloured
    assert "\x1b[33m~ Deployment shop/seller\x1b[0m" in coloured
    plain = _diff_on_a_terminal(old, new, {"NO_COLOR": "1"})
    assert "\x1b[" not in plain and "- Namespace shop" in plain


def test_colour_is_off_in_a_pipe_and_forced_with_always(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write_stream(tmp_path / "old.yaml", namespace(), deployment())
    new = write_stream(tmp_path / "new.yaml", deployment())
    assert main(["diff", str(old), str(new)]) == 1
    assert "\x1b[" not in capsys.readouterr().out
    assert main(["diff", str(old), str(new), "--color", "always"]) == 1
    assert capsys.readouterr().out.startswith("\x1b[31m- Namespace shop\x1b[0m\n")


KEY = "a-fingerprint-key-for-tests-0123456789"
ROTATED = "rotated-search-token-canary"


def _rotated_stack(tmp_path: Path) -> Path:
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    config["config"]["langop-infra:secrets"]["search-credentials"]["token"] = ROTATED
    path = tmp_path / "Pulumi.rotated.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _render_to(path: Path, monkeypatch: pytest.MonkeyPatch, key: str | None, *argv: str) -> Path:
    if key is not None:
        monkeypatch.setenv("DIFF_KEY", key)
        argv = (*argv, "--fingerprint-key-env", "DIFF_KEY")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["render", "--project-dir", str(ROOT), *argv]) == 0, err.getvalue()
    path.write_text(out.getvalue())
    return path


def test_a_rotated_secret_shows_as_changed_with_fingerprints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rotated = _rotated_stack(tmp_path)
    old = _render_to(tmp_path / "old.yaml", monkeypatch, KEY, "--stack", "dev")
    new = _render_to(tmp_path / "new.yaml", monkeypatch, KEY, "--config", str(rotated))
    rendered = old.read_text() + new.read_text()
    # Keyed fingerprints only: no value, no key, no plain hash of a value.
    import hashlib

    for value in (ROTATED, "dev-search-token-not-for-prod", KEY):
        assert value not in rendered
        assert hashlib.sha256(value.encode()).hexdigest() not in rendered
    assert rendered.count("[secret hmac-sha256 key=") == 4
    code, out, _ = run_diff(old, new, capsys)
    assert code == 1
    # The researcher reads that Secret: its pods roll (a digest keyed by the user's key).
    lines = out.splitlines()
    assert lines[0] == "~ Deployment research-dev/researcher"
    assert lines[1].startswith(
        "    spec.template.metadata.annotations.langop.io/secret-digest: hmac-sha256:"
    )
    assert lines[2:] == [
        "~ Secret research-dev/search-credentials",
        "    stringData.token: secret value changed",
        "0 added, 0 removed, 2 changed (1 field, 1 secret value changed)",
    ]
    same = _render_to(tmp_path / "same.yaml", monkeypatch, KEY, "--stack", "dev")
    code, out, _ = run_diff(old, same, capsys)
    assert (code, out) == (0, "no differences\n")


def test_fingerprints_made_with_other_keys_cannot_be_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _render_to(tmp_path / "old.yaml", monkeypatch, KEY, "--stack", "dev")
    new = _render_to(tmp_path / "new.yaml", monkeypatch, KEY[::-1], "--stack", "dev")
    code, out, _ = run_diff(old, new, capsys)
    assert code == 0
    assert out.splitlines() == [
        "note: the renders' secret fingerprints were made with different keys, so secret "
        "changes cannot be seen; render both with the same --fingerprint-key-env key",
        "no differences",
    ]


def test_a_fingerprint_key_must_be_set_and_long(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DIFF_KEY", raising=False)
    argv = ["render", "--project-dir", str(ROOT), "--stack", "dev", "--fingerprint-key-env"]
    assert main([*argv, "DIFF_KEY"]) == 2
    assert capsys.readouterr().err == (
        "langop-infra render: error: --fingerprint-key-env: environment variable DIFF_KEY is "
        "not set; put a random key in it\n"
    )
    monkeypatch.setenv("DIFF_KEY", "short")
    assert main([*argv, "DIFF_KEY"]) == 2
    err = capsys.readouterr().err
    assert "shorter than 16 bytes" in err and "short;" not in err


def test_secure_values_are_fingerprinted_by_their_ciphertext(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Render cannot decrypt `secure:` values: setting one again (a new ciphertext) shows."""
    text = (ROOT / "stacks" / "Pulumi.staging.yaml").read_text()
    again = tmp_path / "Pulumi.staging.yaml"
    again.write_text(text.replace("staging0search0token0ciphertext0AAAB", "other0cipher0AAAB"))
    old = _render_to(tmp_path / "old.yaml", monkeypatch, KEY, "--stack", "staging")
    new = _render_to(tmp_path / "new.yaml", monkeypatch, KEY, "--config", str(again))
    code, out, _ = run_diff(old, new, capsys)
    assert code == 1
    assert "    stringData.token: secret value changed\n" in out
    assert "staging0search0token0ciphertext0AAAB" not in old.read_text()


def test_redaction_marker_is_the_engines() -> None:
    from langop_infra.offline import _engine_values as engine_values, _formats as formats

    assert formats.REDACTED == engine_values.REDACTED == "[secret]"


def test_the_example_ci_workflow_posts_the_markdown_diff(tmp_path: Path) -> None:
    import re
    import subprocess

    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "preview.yml").read_text())
    steps = {s.get("name"): s for s in workflow["jobs"]["offline-diff"]["steps"]}
    assert "langop-infra diff base.yaml head.yaml -o markdown > diff.md" in (steps["Diff"]["run"])
    assert "readFileSync('diff.md'" in steps["Comment"]["with"]["script"]
    assert "--fingerprint-key-env LANGOP_FINGERPRINT_KEY" in steps["Render base and head"]["run"]
    for name in ("Render base and head", "Diff"):
        script = re.sub(r"\$\{\{[^}]*\}\}", "x", steps[name]["run"])
        done = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
        assert done.returncode == 0, (name, done.stderr)
