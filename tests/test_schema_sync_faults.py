"""The schema-sync fault matrix, through the SDK's dynamic-provider servicer.

Each fault is met three ways, as ``pulumi up`` meets it (``tests/support/provider_host.py``):
a create (no previous state), an update over a previous good sync (its schemas must
survive), and a create with ``required: True`` (the same reason fails the step). Every
outcome is phase ``Error`` with a one-line ``last_error`` naming the fault (a slow server's names
the timeout that ended it; how long that took is never asserted). Real
official-SDK servers produce the faults where they can (server down, slow handler, bearer
auth, an oversized tool, paginations that loop or repeat); ``faultservers.SyncFaults``
stands in for the rest. The last test checks that a failed sync leaves the stack's other
resources as they were.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pytest

from langop_infra.components.cluster import LanguageCluster
from langop_infra.offline._mock_engine import DYNAMIC_TYPE, ProgramRun, run_program
from langop_infra.sync._compare import schema_hash
from langop_infra.sync.provider import SyncOutputs, ToolSchemaSyncProvider
from tests import faultservers
from tests.support.loopback import free_port, serve
from tests.support.provider_host import EngineHost, ProviderFailure, Secret

SERVICE = "memory"
RESOURCE_ID = f"apps/{SERVICE}"
KEPT = SyncOutputs.LISTING  # what a failed sync keeps from the last good one


def sync_inputs(base: str, path: str = "/mcp", **extra: Any) -> dict[str, Any]:
    """Provider inputs for a direct sync of ``base + path``."""
    return {
        "endpoint": base,
        "mcp_path": path,
        "access": "direct",
        "namespace": "apps",
        "service": SERVICE,
        "port": 8080,
        "timeout": 2,
        "required": False,
        **extra,
    }


# -- servers ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def good() -> EngineHost:
    """A real, successful sync of an official-SDK server, as the engine keeps it: the
    previous state of every update below."""
    with serve(faultservers.memory_server().streamable_http_app()) as base:
        host = EngineHost(ToolSchemaSyncProvider())
        host.up(sync_inputs(base))
    outs = host.plain_outputs()
    assert outs["phase"] == "Registered", outs["last_error"]
    assert outs["tool_names"] == ["remember"]
    return host


def after(good: EngineHost) -> EngineHost:
    """A fresh host holding ``good``'s state."""
    host = EngineHost(ToolSchemaSyncProvider())
    host.id, host.inputs, host.outputs = (
        good.id,
        copy.deepcopy(good.inputs),
        copy.deepcopy(good.outputs),
    )
    return host


def without_nulls(value: Any) -> Any:
    """``value`` as the SDK's servicer hands it back: null-valued object keys dropped."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def failure_line(failure: ProviderFailure) -> str:
    """The exception line of the traceback the engine prints for a failed step."""
    return failure.details.strip().splitlines()[-1].removeprefix("RuntimeError: ")


@pytest.fixture(scope="module")
def stand_ins() -> Iterator[str]:
    with serve(faultservers.SyncFaults()) as base:
        yield base


@pytest.fixture(scope="module")
def down() -> str:
    """The address of a real official-SDK server that was running and has stopped."""
    with serve(faultservers.memory_server().streamable_http_app()) as base:
        pass
    return base


@pytest.fixture(scope="module")
def slow() -> Iterator[str]:
    # Answers tools/list after timeout + 2 s (the slow fault's timeout is 1 s).
    with serve(faultservers.slow_server_app(3.0)) as base:
        yield base


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    port = free_port()
    with serve(faultservers.auth_server_app(f"http://127.0.0.1:{port}"), port) as base:
        yield base


@pytest.fixture(scope="module")
def oversized() -> Iterator[str]:
    with serve(faultservers.oversized_server().streamable_http_app()) as base:
        yield base


@pytest.fixture(scope="module")
def cursor_loop() -> Iterator[str]:
    # Page 1 leads to page 2, whose cursor leads back to page 1.
    pages = {None: (["alpha"], "page-2"), "page-2": (["beta"], "page-1")}
    pages["page-1"] = pages[None]
    with serve(faultservers.paged_server_app(pages)) as base:
        yield base


@pytest.fixture(scope="module")
def repeated_tool() -> Iterator[str]:
    # Page 2 returns "beta" again: the list changed between the two pages.
    pages = {None: (["alpha", "beta"], "page-2"), "page-2": (["beta", "gamma"], None)}
    with serve(faultservers.paged_server_app(pages)) as base:
        yield base


# -- the matrix ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """One fault: the server fixture, the path, and what ``last_error`` must say."""

    server: str
    path: str = "/mcp"
    says: tuple[str, ...] = ()  # regexes, each must match last_error
    timeout: float = 2.0
    headers: dict[str, str] = field(default_factory=dict)
    stable: bool = True  # the same message every time (not so: sizes read, timer races)


FAULTS = {
    "server-down": Fault(
        "down",
        says=(r"connection refused by http://127\.0\.0\.1:\d+/mcp ", r"tried 3 times"),
    ),
    "slow": Fault(
        "slow",
        says=(r"(did not finish within the 1s deadline|no answer to tools/list .* within 1s)",),
        timeout=1.0,
        stable=False,
    ),
    "401": Fault(
        "guarded",
        says=(
            r"refused server/discover with HTTP 401 Unauthorized",
            r"credentials are missing or wrong",
            r'WWW-Authenticate: Bearer error="invalid_token"',
        ),
    ),
    "403": Fault(
        "guarded",
        says=(r"HTTP 403 Forbidden", r"credentials", r'error="insufficient_scope"'),
        headers={"Authorization": f"Bearer {faultservers.WEAK_TOKEN}"},
    ),
    "500-html": Fault(
        "stand_ins",
        "/html500/mcp",
        says=(
            r"failed with HTTP 500 Internal Server Error on initialize",
            r"upstream & cache are down",  # the page's text, unescaped, without its tags
            r"^[^<>{}]*$",
        ),
    ),
    "wrong-protocol-version": Fault(
        "stand_ins",
        "/bad-version/mcp",
        says=(r"protocol version '1999-01-01'", r"does not speak"),
    ),
    "tools-not-a-list": Fault(
        "stand_ins",
        "/tools-not-list/mcp",
        says=(r"answered tools/list without a list of named tools", r"does not follow MCP"),
    ),
    "tool-without-name": Fault(
        "stand_ins",
        "/nameless-tool/mcp",
        says=(r"answered tools/list without a list of named tools",),
    ),
    "not-json": Fault(
        "stand_ins",
        "/not-json/mcp",
        says=(r"sent a body that is not JSON", r"\{'jsonrpc': '2\.0'"),
    ),
    "oversized": Fault(
        "oversized",
        says=(r"sent more than 8388608 bytes for tools/list", r"max_response_bytes"),
        stable=False,
    ),
    "cursor-loops-back": Fault(
        "cursor_loop",
        says=(r"tools/list cursor 'page-2' twice", r"pagination loops"),
    ),
    "closes-mid-stream": Fault(
        "stand_ins",
        "/closes-mid-stream/mcp",
        says=(r"closed the event stream before answering tools/list",),
    ),
    "connection-drops-mid-stream": Fault(
        "stand_ins",
        "/drops-connection/mcp",
        says=(r"broke during tools/list", r"peer closed connection"),
    ),
}
REPEATED_TOOL = Fault("repeated_tool", says=(r"tools/list", r"'beta'"))
SLOW = ("slow", "server-down")  # waits out a deadline, or three refused connections
CASES = [
    pytest.param(fault, id=name, marks=[pytest.mark.slow] if name in SLOW else [])
    for name, fault in FAULTS.items()
] + [
    pytest.param(
        REPEATED_TOOL,
        id="page-repeats-a-tool",
    )
]


def fault_inputs(request: pytest.FixtureRequest, fault: Fault) -> dict[str, Any]:
    base = request.getfixturevalue(fault.server)
    headers = Secret(fault.headers) if fault.headers else None
    return sync_inputs(base, fault.path, timeout=fault.timeout, headers=headers)


def assert_reason(text: str, fault: Fault) -> None:
    for pattern in fault.says:
        assert re.search(pattern, text), f"{pattern!r} not in {text!r}"


def assert_error_outputs(outs: dict[str, Any], fault: Fault) -> None:
    assert outs["phase"] == "Error", outs
    message = outs["last_error"]
    assert "\n" not in message and "\r" not in message
    assert 0 < len(message) <= 300, len(message)
    assert_reason(message, fault)


@pytest.mark.slow
@pytest.mark.parametrize("fault", CASES)
def test_fault_is_an_error_phase_with_its_reason(
    request: pytest.FixtureRequest, good: EngineHost, fault: Fault
) -> None:
    props = fault_inputs(request, fault)

    created = EngineHost(ToolSchemaSyncProvider())
    step = created.up(props)
    assert (step, created.id) == ("create", RESOURCE_ID)
    outs = created.plain_outputs()
    assert_error_outputs(outs, fault)
    assert outs["tool_schemas"] == [] and outs["schema_hash"] == ""
    assert outs["registered_at"] == "" and outs["endpoint"] == props["endpoint"]
    assert isinstance(created.outputs.get("headers"), Secret) == bool(fault.headers)

    updated = after(good)
    step = updated.up(props)
    assert step == "update"
    kept = updated.plain_outputs()
    assert_error_outputs(kept, fault)
    before = good.plain_outputs()
    assert {k: kept[k] for k in KEPT} == {k: without_nulls(before[k]) for k in KEPT}
    assert kept["schema_hash"] == schema_hash(before["tool_schemas"])

    with pytest.raises(ProviderFailure) as caught:
        EngineHost(ToolSchemaSyncProvider()).up({**props, "required": True})
    raised = failure_line(caught.value)
    assert_reason(raised, fault)
    prefix = f"schema sync of {SERVICE} failed: "
    assert raised.startswith(prefix)
    if fault.stable:
        assert raised == prefix + outs["last_error"]
        assert kept["last_error"] == outs["last_error"]


@pytest.mark.parametrize(
    ("server", "path", "headers", "names"),
    [
        ("stand_ins", "/ok/mcp", None, ["remember", "recall"]),
        ("guarded", "/mcp", {"Authorization": f"Bearer {faultservers.GOOD_TOKEN}"}, ["remember"]),
    ],
    ids=["stand-ins", "sdk-auth"],
)
def test_fault_servers_sync_when_not_faulting(
    request: pytest.FixtureRequest, server: str, path: str, headers: dict | None, names: list[str]
) -> None:
    """Controls: the same servers, asked correctly, sync; the faults above are the faults."""
    secret = Secret(headers) if headers else None
    host = EngineHost(ToolSchemaSyncProvider())
    host.up(sync_inputs(request.getfixturevalue(server), path, headers=secret))
    outs = host.plain_outputs()
    assert (outs["phase"], outs["last_error"], outs["tool_names"]) == ("Registered", "", names)


def test_refresh_of_a_failing_tool_keeps_state_even_when_required(
    good: EngineHost, down: str
) -> None:
    """``pulumi refresh`` never fails on a sync error, ``required`` or not."""
    host = after(good)
    host.outputs.update({"endpoint": down, "required": True})
    outs = host.refresh()
    assert outs["phase"] == "Error"
    assert "connection refused" in outs["last_error"]
    before = good.plain_outputs()
    assert {k: outs[k] for k in KEPT} == {k: without_nulls(before[k]) for k in KEPT}


# -- the rest of the stack is unaffected --------------------------------------------------------

CLUSTER = {
    "namespace": "apps",
    "tools": [
        {"name": "memory", "image": "ghcr.io/acme/memory:1"},
        {"name": "search", "image": "ghcr.io/acme/search:1", "port": 9000},
    ],
    "agents": [
        {
            "name": "helper",
            "image": "ghcr.io/acme/helper:1",
            "tools": [{"name": "memory"}, {"name": "search", "required": True}],
        }
    ],
}
SEARCH_ENDPOINT = "http://search.apps.svc.cluster.local:9000"
MEMORY_ENDPOINT = "http://memory.apps.svc.cluster.local:8080"
REGISTERED = {"phase": "Registered", "last_error": ""}
FAILED = {"phase": "Error", "last_error": "connection refused by http://search...: is it up?"}


def cluster_program() -> None:
    cluster = LanguageCluster("apps", CLUSTER)
    pulumi.export("phases", {name: tool.phase for name, tool in cluster.tools.items()})
    pulumi.export("config", cluster.agents["helper"].config_yaml)
    pulumi.export("servers", cluster.agents["helper"].mcp_servers)


def kubernetes_objects(run: ProgramRun) -> dict[tuple[str, str], Any]:
    return {(r.type, r.name): r.inputs for r in run.kubernetes()}


def test_failed_sync_leaves_every_object_and_the_agent_endpoint_in_place() -> None:
    healthy = run_program(cluster_program, dynamic_state=lambda state: REGISTERED)
    failed = run_program(
        cluster_program,
        dynamic_state=lambda state: FAILED if state["service"] == "search" else REGISTERED,
    )
    assert healthy.outputs["phases"] == {"memory": "Registered", "search": "Registered"}
    assert failed.outputs["phases"] == {"memory": "Registered", "search": "Error"}

    objects = kubernetes_objects(failed)
    assert set(objects) == {
        ("kubernetes:core/v1:Namespace", "apps"),
        ("kubernetes:apps/v1:Deployment", "apps/memory"),
        ("kubernetes:core/v1:Service", "apps/memory"),
        ("kubernetes:networking.k8s.io/v1:NetworkPolicy", "apps/memory-ingress"),
        ("kubernetes:apps/v1:Deployment", "apps/search"),
        ("kubernetes:core/v1:Service", "apps/search"),
        ("kubernetes:networking.k8s.io/v1:NetworkPolicy", "apps/search-ingress"),
        ("kubernetes:apps/v1:Deployment", "apps/helper"),
        ("kubernetes:core/v1:ConfigMap", "apps/helper-config"),
        ("kubernetes:networking.k8s.io/v1:NetworkPolicy", "apps/helper-ingress"),
    }
    assert objects == kubernetes_objects(healthy)  # same objects, same inputs
    syncs = {r.name: r for r in failed.registrations if r.type == DYNAMIC_TYPE}
    assert set(syncs) == {"apps/memory-schema", "apps/search-schema"}

    config = failed.outputs["config"]
    assert f"endpoint: {SEARCH_ENDPOINT}\n" in config
    assert f"endpoint: {MEMORY_ENDPOINT}\n" in config
    assert failed.outputs["servers"] == f"{MEMORY_ENDPOINT},{SEARCH_ENDPOINT}"
    [config_map] = [m for m in failed.manifests() if m["kind"] == "ConfigMap"]
    assert config_map["data"]["config.yaml"] == config
    [helper] = [r for r in failed.kubernetes() if r.name == "apps/helper"]
    env = helper.inputs["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "MCP_SERVERS", "value": f"{MEMORY_ENDPOINT},{SEARCH_ENDPOINT}"} in env
    # The required reference still orders the agent after the failed tool's sync.
    assert syncs["apps/search-schema"].urn in helper.dependencies
