"""Objects inside ``pulumi_kubernetes`` YAML groups are rendered and judged (issue 49 §6):
yaml/v2 ``ConfigGroup`` (``yaml``, ``objs``, ``files``) and ``ConfigFile``, and the v1
``ConfigGroup``, whose ``kubernetes:yaml:decode`` invoke crashed the program under the mock
engine. Before: the v2 groups' contents were never judged (0 findings), v1 was a traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pulumi_kubernetes as k8s
import pytest
import yaml

from langop_infra.offline._mock_engine import run_program
from langop_infra.offline._yaml_groups import type_token
from tests.test_policy_side_doors import CANARY, judged

LEAKY = f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: leaky, namespace: plain}}
data:
  settings.env: "DB_PASSWORD={CANARY}"
"""
PRIVILEGED = """apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: root, namespace: plain}
    spec:
      selector: {matchLabels: {app: app}}
      template:
        metadata: {labels: {app: app}}
        spec:
          containers:
            - {name: app, image: "ghcr.io/acme/app:1@sha256:%s",
               securityContext: {privileged: true}}
""" % ("0" * 64)

GROUPS: dict[str, Callable[[str], None]] = {
    "v2 yaml": lambda text: k8s.yaml.v2.ConfigGroup("g", yaml=text),
    "v2 objs": lambda text: k8s.yaml.v2.ConfigGroup("g", objs=list(yaml.safe_load_all(text))),
    "v2 files": lambda _text: k8s.yaml.v2.ConfigGroup("g", files=["manifests/*.yaml"]),
    "v2 file": lambda _text: k8s.yaml.v2.ConfigFile("g", file="manifests/app.yaml"),
    "v1 yaml": lambda text: k8s.yaml.ConfigGroup("g", yaml=[text]),
}


@pytest.fixture
def program_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "manifests").mkdir()
    monkeypatch.chdir(tmp_path)  # files are read relative to the program, as at pulumi up
    return tmp_path / "manifests" / "app.yaml"


@pytest.mark.parametrize("api", list(GROUPS))
def test_a_credential_inside_a_group_trips(api: str, program_folder: Path) -> None:
    program_folder.write_text(LEAKY)
    found = judged(lambda: GROUPS[api](LEAKY))
    assert [p for p, _ in found] == ["langop-no-literal-credentials"]
    assert found[0][1].startswith("ConfigMap plain/leaky: settings.env")


@pytest.mark.parametrize("api", list(GROUPS))
def test_a_privileged_pod_inside_a_group_trips(api: str, program_folder: Path) -> None:
    program_folder.write_text(PRIVILEGED)
    found = judged(lambda: GROUPS[api](PRIVILEGED))
    assert {p for p, _ in found} >= {"langop-restricted-pods"}
    assert any("plain/root" in message for _, message in found)


def test_the_group_objects_are_registered_as_the_provider_names_them() -> None:
    run = run_program(lambda: k8s.yaml.v2.ConfigGroup("g", yaml=LEAKY + "---\n" + PRIVILEGED))
    children = [(r.type, r.name) for r in run.registrations if r.parent.endswith("::g")]
    assert children == [
        ("kubernetes:core/v1:ConfigMap", "g:plain/leaky"),
        ("kubernetes:apps/v1:Deployment", "g:plain/root"),
    ]
    assert [m["metadata"]["name"] for m in run.manifests()] == ["leaky", "root"]


def test_unreadable_yaml_is_a_warning_not_a_crash() -> None:
    run = run_program(lambda: k8s.yaml.v2.ConfigGroup("g", yaml="a: [1,\n"))
    assert run.manifests() == []
    (warning,) = run.warnings
    assert warning.startswith("kubernetes:yaml/v2:ConfigGroup g: its YAML could not be read (")
    assert warning.endswith("its objects are neither rendered nor judged")


def test_type_tokens() -> None:
    assert type_token("v1", "ConfigMap") == "kubernetes:core/v1:ConfigMap"
    assert type_token("networking.k8s.io/v1", "NetworkPolicy") == (
        "kubernetes:networking.k8s.io/v1:NetworkPolicy"
    )
