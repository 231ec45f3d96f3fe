"""A typed builder boundary (issue 37 §4): the builders return TypedDicts for the Kubernetes
objects they make, so strict pyright checks every key; and ``Any`` is counted."""

from __future__ import annotations

import ast
import io
import re
import tokenize
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal, Union, get_args, get_origin

import pytest
from typing_extensions import NotRequired, Required, get_type_hints, is_typeddict

from langop_infra.config._network import NetworkPeer
from langop_infra.manifests import _k8s_types as k8s_types, _policies as policies
from langop_infra.offline._render import render_stack
from tests.support.pyright import run_pyright
from tests.support.source import parse_source

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "langop_infra"
# ``Any`` per 1,000 lines of langop_infra/: the MCP SDK's figure is about 22 (the goal); the
# ratchet is today's, so the figure only goes down. It was 38.92 before the typed builder
# boundary (issue 37 §4), which brought it to 21.78; 21.76 after the records' copier took
# ``object`` (2026-11-29).
GOAL = 22.0
RATCHET = 21.76
# ``Any`` written inside a string (``cast("Mapping[str, Any]", x)``, a quoted annotation),
# which the count above does not see: it may not grow either, so that nothing moves there.
# Raised from 185 to 208 on 2026-11-29 by the merge of issues 49-52's runtime, import and
# tool-kit code (casts of JSON and protobuf values); a noted debt, to bring down again
# (206 since the records' copier casts to ``object``).
QUOTED_RATCHET = 206


def any_per_thousand_lines() -> float:
    lines = names = 0
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        lines += text.count("\n")
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        names += sum(1 for t in tokens if t.type == tokenize.NAME and t.string == "Any")
    return 1000 * names / lines


def quoted_any() -> int:
    """``Any`` in string literals that are not docstrings (casts, quoted annotations)."""
    count = 0
    for path in PACKAGE.rglob("*.py"):
        tree = parse_source(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
            ):
                count += len(re.findall(r"\bAny\b", node.value))
    return count


def any_aliases() -> Iterator[str]:
    """Every way of writing ``Any`` under another name: ``import Any as X``, ``X = Any``,
    ``X: TypeAlias = Any``, ``type X = Any`` (each would hide uses from the count)."""
    for path in PACKAGE.rglob("*.py"):
        where = path.relative_to(ROOT)
        for node in ast.walk(parse_source(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name.rsplit(".", 1)[-1] == "Any" and alias.asname not in (None, "Any"):
                        yield f"{where}:{node.lineno} imports Any as {alias.asname}"
            value = getattr(node, "value", None)
            if isinstance(node, _ASSIGNMENTS) and _is_any(value):
                yield f"{where}:{node.lineno} names Any again"


# ``type X = ...`` statements exist from Python 3.12.
_ASSIGNMENTS = (ast.Assign, ast.AnnAssign, *([ast.TypeAlias] if hasattr(ast, "TypeAlias") else []))


def _is_any(node: object) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "Any"
    if isinstance(node, ast.Attribute):
        return node.attr == "Any"
    return isinstance(node, ast.Constant) and node.value == "Any"


def test_any_does_not_grow() -> None:
    assert any_per_thousand_lines() <= RATCHET


def test_any_is_as_rare_as_in_the_mcp_sdk() -> None:
    assert any_per_thousand_lines() <= GOAL


def test_any_does_not_move_into_strings() -> None:
    assert quoted_any() <= QUOTED_RATCHET


def test_any_goes_by_no_other_name() -> None:
    assert list(any_aliases()) == []


def test_the_alias_check_sees_each_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "langop_infra"
    package.mkdir()
    (package / "m.py").write_text(
        "from typing import Any as Anything\n"
        "import typing\n"
        "Loose = Any\n"
        "Wide: TypeAlias = typing.Any\n"
        "Quoted: TypeAlias = 'Any'\n"
        "Fine = object\n"
    )
    monkeypatch.setitem(globals(), "PACKAGE", package)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert list(any_aliases()) == [
        "langop_infra/m.py:1 imports Any as Anything",
        "langop_infra/m.py:3 names Any again",
        "langop_infra/m.py:4 names Any again",
        "langop_infra/m.py:5 names Any again",
    ]


def test_policy_builders_give_the_api_keys() -> None:
    spec = policies.tool_ingress_spec("memory", "apps", 8080)
    assert spec["policyTypes"] == ["Ingress"]
    assert spec["ingress"][0]["ports"] == [{"protocol": "TCP", "port": 8080}]
    peer = policies.peer_manifest(
        NetworkPeer.model_validate({"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]})
    )
    assert peer == {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}


@pytest.mark.slow
def test_strict_pyright_checks_the_keys_a_caller_reads(tmp_path: Path) -> None:
    program = tmp_path / "reads.py"
    program.write_text(
        f"import {policies.__name__} as policies\n"
        "spec = policies.tool_ingress_spec('memory', 'apps', 8080)\n"
        "types = spec['policyTypes']\n"
        "port: int = spec.get('ingress', [])[0]['ports'][0]['port']\n"
        "wrong: object = spec['podselector']\n"
        "rule: object = spec.get('ingress', [])[0]['form']\n"
    )
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    result = run_pyright("-p", str(tmp_path / "pyrightconfig.json"), str(program), cwd=ROOT)
    errors = [line.split(":")[1] for line in result.stdout.splitlines() if " - error" in line]
    assert sorted(set(errors)) == ["5", "6"], result.stdout
    assert '"podselector" is not a defined key' in result.stdout
    assert '"form" is not a defined key' in result.stdout


# The builders' objects, as the shipped stacks render them, hold only keys their TypedDicts
# name, with values of the types named: a builder cannot write past its type (a cast, a
# model dump) without this failing.
TYPED_SPECS = {
    "Deployment": k8s_types.DeploymentSpecDict,
    "CronJob": k8s_types.CronJobSpecDict,
    "Service": k8s_types.ServiceSpecDict,
    "PersistentVolumeClaim": k8s_types.PersistentVolumeClaimSpecDict,
    "NetworkPolicy": k8s_types.NetworkPolicySpecDict,
    "PodDisruptionBudget": k8s_types.PodDisruptionBudgetSpecDict,
    "HorizontalPodAutoscaler": k8s_types.HorizontalPodAutoscalerSpecDict,
}


def typed_keys(typed: object) -> tuple[dict[str, object], set[str]]:
    """A TypedDict's keys and their types, and the required keys (``__required_keys__``
    cannot tell under ``from __future__ import annotations``)."""
    hints = get_type_hints(typed, include_extras=True)
    total = getattr(typed, "__total__", True)
    required = {
        key
        for key, hint in hints.items()
        if get_origin(hint) is not NotRequired and (total or get_origin(hint) is Required)
    }
    plain = {
        key: get_args(hint)[0] if get_origin(hint) in (NotRequired, Required) else hint
        for key, hint in hints.items()
    }
    return plain, required


def mismatches(value: object, expected: object, path: str) -> Iterator[str]:
    """Where ``value`` is not of type ``expected`` (TypedDicts, lists, dicts, unions,
    literals and plain classes; ``object`` takes anything)."""
    origin = get_origin(expected)
    if expected is object:
        return
    if is_typeddict(expected):
        if not isinstance(value, Mapping):
            yield f"{path}: {value!r} is not a mapping"
            return
        hints, required = typed_keys(expected)
        for key in sorted(required - set(value)):
            yield f"{path}: {key} is missing"
        for key, item in value.items():
            if key not in hints:
                yield f"{path}.{key}: not a key of {expected.__name__}"
            else:
                yield from mismatches(item, hints[key], f"{path}.{key}")
    elif origin in (Union, types.UnionType):
        found = [list(mismatches(value, option, path)) for option in get_args(expected)]
        if all(found):
            yield from min(found, key=len)
    elif origin is Literal:
        if value not in get_args(expected):
            yield f"{path}: {value!r} not in {get_args(expected)}"
    elif origin is list:
        if not isinstance(value, list):
            yield f"{path}: {value!r} is not a list"
            return
        for index, item in enumerate(value):
            yield from mismatches(item, get_args(expected)[0], f"{path}[{index}]")
    elif origin is dict:
        if not isinstance(value, dict):
            yield f"{path}: {value!r} is not a dict"
            return
        for key, item in value.items():
            yield from mismatches(item, get_args(expected)[1], f"{path}.{key}")
    elif expected is type(None):
        if value is not None:
            yield f"{path}: {value!r} is not None"
    elif not isinstance(value, expected):  # type: ignore[arg-type]
        yield f"{path}: {value!r} is not {expected}"


def test_the_type_check_sees_a_key_no_type_names() -> None:
    container = {"name": "a", "image": "b", "env": [{"name": "X", "value": "1"}]}
    container |= {"resources": {}, "volumeMounts": [{"name": "tmp", "mountPath": 7}]}
    assert list(mismatches(container, k8s_types.ContainerDict, "c")) == [
        "c: securityContext is missing",
        "c.volumeMounts[0].mountPath: 7 is not <class 'str'>",
    ]
    host = {"name": "a", "emptyDir": {}, "hostPath": {}}
    assert list(mismatches(host, k8s_types.VolumeDict, "v")) == [
        "v.hostPath: not a key of VolumeDict"
    ]
    assert list(mismatches({"name": "a", "emptyDir": {}}, k8s_types.VolumeDict, "v")) == []


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_rendered_objects_hold_only_typed_keys(stack: str) -> None:
    manifests = render_stack(ROOT, stack=stack).manifests()
    checked = [m for m in manifests if m["kind"] in TYPED_SPECS]
    assert {"Deployment", "Service", "NetworkPolicy"} <= {m["kind"] for m in checked}
    found = [
        problem
        for m in checked
        for problem in mismatches(
            m["spec"], TYPED_SPECS[m["kind"]], f"{m['kind']} {m['metadata']['name']}"
        )
    ]
    assert found == []


@pytest.mark.slow
def test_strict_pyright_checks_the_workload_keys(tmp_path: Path) -> None:
    program = tmp_path / "workloads.py"
    program.write_text(
        "from langop_infra.config.cluster import Defaults\n"
        "from langop_infra.config.tool import ToolSpec\n"
        "from langop_infra.manifests import _pods as pods\n"
        "def given() -> tuple[ToolSpec, Defaults]: raise NotImplementedError\n"
        "tool, defaults = given()\n"
        "port: int = pods.tool_service_spec(tool)['ports'][0]['port']\n"
        "deployment = pods.tool_objects(tool, defaults, 'apps', 'x').deployment\n"
        "assert deployment is not None\n"
        "image: str = deployment['template']['spec']['containers'][0]['image']\n"
        "wrong: object = deployment['template']['spec']['containers'][0]['imagePullpolicy']\n"
        "deployment['replicas'] = '3'\n"
    )
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    result = run_pyright("-p", str(tmp_path / "pyrightconfig.json"), str(program), cwd=ROOT)
    errors = [line.split(":")[1] for line in result.stdout.splitlines() if " - error" in line]
    assert sorted(set(errors)) == ["10", "11"], result.stdout
    assert '"imagePullpolicy" is not a defined key' in result.stdout
