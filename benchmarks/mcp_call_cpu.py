"""CPU per ``call_tool``: langop-infra's MCP client against the official SDK's ClientSession.

Both sessions stay open in this process against one official-SDK tool server (the one
``agent_turn.py`` uses, in a child process whose CPU is not counted), and call its one tool in
alternating blocks (rounds alternate which goes first); each block is timed with
``time.process_time()``, and the ratio is the median of the blocks' ratios. What the agent
runtime's tool call costs on our client against the least it could cost (issue 50 §6).

    python benchmarks/mcp_call_cpu.py             # 20 rounds of 100 calls a side
    python benchmarks/mcp_call_cpu.py --quick     # 2 rounds of 10 calls
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import _common
import agent_turn

FULL, QUICK = (20, 100), (2, 10)
ARGUMENTS = {"city": "Lyon"}
EXPECTED = "Lyon: 522250"

Call = Callable[[], Awaitable[None]]


async def _per_call(call: Call, calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        await call()
    return (time.process_time() - started) / calls


async def measure(url: str, rounds: int, calls: int) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from langop_infra.mcp import Session

    async with (
        Session(url) as ours,
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as sdk,
    ):
        await sdk.initialize()

        async def ours_call() -> None:
            result = await ours.call_tool("population", ARGUMENTS)
            if EXPECTED not in str(result):
                raise RuntimeError(f"ours answered {result!r}")

        async def sdk_call() -> None:
            result = await sdk.call_tool("population", ARGUMENTS)
            if EXPECTED not in getattr(result.content[0], "text", ""):
                raise RuntimeError(f"the SDK answered {result!r}")

        sides: dict[str, Call] = {"ours": ours_call, "sdk": sdk_call}
        for call in sides.values():
            await _per_call(call, max(1, calls // 2))  # warm-up
        per_round: list[dict[str, float]] = []
        for n in range(rounds):
            order = list(sides) if n % 2 == 0 else list(reversed(sides))
            per_round.append({name: await _per_call(sides[name], calls) for name in order})
    ratios = [r["ours"] / r["sdk"] for r in per_round]
    return {
        "rounds": rounds,
        "calls_per_round": calls,
        "us_per_call": {name: _common.median([r[name] for r in per_round]) * 1e6 for name in sides},
        "ratios": [round(x, 3) for x in ratios],
        "ratio_cpu": _common.median(ratios),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds of 10 calls")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rounds, calls = QUICK if args.quick else FULL
    with agent_turn.child("--tool-child") as (_, port):
        data = asyncio.run(measure(f"http://127.0.0.1:{port}/mcp", rounds, calls))
    _common.print_machine()
    rows = [[name, round(us)] for name, us in data["us_per_call"].items()]
    _common.print_table(["client", "CPU us/call (median)"], rows)
    print(
        f"ratio CPU ours/sdk, median of {rounds} rounds of {calls} calls a side: "
        f"{data['ratio_cpu']:.3f} (per round: {', '.join(map(str, data['ratios']))})"
    )
    _common.write_json(args.json, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
