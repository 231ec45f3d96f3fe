"""CPU per one-tool A2A turn: the built-in runtime against the least an agent can do.

Each side is its own server process, asked the same question over A2A ``message/send``
(JSON-RPC, A2A 0.3's shape, which both accept), against the same scripted model and the same
official-SDK MCP tool server, each of those in a process of its own (their CPU is not
counted). A turn is two model calls and one tool call.

- ``ours``: ``python -m langop_infra.agent serve``, as its image runs it (open access, no
  tracing endpoint), its tool server in config.yaml; it answers with a Task whose artifact
  is the answer, after a ``working`` status per tool call.
- ``baseline`` (``--baseline-child``): one file, a2a-sdk's request handler and JSON-RPC
  routes, an executor that calls the model with httpx and the tool with the official
  ``mcp`` client's ``ClientSession`` (one kept open, as ours keeps its), and answers with a
  Message. No task lifecycle, retries, limits, metrics or approval. a2a-sdk as installed
  traces its own calls (no-op spans: ``mcp`` needs ``opentelemetry-api``), which ours turns
  off when nothing exports spans; ``--quiet-baseline`` turns them off in the baseline too.
  ``--task-baseline`` has the baseline answer as issue 50 §2 asks an agent to, with the
  fewest of a2a-sdk's own calls that do it: a Task, ``submitted`` then ``working`` (a status
  per tool call, as a stream shows), the answer as the artifact ``answer``, ``completed``.

Each round starts both servers afresh; each side answers ``--turns`` turns, the two sides'
turns interleaved one by one (rounds alternate which side goes first), after a warm-up; each
side is measured by its process's user + system CPU over the round (``/proc/<pid>/stat``, so
Linux only), and the ratio is the median of the per-round ratios. Both measured servers
are pinned to the same one CPU (the last this process may use; ``--no-pin`` leaves them to
the scheduler), so a busy or idle core, or a migration between cores, weighs on both sides
alike. Target (issue 50 §6): at most 1.0.

    python benchmarks/agent_turn.py              # 10 rounds of 150 turns a side
    python benchmarks/agent_turn.py --quick      # 1 round of 10 turns
    python benchmarks/agent_turn.py --quiet-baseline  # a2a-sdk's spans off on both sides
    python benchmarks/agent_turn.py --quiet-baseline --task-baseline  # both answer with a Task
    python benchmarks/agent_turn.py --against DIR  # this runtime against DIR's: a change's cost
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import _common

TARGET = 1.0
QUESTION = "How many people live in Lyon?"
ANSWER = "Lyon has 522250 people."
TASK_BASELINE_ENV = "AGENT_TURN_TASK_BASELINE"  # the baseline child answers with a Task when "1"
FULL = (10, 150, 20)  # rounds, turns per side and round, warm-up turns
QUICK = (1, 10, 2)


def _listening() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def _serve_app(app: Any) -> None:
    """Serve ``app`` on a loopback socket; print its port once the socket listens."""
    import uvicorn

    sock = _listening()
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    asyncio.run(server.serve(sockets=[sock]))


def model_child() -> None:
    """The scripted model: a tool call to the first tool offered, then the answer."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        last = body["messages"][-1]
        if last["role"] == "tool":
            message: dict[str, Any] = {"role": "assistant", "content": ANSWER}
        else:
            name = body["tools"][0]["function"]["name"]
            call = {"name": name, "arguments": json.dumps({"city": "Lyon"})}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": call}],
            }
        return JSONResponse(
            {
                "id": "r",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        )

    _serve_app(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])]))


def tool_child() -> None:
    """One tool on the official ``mcp`` SDK's server (streamable HTTP at ``/mcp``)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("geo", version="1.0.0", log_level="WARNING")

    def population(city: str) -> str:
        return f"{city}: 522250"

    server.add_tool(population, name="population", description="Population of a city.")
    _serve_app(server.streamable_http_app())


def baseline_child(model_url: str, tool_url: str) -> None:
    """The least an agent can do (module docstring): a2a-sdk's routes, httpx, ``mcp``."""
    from contextlib import asynccontextmanager

    import httpx
    from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from starlette.applications import Starlette

    held: dict[str, Any] = {}
    as_task = os.environ.get(TASK_BASELINE_ENV) == "1"

    class Loop(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            http, session, tools = held["http"], held["session"], held["tools"]
            updater = None
            if as_task and context.message is not None:
                task = new_task_from_user_message(context.message)
                await event_queue.enqueue_event(task)
                updater = TaskUpdater(event_queue, task.id, task.context_id)
                await updater.start_work()
            messages: list[dict[str, Any]] = [{"role": "user", "content": context.get_user_input()}]
            for _ in range(5):
                sent = {"model": "m", "messages": messages, "tools": tools}
                answered = await http.post(f"{model_url}/chat/completions", json=sent)
                reply = answered.json()["choices"][0]["message"]
                messages.append(reply)
                if not reply.get("tool_calls"):
                    break
                for call in reply["tool_calls"]:
                    arguments = json.loads(call["function"]["arguments"])
                    if updater is not None:
                        said = updater.new_agent_message([new_text_part(call["function"]["name"])])
                        await updater.update_status(TaskState.TASK_STATE_WORKING, message=said)
                    result = await session.call_tool(call["function"]["name"], arguments)
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
            text = messages[-1]["content"] or ""
            if updater is not None:
                await updater.add_artifact([new_text_part(text)], name="answer")
                await updater.complete()
                return
            await event_queue.enqueue_event(new_text_message(text, context_id=context.context_id))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    @asynccontextmanager
    async def lifespan(_app: object) -> Any:
        async with (
            httpx.AsyncClient(timeout=60) as http,
            streamable_http_client(tool_url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = (await session.list_tools()).tools
            held.update(http=http, session=session)
            held["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description or "",
                        "parameters": t.input_schema,
                    },
                }
                for t in listed
            ]
            yield

    sock = _listening()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    card = AgentCard(
        name="baseline",
        description="The least an agent can do",
        version="1",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="a", name="Answer", description="Answers", tags=["a"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Loop(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
    ]
    import uvicorn

    app = Starlette(routes=routes, lifespan=lifespan)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))

    async def run() -> None:
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:  # the lifespan (the MCP session) runs before this
            await asyncio.sleep(0.01)
        print(f"PORT {sock.getsockname()[1]}", flush=True)
        await serving

    asyncio.run(run())


@contextmanager
def child(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[int, int]]:
    """This script in a mode of its own; yields (pid, port) once it printed its port."""
    process = subprocess.Popen(
        [sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"{args[0]} did not start")
        yield process.pid, int(line.split()[1])
    finally:
        process.terminate()
        process.wait(30)


@contextmanager
def ours(model_url: str, tool_url: str, source: Path = _common.REPO) -> Iterator[tuple[int, int]]:
    """The built-in runtime (``source``'s) as its image runs it; yields (pid, port) once it
    serves."""
    root = Path(tempfile.mkdtemp(prefix="agent-turn-"))
    config = root / "etc" / "agent" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"tools": {"geo": {"endpoint": tool_url, "protocol": "mcp"}}}))
    port, health = (_free_port() for _ in range(2))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(source),
        "LANGOP_PATH_ROOT": str(root),
        "MODEL_ENDPOINT": model_url,
        "LLM_MODEL": "m",
        "AGENT_NAME": "ours",
        "A2A_HOST": "127.0.0.1",
        "A2A_PORT": str(port),
        "A2A_HEALTH_PORT": str(health),
        "A2A_ACCESS": "open",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "langop_infra.agent", "serve"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root,  # the runtime is imported from ``source`` alone
    )
    try:
        _wait_for(process, ["serving A2A at", "tool server geo connected"])
        yield process.pid, port
    finally:
        process.terminate()
        process.wait(30)


def _wait_for(process: subprocess.Popen[str], lines: list[str]) -> None:
    """Until the process wrote each of ``lines`` on stderr (then drain it in a thread)."""
    assert process.stderr is not None
    waiting = list(lines)
    for line in process.stderr:
        waiting = [w for w in waiting if w not in line]
        if not waiting:
            break
    if waiting:
        raise RuntimeError(f"the runtime never wrote {waiting}")
    stream = process.stderr
    threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pin(pids: list[int], cpu: int) -> None:
    """Every thread of each process in ``pids`` on ``cpu`` only (threads started later
    inherit it)."""
    for pid in pids:
        for thread in Path(f"/proc/{pid}/task").iterdir():
            os.sched_setaffinity(int(thread.name), {cpu})


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ask(http: Any, port: int, n: int) -> str:
    """One turn over A2A ``message/send``; the answer's text (a Task's artifact or a
    Message)."""
    message = {"role": "user", "messageId": f"m-{n}", "parts": [{"kind": "text", "text": QUESTION}]}
    body = {"jsonrpc": "2.0", "id": n, "method": "message/send", "params": {"message": message}}
    result = http.post(f"http://127.0.0.1:{port}/", json=body).json()["result"]
    parts = result["artifacts"][0]["parts"] if result["kind"] == "task" else result["parts"]
    return parts[0]["text"]


def block(
    http: Any, sides: dict[str, tuple[int, int]], order: list[str], turns: int
) -> dict[str, tuple[float, float]]:
    """CPU and wall seconds per turn of each side over ``turns`` turns each, the sides'
    turns interleaved one by one in ``order`` (a change in the machine's load falls on both
    alike). Each side's CPU is its whole process's, read before and after the block: its
    work between turns counts too."""
    cpu = {name: cpu_seconds(pid) for name, (pid, _) in sides.items()}
    wall = dict.fromkeys(sides, 0.0)
    for n in range(turns):
        for name in order:
            started = time.perf_counter()
            answer = ask(http, sides[name][1], n)
            wall[name] += time.perf_counter() - started
            if answer != ANSWER:
                raise RuntimeError(f"{name} answered {answer!r}, not {ANSWER!r}")
    return {
        name: ((cpu_seconds(sides[name][0]) - cpu[name]) / turns, wall[name] / turns)
        for name in order
    }


def measure(
    rounds: int,
    turns: int,
    warmup: int,
    quiet_baseline: bool = False,
    pinned: bool = True,
    task_baseline: bool = False,
    against: Path | None = None,
) -> dict[str, Any]:
    import httpx

    baseline_env = {**os.environ, TASK_BASELINE_ENV: "1" if task_baseline else "0"}
    if quiet_baseline:
        baseline_env["OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"] = "false"
    cpu = max(os.sched_getaffinity(0)) if pinned else None
    with ExitStack() as stack:
        _, model_port = stack.enter_context(child("--model-child"))
        _, tool_port = stack.enter_context(child("--tool-child"))
        urls = (f"http://127.0.0.1:{model_port}/v1", f"http://127.0.0.1:{tool_port}/mcp")
        http = stack.enter_context(httpx.Client(timeout=60))
        per_round: list[dict[str, tuple[float, float]]] = []
        for r in range(rounds):
            # Fresh servers each round: what one process draws (its hash seed, its memory
            # layout) weighs on one round, not on the whole run.
            with ExitStack() as servers:
                baseline = (
                    ours(*urls, source=against)
                    if against is not None
                    else child("--baseline-child", *urls, env=baseline_env)
                )
                sides = {
                    "ours": servers.enter_context(ours(*urls)),
                    "baseline": servers.enter_context(baseline),
                }
                if cpu is not None:
                    pin([pid for pid, _ in sides.values()], cpu)
                block(http, sides, list(sides), warmup)
                order = list(sides) if r % 2 == 0 else list(reversed(sides))
                per_round.append(block(http, sides, order, turns))
    return {
        **report(per_round, turns),
        "quiet_baseline": quiet_baseline,
        "task_baseline": task_baseline,
        "against": str(against) if against is not None else None,
        "pinned_cpu": cpu,
    }


def report(per_round: list[dict[str, tuple[float, float]]], turns: int) -> dict[str, Any]:
    ratios = [r["ours"][0] / r["baseline"][0] for r in per_round]
    sides = {
        name: {
            "cpu_ms_per_turn": _common.median([r[name][0] for r in per_round]) * 1000,
            "wall_ms_per_turn": _common.median([r[name][1] for r in per_round]) * 1000,
        }
        for name in ("ours", "baseline")
    }
    ratio = _common.median(ratios)
    return {
        "turns_per_round": turns,
        "rounds": len(per_round),
        "sides": sides,
        "ratios": [round(x, 3) for x in ratios],
        "ratio_cpu": ratio,
        "target": TARGET,
        "met": ratio <= TARGET,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round of 10 turns")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--turns", type=int)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--quiet-baseline", action="store_true", help="a2a-sdk's own spans off in the baseline too"
    )
    parser.add_argument(
        "--task-baseline", action="store_true", help="the baseline answers with a Task too"
    )
    parser.add_argument(
        "--no-pin", action="store_true", help="leave the measured servers on any CPU"
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="the baseline is the runtime of another source tree (its langop_infra's parent: "
        "e.g. `git archive COMMIT langop_infra | tar -x -C DIR`), to measure a change",
    )
    parser.add_argument("--model-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tool-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--baseline-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.model_child:
        model_child()
        return 0
    if args.tool_child:
        tool_child()
        return 0
    if args.baseline_child:
        baseline_child(*args.baseline_child)
        return 0
    rounds, turns, warmup = QUICK if args.quick else FULL
    data = measure(
        args.rounds or rounds,
        args.turns or turns,
        warmup,
        args.quiet_baseline,
        not args.no_pin,
        args.task_baseline,
        args.against.resolve() if args.against else None,
    )
    _common.print_machine()
    if args.against is not None:
        print(f"baseline: the runtime of {args.against}; ours: the runtime of {_common.REPO}")
    else:
        spans = "off" if args.quiet_baseline else "on (a2a-sdk's default)"
        print(f"baseline: a2a-sdk's own spans {spans}; ours: off (nothing exports spans)")
        answers = "a Task (submitted, working per tool call, artifact, completed)"
        print(f"baseline answers with: {answers if args.task_baseline else 'a Message'}")
    where = "any CPU" if data["pinned_cpu"] is None else f"both on CPU {data['pinned_cpu']}"
    print(f"measured servers: {where}")
    rows = [
        [name, side["cpu_ms_per_turn"], side["wall_ms_per_turn"]]
        for name, side in data["sides"].items()
    ]
    _common.print_table(["side", "CPU ms/turn (median)", "wall ms/turn (median)"], rows)
    print(
        f"ratio CPU ours/baseline, median of {data['rounds']} rounds of "
        f"{data['turns_per_round']} interleaved turns a side: {data['ratio_cpu']:.3f} (per round: "
        f"{', '.join(map(str, data['ratios']))}); target <= {TARGET}: "
        f"{_common.met(data['ratio_cpu'], TARGET)}"
    )
    _common.write_json(args.json, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
