"""Listing latency of langop-infra's MCP client against the official MCP SDK client.

Starts one official-SDK streamable HTTP server (its default: stateful, SSE responses, both
protocol eras) in a child process on loopback, then times a fresh session that negotiates,
lists the tools and closes, for both revisions: 2025-11-25 (initialize handshake; ours
pinned to it, the SDK's ClientSession) and 2026-07-28 (server/discover; ours in auto mode,
the SDK's ``Client`` in its auto mode). All six clients run in turn, alternating, each run;
it prints medians and the ratio ours/official per revision. Ours is ``fetch_tool_listing``,
what schema sync calls (it does not open the server's GET stream; the official client
does, in the 2025 era). The "TLS cached" rows give the official client an HTTP client whose
TLS context is built once, as ours caches it; over plain HTTP that context is never used
for a handshake, so the rows measure the cost of building it, not of TLS itself.

    python benchmarks/mcp_latency.py            # 60 runs per client
    python benchmarks/mcp_latency.py --quick    # 5 runs per client, for CI
    python benchmarks/mcp_latency.py --check    # exit 1 if the ratio is above the target
    python benchmarks/mcp_latency.py --json out.json   # the figures, for CI artifacts
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import ssl
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

TARGET_RATIO = 0.5
TOOL_COUNT = 12


def serve() -> None:
    """Child-process mode: run the SDK server and print its port once it listens."""
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench", version="1.0.0", log_level="WARNING")
    for index in range(TOOL_COUNT):

        def tool(query: str, limit: int = 10, tags: list[str] | None = None) -> str:
            return query

        server.add_tool(tool, name=f"tool_{index}", description=f"Benchmark tool number {index}.")
    config = uvicorn.Config(
        server.streamable_http_app(), host="127.0.0.1", port=0, log_level="warning"
    )
    http_server = uvicorn.Server(config)

    async def run() -> None:
        task = asyncio.create_task(http_server.serve())
        while not http_server.started:
            await asyncio.sleep(0.01)
        port = http_server.servers[0].sockets[0].getsockname()[1]
        print(f"PORT {port}", flush=True)
        await task

    asyncio.run(run())


async def ours_2025(url: str) -> int:
    """Ours pinned to the handshake era: initialize + tools/list + DELETE."""
    from langop_infra.mcp import ClientOptions, fetch_tool_listing

    return len((await fetch_tool_listing(url, ClientOptions(protocol="2025-11-25"))).tools)


async def ours_auto(url: str) -> int:
    """Ours as schema sync runs it: auto mode, server/discover then tools/list (2026-07-28)."""
    from langop_infra.mcp import fetch_tool_listing

    return len((await fetch_tool_listing(url)).tools)


async def official(url: str) -> int:
    """The SDK's ClientSession with the initialize handshake (2025-11-25)."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return len((await session.list_tools()).tools)


async def official_cached_tls(url: str) -> int:
    """As :func:`official`, with a fresh HTTP client per session but a TLS context built once.

    Building a TLS context (loading CA certificates) is a large part of a plain-HTTP
    session's cost for the SDK; ours caches it. This row shows the gap without that.
    """
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        _cached_tls_client() as http_client,
        streamable_http_client(url, http_client=http_client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return len((await session.list_tools()).tools)


async def official_auto(url: str) -> int:
    """The SDK's ``Client`` in its default automatic mode: discover, then tools/list."""
    from mcp import Client

    async with Client(url) as client:
        return len((await client.list_tools()).tools)


async def official_auto_cached_tls(url: str) -> int:
    """As :func:`official_auto`, with the TLS context built once."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        _cached_tls_client() as http_client,
        Client(streamable_http_client(url, http_client=http_client)) as client,
    ):
        return len((await client.list_tools()).tools)


def _cached_tls_client() -> Any:
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return httpx2.AsyncClient(timeout=timeout, verify=_shared_tls_context())


@functools.lru_cache(maxsize=1)
def _shared_tls_context() -> ssl.SSLContext:
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


# revision -> (our client, the official client, the official client with its TLS cached)
REVISIONS: dict[str, dict[str, Callable[[str], Awaitable[int]]]] = {
    "2025-11-25": {
        "ours": ours_2025,
        "official": official,
        "official, TLS cached": official_cached_tls,
    },
    "2026-07-28": {
        "ours": ours_auto,
        "official": official_auto,
        "official, TLS cached": official_auto_cached_tls,
    },
}


async def measure(url: str, runs: int, warmup: int) -> dict[str, dict[str, list[float]]]:
    """Every client of every revision in turn, ``runs`` times, after ``warmup`` rounds."""
    timings = {rev: {name: [] for name in clients} for rev, clients in REVISIONS.items()}
    for index in range(warmup + runs):
        for revision, clients in REVISIONS.items():
            for name, client in clients.items():
                started = time.perf_counter()
                count = await client(url)
                elapsed = time.perf_counter() - started
                if count != TOOL_COUNT:
                    raise SystemExit(f"{revision} {name} listed {count} tools, not {TOOL_COUNT}")
                if index >= warmup:
                    timings[revision][name].append(elapsed)
    return timings


def report(timings: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    """Print a table per revision and the ratios; return the same figures for ``--json``."""
    figures: dict[str, Any] = {"target_ratio": TARGET_RATIO, "revisions": {}}
    print(f"{'revision':<11} {'client':<22} {'runs':>5} {'median ms':>10} {'p90 ms':>8}")
    for revision, clients in timings.items():
        rows: dict[str, Any] = {}
        for name, values in clients.items():
            ordered = sorted(values)
            rows[name] = {
                "runs": len(values),
                "median_ms": statistics.median(values) * 1000,
                "p90_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))] * 1000,
            }
            print(
                f"{revision:<11} {name:<22} {rows[name]['runs']:>5} "
                f"{rows[name]['median_ms']:>10.2f} {rows[name]['p90_ms']:>8.2f}"
            )
        ratio = rows["ours"]["median_ms"] / rows["official"]["median_ms"]
        cached = rows["ours"]["median_ms"] / rows["official, TLS cached"]["median_ms"]
        figures["revisions"][revision] = {
            "clients": rows,
            "ratio": ratio,
            "ratio_tls_cached": cached,
        }
    for revision, row in figures["revisions"].items():
        verdict = "ok" if row["ratio"] <= TARGET_RATIO else "ABOVE TARGET"
        print(
            f"{revision} ratio ours/official: {row['ratio']:.2f} (target <= {TARGET_RATIO}: "
            f"{verdict}); with its TLS context cached: {row['ratio_tls_cached']:.2f}"
        )
    figures["ratio"] = max(row["ratio"] for row in figures["revisions"].values())
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 runs per client")
    parser.add_argument("--runs", type=int, default=60, help="runs per client (default 60)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the ratio misses target")
    parser.add_argument("--json", metavar="PATH", help="also write the figures to PATH as JSON")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve()
        return 0
    runs, warmup = (5, 1) if args.quick else (args.runs, 3)
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("PORT "):
            print("benchmark server did not start", file=sys.stderr)
            return 1
        url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
        print(f"server: official MCP SDK, streamable HTTP (SSE responses), {TOOL_COUNT} tools")
        print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {_machine()}")
        figures = report(asyncio.run(measure(url, runs, warmup)))
    finally:
        child.terminate()
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 1 if args.check and figures["ratio"] > TARGET_RATIO else 0


def _machine() -> str:
    import os
    import platform

    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"nproc {os.cpu_count()}, {model}, Python {platform.python_version()}"


if __name__ == "__main__":
    sys.exit(main())
