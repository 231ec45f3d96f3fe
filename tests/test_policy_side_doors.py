"""The policy pack has no side doors (#36 §3): each one the issue found passed ``check``
against prod; each is a program of plain ``pulumi_kubernetes`` objects here, run under the
mock engine and judged as ``langop-infra check --stack prod`` judges, next to a clean
program that trips nothing."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pulumi_kubernetes as k8s
import pytest

from langop_infra.offline._mock_engine import run_program
from langop_infra.policy import _credentials as credentials
from langop_infra.policy.offline import check

DIGEST = "@sha256:" + "0" * 64
SECURE = {
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}
META = {"namespace": "plain"}
CANARY = "Zq8r2LmX9vBt4WnK7pYs3HdJ6cFa"  # what no finding may quote


def container(env: dict[str, str] | None = None, **context: Any) -> dict[str, Any]:
    return {
        "name": "app",
        "image": f"ghcr.io/acme/app:1{DIGEST}",
        "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
        "securityContext": {**SECURE, **context},
    }


def pod(env: dict[str, str] | None = None, **context: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "app"}},
        "spec": {"containers": [container(env, **context)]},
    }


def clean() -> None:
    k8s.apps.v1.Deployment(
        "app",
        metadata={"name": "app", **META},
        spec={"selector": {"matchLabels": {"app": "app"}}, "template": pod({"LOG_LEVEL": "info"})},
    )
    k8s.networking.v1.NetworkPolicy(
        "app",
        metadata={"name": "app", **META},
        spec={
            "podSelector": {},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"role": "client"}}}]}],
            "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}],
        },
    )
    k8s.core.v1.ConfigMap(
        "settings",
        metadata={"name": "settings", **META},
        data={
            "config.yaml": "model:\n  api_key: os.environ/MODEL_API_KEY\n  name: gpt\n",
            "app.env": "LOG_LEVEL=info\nREGION=eu-west-1\n",
        },
    )


def judged(*extra: Callable[[], None]) -> list[tuple[str, str]]:
    def program() -> None:
        clean()
        for make in extra:
            make()

    found = [(v.policy, v.message) for v in check(run_program(program), "prod")]
    assert not [m for _, m in found if CANARY in m], "a finding quotes the value"
    return [f for f in found if f[0] != "langop-schema-sync"]


def test_the_clean_program_trips_nothing() -> None:
    assert judged() == []


# -- NetworkPolicy openness ---------------------------------------------------------------------


def netpol(**spec: Any) -> Callable[[], None]:
    def make() -> None:
        k8s.networking.v1.NetworkPolicy(
            "open", metadata={"name": "open", **META}, spec={"podSelector": {}, **spec}
        )

    return make


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ({"ingress": [{}]}, "ingress[0] has no from: it admits every peer"),
        ({"ingress": [{"ports": [{"port": 80}]}]}, "ingress[0] has no from"),
        ({"egress": [{}]}, "egress[0] has no to: it admits every peer"),
        ({"ingress": [{"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}]}, "is ipBlock 0.0.0.0/0"),
        (
            {"egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}]}]},
            "egress[0].to[0] is ipBlock 0.0.0.0/0: the whole internet",
        ),
        ({"egress": [{"to": [{"ipBlock": {"cidr": "::/0"}}]}]}, "is ipBlock ::/0"),
        ({"ingress": [{"from": [{"namespaceSelector": {}}]}]}, "every pod of every namespace"),
        # issue 49 §6: the world in pieces, mapped, or selected by exclusion
        (
            {
                "ingress": [
                    {"from": [{"ipBlock": {"cidr": "0.0.0.0/1"}}]},
                    {"from": [{"ipBlock": {"cidr": "128.0.0.0/1"}}]},
                ]
            },
            "ingress ipBlocks 0.0.0.0/1, 128.0.0.0/1 together cover every IPv4 address",
        ),
        (
            {
                "egress": [
                    {"to": [{"ipBlock": {"cidr": "::/1"}}, {"ipBlock": {"cidr": "8000::/1"}}]}
                ]
            },
            "egress ipBlocks ::/1, 8000::/1 together cover every IPv6 address",
        ),
        (
            {"ingress": [{"from": [{"ipBlock": {"cidr": "::ffff:0.0.0.0/96"}}]}]},
            "ingress[0].from[0] is ipBlock ::ffff:0.0.0.0/96: the whole internet",
        ),
        *(
            (
                {
                    "ingress": [
                        {"from": [{"namespaceSelector": {"matchExpressions": [expression]}}]}
                    ]
                },
                "ingress[0].from[0] has a namespaceSelector that only excludes",
            )
            for expression in (
                {"key": "kubernetes.io/metadata.name", "operator": "Exists"},
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["prod"]},
                {"key": "quarantined", "operator": "DoesNotExist"},
            )
        ),
    ],
)
def test_a_world_open_network_policy_trips(spec: dict[str, Any], said: str) -> None:
    found = judged(netpol(policyTypes=["Ingress", "Egress"], **spec))
    assert [p for p, _ in found] == ["langop-network-policies-closed"]
    assert said in found[0][1] and found[0][1].startswith("NetworkPolicy plain/open: ")


def test_closed_rules_do_not_trip() -> None:
    closed = netpol(
        ingress=[],
        egress=[{"to": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"k": "dns"}}}]}],
    )
    assert judged(closed) == []


def test_an_empty_peer_or_peer_list_is_open_and_a_selector_with_expressions_is_not() -> None:
    from langop_infra.policy._openness import openings

    assert list(openings({"ingress": [{"from": [{}]}]})) == [
        "ingress[0].from[0] is empty: it admits every peer"
    ]
    assert list(openings({"egress": [{"to": [], "ports": [{"port": 443}]}]})) == [
        "egress[0] has no to: it admits every peer"
    ]
    team = {"matchExpressions": [{"key": "team", "operator": "Exists"}]}
    assert list(openings({"ingress": [{"from": [{"namespaceSelector": team}]}]})) == []
    assert list(openings({"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {}}}]}]}))


# -- pod templates found by shape -----------------------------------------------------------------


def privileged_replication_controller() -> None:
    k8s.core.v1.ReplicationController(
        "rc",
        metadata={"name": "rc", **META},
        spec={"selector": {"app": "app"}, "template": pod(privileged=True)},
    )


def privileged_pod_template() -> None:
    k8s.core.v1.PodTemplate("pt", metadata={"name": "pt", **META}, template=pod(privileged=True))


def privileged_patch() -> None:
    k8s.apps.v1.DeploymentPatch(
        "patch", metadata={"name": "patch", **META}, spec={"template": pod(privileged=True)}
    )


def privileged_custom_resource() -> None:
    k8s.apiextensions.CustomResource(
        "rollout",
        api_version="argoproj.io/v1alpha1",
        kind="Rollout",
        metadata={"name": "rollout", **META},
        spec={"template": pod(privileged=True)},
    )


def privileged_cron_job() -> None:
    k8s.batch.v1.CronJob(
        "cron",
        metadata={"name": "cron", **META},
        spec={
            "schedule": "@daily",
            "jobTemplate": {
                "spec": {
                    "template": {
                        **pod(privileged=True),
                        "spec": {**pod(privileged=True)["spec"], "restartPolicy": "Never"},
                    }
                }
            },
        },
    )


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (privileged_cron_job, "cron"),
        (privileged_replication_controller, "rc"),
        (privileged_pod_template, "pt"),
        (privileged_patch, "patch"),
        (privileged_custom_resource, "rollout"),
    ],
)
def test_a_privileged_pod_in_any_template_trips(make: Callable[[], None], kind: str) -> None:
    found = [m for p, m in judged(make) if p == "langop-restricted-pods"]
    assert f"pod of plain/{kind}: Privileged Containers: app: privileged" in found


# -- credential literals -----------------------------------------------------------------------

ENV_LITERALS = {
    "OPENAI_KEY": f"sk-proj-{CANARY}",
    "GITHUB_PAT": f"ghp_{CANARY}0123456789",
    "DB_PASS": CANARY,
    "DATABASE_URL": f"postgres://app:{CANARY}@db.plain.svc:5432/app",
    "SLACK_WEBHOOK_URL": f"https://hooks.slack.com/services/T0000000/B0000000/{CANARY[:24]}",
}


@pytest.mark.parametrize("name", sorted(ENV_LITERALS))
def test_a_credential_env_literal_trips(name: str) -> None:
    def make() -> None:
        k8s.apps.v1.Deployment(
            "leaky",
            metadata={"name": "leaky", **META},
            spec={
                "selector": {"matchLabels": {"app": "app"}},
                "template": pod({name: ENV_LITERALS[name]}),
            },
        )

    assert judged(make) == [
        (
            "langop-no-literal-credentials",
            f"plain/leaky: container app env {name} is a literal credential; use "
            "valueFrom.secretKeyRef",
        )
    ]


PEM = (
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
    "-----END PRIVATE KEY-----\n"
)


@pytest.mark.parametrize(
    ("data", "binary", "said"),
    [
        ({"tls.key": PEM}, {}, "tls.key holds a literal credential (looks like one (Private Key))"),
        ({".env": f"REGION=eu\nOPENAI_API_KEY={CANARY}\n"}, {}, ".env line 2 (OPENAI_API_KEY)"),
        (
            {"config.json": json.dumps({"service": {"apiKey": CANARY}})},
            {},
            "config.json.service.apiKey",
        ),
        ({}, {"TOKEN": base64.b64encode(CANARY.encode()).decode()}, "binaryData.TOKEN"),
        (
            {},
            {"API_TOKEN": base64.b64encode(b"\xff\xfe\x00\x01bin").decode()},
            "binaryData.API_TOKEN",
        ),
        (
            {},
            {"creds.env": base64.b64encode(f"DB_PASSWORD={CANARY}".encode()).decode()},
            "binaryData.creds.env line 1 (DB_PASSWORD)",
        ),
        # issue 49 §6: XML, .netrc, and text wrapped in base64 inside data
        (
            {
                "app.config": '<?xml version="1.0"?><appSettings>'
                f'<add key="ApiKey" value="{CANARY}"/></appSettings>'
            },
            {},
            "app.config <ApiKey> holds a literal credential",
        ),
        (
            {
                "settings.xml": "<settings><server>"
                f"<password>{CANARY}</password></server></settings>"
            },
            {},
            "settings.xml <password> holds a literal credential",
        ),
        (
            {".netrc": f"machine api.example.com login bot password {CANARY}\n"},
            {},
            ".netrc (password) holds a literal credential",
        ),
        (
            {"bootstrap": base64.b64encode(f"export GITHUB_TOKEN={CANARY}\n".encode()).decode()},
            {},
            "bootstrap line 1 (GITHUB_TOKEN) (base64) holds a literal credential",
        ),
    ],
)
def test_a_config_map_credential_trips(
    data: dict[str, str], binary: dict[str, str], said: str
) -> None:
    def make() -> None:
        k8s.core.v1.ConfigMap(
            "leaky",
            metadata={"name": "leaky", **META},
            data=data or None,
            binary_data=binary or None,
        )

    found = judged(make)
    assert [p for p, _ in found] == ["langop-no-literal-credentials"]
    assert found[0][1].startswith("ConfigMap plain/leaky: ") and said in found[0][1]


@pytest.mark.parametrize("header", ["X-Auth-Token", "api-key", "Proxy-Authorization"])
def test_a_literal_credential_header_trips(header: str) -> None:
    document = {
        "mcpServers": [{"name": "s", "headers": [{"name": header, "value": CANARY}]}],
        "tools": {"headers": {header: CANARY}},
    }

    def make() -> None:
        k8s.core.v1.ConfigMap(
            "leaky", metadata={"name": "leaky", **META}, data={"config.yaml": json.dumps(document)}
        )

    messages = sorted(m for _, m in judged(make))
    assert messages == [
        f"ConfigMap plain/leaky: config.yaml .mcpServers[0].headers[0] ({header}) is a "
        "credential header with a literal value; send it from a Secret (valueFrom.secretKeyRef)",
        f"ConfigMap plain/leaky: config.yaml.tools.headers.{header} holds a literal credential "
        "(named like a credential); send it from a Secret (valueFrom.secretKeyRef)",
    ]


def test_names_and_header_maps() -> None:
    for name in ("OPENAI_KEY", "tls.key", "GITHUB_PAT", "DB_PASS", "SLACK_WEBHOOK_URL"):
        assert credentials.credential_name(name), name
    for name in ("LOG_LEVEL", "KEYBOARD", "MODEL_ENDPOINT", "PATH"):
        assert not credentials.credential_name(name), name
    # a header name only a header could be: judged as one inside a headers map only
    assert credentials.judge("X-Session", "abc123abc123") is None
    document = {"headers": {"X-Session": "abc123abc123"}, "env": {"X-Session": "abc123abc123"}}
    assert list(credentials.in_document(document)) == [
        (".headers.X-Session", "named like a credential")
    ]


def test_references_and_placeholders_are_not_credentials() -> None:
    for value in ("os.environ/OPENAI_API_KEY", "${TOKEN}", "{{ .Values.token }}", "no-key", ""):
        assert credentials.judge("OPENAI_API_KEY", value) is None, value
    assert credentials.judge("LOG_LEVEL", "debug") is None
    assert credentials.judge("MODEL_ENDPOINT", "http://gateway.research.svc:8000/v1") is None
    assert credentials.judge("TOKEN", "x" * 12) == "named like a credential"


# -- endpoints ------------------------------------------------------------------------------------


def risky_agent() -> None:
    env = {"MODEL_ENDPOINT": "http://169.254.169.254/latest/v1", "LOG_LEVEL": "info"}
    k8s.apps.v1.Deployment(
        "agent",
        metadata={"name": "agent", **META},
        spec={"selector": {"matchLabels": {"app": "app"}}, "template": pod(env)},
    )
    config = {"mcpServers": [{"name": "k", "url": f"https://tools.example.com/mcp?token={CANARY}"}]}
    k8s.core.v1.ConfigMap(
        "agent-config",
        metadata={"name": "agent-config", **META},
        data={"config.yaml": json.dumps(config)},
    )


def test_risky_endpoints_are_advisory_and_can_be_made_mandatory() -> None:
    def program() -> None:
        clean()
        risky_agent()

    run = run_program(program)
    found = [(v.policy, v.level, v.message) for v in check(run, "prod")]
    endpoints = [f for f in found if f[0] == "langop-endpoints"]
    assert [level for _, level, _ in endpoints] == ["advisory", "advisory"]
    messages = sorted(m for _, _, m in endpoints)
    assert messages == [
        "ConfigMap plain/agent-config: config.yaml: https://tools.example.com/mcp: the query "
        "parameter(s) token look like a credential; send it from a Secret (a header or the "
        "field's secretKeyRef)",
        "plain/agent: container app env MODEL_ENDPOINT: http://169.254.169.254/latest/v1: "
        "169.254.169.254 is a cloud metadata service, which hands out the node's credentials",
    ]
    strict = check(run, "prod", {"langop-endpoints": "mandatory"})
    assert {v.level for v in strict if v.policy == "langop-endpoints"} == {"mandatory"}
    assert not [v for v in strict if CANARY in v.message]


DISGUISED = {  # issue 49 §6: 169.254.169.254 and the kubelet however written
    "A": "http://2852039166/latest/meta-data",
    "B": "http://0xa9fea9fe/latest",
    "C": "http://0251.0376.0251.0376/latest",
    "D": "http://169.254.43518/latest",
    "E": "http://[::ffff:169.254.169.254]/latest",
    "F": "http://[::ffff:a9fe:a9fe]/latest",
    "G": "http://localhost:10250/pods",
    "H": "http://127.1:10255/pods",
    "I": "http://[fe80::1%25eth0]/x",
    "A2A_PEERS": json.dumps([{"name": "p", "url": "http://0xa9fea9fe/rpc"}]),
    "AGENT_MEMORY_ENDPOINT": "http://[::ffff:169.254.169.254]/mcp",
    "SIDECAR": "http://localhost:8080/mcp",
}


def test_endpoints_are_judged_on_the_address_they_name() -> None:
    def disguised() -> None:
        k8s.apps.v1.Deployment(
            "agent",
            metadata={"name": "agent", **META},
            spec={"selector": {"matchLabels": {"app": "app"}}, "template": pod(DISGUISED)},
        )

    found = sorted(m for p, m in judged(disguised) if p == "langop-endpoints")
    said = {m.split(" env ")[1].split(":")[0]: m.split(": ", 3)[3] for m in found}
    assert sorted(said) == sorted(set(DISGUISED) - {"SIDECAR"})
    assert said["A"] == (
        "2852039166 (169.254.169.254) is a cloud metadata service, which hands out the node's "
        "credentials"
    )
    assert (
        said["G"]
        == "localhost:10250 is the kubelet's API on the node (a host-network pod's loopback)"
    )
    assert said["H"].startswith("127.1 (127.0.0.1):10255 is the kubelet's read-only API")
    assert said["I"].startswith("fe80::1%25eth0 is a link-local address")
    assert said["A2A_PEERS"].startswith("0xa9fea9fe (169.254.169.254) is a cloud metadata")
