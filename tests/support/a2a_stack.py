"""Stack documents of built-in agents that call each other over A2A in namespace ``apps``,
for the A2A render tests (callers by token, callers by identity, per-port policies)."""

from __future__ import annotations

from typing import Any

SKILL = {"id": "review", "name": "Review", "description": "Reviews.", "tags": ["review"]}
# A runtime: builtin agent needs a model (validate refuses one without): a model the agents
# reach directly, so the render has no gateway.
MODEL = {
    "name": "local",
    "provider": "openai-compatible",
    "modelName": "llama-3.1-8b",
    "endpoint": "http://vllm.apps.svc.cluster.local:8000/v1",
    "gateway": False,
}
TOKEN_SECRET = "a2a-tokens"


def token(key: str) -> dict[str, Any]:
    """A caller's token: key ``key`` of the Secret ``a2a-tokens``."""
    return {"secretKeyRef": {"name": TOKEN_SECRET, "key": key}}


def builtin_agent(name: str, **fields: Any) -> dict[str, Any]:
    """A built-in agent on the stack's model, with ``fields`` (``a2a``, ``agents``, ...)."""
    return {"name": name, "runtime": "builtin", "model": "local", **fields}


def a2a_stack(*agents: dict[str, Any], token_secret: bool = True) -> dict[str, Any]:
    """The stack of ``agents`` in ``apps`` with the model's Service, and the Secret of the
    callers' tokens unless ``token_secret`` is false."""
    secrets = {"externalSecrets": [TOKEN_SECRET]} if token_secret else {}
    return {
        "namespace": "apps",
        **secrets,
        "externalServices": [{"name": "vllm", "namespace": "apps"}],
        "models": [MODEL],
        "agents": list(agents),
    }
