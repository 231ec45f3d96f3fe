"""``components/_memory.py``: a LanguageMemory's spec from its arguments, and what it builds
(a managed memory's LanguageTool, an external one's endpoint) under the mock engine."""

from __future__ import annotations

import gc
from typing import Any

import pulumi
import pytest

from langop_infra.components._memory import LanguageMemory, parse_memory
from langop_infra.config._memory import DEFAULT_MEMORY_IMAGE, MemorySpec
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import ProgramRun, run_program

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
        LanguageMemory("a", {"name": "notes", "namespace": "apps"})
        LanguageMemory("b", {"name": "notes"}, namespace="apps")

    with pytest.raises(SpecError) as info:
        run_program(program)
    gc.collect()
    assert "a LanguageMemory named 'notes' already exists in namespace 'apps'" in str(info.value)
