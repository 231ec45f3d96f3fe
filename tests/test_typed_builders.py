"""A typed builder boundary (issue 37 §4): the builders return TypedDicts for the Kubernetes
objects they make, so strict pyright checks every key; and ``Any`` is counted."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest

from langop_infra.config._network import NetworkPeer
from langop_infra.manifests import _policies as policies
from tests.support.pyright import run_pyright

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "langop_infra"
# ``Any`` per 1,000 lines of langop_infra/: the MCP SDK's figure is about 22 (the goal); the
# ratchet is today's, so the figure only goes down. It was 37.1 on the house-code branch; the
# A2A, runtime, import and fidelity branches that landed beside it brought it to 38.92.
GOAL = 22.0
RATCHET = 38.92


def any_per_thousand_lines() -> float:
    lines = names = 0
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        lines += text.count("\n")
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        names += sum(1 for t in tokens if t.type == tokenize.NAME and t.string == "Any")
    return 1000 * names / lines


def test_any_does_not_grow() -> None:
    assert any_per_thousand_lines() <= RATCHET


@pytest.mark.xfail(strict=True, reason="Any per 1,000 lines is still above the MCP SDK's")
def test_any_is_as_rare_as_in_the_mcp_sdk() -> None:
    assert any_per_thousand_lines() <= GOAL


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
