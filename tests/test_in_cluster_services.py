"""An address at an in-cluster Service passes validation only when the stack makes that
Service or declares it under ``externalServices`` (the refusals are cases of
``tests/test_bad_input.py``, checked by the Python API, render and both ways of validate)."""

from __future__ import annotations

from typing import Any

import pytest

from langop_infra.config.checks._in_cluster_services import service_of
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from tests.test_bad_input import A0, MCP0, doc

VLLM = {
    "name": "local",
    "provider": "openai-compatible",
    "modelName": "llama",
    "endpoint": "http://vllm.models.svc.cluster.local:8000/v1",
}
SKILL = {"id": "help", "name": "Help", "description": "Helps.", "tags": ["help"]}


def problem_paths(document: dict[str, Any]) -> list[str]:
    try:
        parse_cluster(document)
    except SpecError as exc:
        return [p.path for p in exc.problems]
    return []


@pytest.mark.parametrize(
    ("url", "service"),
    [
        ("http://vllm.models.svc.cluster.local:8000/v1", ("models", "vllm")),
        ("http://vllm.models.svc/v1", ("models", "vllm")),
        ("http://pod-0.vllm.models.svc.cluster.local/", ("models", "vllm")),
        ("http://vllm.apps:8000", ("apps", "vllm")),
        ("https://vllm.example.com/v1", None),
        ("http://vllm.models:8000", None),  # models is not a namespace of the stack
        ("http://localhost:8080/mcp", None),
        ("http://10.0.0.7:8000", None),
    ],
)
def test_which_addresses_name_an_in_cluster_service(
    url: str, service: tuple[str, str] | None
) -> None:
    assert service_of(url, {"apps"}) == service


def test_a_declared_external_service_passes() -> None:
    refused = doc(("models", [VLLM]))
    assert problem_paths(refused) == ["models[0].endpoint"]
    declared = doc(
        ("models", [VLLM]), ("externalServices", [{"name": "vllm", "namespace": "models"}])
    )
    assert problem_paths(declared) == []


def test_an_external_service_in_another_namespace_does_not_count() -> None:
    declared = doc(
        ("models", [VLLM]), ("externalServices", [{"name": "vllm", "namespace": "apps"}])
    )
    assert problem_paths(declared) == ["models[0].endpoint"]


def test_services_the_stack_makes_pass() -> None:
    document = doc(
        # A service-mode tool of the stack, and the agent's own Service (it serves A2A).
        (f"{MCP0}.url", "http://memory.apps.svc.cluster.local:8080/mcp"),
        (f"{A0}.a2a", {"port": 9999, "skills": [SKILL]}),
        (
            "agents[1]",
            {
                "name": "caller",
                "image": "ghcr.io/acme/c:1@sha256:" + "6" * 64,
                "agents": [{"name": "helper2", "url": "http://helper.apps.svc:9999/"}],
            },
        ),
    )
    assert problem_paths(document) == []


def test_a_gateway_model_the_stack_routes_passes() -> None:
    gateway = {
        "name": "via",
        "provider": "openai-compatible",
        "modelName": "m",
        "endpoint": "http://gateway.apps.svc.cluster.local:8000/v1",
        "gateway": False,
    }
    routed = {
        "name": "gpt",
        "provider": "openai",
        "modelName": "gpt-4o-mini",
        "apiKey": {"secretKeyRef": {"name": "search-credentials", "key": "token"}},
    }
    assert problem_paths(doc(("models", [routed, gateway]))) == []
    # Without a model through the gateway there is no gateway Service to point at.
    assert problem_paths(doc(("models", [gateway]))) == ["models[0].endpoint"]


def test_the_api_servers_own_service_is_in_every_cluster() -> None:
    # Calling it is a risk the endpoint advice warns about (tests/test_edges.py), not a
    # Service the stack forgot; a neighbour in the same namespace is still refused.
    model = {**VLLM, "endpoint": "https://kubernetes.default.svc/api/v1"}
    assert problem_paths(doc(("models", [model]))) == []
    model = {**VLLM, "endpoint": "https://kube-proxy.default.svc/api/v1"}
    assert problem_paths(doc(("models", [model]))) == ["models[0].endpoint"]
