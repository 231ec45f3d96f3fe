"""A user's own project, outside this repository, rendered offline: Outputs of other resources
(a Kubernetes Namespace and Service, another provider's resource with no plugin here) feed the
components, and the render shows what `pulumi preview` would know, no more."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.runtime.sync_await import _sync_await

from langop_infra.offline._engine_values import UNKNOWN_MARKER
from langop_infra.offline._mock_engine import run_program
from tests.support.source import parse_source
from tests.support.user_project import make_project, run_cli

ROOT = Path(__file__).resolve().parents[1]

# A random-suffix resource as its generated SDK declares it (pulumi_random's RandomString),
# with no `random` plugin anywhere: the engine at preview knows only its inputs.
RANDOM_SUFFIX = """
class RandomString(pulumi.CustomResource):
    result: pulumi.Output[str]
    length: pulumi.Output[int]

    def __init__(self, name, length):
        super().__init__(
            "random:index/randomString:RandomString", name, {"length": length, "result": None}
        )
"""

_scope: dict[str, Any] = {"pulumi": pulumi, "__name__": __name__}
exec(RANDOM_SUFFIX, _scope)  # the same class here, for the engine test below
RandomString = _scope["RandomString"]

PROGRAM = f"""
import pulumi
import pulumi_kubernetes as k8s
from langop_infra import LanguageAgent, LanguageTool
{RANDOM_SUFFIX}
print("building the shop")   # a user's print must not reach the YAML
ns = k8s.core.v1.Namespace("apps", metadata={{"name": "apps"}})
db = k8s.core.v1.Service(
    "db", metadata={{"namespace": "apps"}}, spec={{"ports": [{{"port": 5432}}]}}
)
suffix = RandomString("suffix", length=6)
memory = LanguageTool(
    "memory",
    image=db.spec.cluster_ip.apply(lambda ip: f"registry.local/memory:{{ip}}"),
    namespace="apps",
    env={{"DB_SUFFIX": suffix.result, "NAMESPACE_ID": ns.id}},
    opts=pulumi.ResourceOptions(depends_on=[ns]),
)
LanguageAgent(
    "helper", image="ghcr.io/acme/helper:2.0.0", namespace="apps",
    tools=[memory], env={{"NAMESPACE": ns.metadata.name}},
)
pulumi.export("db_ip", db.spec.cluster_ip)
pulumi.export("namespace", ns.metadata.name)
"""


def objects(stream: str) -> dict[tuple[str, str], dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(stream) if d]
    return {(d["kind"], d["metadata"].get("name", "")): d for d in docs}


def env_of(deployment: dict[str, Any]) -> dict[str, Any]:
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def test_outputs_of_other_resources_render_as_unknown_never_none(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop", PROGRAM)
    code, out, err = run_cli(project, "render", "--stack", "dev")
    assert code == 0, err
    assert "None" not in out
    assert "building the shop" in err and "building the shop" not in out
    rendered = objects(out)  # the stream parses: nothing printed into it
    memory = rendered[("Deployment", "memory")]
    [container] = memory["spec"]["template"]["spec"]["containers"]
    assert container["image"] == UNKNOWN_MARKER
    assert env_of(memory)["DB_SUFFIX"] == UNKNOWN_MARKER
    assert env_of(memory)["NAMESPACE_ID"] == UNKNOWN_MARKER
    # A field the program gave its own resource is known at preview.
    assert env_of(rendered[("Deployment", "helper")])["NAMESPACE"] == "apps"
    # Only the parts that depend on the unknown are unknown: the rest is rendered.
    assert memory["metadata"] == {
        "name": "memory",
        "namespace": "apps",
        "labels": memory["metadata"]["labels"],
    }
    assert memory["spec"]["replicas"] == 1
    assert rendered[("Service", "memory")]["spec"]["ports"][0]["port"] == 8080
    # The user's Service has no metadata.name: the provider names it, so it is unknown.
    assert rendered[("Service", UNKNOWN_MARKER)]["metadata"] == {
        "name": UNKNOWN_MARKER,
        "namespace": "apps",
    }


def test_each_unknown_field_is_warned_of_once(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop", PROGRAM)
    _, _, err = run_cli(project, "render", "--stack", "dev")
    warnings = [line for line in err.splitlines() if "is known only at `pulumi up`" in line]
    image = "Deployment apps/memory: spec.template.spec.containers[0].image"
    assert sum(w.startswith(f"langop-infra render: warning: {image} ") for w in warnings) == 1
    # The image's labels (name, version) wait for the image on each of the tool's four
    # objects and its pods: 2 x 4, besides the image, two env values and the Service's name.
    assert len(warnings) == len(set(warnings)) == 12
    assert sum("metadata.labels.app.kubernetes.io/" in w for w in warnings) == 8
    # The user's autonamed Service: its name is the provider's, unknown at preview.
    assert (
        "langop-infra render: warning: Service db: metadata.name is known only at `pulumi up` "
        "(the provider names the object); rendered as [unknown]"
    ) in warnings


def test_a_namespace_from_an_autonamed_namespace_renders_unknown(tmp_path: Path) -> None:
    """Its name is the provider's at `pulumi up`: unknown in every object, as `pulumi
    preview` shows it, never a stand-in (issue 35 §1; tests/test_namespace_output.py)."""
    program = """
        import pulumi_kubernetes as k8s
        from langop_infra import LanguageTool
        ns = k8s.core.v1.Namespace("apps")
        LanguageTool("files", image="ghcr.io/acme/files:1", namespace=ns.metadata.name)
    """
    code, out, err = run_cli(make_project(tmp_path / "p", program), "render", "--stack", "dev")
    assert code == 0, err
    docs = [d for d in yaml.safe_load_all(out) if d and d["kind"] != "Namespace"]
    assert {d["kind"] for d in docs} >= {"Deployment", "Service", "NetworkPolicy"}
    assert {d["metadata"]["namespace"] for d in docs} == {UNKNOWN_MARKER}
    assert "placeholder" not in out


def test_the_readme_python_example_renders_as_is(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    example = readme.split("## The Python API in brief", 1)[1].split("```python", 1)[1]
    example = example.split("```", 1)[0]
    code, out, err = run_cli(make_project(tmp_path / "r", example), "render", "--stack", "dev")
    assert code == 0, err
    rendered = objects(out)
    assert {("Deployment", "memory"), ("Deployment", "helper")} <= set(rendered)


def test_the_engine_answers_another_providers_resource_as_preview_does() -> None:
    """An unknown type: id and computed outputs unknown; inputs come back as given."""
    seen: dict[str, Any] = {}

    def program() -> None:
        suffix = RandomString("suffix", length=6)
        seen.update(id=suffix.id, result=suffix.result, length=suffix.length)

    run_program(program, preview=True)
    known = {k: _sync_await(v.is_known()) for k, v in seen.items()}
    assert known == {"id": False, "result": False, "length": True}
    assert _sync_await(seen["length"].future()) == 6


def test_the_python_api_pages_example_renders_as_is(tmp_path: Path) -> None:
    """docs/python-api.md's first sample, as a user copies it: it imports only what installing
    the package brings (issue 51 §5: it imported pulumi_docker_build, no dependency)."""
    page = (ROOT / "docs" / "python-api.md").read_text()
    example = page.split("```python", 1)[1].split("```", 1)[0]
    assert sample_imports(example) <= installed_with_the_package(), sample_imports(example)
    code, out, err = run_cli(make_project(tmp_path / "d", example), "render", "--stack", "dev")
    assert code == 0, err
    assert "internal error" not in err
    memory = objects(out)[("Deployment", "memory")]
    assert memory["metadata"]["namespace"] == "apps"


def sample_imports(code: str) -> set[str]:
    tree = parse_source(code)
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    return {name.split(".")[0] for name in names}


def installed_with_the_package() -> set[str]:
    """Top-level modules of the standard library, the package and its dependencies."""
    from importlib.metadata import packages_distributions, requires

    required = {
        re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0].lower().replace("_", "-")
        for r in requires("langop-infra") or []
        if "extra ==" not in r
    }
    modules = {
        module
        for module, distributions in packages_distributions().items()
        if any(d.lower().replace("_", "-") in required for d in distributions)
    }
    return modules | set(sys.stdlib_module_names) | {"langop_infra"}


def test_an_image_built_in_the_same_program_renders_unknown(tmp_path: Path) -> None:
    """pulumi_docker_build's image (no plugin here): its ``ref`` is unknown at preview, so the
    tool's image renders as unknown, with a warning."""
    pytest.importorskip("pulumi_docker_build")
    program = (
        "import pulumi_docker_build as docker_build\n"
        "from langop_infra import LanguageTool\n"
        'image = docker_build.Image("memory", context={"location": "."},\n'
        '                           tags=["ghcr.io/acme/memory-mcp:1.4.0"], push=True)\n'
        'LanguageTool("memory", image=image.ref, namespace="apps")\n'
    )
    code, out, err = run_cli(make_project(tmp_path / "d", program), "render", "--stack", "dev")
    assert code == 0, err
    memory = objects(out)[("Deployment", "memory")]
    [container] = memory["spec"]["template"]["spec"]["containers"]
    assert container["image"] == UNKNOWN_MARKER
    assert "spec.template.spec.containers[0].image is known only at `pulumi up`" in err


def test_outputs_show_unknown_exports_as_unknown(tmp_path: Path) -> None:
    code, out, err = run_cli(
        make_project(tmp_path / "o", PROGRAM), "outputs", "-s", "dev", "-o", "json"
    )
    assert code == 0, err
    exported = json.loads(out)
    assert (exported["db_ip"], exported["namespace"]) == (UNKNOWN_MARKER, "apps")
