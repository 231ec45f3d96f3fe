"""``components/_memory.py``: a LanguageMemory's spec from its arguments, and what it builds
(a managed memory's LanguageTool, an external one's endpoint) under the mock engine."""

from __future__ import annotations

import gc
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s
import pytest

from langop_infra.components import _memory as memory_module
from langop_infra.components._k8s import find_component
from langop_infra.components._memory import LanguageMemory, parse_memory
from langop_infra.config._memory import DEFAULT_MEMORY_IMAGE, MemorySpec
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import ProgramRun, _RecordingMonitor, run_program
from tests.support.mock_runs import failing

EXTERNAL = {"type": "external", "address": {"value": "http://mem.example:8080/mcp"}}


def test_a_spec_is_taken_as_it_is() -> None:
    spec = MemorySpec(name="notes")
    taken, late = parse_memory("other", spec, {})
    assert (taken, late) == (spec, None) and taken is spec


def test_keyword_fields_join_a_spec_or_a_mapping_and_the_name_defaults() -> None:
    spec, _ = parse_memory("other", MemorySpec(name="notes"), {"size": "2Gi"})
    assert (spec.name, spec.size) == ("notes", "2Gi")
    spec, _ = parse_memory("notes", {"port": 9000}, {"namespace": "apps"})
    assert (spec.name, spec.port, spec.namespace, spec.type) == ("notes", 9000, "apps", "managed")
    assert parse_memory("notes", None, {})[0].name == "notes"
    assert parse_memory("notes", {"name": "given"}, {})[0].name == "given"


def test_an_output_namespace_is_handed_back_apart() -> None:
    namespace = pulumi.Output.from_input("apps")
    spec, late = parse_memory("notes", {}, {"namespace": namespace})
    assert (spec.namespace, late) == (None, namespace)


def test_invalid_fields_are_field_errors_naming_the_memory() -> None:
    with pytest.raises(SpecError) as info:
        parse_memory("notes", {"type": "external"}, {})
    assert str(info.value).startswith("invalid LanguageMemory 'notes': 1 problem")
    assert "external memory 'notes' needs address" in str(info.value)
    with pytest.raises(SpecError) as info:
        parse_memory("notes", {"port": "x"}, {})
    [problem] = info.value.problems
    assert problem.path == "port"


def built(**fields: Any) -> tuple[ProgramRun, dict[str, Any]]:
    seen: dict[str, Any] = {}

    def program() -> None:
        memory = LanguageMemory("mem", **fields)
        seen["memory"] = memory
        memory.endpoint.apply(lambda e: seen.__setitem__("endpoint", e))

    return run_program(program), seen


def test_a_managed_memory_runs_its_tool_in_the_default_namespace() -> None:
    run, seen = built()
    memory = seen["memory"]
    assert memory.spec.namespace == "default" and memory.tool is not None
    assert seen["endpoint"] == "http://mem.default.svc.cluster.local:8080"
    [deployment] = [m for m in run.manifests() if m["kind"] == "Deployment"]
    assert deployment["metadata"]["namespace"] == "default"
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == (
        DEFAULT_MEMORY_IMAGE
    )
    [component] = [r for r in run.registrations if r.name == "mem"]
    assert component.type == "langop-infra:index:LanguageMemory"
    [tool] = [r for r in run.registrations if r.name == "mem-server"]
    assert (tool.type, tool.parent) == ("langop-infra:index:LanguageTool", component.urn)


def test_an_external_memory_builds_nothing_and_gives_its_address() -> None:
    run, seen = built(namespace="apps", **EXTERNAL)
    memory = seen["memory"]
    assert (memory.tool, memory.spec.namespace) == (None, "apps")
    assert seen["endpoint"] == "http://mem.example:8080/mcp"
    assert [m for m in run.manifests()] == []


def test_an_external_memory_in_a_secret_has_an_empty_endpoint() -> None:
    address = {"valueFrom": {"secretKeyRef": {"name": "mem", "key": "url"}}}
    _, seen = built(type="external", address=address)
    assert seen["endpoint"] == ""


def test_two_memories_of_one_name_and_namespace_are_refused() -> None:
    def program() -> None:
        LanguageMemory("a", cast("Any", {"name": "notes", "namespace": "apps"}))
        LanguageMemory("b", cast("Any", {"name": "notes"}), namespace="apps")

    with pytest.raises(SpecError) as info:
        run_program(program)
    gc.collect()
    assert "a LanguageMemory named 'notes' already exists in namespace 'apps'" in str(info.value)


def test_both_spellings_of_a_field_are_named_as_the_user_wrote_them() -> None:
    with pytest.raises(SpecError) as info:
        parse_memory("notes", {"storageClassName": "a", "storage_class_name": "b"}, {})
    [problem] = info.value.problems
    assert (problem.path, problem.message) == (
        "storage_class_name",
        "given twice, as 'storageClassName' and 'storage_class_name' (camelCase and "
        "snake_case name the same field); keep one",
    )


def placed(namespace: Any) -> tuple[ProgramRun, dict[str, Any]]:
    """A managed memory ``mem`` in ``namespace``: the run, the memory, what its endpoint and
    namespace resolve to, and the component found at its name in that namespace."""
    seen: dict[str, Any] = {}

    def program() -> None:
        memory = LanguageMemory("mem", namespace=namespace)
        seen["memory"] = memory
        memory.endpoint.apply(lambda e: seen.__setitem__("endpoint", e))

        def found(name: str) -> None:
            seen["namespace"] = name
            seen["found"] = find_component("LanguageMemory", name, "mem")

        memory.namespace.apply(found)

    return run_program(program), seen


def test_a_managed_memory_runs_its_tool_in_its_namespace() -> None:
    run, seen = placed("apps")
    memory = seen["memory"]
    assert (memory.spec.namespace, memory.namespace_known) == ("apps", True)
    assert seen["endpoint"] == "http://mem.apps.svc.cluster.local:8080"
    assert (seen["namespace"], seen["found"]) == ("apps", memory)
    assert {(m["kind"], m["metadata"]["namespace"]) for m in run.manifests()} == {
        ("Deployment", "apps"),
        ("Service", "apps"),
        ("PersistentVolumeClaim", "apps"),
        ("NetworkPolicy", "apps"),
    }


def test_a_namespace_output_places_the_tool_as_it_resolves() -> None:
    run, seen = placed(pulumi.Output.from_input("apps"))
    memory = seen["memory"]
    assert (memory.spec.namespace, memory.namespace_known) == (None, False)
    assert seen["endpoint"] == "http://mem.apps.svc.cluster.local:8080"
    assert (seen["namespace"], seen["found"]) == ("apps", memory)
    assert {(m["kind"], m["metadata"]["namespace"]) for m in run.manifests()} == {
        ("Deployment", "apps"),
        ("Service", "apps"),
        ("PersistentVolumeClaim", "apps"),
        ("NetworkPolicy", "apps"),
    }
    assert sorted(r.name for r in run.registrations if r.is_kubernetes) == [
        "[mem-server]/mem",
        "[mem-server]/mem",
        "[mem-server]/mem-data",
        "[mem-server]/mem-ingress",
    ]


@pytest.fixture
def site(monkeypatch: pytest.MonkeyPatch) -> str:
    """The line the memories are built at, as construction_site gives it: fixed, since under
    mutmut its trampoline's frames, not the test's, are the first outside the package."""
    monkeypatch.setattr(memory_module, "construction_site", lambda: "main.py:7")
    return "main.py:7"


def test_a_namespace_output_is_checked_where_the_memory_was_built(site: str) -> None:
    def program() -> None:
        LanguageMemory("mem", namespace=cast("Any", pulumi.Output.from_input("Bad_NS")))

    assert failing(program) == (
        f"invalid LanguageMemory 'mem': 1 problem (built at {site})\n"
        "  - namespace: 'Bad_NS' is not a valid name: use at most 63 lower-case letters, "
        "digits and '-', starting and ending with a letter or digit (a DNS-1123 label)"
    )


def test_a_second_memory_of_a_name_in_a_namespace_output_is_refused_at_its_line(
    site: str,
) -> None:
    # External: a managed one's tool would be refused first, as a LanguageTool.
    def program() -> None:
        notes, apps = cast("Any", {"name": "notes", **EXTERNAL}), pulumi.Output.from_input("apps")
        LanguageMemory("a", notes, namespace=cast("Any", apps))
        LanguageMemory("b", notes, namespace=cast("Any", apps))

    assert failing(program) == (
        f"invalid LanguageMemory 'notes': 1 problem (built at {site})\n"
        "  - name: a LanguageMemory named 'notes' already exists in namespace 'apps'; give "
        "this one another name or namespace"
    )


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The registration and output requests the Pulumi SDK sends the mock engine's monitor
    (the SDK's own messages, recorded on their way in)."""
    sent: list[Any] = []
    for method in ("RegisterResource", "RegisterResourceOutputs"):
        real = getattr(_RecordingMonitor, method)

        def record(monitor: Any, request: Any, real: Any = real) -> Any:
            sent.append(request)
            return real(monitor, request)

        monkeypatch.setattr(_RecordingMonitor, method, record)
    return sent


def test_options_reach_the_memory_and_its_tool_with_the_alias_and_outputs(
    requests: list[Any],
) -> None:
    def program() -> None:
        waited = k8s.core.v1.ConfigMap("first", metadata={"name": "first"})
        LanguageMemory("mem", opts=pulumi.ResourceOptions(depends_on=[waited]))

    run = run_program(program)
    first = "urn:pulumi:dev::langop-infra::pulumi:pulumi:Stack$kubernetes:core/v1:ConfigMap::first"
    ours = [r for r in run.registrations if r.name != "first"]
    assert len(ours) == 7 and all(first in r.dependencies for r in ours)
    [registered] = [r for r in requests if getattr(r, "type", "").endswith(":LanguageMemory")]
    assert [a.spec.type for a in registered.aliases] == ["langop:index:LanguageMemory"]
    [component] = [r for r in run.registrations if r.name == "mem"]
    [outputs] = [r for r in requests if getattr(r, "urn", "") == component.urn]
    assert dict(outputs.outputs) == {"endpoint": "http://mem.default.svc.cluster.local:8080"}
