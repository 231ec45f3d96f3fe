"""One typed contract: the specs own every field; the Args TypedDicts, the package schema
Pulumi's analyzer infers, the stack-config JSON Schema and the camelCase field lists follow
from them; cross-item rules run before anything is registered."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pulumi.provider.experimental.analyzer import Analyzer, PropertyDefinition

from langop_infra import LanguageCluster, LanguageTool, SpecError
from langop_infra.cli._config_schema import stack_file_schema
from langop_infra.components import _inputs as inputs
from langop_infra.config._fields import Spec, parse_duration
from langop_infra.config._pod import DisruptionBudget, PodSettings
from langop_infra.config.cluster import ClusterSpec
from langop_infra.config.tool import SIDECAR_POD_FIELDS, ToolSpec
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.program import stack
from langop_infra.program.package import COMPONENTS
from tests.support.pyright import run_pyright
from tests.support.repo_tools import generate_args as generate
from tests.support.source import parse_source

ROOT = Path(__file__).resolve().parents[1]
# A JSON Schema document: any JSON value is a valid part of it.
ANY_ALLOWED = {
    ("WebhookToolArgs", "inputSchema"),
    ("HttpTool", "inputSchema"),
    ("HttpToolEntryArgs", "inputSchema"),
}


@pytest.fixture(scope="module")
def analyzed() -> Any:
    return Analyzer("langop-infra").analyze(COMPONENTS)


def _walk(prop: PropertyDefinition) -> Iterator[PropertyDefinition]:
    yield prop
    for inner in (prop.items, prop.additional_properties):
        if inner is not None:
            yield from _walk(inner)


def _all_specs(base: type = Spec) -> Iterator[type[Spec]]:
    """The package's specs (not those other tests define in the same process)."""
    for sub in base.__subclasses__():
        if sub.__module__.startswith("langop_infra."):
            yield sub
        yield from _all_specs(sub)


def test_the_committed_args_module_is_what_the_specs_generate() -> None:
    committed = (ROOT / "langop_infra/components/args.py").read_text()
    assert committed == generate.generate(), "run: python tools/generate_args.py"
    agent = (ROOT / "langop_infra/components/agent_args.py").read_text()
    assert agent == generate.generate_agent_args(), "run: python tools/generate_args.py"
    assert generate.main(["--check"]) == 0


def test_the_analyzer_sees_the_real_required_inputs(analyzed: Any) -> None:
    components = analyzed["component_definitions"]
    required = {
        name: sorted(k for k, p in c.inputs.items() if not p.optional)
        for name, c in components.items()
    }
    assert required == {
        "LanguageTool": ["image"],
        # runtime: builtin needs no image; an agent with neither is refused at validation
        "LanguageAgent": [],
        "LanguageModel": ["modelName", "provider"],
        "LanguageCluster": ["namespace"],
        "HttpTool": ["description", "displayName"],
        "LanguageMemory": [],
    }


def test_no_input_is_any_and_nested_shapes_are_type_definitions(analyzed: Any) -> None:
    owners = [
        *((c.name, c.inputs) for c in analyzed["component_definitions"].values()),
        *((t.name, t.properties) for t in analyzed["type_definitions"].values()),
    ]
    anys = [
        (owner, key)
        for owner, props in owners
        for key, prop in props.items()
        if any(p.ref == "pulumi.json#/Any" for p in _walk(prop))
    ]
    assert sorted(anys) == sorted(ANY_ALLOWED)
    # An object is a named type or a map of one; never an anonymous bag.
    untyped = [
        (owner, key)
        for owner, props in owners
        for key, prop in props.items()
        for p in _walk(prop)
        if p.type is not None and p.type.value == "object" and p.additional_properties is None
    ]
    assert untyped == []
    types = analyzed["type_definitions"]
    tool = analyzed["component_definitions"]["LanguageTool"].inputs
    assert tool["resources"].ref == "#/types/langop-infra:index:ResourcesArgs"
    assert tool["egressTo"].items.ref == "#/types/langop-infra:index:EgressRuleArgs"
    assert set(types["EgressRuleArgs"].properties) >= {"cidr", "except", "ports", "namespace"}
    assert len(types) >= 50


def test_a_duration_and_a_pod_count_have_one_type_in_every_language(analyzed: Any) -> None:
    """The package schema cannot state "a string or a number", so Python's type is the same
    string as every other language's (issue 37), and a string carries every value."""
    types = analyzed["type_definitions"]
    assert types["DisruptionBudgetArgs"].properties["maxUnavailable"].type.value == "string"
    assert types["SchemaSyncArgs"].properties["timeout"].type.value == "string"
    tree = parse_source((ROOT / "langop_infra/components/args.py").read_text())
    top = {
        node.targets[0].id: ast.unparse(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }
    assert top["Duration"] == "str" and top["CountOrPercent"] == "str"
    nested = [
        target.id
        for node in tree.body
        if isinstance(node, ast.If)
        for inner in ast.walk(node)
        if isinstance(inner, ast.Assign)
        for target in inner.targets
        if isinstance(target, ast.Name)
    ]
    assert "Duration" not in nested and "CountOrPercent" not in nested
    # The strings every language writes carry counts and seconds.
    assert DisruptionBudget.model_validate({"minAvailable": "1"}).min_available == 1
    assert DisruptionBudget.model_validate({"maxUnavailable": "50%"}).max_unavailable == "50%"
    assert parse_duration("30") == 30.0 and parse_duration("1m") == 60.0
    with pytest.raises(ValueError, match="neither a pod count"):
        DisruptionBudget.model_validate({"minAvailable": "01"})


def test_every_input_and_type_is_described(analyzed: Any) -> None:
    undescribed = [
        (c.name, key)
        for c in [*analyzed["component_definitions"].values()]
        for key, prop in c.inputs.items()
        if not prop.description
    ]
    undescribed += [
        (t.name, None) for t in analyzed["type_definitions"].values() if not t.description
    ]
    undescribed += [
        (t.name, key)
        for t in analyzed["type_definitions"].values()
        for key, prop in t.properties.items()
        if not prop.description
    ]
    assert undescribed == []
    tool = analyzed["component_definitions"]["LanguageTool"].inputs
    assert tool["deploymentMode"].description.endswith(
        'One of: service, sidecar. Default: "service".'
    )


def test_every_spec_field_and_json_schema_property_is_described() -> None:
    assert [
        f"{model.__name__}.{name}"
        for model in _all_specs()
        for name, info in model.model_fields.items()
        if not info.description
    ] == []
    schema = stack_file_schema()
    props = [
        (name, key, prop)
        for name, definition in schema["definitions"].items()
        for key, prop in definition.get("properties", {}).items()
    ]
    assert len(props) > 200
    assert [(n, k) for n, k, p in props if not p.get("description")] == []
    committed = json.loads((ROOT / "schemas/stack-config.schema.json").read_text())
    assert committed == schema, "run: langop-infra config-schema > schemas/stack-config.schema.json"


def test_field_lists_are_derived_from_the_specs() -> None:
    assert SIDECAR_POD_FIELDS["node_selector"] == "nodeSelector"
    assert set(SIDECAR_POD_FIELDS) == {
        *(set(PodSettings.model_fields) - {"env_from", "probes"}),
        *("disruption_budget", "autoscaling", "replicas", "egress", "egress_to"),
        *("volumes", "volume_mounts", "init_containers", "service_account", "service"),
    }
    assert all(ToolSpec.model_fields[k].alias == v for k, v in SIDECAR_POD_FIELDS.items())
    assert {
        "name",
        "namespace",
        "deployment_mode",
        "deploymentMode",
        "tools",
        "persistence",
        *("a2a", "agents", "memory", "schedule"),
    } == inputs.STRUCTURAL
    assert (
        *(info.alias for info in ClusterSpec.model_fields.values()),
        "toolsFrom",
    ) == stack.KEYS
    assert "externalSecrets" in stack.KEYS and set(stack.EXPECTED) == set(stack.KEYS)


SIDECAR_ELSEWHERE: dict[str, Any] = {
    "namespace": "apps",
    "tools": [
        {
            "name": "files",
            "namespace": "tools",
            "image": "ghcr.io/acme/files:1",
            "deploymentMode": "sidecar",
            "secretEnv": {"TOKEN": "canary-elsewhere-3c"},
        }
    ],
    "agents": [
        {
            "name": "helper",
            "image": "ghcr.io/acme/agent:1",
            "tools": [{"name": "files", "namespace": "tools"}],
        }
    ],
}


def test_a_sidecar_with_its_secret_in_another_namespace_is_refused_before_registration() -> None:
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(lambda: LanguageCluster("apps", SIDECAR_ELSEWHERE), into=run)
    [problem] = caught.value.problems
    assert problem.path == "agents[0].tools[0]"
    assert "keeps its secret env in namespace 'tools'" in problem.message
    assert "declare it in 'apps' or use secretKeyRef" in problem.message
    assert "canary-elsewhere-3c" not in str(caught.value)
    assert run.registrations == []


def test_an_external_sidecar_with_its_secret_elsewhere_is_refused_before_the_cluster() -> None:
    def program() -> None:
        shared = LanguageTool(
            "files",
            image="ghcr.io/acme/files:1",
            namespace="tools",
            deployment_mode="sidecar",
            secret_env={"TOKEN": "canary-external-9d"},
        )
        LanguageCluster("apps", {**SIDECAR_ELSEWHERE, "tools": []}, external_tools=[shared])

    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    [problem] = caught.value.problems
    assert problem.path == "agents[0].tools[0]"
    assert "keeps its secret env in namespace 'tools'" in problem.message
    assert "canary-external-9d" not in str(caught.value)
    # Only the standalone tool (its component and Secret) was registered; no Namespace.
    kinds = sorted({r.type for r in run.registrations})
    assert "kubernetes:core/v1:Namespace" not in kinds
    assert "langop-infra:index:LanguageCluster" not in kinds
    assert "langop-infra:index:LanguageTool" in kinds


@pytest.mark.slow
def test_a_users_program_type_checks_and_its_mistakes_do_not() -> None:
    """tests/typing/user_program.py under pyright: typical calls pass; each line marked
    ``# type: ignore`` must be an error (the config reports an unneeded ignore). The same run
    covers langop_infra/config, components and the package's ``__init__``."""
    folder = ROOT / "tests" / "typing"
    result = run_pyright("-p", str(folder / "pyrightconfig.json"), cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 errors" in result.stdout
    ignored = (folder / "user_program.py").read_text().count("# type: ignore")
    assert ignored >= 7


def _documented_names() -> list[str]:
    """The names in the list under "## Public API" in docs/python-api.md: each item's
    backticked names before its colon."""
    text = (ROOT / "docs/python-api.md").read_text()
    section = text.split("## Public API", 1)[1].split("\n## ", 1)[0]
    items = [line[2:].split(":")[0] for line in section.splitlines() if line.startswith("- ")]
    return sorted(name for item in items for name in re.findall(r"`([A-Za-z_]+)`", item))


def test_the_public_api_is_what_the_docs_list() -> None:
    import langop_infra

    assert sorted(langop_infra.__all__) == _documented_names()
    for name in langop_infra.__all__:
        assert getattr(langop_infra, name) is not None


def test_every_exception_has_one_root() -> None:
    from langop_infra import LangopError, mcp
    from langop_infra.agent.runtime import AgentConfigError
    from langop_infra.cli._stack import CommandError, UsageError
    from langop_infra.core._yaml_io import ConfigYAMLError
    from langop_infra.mcp.oauth import OAuthError
    from langop_infra.sync._kube_proxy import ProxyError
    from langop_infra.sync._lock import LockError

    for error in (SpecError, AgentConfigError, CommandError, UsageError, ConfigYAMLError):
        assert issubclass(error, LangopError)
    assert issubclass(SpecError, ValueError) and issubclass(LockError, (LangopError, ValueError))
    assert issubclass(ProxyError, LangopError) and issubclass(OAuthError, mcp.MCPClientError)
    middle = {
        mcp.MCPConnectionError: (mcp.ServerUnreachable, mcp.MCPTimeout, mcp.ConnectionLost),
        mcp.MCPProtocolError: (
            mcp.JSONRPCError,
            mcp.MalformedResponse,
            mcp.ProtocolVersionError,
            mcp.ResponseTooLarge,
        ),
    }
    for parent, children in middle.items():
        assert issubclass(parent, mcp.MCPClientError)
        assert all(issubclass(child, parent) for child in children)
    assert issubclass(mcp.MCPClientError, LangopError)
    # The old names still work, as the same classes.
    assert mcp.MCPError is mcp.MCPClientError
    assert mcp.HTTPStatusError is mcp.MCPHTTPError
    assert mcp.TransportError is mcp.ConnectionLost
    error = mcp.HTTPStatusError("refused", status=503)
    assert isinstance(error, LangopError) and error.status == 503 and error.kind == "http-status"


def test_one_tool_target_model_writes_and_reads_the_exported_targets() -> None:
    from langop_infra import ToolTarget
    from langop_infra.config.cluster import ExportedToolTarget

    target = ToolTarget("search", "shared", 9090, "/rpc")
    written = target.exported()
    assert written == {
        "name": "search",
        "namespace": "shared",
        "port": 9090,
        "mcpPath": "/rpc",
        "deploymentMode": "service",
    }
    assert ToolTarget.from_exported(ExportedToolTarget.model_validate(written)) == target


def test_one_visitor_walks_wrapped_and_resolved_secrets() -> None:
    from langop_infra import secret_leaves
    from langop_infra._errors import REDACTED
    from langop_infra.offline._engine_values import SECRET_SIG, SIG_KEY, Secret, to_manifest, visit

    wrapped = {SIG_KEY: SECRET_SIG, "value": {"token": "canary-visit-1", "n": [2.0]}}
    inputs = {"data": wrapped, "port": 8080.0, "gone": None, "list": ["a", wrapped]}
    assert to_manifest(inputs) == {
        "data": {"token": REDACTED, "n": [REDACTED]},
        "port": 8080,
        "list": ["a", {"token": REDACTED, "n": [REDACTED]}],
    }
    assert secret_leaves(inputs) == [
        (".data.token", "canary-visit-1"),
        (".data.n[0]", 2.0),
        (".list[1].token", "canary-visit-1"),
        (".list[1].n[0]", 2.0),
    ]
    resolved = {"endpoint": "http://x", "key": Secret("canary-visit-2"), "t": ("a", Secret(1))}
    shown = visit(resolved, secret=lambda _, where: f"{REDACTED} at {where}", path="")
    assert shown == {
        "endpoint": "http://x",
        "key": "[secret] at .key",
        "t": ["a", "[secret] at .t[1]"],
    }


def test_one_list_of_protocol_versions() -> None:
    from typing import get_args

    from langop_infra.config.tool import SchemaSyncSpec
    from langop_infra.mcp import SUPPORTED_PROTOCOL_VERSIONS
    from langop_infra.mcp._options import PROTOCOLS

    assert ("auto", *sorted(SUPPORTED_PROTOCOL_VERSIONS, reverse=True)) == PROTOCOLS
    # The spec spells the list out for type checkers; it must stay the client's.
    assert get_args(SchemaSyncSpec.model_fields["protocol"].annotation) == PROTOCOLS
