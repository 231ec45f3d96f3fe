"""initialize + tools/list latency: langop-infra's MCP client against the official MCP SDK client.

Starts one official-SDK streamable HTTP server (stateful, SSE responses: the SDK's default)
in a child process on loopback, then times a fresh session doing initialize + tools/list +
close with each client, alternating, and prints medians and the ratio ours/official.

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

TARGET_RATIO = 0.7
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


async def ours(url: str) -> int:
    from langop_infra.mcp import Session

    async with Session(url) as session:
        return len(await session.list_tools())


async def official(url: str) -> int:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return len((await session.list_tools()).tools)


async def official_cached_tls(url: str) -> int:
    """The SDK client given a fresh HTTP client per session, but a TLS context built once.

    Building a TLS context (loading CA certificates) is a large part of a plain-HTTP
    session's cost for the SDK; ours caches it. This row shows the gap without that.
    """
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    async with (
        httpx2.AsyncClient(timeout=timeout, verify=_shared_tls_context()) as http_client,
        streamable_http_client(url, http_client=http_client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return len((await session.list_tools()).tools)


@functools.lru_cache(maxsize=1)
def _shared_tls_context() -> ssl.SSLContext:
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


async def measure(url: str, runs: int, warmup: int) -> dict[str, list[float]]:
    clients: dict[str, Callable[[str], Awaitable[int]]] = {
        "langop-infra": ours,
        "official mcp SDK": official,
        "official, TLS cached": official_cached_tls,
    }
    timings: dict[str, list[float]] = {name: [] for name in clients}
    for index in range(warmup + runs):
        for name, client in clients.items():
            started = time.perf_counter()
            count = await client(url)
            elapsed = time.perf_counter() - started
            if count != TOOL_COUNT:
                raise SystemExit(f"{name} listed {count} tools, expected {TOOL_COUNT}")
            if index >= warmup:
                timings[name].append(elapsed)
    return timings


def report(timings: dict[str, list[float]]) -> dict[str, Any]:
    """Print the table and the ratios; return the same figures for ``--json``."""
    figures: dict[str, Any] = {"target_ratio": TARGET_RATIO, "clients": {}}
    print(f"{'client':<22} {'runs':>5} {'median ms':>10} {'p90 ms':>8} {'min ms':>8}")
    for name, values in timings.items():
        ordered = sorted(values)
        row = {
            "runs": len(values),
            "median_ms": statistics.median(values) * 1000,
            "p90_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))] * 1000,
            "min_ms": ordered[0] * 1000,
        }
        figures["clients"][name] = row
        print(
            f"{name:<22} {row['runs']:>5} {row['median_ms']:>10.2f} "
            f"{row['p90_ms']:>8.2f} {row['min_ms']:>8.2f}"
        )
    ours_median = statistics.median(timings["langop-infra"])
    ratio = ours_median / statistics.median(timings["official mcp SDK"])
    verdict = "ok" if ratio <= TARGET_RATIO else "ABOVE TARGET"
    print(f"ratio ours/official: {ratio:.2f} (target <= {TARGET_RATIO}: {verdict})")
    cached = ours_median / statistics.median(timings["official, TLS cached"])
    print(f"ratio ours/official with its TLS context cached (for reference): {cached:.2f}")
    figures.update(ratio=ratio, ratio_tls_cached=cached)
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


if __name__ == "__main__":
    sys.exit(main())
