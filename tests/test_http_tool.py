"""HttpTool (STOA's Tool): its fields, defaults, bounds and validation rules, the seed's
complete example as a stack entry, the ConfigMap, the agent wiring and the phases."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from langop_infra.components._http_tool import HttpTool
from langop_infra.config._http_tool import HttpToolSpec
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import run_program
from langop_infra.program.stack import main
from tests.support.loopback import free_port, serve
from tests.support.manifests import Rendered, validate_manifests

# STOA's "Complete Example" (metadata and spec), with its status left out (status is
# what the component reports, not what a user writes) and its placeholder endpoint
# (`https://api.<YOUR_DOMAIN>/...`, refused: tests/test_seed_documents.py) given a real domain.
SEED_EXAMPLE = yaml.safe_load(
    """
apiVersion: gostoa.dev/v1alpha1
kind: Tool
metadata:
  name: payment-create
  namespace: tenant-acme
  labels:
    app.kubernetes.io/part-of: payment-api
  annotations:
    gostoa.dev/api-ref: payment-api/v2
spec:
  displayName: Create Payment
  description: Create a new payment transaction
  endpoint: https://api.acme.example/acme/payment-api/v2/payments
  method: POST
  version: "2.0.0"
  tags:
    - payments
    - transactions
  inputSchema:
    type: object
    properties:
      amount:
        type: number
        description: Payment amount in cents
      currency:
        type: string
        enum: [EUR, USD, GBP]
        default: EUR
      recipient:
        type: string
        description: Recipient account ID
    required:
      - amount
      - recipient
  authentication:
    type: bearer
    secretRef:
      name: payment-api-token
      key: token
  rateLimit:
    requestsPerMinute: 100
    burst: 20
  timeout: "30s"
  enabled: true
"""
)
SPEC = SEED_EXAMPLE["spec"]
ENTRY = {**SEED_EXAMPLE["metadata"], **SPEC}  # the stack entry: metadata fields + spec
AGENT = {
    "name": "billing",
    "image": "ghcr.io/acme/billing-agent:1.0.0",
    "httpTools": [{"name": "payment-create"}],
}
P = "langop-infra:"


def stack(**keys: Any) -> dict[str, str]:
    return {P + k: v if isinstance(v, str) else json.dumps(v) for k, v in keys.items()}


def problems_of(document: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as caught:
        parse_cluster(document)
    return [str(p) for p in caught.value.problems]


def rendered_seed() -> Rendered:
    run = run_program(
        main,
        config=stack(
            namespace="tenant-acme",
            httpTools=[ENTRY],
            agents=[AGENT],
            externalSecrets=["payment-api-token"],
        ),
    )
    rendered = Rendered(run)
    validate_manifests(rendered.manifests)
    return rendered


def test_the_seed_example_renders_unchanged_as_a_stack_entry() -> None:
    rendered = rendered_seed()
    config_map = rendered.find("ConfigMap", "payment-create.http-tool", "tenant-acme")
    assert config_map["metadata"]["labels"]["app.kubernetes.io/part-of"] == "payment-api"
    assert config_map["metadata"]["labels"]["langop.io/http-tool"] == "payment-create"
    assert config_map["metadata"]["annotations"] == {"gostoa.dev/api-ref": "payment-api/v2"}
    document = json.loads(config_map["data"]["tool.json"])
    assert document == {
        "name": "payment-create",
        "displayName": "Create Payment",
        "description": SPEC["description"],
        "url": SPEC["endpoint"],
        "method": "POST",
        "inputSchema": SPEC["inputSchema"],
        "timeoutSeconds": 30,
        "authentication": {
            "type": "bearer",
            "headerName": "Authorization",
            "valueFromEnv": "AGENT_WEBHOOK_PAYMENT_CREATE_AUTH",
        },
        "rateLimit": {"requestsPerMinute": 100, "burst": 20},
        "version": "2.0.0",
        "enabled": True,
        "tags": ["payments", "transactions"],
    }
    # The agent gets it as an inline webhook tool would be: config.yaml and a secretKeyRef.
    agent_config = yaml.safe_load(
        rendered.find("ConfigMap", "billing-config")["data"]["config.yaml"]
    )
    [webhook] = agent_config["webhookTools"]
    # Agents get inputSchema as ark's runtime reads it: a JSON string.
    assert json.loads(webhook["inputSchema"]) == SPEC["inputSchema"]
    assert {k: v for k, v in webhook.items() if k != "inputSchema"} == {
        k: v for k, v in document.items() if k in webhook and k != "inputSchema"
    }
    assert set(webhook) == {
        "name",
        "description",
        "url",
        "method",
        "inputSchema",
        "timeoutSeconds",
        "authentication",
        "rateLimit",
    }
    container = rendered.find("Deployment", "billing")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["AGENT_WEBHOOK_PAYMENT_CREATE_AUTH"]["valueFrom"] == {
        "secretKeyRef": {"name": "payment-api-token", "key": "token"}
    }
    assert json.loads(env["AGENT_WEBHOOK_TOOLS"]["value"]) == [webhook]
    outputs = rendered.outputs["httpTools"]["payment-create"]
    assert (outputs["phase"], outputs["lastError"]) == ("Registered", "")
    assert outputs["lastSyncedAt"] == ""  # offline: no deploy, and renders stay repeatable


def test_defaults_and_the_seeds_other_examples() -> None:
    echo = HttpToolSpec.model_validate(
        {
            "name": "echo",
            "displayName": "Echo",
            "description": "Returns the input message",
            "method": "GET",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
        }
    )
    assert echo.endpoint is None
    bare = HttpToolSpec.model_validate({"name": "x", "displayName": "X", "description": "d"})
    assert (bare.method, bare.input_schema, bare.tags, bare.version) == ("POST", {}, [], "1.0.0")
    assert (bare.timeout, bare.enabled, bare.probe, bare.rate_limit) == (30.0, True, False, None)
    assert bare.authentication.type == "none"
    openai = HttpToolSpec.model_validate(
        {
            "name": "openai-completion",
            "displayName": "OpenAI Completion",
            "description": "Generate text completion",
            "endpoint": "https://api.openai.com/v1/completions",
            "method": "POST",
            "authentication": {
                "type": "apiKey",
                "headerName": "Authorization",
                "secretRef": {"name": "openai-key", "key": "api-key"},
            },
            "timeout": "60s",
            "rateLimit": {"requestsPerMinute": 20, "burst": 5},
        }
    )
    assert (openai.timeout, openai.rate_limit.burst) == (60.0, 5)
    salesforce = HttpToolSpec.model_validate(
        {
            "name": "salesforce-query",
            "displayName": "Salesforce Query",
            "description": "Execute SOQL query on Salesforce",
            "endpoint": "https://login.salesforce.com/services/data/v58.0/query",
            "method": "GET",
            "authentication": {
                "type": "oauth2",
                "secretRef": {"name": "salesforce-oauth", "key": "access_token"},
            },
            "inputSchema": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            },
            "apiRef": {"name": "salesforce", "version": "v58", "operationId": "query"},
        }
    )
    assert salesforce.api_ref.operation_id == "query"


def test_bounds_and_field_rules_name_the_field() -> None:
    bad = {
        "name": "t",
        "displayName": "x" * 65,
        "description": "",
        "endpoint": "ftp://h/x",
        "inputSchema": {"type": "thing"},
        "rateLimit": {"requestsPerMinute": 10001, "burst": 0},
        "method": "HEAD",
    }
    found = "\n".join(problems_of({"namespace": "apps", "httpTools": [bad]}))
    for path in (
        "httpTools[0].displayName",
        "httpTools[0].description",
        "httpTools[0].endpoint",
        "httpTools[0].inputSchema",
        "httpTools[0].rateLimit.requestsPerMinute",
        "httpTools[0].rateLimit.burst",
        "httpTools[0].method",
    ):
        assert path in found, path
    assert "not valid JSON Schema draft-07" in found
    assert "is not an http(s) URL" in found
    missing = problems_of({"namespace": "apps", "httpTools": [{"name": "t"}]})
    assert any("httpTools[0].displayName" in p for p in missing)
    assert any("httpTools[0].description" in p for p in missing)


def test_cross_document_rules() -> None:
    tool = {
        "name": "lookup",
        "displayName": "Lookup",
        "description": "Looks up",
        "endpoint": "https://api.example.com/lookup",
    }
    draft = {k: v for k, v in tool.items() if k != "endpoint"} | {"name": "draft"}
    found = problems_of(
        {
            "namespace": "apps",
            "httpTools": [
                tool,
                {**tool, "description": "again"},
                draft,  # no endpoint and nobody references it: fine (phase Pending)
                {
                    **tool,
                    "name": "secured",
                    "authentication": {
                        "type": "basic",
                        "secretRef": {"name": "lookup-creds", "key": "pair"},
                    },
                },
                {
                    **tool,
                    "name": "keyed",
                    "authentication": {
                        "type": "apiKey",
                        "secretRef": {"name": "keys", "key": "nope"},
                    },
                },
            ],
            "secrets": {"keys": {"api": "v"}},
            "agents": [
                {
                    "name": "a",
                    "image": "ghcr.io/acme/a:1",
                    "webhookTools": [{"name": "lookup", "url": "https://x.example.com"}],
                    "httpTools": [
                        {"name": "lookup"},
                        {"name": "missing"},
                        {"name": "lookup", "namespace": "other"},
                    ],
                },
            ],
        }
    )
    assert found == [
        "httpTools[1].name: duplicate HttpTool name 'lookup' in namespace 'apps' (also "
        "httpTools[0]); names must be unique in a namespace",
        "agents[0].httpTools[0].name: the agent has an inline webhook tool named 'lookup' "
        "too; tool names must be unique per agent: rename one",
        "agents[0].httpTools[1].name: no HttpTool 'missing' in namespace 'apps' (declared "
        "there: draft, keyed, lookup, secured); declare it under httpTools or fix the name",
        "agents[0].httpTools[2].name: no HttpTool 'lookup' in namespace 'other' (declared "
        "there: none); declare it under httpTools or fix the name",
        "httpTools[3].authentication.secretRef.name: no Secret 'lookup-creds' under secrets or "
        "externalSecrets; declare it under secrets, or list it in externalSecrets if something "
        "outside this program creates it",
        "httpTools[4].authentication.secretRef.key: secret 'keys' under secrets has no key "
        "'nope' (it has: api); fix the key or add it",
    ]
    folded = problems_of(
        {
            "namespace": "apps",
            "httpTools": [tool | {"name": "look-up"}],
            "agents": [
                {
                    "name": "a",
                    "image": "ghcr.io/acme/a:1",
                    "webhookTools": [{"name": "look_up", "url": "https://x.example.com"}],
                    "httpTools": [{"name": "look-up"}],
                }
            ],
        }
    )
    assert folded == [
        "agents[0].httpTools[0].name: its credential env var AGENT_WEBHOOK_LOOK_UP_AUTH is "
        "also inline webhook tool 'look_up''s; rename one"
    ]
    endpointless = problems_of(
        {
            "namespace": "apps",
            "httpTools": [{k: v for k, v in tool.items() if k != "endpoint"}],
            "agents": [
                {"name": "a", "image": "ghcr.io/acme/a:1", "httpTools": [{"name": "lookup"}]}
            ],
        }
    )
    assert endpointless == [
        "agents[0].httpTools[0].name: HttpTool 'lookup' has no endpoint, so no agent can call "
        "it; give it an endpoint or remove the reference"
    ]


def test_phases_and_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    def program(endpoint: str, **extra: Any) -> Callable[[], dict[str, HttpTool]]:
        def build() -> dict[str, HttpTool]:
            common = {"display_name": "T", "description": "d", "namespace": "apps"}
            tools = {
                "registered": HttpTool("registered", endpoint=endpoint, probe=True, **common),
                "pending": HttpTool("pending", **common),
                "disabled": HttpTool("disabled", endpoint=endpoint, enabled=False, **common),
                "unreachable": HttpTool(
                    "unreachable",
                    endpoint=f"http://127.0.0.1:{free_port()}/x",
                    probe=True,
                    timeout="5s",
                    **common,
                ),
            }
            import pulumi

            for name, tool in tools.items():
                pulumi.export(
                    name,
                    {
                        "phase": tool.phase,
                        "lastError": tool.last_error,
                        "lastSyncedAt": tool.last_synced_at,
                    },
                )
            return tools

        return build

    offline = run_program(program("http://127.0.0.1:9/x"))
    # Offline (render, validate, outputs) nothing is probed and nothing stamped.
    assert offline.outputs["unreachable"] == {
        "phase": "Registered",
        "lastError": "",
        "lastSyncedAt": "",
    }
    # As under `pulumi up`, where no in-process engine runs the program:
    monkeypatch.setattr("langop_infra.core._pacing.in_process_engine", lambda: False)
    with serve(_refuses_options()) as base:
        run = run_program(program(f"{base}/api"))
    phases = {name: value["phase"] for name, value in run.outputs.items()}
    assert phases == {
        "registered": "Registered",
        "pending": "Pending",
        "disabled": "Disabled",
        "unreachable": "Error",
    }
    assert run.outputs["registered"]["lastError"] == ""
    assert run.outputs["unreachable"]["lastError"].startswith("probe OPTIONS http://127.0.0.1:")
    assert "ConnectError" in run.outputs["unreachable"]["lastError"]
    assert run.outputs["registered"]["lastSyncedAt"].endswith("Z")
    preview = run_program(program("http://127.0.0.1:9/x"), preview=True)
    assert preview.outputs["registered"]["phase"] == "Registered"  # no probe in a preview


def _refuses_options() -> Starlette:
    """A stand-in for the API an HTTP tool points at: POST only, so the probe's OPTIONS gets
    405, still an answer, so the host serves.

    A fake because that API is a team's own service, not a part of this project or of any
    library: no real one exists to run. It runs on real Starlette routing under uvicorn, so
    the 405 (with its ``Allow`` header) is Starlette's own answer to a method a route does
    not take, not one written here. It does nothing else: no authentication, no TLS, no
    body; a POST gets an empty 201.
    """

    async def only_post(request: Any) -> Response:
        return Response("", status_code=201)

    return Starlette(routes=[Route("/api", only_post, methods=["POST"])])


def test_a_stack_without_http_tools_has_no_http_tools_output() -> None:
    run = run_program(main, config=stack(namespace="apps"))
    assert "httpTools" not in run.outputs


def test_a_standalone_agent_takes_http_tool_objects() -> None:
    from langop_infra.components.agent import LanguageAgent

    def program() -> None:
        tool = HttpTool(
            "lookup",
            namespace="apps",
            display_name="Lookup",
            description="Looks a thing up",
            endpoint="https://api.example.com/lookup",
            method="GET",
            authentication={
                "type": "apiKey",
                "headerName": "X-Key",
                "secretRef": {"name": "lookup-key", "key": "key"},
            },
        )
        LanguageAgent("helper", namespace="apps", image="ghcr.io/acme/helper:1", http_tools=[tool])

    run = run_program(program)
    rendered = Rendered(run)
    config = yaml.safe_load(rendered.find("ConfigMap", "helper-config")["data"]["config.yaml"])
    assert [(t["name"], t["url"], t["method"]) for t in config["webhookTools"]] == [
        ("lookup", "https://api.example.com/lookup", "GET")
    ]
    container = rendered.find("Deployment", "helper")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["AGENT_WEBHOOK_LOOKUP_AUTH"]["valueFrom"]["secretKeyRef"] == {
        "name": "lookup-key",
        "key": "key",
    }

    def dangling() -> None:
        LanguageAgent("helper", image="ghcr.io/acme/helper:1", http_tools=[{"name": "nowhere"}])

    with pytest.raises(SpecError) as caught:
        run_program(dangling)
    assert [str(p) for p in caught.value.problems] == [
        "httpTools[0].name: no HttpTool 'nowhere' in namespace 'default' (declared there: "
        "none); declare it under httpTools or fix the name"
    ]


def test_restricted_egress_must_admit_the_tools_host() -> None:
    from langop_infra.config.checks._egress_check import egress_findings

    cluster = parse_cluster(
        {
            "namespace": "tenant-acme",
            "externalSecrets": ["payment-api-token"],
            "httpTools": [ENTRY, {**ENTRY, "name": "by-ip", "endpoint": "http://10.0.0.7:8443/p"}],
            "agents": [
                {
                    **AGENT,
                    "egress": "restricted",
                    "httpTools": [{"name": "payment-create"}, {"name": "by-ip"}],
                },
            ],
        }
    )
    assert [str(p) for p in egress_findings(cluster)] == [
        "agents[0].httpTools.payment-create: cannot verify that restricted egress admits "
        "api.acme.example port 443: a NetworkPolicy matches addresses, not names; add host: "
        "api.acme.example to the egressTo entry whose cidr covers it",
        "agents[0].httpTools.by-ip: restricted egress does not admit 10.0.0.7 port 8443; add "
        "egressTo {cidr: 10.0.0.7/32, ports: [{port: 8443}]}",
    ]


def test_the_agent_runtime_reads_the_schema_the_render_gives_it() -> None:
    """config.yaml carries inputSchema as ark's JSON string; the agent's own runtime reads
    that form back into the schema it checks arguments against."""
    from langop_infra.agent.http_tools import load_http_tools

    rendered = rendered_seed()
    agent_config = yaml.safe_load(
        rendered.find("ConfigMap", "billing-config")["data"]["config.yaml"]
    )
    assert isinstance(agent_config["webhookTools"][0]["inputSchema"], str)
    env = {"AGENT_WEBHOOK_PAYMENT_CREATE_AUTH": "token"}
    tools, failures = load_http_tools(agent_config, env)
    assert failures == []
    assert [t.name for t in tools] == ["payment-create"]
    assert tools[0].input_schema == SPEC["inputSchema"]
