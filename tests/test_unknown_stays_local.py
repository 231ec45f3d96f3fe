"""An unknown value makes unknown only what is made from it (issue 51 §2, a first case):
one `random`-style label leaves the agent's config.yaml, its Deployment's spec and its
NetworkPolicies as the render with a known label gives them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from langop_infra.offline._engine_values import UNKNOWN_MARKER
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
