"""Schema sync through the API server proxy that the tools' own ingress policies refuse:
reported by validate and render (a warning; an error under strictEgress or --strict)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from langop_infra.cli.main import main
from langop_infra.components.tool import LanguageTool
from langop_infra.config.checks._sync_path_check import sync_path_verdict
from langop_infra.config.cluster import Defaults
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import run_program

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "stacks"
UNADMITTED = FIXTURES / "Pulumi.sync-unadmitted.yaml"
STRICT = FIXTURES / "Pulumi.sync-unadmitted-strict.yaml"
FIX = "set defaults.schemaSyncFrom to the control plane's address range"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--project-dir", str(ROOT)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_validate_warns_of_each_tool_whose_sync_its_policy_refuses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, "validate", "--config", str(UNADMITTED))
    assert (code, out) == (0, "")
    lines = err.splitlines()
    assert len(lines) == 2
    service, sidecar = lines
    assert service.startswith(
        "langop-infra validate: warning: tools[0].schemaSync: schema sync of tool 'memory' "
        "goes through the API server proxy (access auto)"
    )
    assert "its ingress policy admits no sync source" in service and FIX in service
    assert sidecar.startswith("langop-infra validate: warning: tools[1].schemaSync: ")
    assert "tool 'files'" in sidecar and "its agents' ingress policies admit" in sidecar
    # search (an ipBlock in allowFrom), feeds (direct) and archive (sync off) are not named.
    assert not any(name in err for name in ("'search'", "'feeds'", "'archive'"))


def test_render_prints_the_same_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "render", "--config", str(UNADMITTED))
    assert code == 0 and "kind: NetworkPolicy" in out
    assert [line.split(": ")[1] for line in err.splitlines()] == ["warning"] * 2
    assert "tool 'memory'" in err and "tool 'files'" in err


def test_strict_egress_makes_them_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "validate", "--json", "--config", str(STRICT))
    assert code == 2
    report = json.loads(out)
    assert report["valid"] is False
    assert [p["path"] for p in report["problems"]] == [
        "langop-infra:tools[0].schemaSync",
        "langop-infra:tools[1].schemaSync",
    ]
    assert all(FIX in p["message"] for p in report["problems"])


def test_validate_strict_makes_any_warning_a_problem(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "validate", "--strict", "--config", str(UNADMITTED))
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == "langop-infra validate: error: 2 warning(s) under --strict"
    assert lines[1].startswith("  - tools[0].schemaSync: schema sync of tool 'memory'")
    code, out, err = cli(capsys, "validate", "--strict", "--stack", "prod")
    assert (code, out, err) == (0, "", "")


def test_defaults_schema_sync_from_admits_every_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = yaml.safe_load(UNADMITTED.read_text())
    config["config"]["langop-infra:defaults"] = {"schemaSyncFrom": [{"cidr": "172.18.0.2/32"}]}
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text(yaml.safe_dump(config))
    assert cli(capsys, "validate", "--config", str(path)) == (0, "", "")
    code, out, _ = cli(capsys, "render", "--config", str(path))
    assert code == 0
    ingress = [
        d
        for d in yaml.safe_load_all(out)
        if d and d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == "memory-ingress"
    ]
    assert {"ipBlock": {"cidr": "172.18.0.2/32"}} in ingress[0]["spec"]["ingress"][-1]["from"]


@pytest.mark.parametrize(
    ("tool", "defaults", "reported"),
    [
        ({"schemaSync": {"access": "apiserver-proxy"}}, {}, True),
        ({"schemaSync": {"syncUrl": "https://tools.example.com/mcp"}}, {}, False),
        (
            {"schemaSync": {"access": "apiserver-proxy", "syncUrl": "https://t.example.com/mcp"}},
            {},
            True,
        ),
        ({}, {"schemaSyncAccess": "direct"}, False),
        ({"schemaSync": {"access": "auto"}}, {"schemaSyncAccess": "direct"}, True),
        ({"allowFrom": [{"podSelector": {"matchLabels": {"a": "b"}}}]}, {}, True),
        ({}, {"schemaSyncFrom": [{"namespace": "ci", "podLabels": {"app": "runner"}}]}, False),
    ],
)
def test_which_tools_are_reported(tool: dict, defaults: dict, reported: bool) -> None:
    spec = ToolSpec.model_validate({"name": "memory", "image": "ghcr.io/acme/m:1", **tool})
    verdict = sync_path_verdict(spec, Defaults.model_validate(defaults))
    assert (verdict is not None) == reported
    if reported:
        assert "tool 'memory'" in verdict and "defaults.schemaSyncFrom" in verdict


def test_a_standalone_tool_warns_or_under_strict_egress_fails() -> None:
    image = "ghcr.io/acme/memory-mcp:1.4.0"
    run = run_program(lambda: LanguageTool("memory", image=image, namespace="apps"))
    [warning] = [w for w in run.warnings if "no digest" not in w]
    # In a Python program's names (issue 35): schema_sync, defaults.schema_sync_from.
    assert warning.startswith("LanguageTool 'memory': schema_sync: schema sync of tool 'memory'")
    assert "defaults.schema_sync_from" in warning
    with pytest.raises(SpecError) as caught:
        run_program(
            lambda: LanguageTool(
                "memory", image=image, namespace="apps", defaults={"strictEgress": True}
            )
        )
    assert "schemaSync: schema sync of tool 'memory'" in str(caught.value)
