"""``0.0.0.0/0`` and ``::/0`` peers: a warning where they are written, and ``graph`` shows
the world-open ingress they make (decided by the reachability evaluator over the rendered
policies, not by reading the config)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.cli.main import main
from langop_infra.config.checks._advice import cluster_warnings
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.config.checks._world_open import is_world

ROOT = Path(__file__).resolve().parents[1]
PIN = "@sha256:" + "7" * 64


def document() -> dict[str, Any]:
    return {
        "namespace": "apps",
        "defaults": {"egress": "restricted", "schemaSyncFrom": [{"cidr": "0.0.0.0/0"}]},
        "tools": [
            {
                "name": "memory",
                "image": "ghcr.io/acme/memory:1" + PIN,
                "allowFrom": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}],
            },
            {
                "name": "search",
                "image": "ghcr.io/acme/search:1" + PIN,
                "allowFrom": [{"ipBlock": {"cidr": "203.0.113.0/24"}}],
            },
        ],
        "agents": [
            {
                "name": "helper",
                "image": "ghcr.io/acme/helper:1" + PIN,
                "tools": [{"name": "memory"}],
                "ports": [{"name": "http", "port": 9000}],
                "allowFrom": [{"ipBlock": {"cidr": "::/0"}}],
                "egressTo": [{"cidr": "0.0.0.0/0", "ports": [{"port": 443}]}],
            }
        ],
    }


def test_is_world_means_a_whole_family() -> None:
    assert is_world("0.0.0.0/0") and is_world("::/0")
    assert not is_world("0.0.0.0/1") and not is_world("10.0.0.0/8") and not is_world(None)


def test_each_world_wide_peer_warns_where_it_is_written() -> None:
    warnings = [w for w in cluster_warnings(parse_cluster(document())) if "/0 " in w.message]
    assert [(w.path, w.kind) for w in warnings] == [
        ("tools[0].allowFrom[0].ipBlock.cidr", "langop_world_open"),
        ("agents[0].allowFrom[0].ipBlock.cidr", "langop_world_open"),
        ("agents[0].egressTo[0].cidr", "langop_world_open"),
        ("defaults.schemaSyncFrom[0].cidr", "langop_world_open"),
    ]
    assert warnings[0].message.startswith(
        "0.0.0.0/0 admits every address on the internet to this workload's ports"
    )
    assert warnings[1].message.startswith("::/0 admits every address")
    assert "restricted egress no longer limits where it connects" in warnings[2].message
    assert "every synced tool's port" in warnings[3].message


def stack_file(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "Pulumi.qa.yaml"
    config = {f"langop-infra:{k}": v for k, v in doc.items()}
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def test_validate_prints_the_warnings(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = [
        "validate",
        "--project-dir",
        str(ROOT),
        "--config",
        str(stack_file(tmp_path, document())),
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert (
        "langop-infra validate: warning: langop-infra:tools[0].allowFrom[0].ipBlock.cidr: "
        "0.0.0.0/0 admits every address" in err
    )
    assert err.count("warning:") == 4


def test_graph_shows_world_open_ingress(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = ["graph", "--project-dir", str(ROOT), "--config", str(stack_file(tmp_path, document()))]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    # schemaSyncFrom 0.0.0.0/0 reaches every synced tool's ingress policy: `search` too.
    assert out[:5] == [
        "from the internet",
        "  may reach agent apps/helper:9000 (world-open ingress: ::/0)",
        "  may reach tool apps/memory:8080 (world-open ingress: 0.0.0.0/0)",
        "  may reach tool apps/search:8080 (world-open ingress: 0.0.0.0/0)",
        "agent helper",
    ]
    assert main([*argv, "--format", "json"]) == 0
    edges = json.loads(capsys.readouterr().out)
    world = [e for e in edges if e["agent"] == "(internet)"]
    assert [(e["target"], e["port"]) for e in world] == [
        ("apps/helper", 9000),
        ("apps/memory", 8080),
        ("apps/search", 8080),
    ]
    assert main([*argv, "--format", "mermaid"]) == 0
    assert '  world_internet["world internet"]' in capsys.readouterr().out


def test_a_narrower_range_is_not_world_open(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    doc = document()
    doc["defaults"]["schemaSyncFrom"] = [{"cidr": "10.0.0.0/28"}]
    doc["tools"][0]["allowFrom"] = [{"ipBlock": {"cidr": "0.0.0.0/1"}}]
    argv = ["graph", "--project-dir", str(ROOT), "--config", str(stack_file(tmp_path, doc))]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "from the internet",
        "  may reach agent apps/helper:9000 (world-open ingress: ::/0)",
    ]
    assert out[2] == "agent helper"


def test_the_shipped_stacks_have_no_world_open_ingress(capsys: pytest.CaptureFixture) -> None:
    for stack in ("dev", "staging", "prod"):
        assert main(["graph", "--stack", stack, "--project-dir", str(ROOT)]) == 0
        assert "from the internet" not in capsys.readouterr().out


def test_ranges_that_are_the_world_together_warn_once_at_their_list() -> None:
    """Issue 49 §6: ``0.0.0.0/1`` and ``128.0.0.0/1`` passed as two narrow ranges."""
    from langop_infra.config.checks._world_open import world_families

    assert world_families(["0.0.0.0/1", "128.0.0.0/1"]) == ["IPv4"]
    assert world_families(["::ffff:0.0.0.0/97", "::ffff:128.0.0.0/97"]) == ["IPv4"]
    assert world_families(["0.0.0.0/1", "128.0.0.0/2", "::/1"]) == []
    assert is_world("::ffff:0.0.0.0/96") and not is_world("::ffff:10.0.0.0/104")
    doc = document()
    doc["tools"][0]["allowFrom"] = [
        {"ipBlock": {"cidr": "0.0.0.0/1"}},
        {"ipBlock": {"cidr": "128.0.0.0/1"}},
    ]
    warnings = [w for w in cluster_warnings(parse_cluster(doc)) if "together" in w.message]
    assert [(w.path, w.message.split(" admits")[0]) for w in warnings] == [
        ("tools[0].allowFrom", "0.0.0.0/1, 128.0.0.0/1 together")
    ]
