"""What the built-in agent runtime reads at start: the env and ``/etc/agent/config.yaml`` we
render (or ark's env alone), as one :class:`RuntimeSettings`.

``LANGOP_PATH_ROOT`` (testing, and running a rendered pod outside Kubernetes) puts every
absolute container path the runtime reads (``AGENT_CONFIG_PATH``, ``A2A_AGENT_CARD``) under
that directory: ``/etc/agent/config.yaml`` is read from ``$LANGOP_PATH_ROOT/etc/agent/...``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import langop_infra._json as _json
from langop_infra._errors import LangopError

__all__ = [
    "PATH_ROOT_ENV",
    "Peer",
    "RuntimeSettings",
    "SettingsError",
    "container_path",
    "load_settings",
]

PATH_ROOT_ENV = "LANGOP_PATH_ROOT"
DEFAULT_CONFIG = "/etc/agent/config.yaml"
DEFAULT_CARD = "/etc/agent/a2a/agent-card.json"
DEFAULT_MAX_ITERATIONS = 10
DEFAULT_HISTORY_MESSAGES = 40
DEFAULT_HISTORY_BYTES = 256 * 1024  # one conversation's kept history, as JSON
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024  # an A2A request's body
DEFAULT_HEALTH_PORT = 9090  # /healthz, /readyz, /metrics; config/_builtin.py probes it


class SettingsError(LangopError, ValueError):
    """A setting the runtime cannot start with; the message names the variable and the fix."""


@dataclass(frozen=True)
class Peer:
    """An A2A peer: its name, JSON-RPC URL, card URL and the headers to send it."""

    name: str
    url: str
    card_url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict[str, str], repr=False)
    #: A projected service-account token to send as the bearer, read at each request
    #: (the kubelet renews it), for a peer that lists this agent by identity.
    token_file: str = ""


@dataclass(frozen=True)
class RuntimeSettings:
    """Everything the runtime needs, read once at start."""

    model_endpoint: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    system_prompt: str = ""
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    history_messages: int = DEFAULT_HISTORY_MESSAGES
    history_bytes: int = DEFAULT_HISTORY_BYTES
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    health_port: int = DEFAULT_HEALTH_PORT
    tool_timeout: float = 30.0
    model_timeout: float = 120.0
    model_retries: int = 3
    turn_timeout: float = 600.0
    tool_concurrency: int = 4
    port: int = 8080
    path: str = "/"
    card_path: Path = Path(DEFAULT_CARD)
    config_path: Path = Path(DEFAULT_CONFIG)
    mode: str = "serve"
    input: str = ""
    memory_tool: str | None = None
    memory_shared: bool = False  # every conversation recalls what any stored
    memory_headers: Mapping[str, str] = field(default_factory=dict[str, str], repr=False)
    required_tools: tuple[str, ...] = ()
    # registry names (<tool>__<name>) whose every call a person must approve
    require_approval: tuple[str, ...] = ()
    peers: tuple[Peer, ...] = ()
    peer_timeout: float = 120.0
    max_hops: int = 3
    agent_name: str = "agent"
    config: Mapping[str, Any] = field(default_factory=dict[str, Any])


def container_path(path: str, env: Mapping[str, str]) -> Path:
    """``path`` as this process sees it: under ``LANGOP_PATH_ROOT`` when that is set."""
    root = env.get(PATH_ROOT_ENV)
    if root and path.startswith("/"):
        return Path(root) / path.lstrip("/")
    return Path(path)


def _number(env: Mapping[str, str], name: str, default: float, low: float = 1) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a number") from None
    if not math.isfinite(value):  # int(inf) would end the runtime with a traceback
        raise SettingsError(f"{name}={raw!r}: expected a finite number")
    if value < low:
        raise SettingsError(f"{name}={raw!r}: must be at least {low:g}")
    return value


def _first(value: str) -> str:
    return next((part.strip() for part in value.split(",") if part.strip()), "")


def _config(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    from langop_infra.core import _yaml_io as yaml_io

    try:
        document = yaml_io.load_config(path.read_bytes())
    except (OSError, yaml_io.YAMLError) as exc:
        raise SettingsError(f"cannot read agent config {path}: {exc}") from None
    if document is not None and not isinstance(document, dict):
        raise SettingsError(f"agent config {path} is not a YAML mapping")
    return cast("dict[str, Any]", document or {})


def _env_token(text: str) -> str:
    from langop_infra.config._names import env_token

    return env_token(text)


def prefixed_headers(env: Mapping[str, str], prefix: str) -> dict[str, str]:
    """``{header: value}`` of every ``<prefix><HEADER>`` variable (``X_API_KEY`` ->
    ``X-Api-Key``)."""
    from langop_infra.agent._ark_env import header_name

    return {
        header_name(key[len(prefix) :]): value
        for key, value in env.items()
        if key.startswith(prefix) and len(key) > len(prefix)
    }


def load_peers(env: Mapping[str, str]) -> tuple[Peer, ...]:
    """``A2A_PEERS`` (JSON ``[{"name", "url", "cardUrl"}]``) with each peer's headers from
    ``A2A_PEER_<PEER>_HEADER_<HEADER>``, its caller token ``A2A_PEER_<PEER>_TOKEN`` and the
    file of its service-account token ``A2A_PEER_<PEER>_TOKEN_FILE``."""
    raw = env.get("A2A_PEERS", "").strip()
    if not raw:
        return ()
    try:
        listed: object = _json.read(raw)
    except ValueError as exc:
        why = _json.reason(exc)
        raise SettingsError(f"A2A_PEERS: not JSON ({why})") from None
    if not isinstance(listed, list):
        raise SettingsError("A2A_PEERS: expected a JSON list of {name, url, cardUrl}")
    peers: list[Peer] = []
    for index, item in enumerate(cast("list[Any]", listed)):
        spec = cast("dict[str, Any]", item) if isinstance(item, dict) else {}
        if not isinstance(spec.get("name"), str) or not isinstance(spec.get("url"), str):
            raise SettingsError(f"A2A_PEERS[{index}]: needs a name and a url")
        headers = prefixed_headers(env, f"A2A_PEER_{_env_token(spec['name'])}_HEADER_")
        token = env.get(f"A2A_PEER_{_env_token(spec['name'])}_TOKEN", "").strip()
        if token:  # the callee's a2a.callers names this agent: its token, as a bearer
            headers.setdefault("Authorization", f"Bearer {token}")
        token_file = env.get(f"A2A_PEER_{_env_token(spec['name'])}_TOKEN_FILE", "").strip()
        card = str(spec.get("cardUrl") or "")
        peers.append(Peer(spec["name"], spec["url"], card, headers, token_file))
    return tuple(peers)


def _approvals(tools: object) -> tuple[str, ...]:
    """Registry names of the tools config.yaml ``tools.<ref>.requireApproval`` lists (under
    their own names and their overrides' names)."""
    if not isinstance(tools, dict):
        return ()
    names: list[str] = []
    for ref, spec in cast("dict[str, Any]", tools).items():
        fields = cast("dict[str, Any]", spec) if isinstance(spec, dict) else {}
        listed: object = fields.get("requireApproval") or []
        overrides: object = fields.get("overrides") or {}
        renamed = cast("dict[str, Any]", overrides) if isinstance(overrides, dict) else {}
        for tool in cast("list[object]", listed) if isinstance(listed, list) else []:
            names.append(f"{ref}__{tool}")
            override = renamed.get(str(tool))
            if isinstance(override, dict) and override.get("name"):  # pyright: ignore[reportUnknownMemberType]
                names.append(f"{ref}__{override['name']}")
    return tuple(names)


def load_settings(env: Mapping[str, str]) -> RuntimeSettings:
    """The runtime's settings from ``env`` and the config file it names."""
    config_path = container_path(env.get("AGENT_CONFIG_PATH") or DEFAULT_CONFIG, env)
    config = _config(config_path)
    agent: object = config.get("agent") or {}
    agent = cast("dict[str, Any]", agent) if isinstance(agent, dict) else {}
    endpoint = _first(env.get("MODEL_ENDPOINT", ""))
    model = _first(env.get("LLM_MODEL", "")) or env.get("AGENT_MODEL", "")
    if not endpoint or not model:
        raise SettingsError(
            "the agent has no model: MODEL_ENDPOINT and LLM_MODEL (or ark's AGENT_MODEL) must "
            "be set; give the agent a model (models: or model:) in the stack"
        )
    prompt = env.get("AGENT_INSTRUCTIONS") or env.get("AGENT_SYSTEM_PROMPT") or ""
    if env.get("AGENT_PERSONA"):
        prompt = f"{prompt}\n\n{env['AGENT_PERSONA']}".strip()
    iterations = env.get("AGENT_MAX_ITERATIONS") or agent.get("maxIterations")
    a2a: object = config.get("a2a") or {}
    a2a = cast("dict[str, Any]", a2a) if isinstance(a2a, dict) else {}
    tools: object = config.get("tools") or {}
    required = (
        tuple(
            str(name)
            for name, spec in cast("dict[str, Any]", tools).items()
            if isinstance(spec, dict) and cast("dict[str, Any]", spec).get("required") is True
        )
        if isinstance(tools, dict)
        else ()
    )
    memory: object = config.get("memory") or {}
    memory = cast("dict[str, Any]", memory) if isinstance(memory, dict) else {}
    memory_tool = memory.get("name")
    scope = env.get("AGENT_MEMORY_SCOPE") or str(memory.get("scope") or "conversation")
    if scope not in ("conversation", "shared"):
        raise SettingsError(
            f"memory scope {scope!r} (AGENT_MEMORY_SCOPE or config.yaml memory.scope): "
            "expected conversation or shared"
        )
    return RuntimeSettings(
        model_endpoint=endpoint.rstrip("/"),
        model=model,
        api_key=env.get("MODEL_API_KEY") or None,
        system_prompt=prompt,
        max_iterations=int(
            _number(
                {"AGENT_MAX_ITERATIONS": str(iterations or "")},
                "AGENT_MAX_ITERATIONS",
                DEFAULT_MAX_ITERATIONS,
            )
        ),
        history_messages=int(_number(env, "AGENT_HISTORY_MESSAGES", DEFAULT_HISTORY_MESSAGES, 2)),
        history_bytes=int(_number(env, "AGENT_HISTORY_BYTES", DEFAULT_HISTORY_BYTES, 1024)),
        max_request_bytes=int(
            _number(env, "A2A_MAX_REQUEST_BYTES", DEFAULT_MAX_REQUEST_BYTES, 1024)
        ),
        tool_timeout=_number(env, "AGENT_TOOL_TIMEOUT_SECONDS", 30.0, 0.001),
        model_timeout=_number(env, "AGENT_TIMEOUT_SECONDS", 120.0, 0.001),
        model_retries=int(_number(env, "AGENT_MODEL_RETRIES", 3, 0)),
        turn_timeout=_number(env, "AGENT_TURN_TIMEOUT_SECONDS", 600.0, 0.001),
        tool_concurrency=int(_number(env, "AGENT_TOOL_CONCURRENCY", 4)),
        port=int(_number(env, "A2A_PORT", float(a2a.get("port") or 8080))),
        health_port=int(_number(env, "A2A_HEALTH_PORT", DEFAULT_HEALTH_PORT)),
        path="/" + (env.get("A2A_PATH") or str(a2a.get("path") or "/")).lstrip("/"),
        card_path=container_path(
            env.get("A2A_AGENT_CARD") or str(a2a.get("cardPath") or DEFAULT_CARD), env
        ),
        config_path=config_path,
        mode=env.get("AGENT_MODE", "serve") or "serve",
        input=env.get("AGENT_INPUT", ""),
        memory_tool=str(memory_tool) if memory_tool else None,
        memory_shared=scope == "shared",
        memory_headers=prefixed_headers(env, "AGENT_MEMORY_HEADER_"),
        required_tools=required,
        require_approval=_approvals(config.get("tools")),
        peers=load_peers(env),
        peer_timeout=_number(env, "A2A_PEER_TIMEOUT_SECONDS", 120.0, 0.001),
        max_hops=int(_number(env, "A2A_MAX_HOPS", 3, 0)),
        agent_name=env.get("AGENT_NAME", "agent"),
        config=config,
    )
