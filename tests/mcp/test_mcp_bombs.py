"""Compressed responses are capped on decoded bytes, layer by layer, as they stream.

Before: httpx decoded each compressed chunk whole, so a 1,833-byte ``gzip, gzip`` answer
drove the CLI to 2 GB and the provider host to 2.1 GB, and a gzip bomb in an error page
(documented as read up to 16 KiB) reached 291 MB. The client now reads through httpx2, which
decodes lazily in pieces of at most 1 MiB per layer; our response hook refuses what was
not asked for. The children below measure their own
peak RSS (VmHWM: Linux keeps ru_maxrss across exec, VmHWM belongs to the new image).
"""

from __future__ import annotations

import gzip
import json
import re
import resource
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest

from langop_infra.mcp import ClientOptions, fetch_tool_listing
from langop_infra.mcp._decoding import client_settings
from langop_infra.mcp._errors import HTTPStatusError, ResponseTooLarge, TransportError
from tests.support.bombs import ENCODINGS, bomb, bomb_app

RSS_LIMIT = 150 * 1024 * 1024
PIECE = 1 << 20  # httpx2's MAX_DECODE_CHUNK_SIZE: the most one decoding step yields
SMALL = 64 << 20  # a 64 MiB bomb: enough for in-process tests, quick to build
PEAK = (
    "import sys\n"
    "def peak():\n"
    "    line = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
    "    print('PEAK', line.split()[1], file=sys.stderr)\n"
)


@pytest.fixture
def served(serve_app: Any, request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    encoding, where, size = request.param
    app = bomb_app(encoding, where, size)
    with serve_app(app) as base:
        yield base + "/mcp", app


async def _decoded(encoding: str, body: bytes, chunk: int = 4096) -> list[bytes]:
    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(body), chunk):
            yield body[start : start + chunk]

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-encoding": encoding}, content=pieces())

    settings: Any = client_settings()  # what every client of ours is built with
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler), **settings)
    async with client, client.stream("GET", "http://x/") as response:
        return [piece async for piece in response.aiter_bytes()]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("encoding", "pack"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some send it
        ("gzip, gzip", lambda data: gzip.compress(gzip.compress(data))),
        ("deflate, gzip", lambda data: gzip.compress(zlib.compress(data))),
        ("identity", lambda data: data),
    ],
)
async def test_decoding_round_trips_in_bounded_pieces(encoding: str, pack: Any) -> None:
    data = bytes(range(256)) * 2000 + bytes(300_000)
    pieces = await _decoded(encoding, pack(data))
    assert b"".join(pieces) == data
    assert max(len(p) for p in pieces) <= PIECE


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("encoding", "body", "said"),
    [
        ("br", b"abc", "encoded as br, which was not asked for"),
        ("gzip", b"not gzip at all", "incorrect header check"),
        ("gzip, gzip, gzip, gzip", b"x", "compressed 4 times over"),
    ],
)
async def test_undecodable_bodies_are_errors(encoding: str, body: bytes, said: str) -> None:
    with pytest.raises(httpx2.DecodingError, match=said):
        await _decoded(encoding, body)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "served", [(e, "body", SMALL) for e in ENCODINGS], indirect=True, ids=ENCODINGS
)
async def test_a_bomb_stops_at_the_cap_and_says_what_was_sent(served: tuple[str, Any]) -> None:
    url, app = served
    options = ClientOptions(max_response_bytes=1 << 20, connect_retries=0, timeout=5)
    with pytest.raises(ResponseTooLarge) as caught:
        await fetch_tool_listing(url, options)
    message = str(caught.value)
    assert re.search(r"sent more than 1048576 bytes for (server/discover|initialize)", message)
    assert "decoded, from a compressed body (Content-Encoding: " in message
    assert app.sent["bombs"] >= 1


@pytest.mark.anyio
@pytest.mark.parametrize("served", [("gzip, gzip", "error", SMALL)], indirect=True)
async def test_an_error_page_bomb_is_read_to_16_kib(served: tuple[str, Any]) -> None:
    url, _app = served
    with pytest.raises(HTTPStatusError) as caught:
        await fetch_tool_listing(url, ClientOptions(connect_retries=0, timeout=5))
    assert caught.value.status == 500
    assert "failed with HTTP 500" in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize("served", [("gzip", "sse", SMALL)], indirect=True)
async def test_an_sse_bomb_is_capped_per_event(served: tuple[str, Any]) -> None:
    url, _app = served
    options = ClientOptions(max_response_bytes=1 << 20, connect_retries=0, timeout=5)
    with pytest.raises((ResponseTooLarge, TransportError)) as caught:
        await fetch_tool_listing(url, options)
    assert "1048576" in str(caught.value) and "Content-Encoding: gzip" in str(caught.value)


def _child(code: str, *argv: str, limit_as: int | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:
        if limit_as is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    return subprocess.run(
        [sys.executable, "-c", PEAK + code, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )


def _peak(stderr: str) -> int:
    lines = [line for line in stderr.splitlines() if line.startswith("PEAK ")]
    assert lines, stderr
    return int(lines[-1].split()[1]) * 1024


CLI = "from langop_infra.cli import main\ncode = main(sys.argv[1:])\npeak()\nsys.exit(code)\n"
WHERE = [(e, "body", 1 << 30) for e in ENCODINGS] + [("gzip, gzip", "error", 1 << 30)]


@pytest.mark.slow
@pytest.mark.parametrize("served", WHERE, indirect=True, ids=lambda p: f"{p[0]}-{p[1]}")
def test_cli_against_a_gigabyte_bomb_stays_under_150_mb(served: tuple[str, Any]) -> None:
    url, app = served
    done = _child(CLI, "tools", url, "-o", "json", "--timeout", "20")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("langop-infra tools: error: ")
    assert app.sent["bombs"] >= 1
    if "HTTP 500" not in done.stderr:
        assert re.search(r"sent more than 8388608 bytes for (server/discover|init)", done.stderr)
        assert "Content-Encoding:" in done.stderr
    peak = _peak(done.stderr)
    print(f"peak RSS {peak / 2**20:.0f} MiB")
    assert peak < RSS_LIMIT


PROVIDER = (
    "import json\n"
    "from langop_infra.sync.provider import list_tools, sync_schema\n"
    "inputs = {'endpoint': sys.argv[1], 'mcp_path': '/mcp', 'access': 'direct',\n"
    "          'service': 'bomb', 'namespace': 'n', 'timeout': 10}\n"
    "out = sync_schema(inputs)\n"
    "try:\n"
    "    list_tools(inputs, timeout=5.0)\n"
    "    probe = 'no error'\n"
    "except Exception as exc:\n"
    "    probe = str(exc)\n"
    "print(json.dumps({'phase': out['phase'], 'error': out['last_error'], 'probe': probe}))\n"
    "peak()\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("served", [("gzip, gzip", "body", 1 << 30)], indirect=True)
def test_provider_against_a_gigabyte_bomb_stays_under_150_mb(served: tuple[str, Any]) -> None:
    url, _app = served
    done = _child(PROVIDER, url.removesuffix("/mcp"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["phase"] == "Error"
    assert re.search(r"sent more than 8388608 bytes for (server/discover|init)", report["error"])
    assert "sent more than 8388608 bytes" in report["probe"]
    assert _peak(done.stderr) < RSS_LIMIT


@pytest.mark.slow
@pytest.mark.parametrize("served", [("gzip, gzip", "body", 1 << 30)], indirect=True)
def test_cli_under_a_150_mb_address_space_limit_exits_cleanly(served: tuple[str, Any]) -> None:
    url, _app = served
    # Calibration: the same limit lets the CLI run a command that needs no network.
    sane = _child(CLI, "tools", "--help", limit_as=RSS_LIMIT)
    assert sane.returncode == 0, sane.stderr
    done = _child(CLI, "tools", url, "--timeout", "20", limit_as=RSS_LIMIT)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert re.search(r"sent more than 8388608 bytes for (server/discover|init)", done.stderr)
    assert len(bomb("gzip, gzip")) < 2000  # the 1 GiB bomb really is that small
