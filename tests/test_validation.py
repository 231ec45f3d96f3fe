"""Whole-document validation (``langop_infra.config.checks._validation``): Secret references,
warnings, problems reported once, and pydantic's errors turned into messages with the expected
form."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from langop_infra.config._pod import Resources
from langop_infra.config._pydantic_errors import stack_wording
from langop_infra.config.checks._advice import agent_warnings, cluster_warnings
from langop_infra.config.checks._validation import parse_agent, parse_cluster, parse_tool
from langop_infra.core.problems import Problem, SpecError

TOOL = {"name": "memory", "image": "ghcr.io/acme/memory-mcp:1.4.0"}
AGENT = {"name": "helper", "image": "ghcr.io/acme/helper:2.0.0"}
DIGEST = "@sha256:3333333333333333333333333333333333333333333333333333333333333333"


def ref(name: str, key: str = "token") -> dict[str, Any]:
    return {"secretKeyRef": {"name": name, "key": key}}


def cluster(**fields: Any) -> dict[str, Any]:
    return {"namespace": "apps", "secrets": {"search-credentials": {"token": "t"}}, **fields}


def problems(parse: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        parse(data)
    return [(p.path, p.message) for p in caught.value.problems]


# --- secretKeyRefs must name a Secret the document knows --------------------------------------

EVERY_REFERENCE = {
    "tools": [{**TOOL, "secretEnv": {"DB": ref("db")}}],
    "agents": [
        {
            **AGENT,
            "secretEnv": {"DB": ref("db")},
            "mcpServers": [
                {
                    "name": "search",
                    "url": "https://search.example.com/mcp",
                    "headers": [{"name": "Authorization", "valueFrom": ref("db")}],
                }
            ],
            "webhookTools": [
                {
                    "name": "lookup",
                    "url": "https://lookup.example.com/",
                    "authentication": {"type": "bearer", "secretRef": {"name": "db", "key": "t"}},
                }
            ],
        }
    ],
}
EVERY_PATH = [
    "tools[0].secretEnv.DB.secretKeyRef.name",
    "agents[0].secretEnv.DB.secretKeyRef.name",
    "agents[0].mcpServers[0].headers[0].valueFrom.secretKeyRef.name",
    "agents[0].webhookTools[0].authentication.secretRef.name",
]


def test_every_kind_of_secret_reference_must_name_a_known_secret() -> None:
    found = problems(parse_cluster, cluster(**EVERY_REFERENCE))
    assert [path for path, _ in found] == EVERY_PATH
    assert {message for _, message in found} == {
        "no Secret 'db' under secrets or externalSecrets; declare it under secrets, or list it "
        "in externalSecrets if something outside this program creates it"
    }


def test_external_secrets_make_references_to_them_valid() -> None:
    spec = parse_cluster(cluster(externalSecrets=["db"], **EVERY_REFERENCE))
    assert spec.external_secrets == ["db"]
    assert parse_cluster(cluster(external_secrets=["db"], **EVERY_REFERENCE)).external_secrets


def test_a_misspelt_secret_name_gets_a_did_you_mean() -> None:
    document = cluster(tools=[{**TOOL, "secretEnv": {"T": ref("search-credential")}}])
    ((path, message),) = problems(parse_cluster, document)
    assert path == "tools[0].secretEnv.T.secretKeyRef.name"
    assert "did you mean 'search-credentials'? Otherwise declare it under secrets" in message


def test_a_secret_both_created_and_external_is_refused() -> None:
    found = problems(parse_cluster, cluster(externalSecrets=["db", "search-credentials"]))
    assert found == [
        (
            "externalSecrets[1]",
            "'search-credentials' is also under secrets, which creates it; remove it from one "
            "of them",
        )
    ]


def test_a_schema_sync_header_needs_its_secret_under_secrets_and_is_reported_once() -> None:
    header = {"name": "Authorization", "valueFrom": ref("db")}
    document = cluster(
        externalSecrets=["db"], tools=[{**TOOL, "schemaSync": {"headers": [header]}}]
    )
    assert problems(parse_cluster, document) == [
        (
            "tools[0].schemaSync.headers[0].valueFrom",
            "secret 'db' is under externalSecrets, which this program never reads, and schema "
            "sync can only send values this program holds: put its value under secrets "
            "(pulumi config set --secret --path 'secrets.db.token' ...), or read the Secret at "
            "deploy time in a Python program and pass its value in LanguageCluster's secrets "
            "(docs/schema-sync.md)",
        )
    ]
    document = cluster(tools=[{**TOOL, "schemaSync": {"headers": [header]}}])
    assert problems(parse_cluster, document)[-1] == (
        "tools[0].schemaSync.headers[0].valueFrom",
        "secret 'db' key 'token' is not declared under secrets; schema sync can only send "
        "values this program holds",
    )


def test_declared_secrets_count_when_another_cluster_field_is_invalid() -> None:
    """A bad namespace must not make every reference look undeclared."""
    document = cluster(
        namespace="Apps", tools=[{**TOOL, "secretEnv": {"T": ref("search-credentials")}}]
    )
    assert [path for path, _ in problems(parse_cluster, document)] == ["namespace"]


def test_unreadable_secrets_set_off_no_reference_errors() -> None:
    document = cluster(secrets=["token"], tools=[{**TOOL, "secretEnv": {"T": ref("anything")}}])
    assert [path for path, _ in problems(parse_cluster, document)] == ["secrets"]


def test_a_standalone_workload_may_name_any_secret() -> None:
    """Outside a cluster nothing says which Secrets exist: the namespace may hold any."""
    assert parse_tool({**TOOL, "secretEnv": {"T": ref("made-elsewhere")}}).secret_env


# --- warnings --------------------------------------------------------------------------------


def headers(*pairs: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, **source} for name, source in pairs]


def test_literal_credential_headers_warn_whatever_their_case() -> None:
    def server(name: str, *pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
        return {"name": name, "url": "https://search.example.com/mcp", "headers": headers(*pairs)}

    agent = parse_agent(
        {
            **AGENT,
            "mcpServers": [
                server(
                    "search",
                    ("authorization", {"value": "Bearer canary-1"}),
                    ("Cookie", {"value": "session=canary-2"}),
                    ("X-API-KEY", {"value": "canary-3"}),
                    ("X-Api-Version", {"value": "2"}),
                ),
                server(
                    "other",
                    ("Authorization", {"valueFrom": ref("s")}),
                    ("X-Api-Key", {"secret": "canary-4"}),
                ),
            ],
        }
    )
    warned = agent_warnings(agent, "agents[0]")
    assert [w.path for w in warned] == [
        f"agents[0].mcpServers[0].headers[{k}].value" for k in (0, 1, 2)
    ]
    assert all(w.kind == "langop_literal_credential" for w in warned)
    assert warned[1].message.startswith("Cookie is a credential given as a literal value")
    assert "canary" not in str(warned)


def test_a_literal_credential_in_a_schema_sync_header_warns_about_state() -> None:
    document = cluster(
        tools=[{**TOOL, "schemaSync": {"headers": [{"name": "Authorization", "value": "B x"}]}}]
    )
    (warning,) = [
        w for w in cluster_warnings(parse_cluster(document)) if w.kind != "langop_unpinned_image"
    ]
    assert warning.path == "tools[0].schemaSync.headers[0].value"
    assert "lands in plain text in Pulumi state; use valueFrom" in warning.message


def test_a_clean_document_has_no_warnings() -> None:
    pinned = [{**item, "image": item["image"] + DIGEST} for item in (TOOL, AGENT)]
    assert cluster_warnings(parse_cluster(cluster(tools=pinned[:1], agents=pinned[1:]))) == []


# --- every problem once ----------------------------------------------------------------------


def test_a_defaults_resource_problem_is_found_once_for_many_workloads() -> None:
    tools = [{**TOOL, "name": f"tool{i}"} for i in range(4)]
    document = cluster(tools=tools, defaults={"resources": {"requests": {"memory": "1Gi"}}})
    assert problems(parse_cluster, document) == [
        (
            "defaults.resources.requests.memory",
            "request 1Gi is above the limit 256Mi; lower it or raise the limit",
        )
    ]


def test_a_workload_that_lowers_a_limit_below_the_default_request_is_named() -> None:
    tool = {**TOOL, "resources": {"limits": {"cpu": "10m"}}}
    assert problems(parse_cluster, cluster(tools=[tool])) == [
        (
            "tools[0].resources.requests.cpu",
            "request 50m is above the limit 10m; lower it or raise the limit",
        )
    ]
    assert Resources().requests.cpu == "50m"


def test_spec_error_keeps_one_of_each_path_and_message() -> None:
    error = SpecError(
        [Problem("a", "x"), Problem("a", "x", "kind"), Problem("a", "y"), Problem("b", "x")]
    )
    assert [(p.path, p.message) for p in error.problems] == [("a", "x"), ("a", "y"), ("b", "x")]
    assert str(error).startswith("invalid configuration: 3 problems\n")


# --- messages with the expected form ---------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        (
            {"egress": "restricted", "egressTo": [{"cidr": "10.0.0.0/8", "ports": [443, 80]}]},
            "egressTo[0].ports[1]",
            "expected a list of {port, protocol}; this item is a number",
        ),
        (
            {"egressTo": [{"cidr": "10.0.0.0/8", "ports": {"port": 443}}]},
            "egressTo[0].ports",
            "expected a list of {port, protocol}, got a mapping",
        ),
        (
            {"tools": ["memory"]},
            "tools[0]",
            # seven fields: the required one is named, the others elided
            "expected a list of {name, …}; this item is a string",
        ),
        ({"resources": [1]}, "resources", "expected a mapping {requests, limits}, got a list"),
        ({"labels": "team=x"}, "labels", "expected a mapping of names to strings, got a string"),
        ({"args": {"a": 1}}, "args", "expected a list of strings, got a mapping"),
        (
            {"mcpServers": [{"name": "s", "url": "https://s/", "headers": {"A": "b"}}]},
            "mcpServers[0].headers",
            "expected a list of {name, value, valueFrom, secret}, got a mapping",
        ),
        (
            {"webhookTools": [{"name": "w", "url": "https://w/", "rateLimit": 5}]},
            "webhookTools[0].rateLimit",
            "expected a mapping {requestsPerMinute, burst}, got a number",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_told_the_expected_form(
    data: dict[str, Any], path: str, message: str
) -> None:
    """In a stack file's words (``a mapping``, camelCase fields); the Python API's are in
    tests/test_python_wording.py."""
    with stack_wording():
        assert (path, message) in problems(parse_agent, {**AGENT, **data})


def test_a_large_model_is_described_by_its_required_fields() -> None:
    with stack_wording():
        first = problems(parse_cluster, cluster(tools=[["memory"]]))[0]
        (found,) = problems(parse_agent, {**AGENT, "webhookTools": "lookup"})
    assert first == ("tools[0]", "expected a mapping, got list")
    assert found == ("webhookTools", "expected a list of {name, url, …}, got a string")


def test_messages_never_echo_the_value_of_the_wrong_type() -> None:
    found = problems(parse_agent, {**AGENT, "secretEnv": ["canary-secret-value"]})
    assert "canary" not in str(found)


# --- did-you-mean in the document's own spelling -------------------------------------------


def test_a_suggestion_is_camel_case_among_camel_case_keys() -> None:
    tool = {**TOOL, "healthPath": "/h", "deploymentmode": "service"}
    assert problems(parse_tool, tool) == [
        ("deploymentmode", "unknown field; did you mean 'deploymentMode'?")
    ]


def test_a_suggestion_is_snake_case_among_snake_case_keys() -> None:
    tool = {**TOOL, "health_path": "/h", "deploymentmode": "service"}
    assert problems(parse_tool, tool) == [
        ("deploymentmode", "unknown field; did you mean 'deployment_mode'?")
    ]
    assert problems(parse_tool, {**TOOL, "deployment_mod": "service"}) == [
        ("deployment_mod", "unknown field; did you mean 'deployment_mode'?")
    ]


def test_a_suggestion_comes_from_the_fields_where_the_key_is() -> None:
    """``healthPath`` is a tool's field, not an agent's: no "did you mean 'healthPath'"."""
    assert problems(parse_agent, {**AGENT, "healthPath": "/h"}) == [
        ("healthPath", "unknown field: this object has no such field; remove it")
    ]
    nested = {
        **AGENT,
        "webhookTools": [
            {"name": "w", "url": "https://w/", "rateLimit": {"requests_per_minute": 5, "bursts": 2}}
        ],
    }
    assert ("webhookTools[0].rateLimit.bursts", "unknown field; did you mean 'burst'?") in (
        problems(parse_agent, nested)
    )


def test_parse_cluster_leaves_its_input_alone() -> None:
    document = cluster(**EVERY_REFERENCE, externalSecrets=["db"])
    before = copy.deepcopy(document)
    parse_cluster(document)
    assert document == before


def test_an_invalid_defaults_field_does_not_unset_the_valid_ones() -> None:
    """``egress: restricted`` still counts when ``resources`` is wrong: one problem, not two."""
    document = cluster(
        defaults={"egress": "restricted", "resources": {"limits": {"memory": "lots"}}},
        agents=[{**AGENT, "egressTo": [{"cidr": "10.0.0.0/8"}]}],
    )
    assert [path for path, _ in problems(parse_cluster, document)] == [
        "defaults.resources.limits.memory"
    ]


def test_external_secrets_must_be_a_list_of_secret_names() -> None:
    with stack_wording():
        assert problems(parse_cluster, cluster(externalSecrets={"vault": True})) == [
            ("externalSecrets", "expected a list of strings, got a mapping")
        ]
    ((path, message),) = problems(parse_cluster, cluster(externalSecrets=["Vault_Creds"]))
    assert (path, message.split(":")[0]) == (
        "externalSecrets[0]",
        "'Vault_Creds' is not a valid name",
    )


def test_an_agent_namespace_of_the_wrong_type_is_a_problem_not_a_crash() -> None:
    # Found by tests/test_spec_properties.py: a list here used to raise TypeError.
    with pytest.raises(SpecError) as caught:
        parse_cluster({"namespace": "apps", "agents": [{"namespace": [None]}]})
    assert any(p.path == "agents[0].namespace" for p in caught.value.problems)
