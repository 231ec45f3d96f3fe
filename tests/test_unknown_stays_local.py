"""An unknown value makes unknown only what is made from it (issue 51 §2, a first case):
one `random`-style label leaves the agent's config.yaml, its Deployment's spec and its
NetworkPolicies as the render with a known label gives them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from langop_infra import LanguageAgent, LanguageTool
from langop_infra.manifests._contract import SECRET_DIGEST_ANNOTATION
from langop_infra.offline._engine_values import UNKNOWN_MARKER, is_unknown
from langop_infra.offline._mock_engine import run_program
from tests.support.user_project import make_project, run_cli

PROGRAM = """
import pulumi
from langop_infra import LanguageAgent, LanguageTool

class RandomPet(pulumi.CustomResource):
    result: pulumi.Output[str]

    def __init__(self, name):
        super().__init__("random:index/randomPet:RandomPet", name, {{"result": None}})

pet = RandomPet("pet")
IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64
memory = LanguageTool("memory", image=IMAGE, namespace="apps")
LanguageAgent("helper", image="ghcr.io/acme/helper:2.0.0@sha256:" + "b" * 64, namespace="apps",
              tools=[memory], mcp_servers=[{{"name": "docs", "url": "https://docs.example.com/mcp"}}],
              labels={{"team": {team}}})
"""


def render(tmp_path: Path, team: str) -> dict[tuple[str, str], Any]:
    project = make_project(tmp_path / team.strip('".'), PROGRAM.format(team=team))
    code, out, err = run_cli(project, "render", "--stack", "dev")
    assert code == 0, err
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(out) if d}


def test_an_unknown_label_leaves_config_yaml_and_specs_known(tmp_path: Path) -> None:
    known = render(tmp_path, '"search"')
    unknown = render(tmp_path, "pet.result")
    config = ("ConfigMap", "helper-config")
    assert unknown[config]["data"] == known[config]["data"]
    assert unknown[config]["metadata"]["labels"]["team"] == UNKNOWN_MARKER
    for key in (("Deployment", "helper"), ("NetworkPolicy", "helper-ingress")):
        assert unknown[key]["spec"] != UNKNOWN_MARKER, key
        assert unknown[key]["metadata"]["labels"]["team"] == UNKNOWN_MARKER


IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64


def unknown_paths(value: Any, path: str = "") -> list[str]:
    """Where ``value`` holds an unknown, as dotted paths."""
    if is_unknown(value):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in unknown_paths(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in unknown_paths(v, f"{path}[{i}]")]
    return []


class RandomPet(pulumi.CustomResource):
    """As pulumi_random declares it: ``result`` is computed by the provider."""

    result: pulumi.Output[str]

    def __init__(self, name: str) -> None:
        super().__init__("random:index/randomPet:RandomPet", name, {"result": None})


def preview_unknowns(program: Callable[[], None]) -> dict[str, list[str]]:
    run = run_program(program, preview=True)
    return {
        f"{r.type.rsplit(':', 1)[-1]} {r.name}": unknown_paths(r.inputs)
        for r in run.kubernetes()
        if not r.type.endswith(":Namespace")
    }


NAMESPACED = ["metadata.namespace", "metadata.labels.app.kubernetes.io/part-of"]


def test_a_sidecar_in_an_output_namespace_leaves_the_agents_specs_known() -> None:
    """Before: the agent's Deployment and NetworkPolicy specs were unknown as a whole."""

    def program() -> None:
        ns = k8s.core.v1.Namespace("apps")
        files = LanguageTool(
            "files", image=IMAGE, namespace=ns.metadata.name, deployment_mode="sidecar", port=8181
        )
        LanguageAgent("helper", image=IMAGE, namespace=ns.metadata.name, tools=[files])

    found = preview_unknowns(program)
    policy = found["NetworkPolicy [helper]/helper-ingress"]
    assert sorted(policy) == sorted(f".{p}" for p in NAMESPACED)
    deployment = found["Deployment [helper]/helper"]
    assert ".spec" not in deployment
    assert not [p for p in deployment if p.startswith(".spec.template.spec.initContainers")]
    # What the namespace makes: AGENT_NAMESPACE and the like, the part-of label, the checksum
    # of config.yaml (which names the namespace); nothing of the sidecar.
    assert all(
        p.startswith(
            (".metadata", ".spec.template.metadata", ".spec.template.spec.containers[0].env")
        )
        for p in deployment
    ), deployment


def test_an_unknown_sidecar_env_value_is_unknown_only_there() -> None:
    def program() -> None:
        pet = RandomPet("pet")
        files = LanguageTool(
            "files",
            image=IMAGE,
            namespace="apps",
            deployment_mode="sidecar",
            port=8181,
            env={"PET": pet.result},
        )
        LanguageAgent("helper", image=IMAGE, namespace="apps", tools=[files])

    found = preview_unknowns(program)
    assert found["Deployment apps/helper"] == [".spec.template.spec.initContainers[0].env[1].value"]
    assert found["NetworkPolicy apps/helper-ingress"] == []
    assert found["ConfigMap apps/helper-config"] == []


def test_an_unknown_secret_value_leaves_the_other_pod_annotations_known() -> None:
    """Before: the pod template's annotations were unknown as a whole (whether the pod reads
    a Secret waited for the Secret's data)."""

    def program() -> None:
        pet = RandomPet("pet")
        LanguageAgent(
            "helper",
            image=IMAGE,
            namespace="apps",
            pod_annotations={"note": "kept"},
            secret_env={"TOKEN": pulumi.Output.secret(pet.result)},
        )

    run = run_program(program, preview=True)
    [deployment] = [r for r in run.kubernetes() if r.type.endswith(":Deployment")]
    annotations = deployment.inputs["spec"]["template"]["metadata"]["annotations"]
    assert annotations["note"] == "kept"
    assert is_unknown(annotations[SECRET_DIGEST_ANNOTATION])
    assert unknown_paths(deployment.inputs) == [
        f".spec.template.metadata.annotations.{SECRET_DIGEST_ANNOTATION}"
    ]
