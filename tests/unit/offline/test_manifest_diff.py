"""offline/_manifest_diff.replaced_by and the report's replace line: a change to a field the API
server will not change in place is a replacement, as `pulumi preview` shows it."""

from __future__ import annotations

import pytest

from langop_infra.offline._diff_report import body_lines
from langop_infra.offline._manifest_diff import FieldChange, ObjectKey, diff_renders, replaced_by

CLAIM: ObjectKey = ("v1", "PersistentVolumeClaim", "apps", "memory-data")


def change(path: str) -> FieldChange:
    return FieldChange(path=path, kind="changed", old="a", new="b")


@pytest.mark.parametrize(
    "path",
    [
        "spec.storageClassName",
        "spec.accessModes[0]",
        "spec.selector.matchLabels.app",
        "spec.volumeMode",
    ],
)
def test_an_immutable_claim_field_replaces(path: str) -> None:
    assert replaced_by(CLAIM, [change("metadata.labels.team"), change(path)]) == path


@pytest.mark.parametrize(
    "path", ["spec.resources.requests.storage", "metadata.labels.team", "spec.storageClassNameX"]
)
def test_a_mutable_field_does_not(path: str) -> None:
    assert replaced_by(CLAIM, [change(path)]) is None


def test_only_the_kinds_listed() -> None:
    config_map: ObjectKey = ("v1", "ConfigMap", "apps", "x")
    deployment: ObjectKey = ("apps/v1", "Deployment", "apps", "x")
    assert replaced_by(config_map, [change("spec.storageClassName")]) is None
    assert (
        replaced_by(deployment, [change("spec.selector.matchLabels.app")])
        == "spec.selector.matchLabels.app"
    )
    assert replaced_by(deployment, [change("spec.replicas")]) is None


def test_the_report_says_replace() -> None:
    old = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "memory-data", "namespace": "apps"},
        "spec": {"storageClassName": "slow"},
    }
    new = {**old, "spec": {"storageClassName": "fast"}}
    changed = {
        **old,
        "spec": {"storageClassName": "slow"},
        "metadata": {**old["metadata"], "labels": {"a": "b"}},
    }
    assert body_lines(diff_renders({CLAIM: old}, {CLAIM: new})) == [
        "+- PersistentVolumeClaim apps/memory-data (replace: spec.storageClassName cannot change in place)",
        "    spec.storageClassName: slow -> fast",
    ]
    assert (
        body_lines(diff_renders({CLAIM: old}, {CLAIM: changed}))[0]
        == "~ PersistentVolumeClaim apps/memory-data"
    )
