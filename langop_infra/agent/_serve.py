"""``python -m langop_infra.agent serve``: the built-in agent (``agents[].runtime: builtin``).

Reads its settings (:mod:`langop_infra.agent._settings`), connects its tools, and then:

- serves A2A, ``/healthz``, ``/readyz`` and ``/metrics`` on ``A2A_PORT`` (the default), or
- with ``AGENT_MODE=scheduled``, runs one turn on ``AGENT_INPUT``, writes each step and then
  the answer as JSON lines to stdout, and exits 0 (1 when the turn failed).

Logs go to stderr. A setting it cannot start with exits 2 with the problem named.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import socket
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from langop_infra._errors import LangopError
from langop_infra.agent._a2a_client import PeerClient
from langop_infra.agent._inbound_auth import Callers, load_callers
from langop_infra.agent._loop import AgentLoop, Tools, TurnOutcome
from langop_infra.agent._memory import Memory
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.agent._peer_tools import PeerTools
from langop_infra.agent._registry import ToolRegistry, connect_tool_registry
from langop_infra.agent._result_scrub import url_credentials
from langop_infra.agent._settings import RuntimeSettings, SettingsError, load_settings
from langop_infra.agent._tracing import configure_tracing, runtime_tracer
from langop_infra.agent.runtime import AgentServers, ServerEntry, load_agent_servers
from langop_infra.core._log_scrub import log_level, scrubbed_logging, watch
from langop_infra.core._redact import Scrubber

__all__ = ["Runtime", "main", "run_scheduled", "start_runtime"]

logger = logging.getLogger("langop_infra.agent")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@dataclass
class Runtime:
    """A started runtime: its settings, tools, model, loop and metrics."""

    settings: RuntimeSettings
    registry: ToolRegistry
    model: ChatModel
    loop: AgentLoop
    metrics: RuntimeMetrics
    peers: PeerClient | None = None
    background: list[asyncio.Task[None]] = field(default_factory=list[asyncio.Task[None]])
    tracing: Any = None  # the OTLP-exporting tracer provider, when configured

    def not_ready(self) -> list[str]:
        """Each required tool that is not connected or is wedged (``/readyz`` is ready when
        empty); one that failed is connected again, one wedged asked again, in the
        background, so the probe that asks next finds it once the tool is up."""
        states = {status.name: status.state for status in self.registry.servers()}
        wedged = set(self.registry.wedged())
        required = self.settings.required_tools
        missing = [n for n in required if states.get(n) != "connected" or n in wedged]
        for name in missing:
            if states.get(name) == "failed":
                self.registry.start(name)
            elif name in wedged:  # does it answer tools/list again?
                self.registry.stalls.probe(name, self.registry.sessions[name].list_tools)
        return missing

    async def aclose(self) -> None:
        for task in self.background:
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)
        await self.registry.aclose()
        await self.model.aclose()
        if self.peers is not None:
            await self.peers.aclose()
        if self.tracing is not None:
            self.tracing.shutdown()  # exports what is left


def runtime_credentials(settings: RuntimeSettings, env: Mapping[str, str]) -> list[object]:
    """What the runtime itself sends (the model key, memory and peer headers) and the
    credentials of a memory address (often held in a Secret): logs and answers mask them."""
    memory = env.get("AGENT_MEMORY_ENDPOINT", "")
    return [
        settings.api_key or "",
        dict(settings.memory_headers),
        [dict(peer.headers) for peer in settings.peers],
        url_credentials(memory),
    ]


def agent_servers(settings: RuntimeSettings, env: Mapping[str, str]) -> AgentServers:
    """The agent's tool servers; an external memory (``AGENT_MEMORY_ENDPOINT``) joins them."""
    config = settings.config if settings.config_path.is_file() else None
    servers = load_agent_servers(config, env=env)
    endpoint = env.get("AGENT_MEMORY_ENDPOINT")
    name = settings.memory_tool or "memory"
    if endpoint and name not in {s.name for s in servers.servers}:
        servers.servers.append(
            ServerEntry(
                name, endpoint, dict(settings.memory_headers), source="AGENT_MEMORY_ENDPOINT"
            )
        )
    for failure in servers.failures:
        logger.warning("tool server unusable: %s", failure)
    for warning in servers.warnings:
        logger.warning("%s", warning)
    return servers


async def start_runtime(env: Mapping[str, str], *, wait: bool = False) -> Runtime:
    """Read the settings, connect the tools (in the background unless ``wait``)."""
    settings = load_settings(env)
    metrics = RuntimeMetrics()
    known = watch(Scrubber(runtime_credentials(settings, env)))
    tracing = configure_tracing(env)
    servers = agent_servers(settings, env)
    registry = await connect_tool_registry(servers, wait="all" if wait else "none")
    watch(registry.scrubber)
    model = ChatModel(
        settings.model_endpoint,
        settings.model,
        settings.api_key,
        settings.model_timeout,
        metrics,
        scrubber=known,
        max_retries=settings.model_retries,
    )
    memory = None
    if settings.memory_tool or env.get("AGENT_MEMORY_ENDPOINT"):
        prefix = settings.memory_tool or "memory"
        remember, recall = f"{prefix}__remember", f"{prefix}__recall"
        memory = Memory(registry, remember, recall, shared=settings.memory_shared)
    peers, tools, background = _with_peers(settings, registry)
    if wait and background:
        await asyncio.gather(*background)
    loop = AgentLoop(
        model,
        tools,
        metrics,
        system_prompt=settings.system_prompt,
        max_iterations=settings.max_iterations,
        history_messages=settings.history_messages,
        history_bytes=settings.history_bytes,
        tool_timeout=settings.tool_timeout,
        memory=memory,
        tool_timeouts=tools.timeouts if isinstance(tools, PeerTools) else None,
        turn_timeout=settings.turn_timeout,
        tool_concurrency=settings.tool_concurrency,
        agent_name=settings.agent_name,
        require_approval=settings.require_approval,
        tracer=runtime_tracer(env),
    )
    return Runtime(settings, registry, model, loop, metrics, peers, background, tracing)


def _with_peers(
    settings: RuntimeSettings, registry: ToolRegistry
) -> tuple[PeerClient | None, Tools, list[asyncio.Task[None]]]:
    """The loop's tools: the registry's, and one per A2A peer (whose cards are read in the
    background, for the tools' descriptions)."""
    if not settings.peers:
        return None, registry, []
    client = PeerClient(settings.peers, timeout=settings.peer_timeout)
    tools = PeerTools(registry, client, settings.max_hops)
    return client, tools, [asyncio.get_running_loop().create_task(tools.read_cards())]


def json_lines(outcome: TurnOutcome, out: TextIO) -> None:
    """Each step, then the answer, one JSON object a line."""
    for step in outcome.steps:
        out.write(json.dumps({"type": "step", **step.to_dict()}, default=str) + "\n")
    out.write(json.dumps({"type": "answer", **outcome.to_dict()}, default=str) + "\n")
    out.flush()


async def run_scheduled(env: Mapping[str, str], out: TextIO) -> int:
    """One turn on ``AGENT_INPUT``; 0 when it answered, 1 when it failed."""
    runtime = await start_runtime(env, wait=True)
    try:
        if not runtime.settings.input.strip():
            out.write(
                json.dumps(
                    {
                        "type": "answer",
                        "answer": "",
                        "error": "AGENT_MODE=scheduled needs AGENT_INPUT (the prompt)",
                    }
                )
                + "\n"
            )
            return 1
        outcome = await runtime.loop.run(runtime.settings.input)
        json_lines(outcome, out)
        return 0 if outcome.ok else 1
    finally:
        await runtime.aclose()


def serve_forever(env: Mapping[str, str]) -> None:
    """Serve A2A on ``A2A_PORT`` (callers authenticated unless ``A2A_ACCESS=open``) and the
    probes and metrics on ``A2A_HEALTH_PORT`` until stopped. Once both sockets listen and
    the runtime has started, one line says so on stderr (``serving A2A at
    http://host:port/path``): what a supervisor or a test waits for."""
    from langop_infra.agent._a2a_server import a2a_routes, read_card, service_routes

    settings = load_settings(env)
    callers = _callers(env)
    card = read_card(settings.card_path) if settings.card_path.is_file() else None
    if card is None:
        logger.warning("no agent card at %s: serving a minimal one", settings.card_path)
    holder: dict[str, Runtime] = {}
    host = env.get("A2A_HOST", "0.0.0.0")
    # Both ports bound before anything starts: a port in use exits 2 at once, never after
    # the "serving A2A at" line a supervisor waits for.
    listening = {port: _listen(host, port) for port in {settings.port, settings.health_port}}

    @asynccontextmanager
    async def lifespan(_app: object) -> AsyncGenerator[None]:
        holder["runtime"] = await start_runtime(env)
        freeze_startup_heap()
        shown = f"[{host}]" if ":" in host else host
        logger.info("serving A2A at http://%s:%d%s", shown, settings.port, settings.path)
        try:
            yield
        finally:
            await holder["runtime"].aclose()
            if callers.verifier is not None:
                await callers.verifier.aclose()

    idle = RuntimeMetrics()  # what /metrics shows before the runtime has started
    service = service_routes(
        lambda: holder["runtime"].metrics if "runtime" in holder else idle,
        lambda: holder["runtime"].not_ready() if "runtime" in holder else ["the runtime"],
    )
    a2a = a2a_routes(card, settings.path, lambda: holder["runtime"].loop, settings.agent_name)
    apps = _apps(settings, callers, service, a2a, lifespan)
    asyncio.run(_serve_all(apps, listening, host))


def freeze_startup_heap() -> None:
    """Keep the collector off what startup built (modules, settings, the runtime), which
    lives as long as the process: every full collection walked all of it again, about 8 %
    of a served turn's CPU (docs/performance.md). Its cyclic garbage is collected first."""
    gc.collect()
    gc.freeze()


def _callers(env: Mapping[str, str]) -> Callers:
    try:
        callers = load_callers(env)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    if not callers.open and not callers.digests and not callers.identities:
        logger.warning(
            "A2A answers authenticated callers only and no caller has a token "
            "(A2A_CALLER_<CALLER>_TOKEN) or an identity (A2A_CALLER_<CALLER>_IDENTITY): "
            "every request but the card's is refused with 401; "
            "give callers tokens, or set A2A_ACCESS=open to admit anyone who reaches the port"
        )
    return callers


def _apps(
    settings: RuntimeSettings, callers: Callers, service: Any, a2a: Any, lifespan: Any
) -> list[tuple[Any, int]]:
    """The A2A app on its port and the service app on the health port (one app when the
    two ports are one: the probes then pass the authentication as the card does)."""
    from langop_infra.agent._a2a_server import CARD_PATH, SERVICE_PATHS, build_app

    public = frozenset({("GET", CARD_PATH)})
    limit = settings.max_request_bytes
    if settings.health_port == settings.port:
        both = build_app([*service, *a2a], lifespan, limit, callers, public | SERVICE_PATHS)
        return [(both, settings.port)]
    return [
        (build_app(a2a, lifespan, limit, callers, public), settings.port),
        (build_app(service, max_request_bytes=limit), settings.health_port),
    ]


async def _serve_all(
    apps: list[tuple[Any, int]], bound: Mapping[int, socket.socket], host: str
) -> None:
    """Each app on its port (on the socket already bound for it, if any), in one event loop;
    a signal stops them all (uvicorn passes it on from one server's handler to the next)."""
    import uvicorn

    servers = [
        uvicorn.Server(
            uvicorn.Config(
                app,
                host=host,
                port=port,
                log_level="warning",
                log_config=None,  # uvicorn's records reach the root's scrubbing handler
            )
        )
        for app, port in apps
    ]
    await asyncio.gather(
        *(
            server.serve(sockets=[bound[port]] if port in bound else None)
            for server, (_, port) in zip(servers, apps, strict=True)
        )
    )


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, bound before the runtime starts: a request that
    comes early waits in the backlog instead of being refused."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind((host, port))
    listening.listen(2048)
    return listening


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m langop_infra.agent")
    parser.add_argument("command", choices=["serve"], help="run the agent (AGENT_MODE decides)")
    parser.parse_args(argv)
    env = dict(os.environ if env is None else env)
    try:
        level = log_level(env.get("LANGOP_LOG_LEVEL"), "INFO")
    except LangopError as exc:
        print(f"langop-agent: error: {exc}", file=sys.stderr)
        return 2
    with scrubbed_logging(level, LOG_FORMAT):
        return _run(env)


def _run(env: dict[str, str]) -> int:
    try:
        if env.get("AGENT_MODE") == "scheduled":
            return asyncio.run(run_scheduled(env, sys.stdout))
        serve_forever(env)
        return 0
    except SettingsError as exc:
        print(f"langop-agent: error: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"langop-agent: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
