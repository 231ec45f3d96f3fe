"""The stack program (``langop_infra.program.stack``) with the config ``pulumi up`` hands it:
config keys and namespaces, ``secure:`` values in the wrong key, ``externalSecrets``, and
warnings sent to the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.offline._render import render_stack
from langop_infra.program.stack import KEYS, config_warnings, main, read_cluster_config

REPO = Path(__file__).resolve().parents[1]
P = "langop-infra:"
# Pinned by digest, so that the only warnings are those a test provokes.
DIGEST = "@sha256:" + "1" * 64
TOOL = {"name": "memory", "image": "ghcr.io/acme/memory-mcp:1.4.0" + DIGEST}
AGENT = {
    "name": "helper",
    "image": "ghcr.io/acme/helper:2.0.0" + DIGEST,
    "tools": [{"name": "memory"}],
}
# What `pulumi up` passes for a key holding a secure value: its decrypted plain text.
CANARY = "decrypted-canary-7f3a"


def config(**keys: Any) -> dict[str, str]:
    """Stack config as the CLI passes it: full keys, structured values as JSON."""
    out = {}
    for key, value in keys.items():
        full = key if ":" in key else P + key
        out[full] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return out


def problems(values: dict[str, str], secret_keys: list[str] = ()) -> list[str]:  # type: ignore[assignment]
    with pytest.raises(SpecError) as caught:
        run_program(read_cluster_config, config=values, secret_keys=list(secret_keys))
    return [str(p) for p in caught.value.problems]


def test_external_secrets_is_a_config_key() -> None:
    assert "externalSecrets" in KEYS
    agent = {**AGENT, "secretEnv": {"TOKEN": {"secretKeyRef": {"name": "vault", "key": "t"}}}}
    values = config(namespace="apps", tools=[TOOL], agents=[agent], externalSecrets=["vault"])
    run = run_program(main, config=values)
    env = next(
        r.inputs["spec"]["template"]["spec"]["containers"][0]["env"]
        for r in run.kubernetes()
        if r.inputs["kind"] == "Deployment" and r.inputs["metadata"]["name"] == "helper"
    )
    assert {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "vault", "key": "t"}}} in env
    assert not any(r.inputs.get("metadata", {}).get("name") == "vault" for r in run.kubernetes())


def test_an_undeclared_secret_is_named_by_config_key() -> None:
    agent = {**AGENT, "secretEnv": {"TOKEN": {"secretKeyRef": {"name": "vault", "key": "t"}}}}
    found = problems(config(namespace="apps", tools=[TOOL], agents=[agent]))
    assert found == [
        f"{P}agents[0].secretEnv.TOKEN.secretKeyRef.name: no Secret 'vault' under secrets or "
        "externalSecrets; declare it under secrets, or list it in externalSecrets if something "
        "outside this program creates it"
    ]


def test_external_secrets_of_the_wrong_type_is_named() -> None:
    found = problems(config(namespace="apps", externalSecrets="vault"))
    assert found == [
        f"{P}externalSecrets: expected a list of names of Secrets made outside this program"
    ]


def test_a_misspelt_config_namespace_gets_a_did_you_mean_and_no_missing_key_error() -> None:
    values = config(**{"langop-infa:namespace": "apps", "kubernetes:context": "kind"})
    assert problems(values) == [
        "langop-infa:namespace: unknown config namespace 'langop-infa'; did you mean "
        f"{P}namespace? (this project's keys are under {P})"
    ]


def test_a_misspelt_namespace_of_another_key_keeps_the_missing_namespace_error() -> None:
    found = problems(config(**{"langop_infra:tools": [TOOL]}))
    assert found == [
        "langop_infra:tools: unknown config namespace 'langop_infra'; did you mean "
        f"{P}tools? (this project's keys are under {P})",
        f"{P}namespace: required; set it with `pulumi config set namespace`",
    ]


def test_other_providers_keys_are_not_questioned() -> None:
    values = config(namespace="apps", **{"kubernetes:context": "kind", "pulumi:tags": "{}"})
    assert run_program(read_cluster_config, config=values).registrations == []


@pytest.mark.parametrize(
    ("key", "value", "others"),
    [
        # the agent's reference would dangle without the tools
        ("tools", [{**TOOL, "secretEnv": {"T": CANARY}}], {"agents": [AGENT]}),
        # egressTo needs the refused defaults' egress: restricted
        (
            "defaults",
            {"egress": "restricted", "resources": {"limits": {"memory": CANARY}}},
            {"agents": [{**AGENT, "tools": [], "egressTo": [{"cidr": "10.0.0.0/8"}]}]},
        ),
        # an invalid value in the refused key itself is not reported (nor shown)
        ("partOf", f"not a label {CANARY}", {}),
        ("namespace", f"Not_A_Name_{CANARY}", {}),
    ],
)
def test_a_secure_value_in_the_wrong_key_is_one_error_and_never_shown(
    key: str, value: Any, others: dict[str, Any]
) -> None:
    values = config(**{"namespace": "apps", "tools": [TOOL], **others, key: value})
    found = problems(values, [P + key])
    assert found == [
        f"{P}{key}: holds a secure value; keep secrets under {P}secrets and reference them "
        "with secretKeyRef"
    ]
    assert CANARY not in str(found)


def test_other_problems_stay_reported_next_to_a_misplaced_secure_value() -> None:
    agent = {**AGENT, "replicas": -1}
    values = config(namespace="apps", tools=[{**TOOL, "env": {"T": CANARY}}], agents=[agent])
    found = problems(values, [P + "tools"])
    assert [line.split(": ")[0] for line in found] == [f"{P}tools", f"{P}agents[0].replicas"]
    assert CANARY not in str(found)


def test_warnings_go_to_the_engine_with_their_config_path() -> None:
    server = {
        "name": "search",
        "url": "https://search.example.com/mcp",
        "headers": [{"name": "X-Api-Key", "value": CANARY}],
    }
    values = config(
        namespace="apps",
        tools=[TOOL],
        agents=[{**AGENT, "mcpServers": [server]}],
        defaults={"schemaSyncFrom": [{"cidr": "10.0.0.0/28"}]},
    )
    run = ProgramRun()
    run_program(main, config=values, into=run)
    assert run.warnings == [
        f"{P}agents[0].mcpServers[0].headers[0].value: X-Api-Key is a credential given as a "
        "literal value, which lands in plain text in a ConfigMap and env; use valueFrom: "
        "{secretKeyRef: {name, key}} (a Secret under secrets) or, in Python, "
        "secret=pulumi.Output.secret(...)"
    ]
    assert CANARY not in str(run.warnings)
    spec = run_program(read_cluster_config, config=values)
    assert spec.registrations == []


def test_config_warnings_prefix_the_project() -> None:
    from langop_infra.config.checks._validation import parse_cluster

    header = {"name": "Cookie", "value": "c"}
    spec = parse_cluster(
        {"namespace": "apps", "tools": [{**TOOL, "schemaSync": {"headers": [header]}}]}
    )
    (warning,) = config_warnings(spec)
    assert warning.path == f"{P}tools[0].schemaSync.headers[0].value"


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_shipped_stacks_render_without_warnings(stack: str) -> None:
    run = render_stack(REPO, stack=stack)
    assert run.warnings == []
    assert run.kubernetes()
