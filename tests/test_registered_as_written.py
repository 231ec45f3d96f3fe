"""A user's program, registered exactly as written (issue 35 §1): Output labels and
annotations reach every object (never a validation stand-in), a secret Output goes only into
the workload's Secret (through ``secretKeyRef``) or is a field error, and an Output where a
list is expected is a field error with exit 2.

Most cases run a user's project outside the repository through the CLI (``render``, as a
reviewer sees it); the registration cases run the program as ``pulumi up`` would register it
(the mock engine with ``preview=False``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import yaml

from langop_infra import LanguageAgent, LanguageTool, external_service
from langop_infra._errors import REDACTED
from langop_infra.components._stand_ins import STAND_INS
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.testing.secrets import secret_leaves
from tests.support.user_project import make_project, run_cli

HEAD = """
import pulumi
import pulumi_kubernetes as k8s
from langop_infra import LanguageAgent, LanguageTool
ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64
AGENT = "ghcr.io/acme/helper:2.0.0"
"""
CANARY = "canary-7f3a9c-do-not-leak"
IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64
AGENT = "ghcr.io/acme/helper:2.0.0"


def render(tmp_path: Path, body: str) -> tuple[int, list[dict[str, Any]], str, str]:
    code, out, err = run_cli(make_project(tmp_path / "p", HEAD + body), "render", "--stack", "dev")
    docs = [d for d in yaml.safe_load_all(out) if d] if code == 0 else []
    return code, docs, out, err


def named(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    [found] = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def stand_ins_in(value: Any) -> list[Any]:
    """Every validation stand-in found as a string anywhere in ``value``."""
    text = json.dumps(value)
    return [s for s in STAND_INS if isinstance(s, str) and len(s) > 3 and s in text]


def test_output_labels_and_annotations_reach_every_object_of_a_tool(tmp_path: Path) -> None:
    code, docs, out, err = render(
        tmp_path,
        'LanguageTool("memory", image=IMAGE, namespace="apps", '
        'labels={"cost-center": pulumi.Output.from_input("cc-42")}, '
        'annotations={"owner": ns.metadata.name.apply(lambda n: "team-" + n)})',
    )
    assert code == 0, err
    assert "placeholder" not in out
    for kind, name in [
        ("Deployment", "memory"),
        ("Service", "memory"),
        ("NetworkPolicy", "memory-ingress"),
    ]:
        assert named(docs, kind, name)["metadata"]["labels"]["cost-center"] == "cc-42", kind
    deployment = named(docs, "Deployment", "memory")
    assert deployment["metadata"]["annotations"] == {"owner": "team-apps"}
    assert deployment["spec"]["template"]["metadata"]["labels"]["cost-center"] == "cc-42"


def test_output_labels_and_annotations_reach_every_object_of_an_agent(tmp_path: Path) -> None:
    code, docs, out, err = render(
        tmp_path,
        'LanguageAgent("helper", image=AGENT, namespace="apps", '
        'labels={"cost-center": pulumi.Output.from_input("cc-42")}, '
        'annotations={"owner": pulumi.Output.from_input("team-a")})',
    )
    assert code == 0, err
    assert "placeholder" not in out
    for kind, name in [
        ("Deployment", "helper"),
        ("ConfigMap", "helper-config"),
        ("NetworkPolicy", "helper-ingress"),
    ]:
        assert named(docs, kind, name)["metadata"]["labels"]["cost-center"] == "cc-42", kind
    assert named(docs, "Deployment", "helper")["metadata"]["annotations"] == {"owner": "team-a"}


def test_labels_none_means_no_extra_labels(tmp_path: Path) -> None:
    code, docs, _, err = render(
        tmp_path, 'LanguageTool("memory", image=IMAGE, namespace="apps", labels=None)'
    )
    assert code == 0, err
    labels = named(docs, "Deployment", "memory")["metadata"]["labels"]
    assert labels["langop.io/tool"] == "memory"


def test_a_secret_env_output_goes_into_the_secret_and_the_spec_stays_readable(
    tmp_path: Path,
) -> None:
    code, docs, out, err = render(
        tmp_path,
        'LanguageTool("memory", image=IMAGE, namespace="apps", '
        f'env={{"TOKEN": pulumi.Output.secret("{CANARY}"), '
        '"MODE": pulumi.Output.from_input("fast")})',
    )
    assert code == 0, err
    assert CANARY not in out + err
    deployment = named(docs, "Deployment", "memory")
    # Only the secret is hidden: replicas, image and the plain env value are readable.
    assert deployment["spec"]["replicas"] == 1
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == IMAGE
    env = {e["name"]: e for e in container["env"]}
    assert env["TOKEN"] == {
        "name": "TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "memory-env", "key": "TOKEN"}},
    }
    assert env["MODE"] == {"name": "MODE", "value": "fast"}
    assert named(docs, "Secret", "memory-env")["stringData"] == {"TOKEN": REDACTED}


def registered(run: ProgramRun, kind: str, name: str) -> dict[str, Any]:
    [found] = [
        r.inputs
        for r in run.kubernetes()
        if r.inputs.get("kind") == kind and (r.inputs.get("metadata") or {}).get("name") == name
    ]
    return found


def test_pulumi_up_registers_a_secret_env_and_header_only_in_the_secret() -> None:
    """As ``pulumi up`` registers it: the canary is a secret of the Secret and nowhere else."""

    def program() -> None:
        external_service("db", "apps")  # its MCP server's Service runs already
        LanguageAgent(
            "helper",
            image=AGENT,
            namespace="apps",
            env={"TOKEN": pulumi.Output.secret(CANARY).apply(lambda s: s)},
            mcp_servers=[
                {
                    "name": "db",
                    "url": "http://db.apps:80/mcp",
                    "headers": [
                        {"name": "Authorization", "value": pulumi.Output.secret(CANARY + "-h")}
                    ],
                }
            ],
        )

    run = run_program(program, preview=False)
    for registration in run.kubernetes():
        plain = json.dumps(registration.inputs, default=str)
        leaves = secret_leaves(registration.inputs)
        if registration.inputs.get("kind") == "Secret":
            assert sorted(v for _, v in leaves) == sorted([CANARY, CANARY + "-h"])
        else:
            assert CANARY not in json.dumps([v for _, v in leaves], default=str)
            assert CANARY not in plain.replace(json.dumps(leaves), ""), registration.name
            assert leaves == [], registration.name
    config = registered(run, "ConfigMap", "helper-config")["data"]["config.yaml"]
    assert CANARY not in config
    [container] = registered(run, "Deployment", "helper")["spec"]["template"]["spec"]["containers"]
    refs = {e["name"]: e.get("valueFrom") for e in container["env"]}
    assert refs["TOKEN"] == {"secretKeyRef": {"name": "helper-env", "key": "TOKEN"}}
    assert refs["ARK_MCP_DB_HEADER_AUTHORIZATION"] == {
        "secretKeyRef": {"name": "helper-env", "key": "ARK_MCP_DB_HEADER_AUTHORIZATION"}
    }


def test_pulumi_up_registers_no_stand_in_for_output_metadata() -> None:
    def program() -> None:
        later = pulumi.Output.from_input("cc-42").apply(lambda v: v)
        LanguageTool(
            "memory",
            image=IMAGE,
            namespace="apps",
            labels={"cost-center": later},
            annotations={"owner": later},
        )

    run = run_program(program, preview=False)
    for registration in run.kubernetes():
        assert stand_ins_in(registration.inputs) == [], registration.name
    assert registered(run, "Service", "memory")["metadata"]["labels"]["cost-center"] == "cc-42"


def test_a_secret_output_in_a_label_is_a_field_error(tmp_path: Path) -> None:
    code, _, out, err = render(
        tmp_path,
        'LanguageTool("memory", image=IMAGE, namespace="apps", '
        f'labels={{"team": pulumi.Output.secret("{CANARY}")}})',
    )
    assert code == 2
    assert CANARY not in out + err
    assert "Traceback" not in err
    assert "invalid LanguageTool 'memory': 1 problem (built at " in err
    assert "  - labels.team: is a secret Output, but this field is plain text in the cluster" in err


def test_a_secret_output_as_an_image_is_a_field_error(tmp_path: Path) -> None:
    code, _, _, err = render(
        tmp_path,
        'LanguageAgent("helper", image=pulumi.Output.secret(AGENT), namespace="apps")',
    )
    assert code == 2
    assert "  - image: is a secret Output, but this field is plain text" in err


def test_tools_as_an_output_is_a_field_error(tmp_path: Path) -> None:
    code, _, _, err = render(
        tmp_path,
        'memory = LanguageTool("memory", image=IMAGE, namespace="apps")\n'
        'LanguageAgent("helper", image=AGENT, namespace="apps", '
        "tools=pulumi.Output.from_input([memory]))",
    )
    assert code == 2
    assert "internal error" not in err and "Traceback" not in err
    assert "  - tools: expected a list, got an Output; pass a list here" in err


def test_mcp_servers_as_an_output_is_a_field_error(tmp_path: Path) -> None:
    code, _, _, err = render(
        tmp_path,
        'LanguageAgent("helper", image=AGENT, namespace="apps", '
        'mcp_servers=pulumi.Output.from_input([{"name": "db", "url": "http://db:80/mcp"}]))',
    )
    assert code == 2
    assert "internal error" not in err
    assert "  - mcp_servers: expected a list, got an Output" in err


def test_an_output_item_of_tools_is_a_field_error(tmp_path: Path) -> None:
    code, _, _, err = render(
        tmp_path,
        'memory = LanguageTool("memory", image=IMAGE, namespace="apps")\n'
        'LanguageAgent("helper", image=AGENT, namespace="apps", '
        "tools=[pulumi.Output.from_input(memory)])",
    )
    assert code == 2
    assert "internal error" not in err
    assert "  - tools[0]: must be known when the program runs, not an Output" in err


def test_a_computed_output_stays_unknown_in_outputs_and_render(tmp_path: Path) -> None:
    """``ns.metadata.uid`` is the API server's: unknown offline, never None; a string field
    takes it."""
    project = make_project(
        tmp_path / "p",
        HEAD + 'pulumi.export("uid", ns.metadata.uid)\n'
        'pulumi.export("name", ns.metadata.name)\n'
        'LanguageTool("memory", image=IMAGE, namespace="apps", env={"UID": ns.metadata.uid})\n',
    )
    code, out, err = run_cli(project, "outputs", "--stack", "dev", "--output", "json")
    assert code == 0, err
    assert json.loads(out) == {"uid": "[unknown]", "name": "apps"}
    code, out, err = run_cli(project, "render", "--stack", "dev")
    assert code == 0, err
    [deployment] = [d for d in yaml.safe_load_all(out) if d and d["kind"] == "Deployment"]
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["UID"] == {"name": "UID", "value": "[unknown]"}


def test_render_takes_the_old_json_flag_with_a_warning(tmp_path: Path) -> None:
    """docs/cli.md: ``--json`` (= ``-o json``) still works for this release."""
    project = make_project(tmp_path / "p", HEAD + 'LanguageTool("memory", image=IMAGE)\n')
    code, out, err = run_cli(project, "render", "--stack", "dev", "--json")
    assert code == 0, err
    assert '"kind": "Deployment"' in out
    assert "--json is deprecated" in err
    assert run_cli(project, "render", "--stack", "dev", "-o", "json")[1] == out
