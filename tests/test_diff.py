"""Issue 7: ``langop-infra diff OLD NEW`` and ``manifest_diff`` on hand-made and real renders."""

from __future__ import annotations

import contextlib
import copy
import io
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.cli import main
from langop_infra.errors import SpecError
from langop_infra.offline.manifest_diff import (
    FieldChange,
    describe,
    diff_renders,
    field_changes,
    load_render,
    object_key,
)
from langop_infra.offline.mock_engine import REDACTED
from langop_infra.offline.render import dump_stream

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
    assert result.report() == "no differences\n"


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
    assert result.report() == (
        "+ Namespace extra\n"
        "- Secret shop/api-keys\n"
        "~ Deployment shop/seller\n"
        "    spec.template.spec.containers[name=seller].image: "
        "ghcr.io/acme/seller:1 -> ghcr.io/acme/seller:2\n"
        "1 added, 1 removed, 1 changed\n"
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
    report = diff_renders(old, new).report()
    assert "    spec.template.spec.containers[name=seller].workingDir: (absent) -> /srv\n" in report
    assert describe(("v1", "Namespace", "", "shop")) == "Namespace shop"
    assert describe(DEPLOYMENT_KEY) == "Deployment shop/seller"


def test_long_values_are_shortened_in_the_report() -> None:
    old = keyed(deployment())
    new = keyed(deployment(image="ghcr.io/acme/" + "x" * 400))
    line = diff_renders(old, new).report().splitlines()[1]
    assert line.endswith("...")
    assert len(line.split(" -> ")[1]) == 200


def _absent() -> Any:
    from langop_infra.offline import manifest_diff

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
    assert run_diff(old, same, capsys) == (0, "no differences\n", "")
    code, out, err = run_diff(old, new, capsys)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "- Secret shop/api-keys",
        "~ Deployment shop/seller",
        "    spec.template.spec.containers[name=seller].image: "
        "ghcr.io/acme/seller:1 -> ghcr.io/acme/seller:2",
        "0 added, 1 removed, 1 changed",
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
    assert out == (
        "~ Secret research-dev/search-credentials\n"
        f"    stringData.backup: (absent) -> '{REDACTED}'\n"
        "0 added, 0 removed, 1 changed\n"
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
    assert main(["render", "--stack", "dev", "--project-dir", str(ROOT), "--out", str(tree)]) == 0
    capsys.readouterr()
    assert len(load_render(tree)) == len(load_render(stream)) == 19
    assert run_diff(stream, tree, capsys) == (0, "no differences\n", "")
    assert run_diff(tree, stream, capsys) == (0, "no differences\n", "")


def test_diff_of_dev_and_prod_renders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dev = tmp_path / "dev"
    assert main(["render", "--stack", "dev", "--project-dir", str(ROOT), "--out", str(dev)]) == 0
    prod = tmp_path / "prod.yaml"
    prod.write_text(render_stream("--stack", "prod"))
    capsys.readouterr()
    code, out, err = run_diff(dev, prod, capsys)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    # Different namespaces: every object is new in prod, every dev object is gone.
    assert lines[-1] == "26 added, 19 removed, 0 changed"
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
    # prod's models bring their keys' Secrets and the gateway's egress policy.
    assert [describe(k) for k in result.added] == [
        "NetworkPolicy research-dev/default-deny-ingress",
        "NetworkPolicy research-dev/gateway-egress",
        "NetworkPolicy research-dev/researcher-egress",
        "NetworkPolicy research-dev/triage-egress",
        "Secret research-dev/anthropic",
        "Secret research-dev/model-gateway",
        "Secret research-dev/openai",
    ]
    assert result.removed == []
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
    }
    # Both Secrets are redacted in both renders: nothing to report there.
    assert not any(k[1] == "Secret" for k in result.changed)
    code, out, _ = run_diff(old, new, capsys)
    assert code == 1
    assert "    spec.replicas: 1 -> 3\n" in out
    assert out.endswith(f"7 added, 0 removed, {len(result.changed)} changed\n")
