"""Property (issue 35 §1): for every component and every field, a value given plainly, as a
known Output, or as a secret Output registers the same Kubernetes inputs, field by field
(as ``pulumi up`` registers them: the mock engine with ``preview=False``); a secret only
through a Secret; or else the component refuses it with a field error naming that field.

Every field of each component's model is either in its base document below or listed in
its ``NOT_COVERED`` with the reason; a test checks that nothing is left out silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from langop_infra import HttpTool, LanguageAgent, LanguageModel, LanguageTool, external_service
from langop_infra.components._stand_ins import STAND_INS
from langop_infra.config._http_tool import HttpToolSpec
from langop_infra.config._model import ModelSpec
from langop_infra.config.agent import AgentSpec
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import SpecError
from langop_infra.manifests._contract import SECRET_DIGEST_ANNOTATION
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.testing.secrets import secret_leaves
from tests.support.field_paths import Path, at, fields, with_value
from tests.support.mock_runs import spec_error

IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64
AGENT_IMAGE = "ghcr.io/acme/helper:2.0.0@sha256:" + "b" * 64

POD: dict[str, Any] = {
    "namespace": "apps",
    "image_pull_secrets": [{"name": "regcred"}],
    "env_from": [{"config_map_ref": {"name": "shared-env"}}],
    "node_selector": {"pool": "pool-v"},
    "tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "taint-v", "effect": "NoSchedule"}
    ],
    "priority_class_name": "priority-v",
    "pod_labels": {"pod-tier": "pod-label-v"},
    "pod_annotations": {"pod-note": "pod-annotation-v"},
    "termination_grace_period_seconds": 45,
    "replicas": 2,
    "command": ["/bin/serve-cmd"],
    "container_args": ["--arg-one"],
    "env": {"MODE": "env-mode-v"},
    "secret_env": {"API_TOKEN": "secret-env-v"},
    "resources": {
        "requests": {"cpu": "60m", "memory": "70Mi"},
        "limits": {"cpu": "600m", "memory": "300Mi"},
    },
    "labels": {"cost-center": "label-cc-v"},
    "annotations": {"owner": "annotation-owner-v"},
    "image_pull_policy": "IfNotPresent",
    "volumes": [{"name": "cache", "empty_dir": {}}],
    "volume_mounts": [{"name": "cache", "mount_path": "/cache-dir"}],
}
TOOL: dict[str, Any] = {
    **POD,
    "image": IMAGE,
    "port": 9091,
    "mcp_path": "/mcp-path",
    "health_path": "/health-path",
    "service": {"labels": {"svc-tier": "svc-label-v"}, "annotations": {"svc-note": "svc-ann-v"}},
}
AGENT: dict[str, Any] = {
    **POD,
    "image": AGENT_IMAGE,
    "instructions": "Answer briefly, instructions-v.",
    "workspace_path": "/workspace-v",
    "max_iterations": 7,
    "mcp_servers": [
        {
            "name": "db",
            "url": "http://db.apps:80/mcp-v",
            "headers": [{"name": "X-Api-Version", "value": "header-v"}],
        }
    ],
}
HTTP_TOOL: dict[str, Any] = {
    "namespace": "apps",
    "description": "Look a ticket up, description-v.",
    "endpoint": "https://tickets.example.com/lookup-v",
    "labels": {"cost-center": "label-cc-v"},
    "annotations": {"owner": "annotation-owner-v"},
    "display_name": "Ticket lookup display-v",
    "version": "version-v",
}
MODEL: dict[str, Any] = {
    "namespace": "default",
    "provider": "openai-compatible",
    "model_name": "model-name-v",
    "endpoint": "http://vllm.apps:8000/v1-v",
    "timeout": "45s",
}

# Fields not in a base document, and why.
POD_NOT_COVERED = {
    "name": "the component's own name argument",
    "probes": "defaults cover it; overriding needs all three probes (tests/test_tool.py)",
    "affinity": "a pod setting like node_selector, covered through tolerations' shape",
    "topology_spread_constraints": "a pod setting like tolerations",
    "service_account_name": "decides whether a ServiceAccount is made (structure)",
    "automount_service_account_token": "a boolean pod setting like replicas",
    "security": "a nested pod setting like resources",
    "egress": "decides which NetworkPolicies exist (structure)",
    "egress_to": "decides which NetworkPolicies exist (structure)",
    "disruption_budget": "a nested setting like resources",
    "autoscaling": "decides whether an autoscaler exists (structure)",
    "init_containers": "a list of containers like volumes",
    "service_account": "decides whether a ServiceAccount is made (structure)",
    "allow_from": "decides the policy's peers (structure)",
    "metrics_from": "decides the policy's peers (structure), as allow_from",
    "args": "given as container_args (the keyword; args is the component's parameter)",
}
NOT_COVERED: dict[str, dict[str, str]] = {
    "LanguageTool": {
        **POD_NOT_COVERED,
        "type": "a stdio tool needs a bridge: tests/test_stdio_tools.py",
        "transport": "as type",
        "deployment_mode": "decides which objects exist (structure)",
        "schema_sync": "schema sync registers no Kubernetes object (a dynamic resource)",
        "persistence": "decides whether a claim exists (structure)",
    },
    "LanguageAgent": {
        **POD_NOT_COVERED,
        "tools": "decides which policies exist (structure): an Output is refused",
        "webhook_tools": "its secrets are references; covered by tests/test_agent.py",
        "http_tools": "HttpTool objects, covered as their own component here",
        "workspace": "decides whether a claim exists (structure)",
        "ports": "decides whether a Service exists (structure)",
        "model": "a name or LanguageModel object; LanguageModel is covered here",
        "models": "as model",
        "persona": "a reference to a cluster's persona (LanguageCluster only)",
        "runtime": "selects the image and command (builtin): a fixed set of words",
        "a2a": "decides the card ConfigMap, the Service port and the A2A policy (structure)",
        "agents": "peers decide policies and card syncs (structure), as tools do",
        "memory": "a reference to a LanguageMemory (structure): tests/test_agent_peers_secrets.py",
        "schedule": "Deployment or CronJob (structure): tests/test_agent_peers_refusals.py",
    },
    "HttpTool": {
        "name": "the component's own name argument",
        "method": "an enum like version",
        "input_schema": "a JSON Schema document, copied as is",
        "timeout": "a duration like description",
        "authentication": "a Secret reference",
        "rate_limit": "a nested setting",
        "enabled": "decides the phase",
        "tags": "a list of strings like command",
        "api_ref": "a nested reference",
        "probe": "a real deploy's probe switch",
    },
    "LanguageModel": {
        "name": "the component's own name argument",
        "api_key": "a Secret reference (never a value)",
        "retry_policy": "a nested setting",
        "fallbacks": "need the gateway (LanguageCluster only)",
        "configuration": "a free-form mapping copied into the agent's config",
        "rate_limits": "a nested setting",
        "egress_to": "decides policies (structure)",
        "gateway": "standalone models have none",
    },
}
SPECS = {
    "LanguageTool": (ToolSpec, TOOL),
    "LanguageAgent": (AgentSpec, AGENT),
    "HttpTool": (HttpToolSpec, HTTP_TOOL),
    "LanguageModel": (ModelSpec, MODEL),
}


def build(component: str, doc: dict[str, Any]) -> None:
    """The component from ``doc``; a LanguageModel through an agent that uses it (it
    registers nothing of its own)."""
    if component == "LanguageTool":
        LanguageTool("memory", **doc)
    elif component == "LanguageAgent":
        external_service("db", "apps")  # its MCP server's Service runs already
        LanguageAgent("helper", **doc)
    elif component == "HttpTool":
        HttpTool("lookup", **doc)
    else:
        model = LanguageModel("llama", **doc)
        LanguageAgent("helper", image=AGENT_IMAGE, namespace="default", model=model)


CASES = [(c, p) for c, (_, doc) in SPECS.items() for p in fields(doc)]


def outcome(component: str, doc: dict[str, Any]) -> ProgramRun | SpecError:
    run = ProgramRun()
    try:
        run_program(lambda: build(component, doc), preview=False, into=run)
    except Exception as exc:  # the SpecError, perhaps behind the engine's ValueErrors
        found = spec_error(exc)
        if found is None:
            raise
        return found
    return run


def normal(run: ProgramRun, drop_own_secret: bool) -> list[dict[str, Any]]:
    """The registered objects as manifests, without the secret-digest annotation (of the
    Secrets' data) and, if asked, without the workload's own Secret."""
    found = []
    for manifest in run.manifests():
        if drop_own_secret and manifest["kind"] == "Secret":
            continue
        text = json.dumps(manifest)
        manifest = json.loads(text)
        template = manifest.get("spec", {}).get("template", {}).get("metadata", {})
        template.get("annotations", {}).pop(SECRET_DIGEST_ANNOTATION, None)
        found.append(manifest)
    # Registration order follows when Outputs resolve.
    return sorted(found, key=lambda m: (m["kind"], m["metadata"]["name"]))


BASELINES: dict[str, list[dict[str, Any]]] = {}


def baseline(component: str) -> ProgramRun:
    run = outcome(component, SPECS[component][1])
    assert isinstance(run, ProgramRun), run
    return run


def header_value(path: Path) -> bool:
    """A header's value: given as an Output, it always goes into the workload's Secret."""
    return "headers" in path and path[-1] == "value"


def secret_capable(path: Path) -> bool:
    return path[0] in ("env", "secret_env") or header_value(path)


def assert_field_error(error: SpecError, path: Path, secret: bool) -> None:
    """A field error at ``path`` (or the field holding it), saying why."""
    where = {"container_args": "args"}.get(str(path[0]), str(path[0]))
    assert all(p.path.startswith(where) for p in error.problems), error
    reasons = (
        "must be known when the program runs",
        "expected a list, got an Output",
        "expected a mapping, got an Output",
    )
    if secret:
        reasons += ("is a secret Output, but this field is plain text",)
    assert any(r in p.message for p in error.problems for r in reasons), error


# Structural fields a component nevertheless takes as a (non-secret) Output: it builds from
# their values as they resolve (tests/test_namespace_output.py).
ACCEPTED_OUTPUTS = {
    ("LanguageTool", ("namespace",)),
    ("LanguageAgent", ("namespace",)),
    ("LanguageModel", ("namespace",)),
    ("HttpTool", ("namespace",)),
}

WRAPS: list[Callable[[Any], Any]] = [
    pulumi.Output.from_input,
    lambda v: pulumi.Output.from_input(v).apply(lambda x: x),
    lambda v: pulumi.Output.all(v).apply(lambda xs: xs[0]),
]


def test_every_field_is_covered_or_said_why_not() -> None:
    for component, (model, doc) in SPECS.items():
        given_fields = {"args" if k == "container_args" else k for k in doc}
        missing = set(model.model_fields) - given_fields - set(NOT_COVERED[component])
        assert missing == set(), (component, missing)


@pytest.mark.slow
@pytest.mark.parametrize(("component", "path"), CASES, ids=lambda v: str(v))
@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(wrap=st.sampled_from(WRAPS), secret=st.booleans())
def test_a_field_registers_as_written_plain_known_or_secret(
    component: str, path: Path, wrap: Callable[[Any], Any], secret: bool
) -> None:
    plain = BASELINES.setdefault(component, normal(baseline(component), False))
    value = at(SPECS[component][1], path)
    doc = with_value(
        SPECS[component][1],
        path,
        (lambda v: wrap(pulumi.Output.secret(v))) if secret else wrap,
    )
    result = outcome(component, doc)
    if isinstance(result, SpecError):
        assert (component, path) not in ACCEPTED_OUTPUTS or secret, result
        assert_field_error(result, path, secret)
        return
    registered = json.dumps([r.inputs for r in result.kubernetes()], default=str)
    assert not [s for s in STAND_INS if isinstance(s, str) and len(s) > 3 and s in registered]
    if not (secret or header_value(path)):
        # A known Output registers what the plain value does, field by field.
        assert normal(result, False) == plain or normal(result, True) == normal_without_secret(
            component
        )
        return
    assert secret_capable(path), f"a secret reached {path} without an error"
    hidden = [
        v
        for r in result.kubernetes()
        if r.type.endswith(":Secret")
        for _, v in secret_leaves(r.inputs)
    ]
    for r in result.kubernetes():
        if r.type.endswith(":Secret"):
            continue
        assert secret_leaves(r.inputs) == [], r.name
        if isinstance(value, str) and len(value) > 5:
            assert value not in json.dumps(r.inputs, default=str), r.name
    if isinstance(value, str) and not isinstance(at(SPECS[component][1], path[:1]), str):
        assert value in hidden


def normal_without_secret(component: str) -> list[dict[str, Any]]:
    return normal(baseline(component), True)
