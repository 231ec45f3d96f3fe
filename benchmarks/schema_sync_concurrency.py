"""Concurrent schema sync: N slow MCP servers synced at once, as ``langop-infra schemas`` does.

Target (issue 8): 50 servers that each answer after 200 ms are synced in at most 1 s, i.e.
concurrently rather than one after another.

A uvicorn server per port would make the benchmark mostly about starting servers, so this
starts ONE stand-in ASGI app (not the official SDK) on one port, in a child process, that
answers every JSON-RPC request after the delay; each of N distinct paths
(``/tool-<i>/mcp``) counts as one tool server. A sync is ``initialize`` + ``tools/list`` (the
``notifications/initialized`` in between is answered at once), so one sync alone takes at
least 2 x delay. The timed call is ``langop_infra.sync._lock.sync_all``, the function the
command uses; rendering the stack is not included (see the render benchmark). One warm-up sync
first keeps one-off imports out of the figure.

    python benchmarks/schema_sync_concurrency.py            # 50 servers, 5 repetitions
    python benchmarks/schema_sync_concurrency.py --quick    # 10 servers, 1 repetition, for CI
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_SECONDS = 1.0
DELAY = 0.2
REQUESTS_PER_SYNC = 2  # initialize and tools/list


def stand_in_app(delay: float) -> Any:
    """The ASGI app: every path is an MCP endpoint whose tool is named after the path."""

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body or b"{}")
        if "id" not in request:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await asyncio.sleep(delay)
        name = scope["path"].strip("/").split("/")[0] or "root"
        if request.get("method") == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": name, "version": "0"},
            }
        else:
            schema = {"type": "object", "properties": {"query": {"type": "string"}}}
            result = {"tools": [{"name": f"{name}-lookup", "inputSchema": schema}]}
        payload = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    return app


def serve(delay: float) -> None:
    """Child-process mode: serve the stand-in and print its port once it listens."""
    import uvicorn

    config = uvicorn.Config(
        stand_in_app(delay),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        backlog=1024,
        timeout_keep_alive=30,
    )
    server = uvicorn.Server(config)

    async def run() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"PORT {server.servers[0].sockets[0].getsockname()[1]}", flush=True)
        await task

    asyncio.run(run())


def measure(base: str, servers: int, repetitions: int) -> list[float]:
    """Wall time of each repetition of syncing ``servers`` tools at once."""
    from langop_infra.sync._lock import SyncTarget, sync_all

    targets = [SyncTarget(f"tool-{i}", f"{base}/tool-{i}/mcp") for i in range(servers)]
    warmup = sync_all(targets[:1], deadline=10)
    if not all(r.ok for r in warmup.values()):
        raise SystemExit(f"warm-up sync failed: {warmup}")
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        results = sync_all(targets, deadline=10)
        times.append(time.perf_counter() - start)
        failed = {name: r.error for name, r in results.items() if not r.ok}
        if failed or len(results) != servers:
            raise SystemExit(f"sync failed: {failed}")
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 servers, 1 repetition")
    parser.add_argument("--servers", type=int, help="how many tool servers (default 50)")
    parser.add_argument("--repetitions", type=int, help="timed runs (default 5)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the target is missed")
    parser.add_argument("--serve", type=float, metavar="DELAY", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve(args.serve)
        return 0
    servers = args.servers or (10 if args.quick else 50)
    repetitions = args.repetitions or (1 if args.quick else 5)

    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(DELAY)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("PORT "):
            raise SystemExit(f"stand-in server did not start: {line!r}")
        times = measure(f"http://127.0.0.1:{line.split()[1]}", servers, repetitions)
    finally:
        child.terminate()
        child.wait(timeout=10)

    wall = statistics.median(times)
    serial = servers * REQUESTS_PER_SYNC * DELAY
    met = wall <= TARGET_SECONDS
    rows = [
        ("servers", str(servers)),
        ("delay per request", f"{DELAY * 1000:.0f} ms ({REQUESTS_PER_SYNC} requests per sync)"),
        ("one after another would take", f"{serial:.1f} s"),
        ("repetitions", str(repetitions)),
        ("wall time (median)", f"{wall:.3f} s"),
        ("wall time (min / max)", f"{min(times):.3f} / {max(times):.3f} s"),
        ("target", f"<= {TARGET_SECONDS:g} s"),
        ("met?", "yes" if met else "NO"),
    ]
    width = max(len(k) for k, _ in rows)
    print("schema sync concurrency (langop_infra.schema_lock.sync_all)")
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
