"""Credentials never reach the model, the console or a child process (#36 §1), against a
hostile loopback API (``Hostile``) that echoes every credential it is sent, in every place
a client passes on: the 401 body, ``WWW-Authenticate``, a token endpoint's ``error``."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from langop_infra.agent.http_tools import HttpToolCaller, HttpToolEntry, load_http_tools
from langop_infra.agent.runtime import AgentServers, ServerEntry, connect_tool_registry
from langop_infra.cli.main import main
from langop_infra.core._redact import MARK, Scrubber, redact, secret_strings
from langop_infra.mcp import ClientOptions, Session
from langop_infra.mcp._stdio import INHERITED_ENV, child_environment
from langop_infra.mcp.oauth._tokens import basic_authorization
from langop_infra.sync.provider import credentials, failure_message, scrubbed_listing
from tests.support.loopback import serve
from tests.support.startup import stdio_options

pytestmark = pytest.mark.anyio

TOKEN = "canary-token-9f8e7d6c5b4a39281706"
PASSWORD = "canary-pass-0a1b2c3d4e5f"
CLIENT_ID = "agent-client"
CLIENT_SECRET = "canary-client-secret-77aa55"


class Hostile:
    """A loopback API that echoes what it is sent. A stand-in, not a real component: no
    real API echoes credentials on demand, and these are the places the issue found them.
    ``/echo401`` answers 401 with the Authorization header in the body (whole, and cut to
    20 characters) and in ``WWW-Authenticate``; ``/token`` answers 400 with the Basic
    header's base64 as its ``error`` and ``error_description``; ``/always401`` answers
    every request 401 with no ``invalid_token`` (so nothing shows it was not processed);
    ``/query`` echoes its query; ``/deep`` sends 15 KB of ``[`` as JSON."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.tokens = 0

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/echo401", self.echo401, methods=["GET", "POST"]),
                Route("/token", self.token, methods=["POST"]),
                Route("/good-token", self.good_token, methods=["POST"]),
                Route("/always401", self.always401, methods=["GET", "POST"]),
                Route("/query", self.query, methods=["GET", "DELETE"]),
                Route("/deep", self.deep, methods=["GET", "POST"]),
            ]
        )

    def record(self, request: Request) -> str:
        self.seen.append((request.method, request.url.path, dict(request.headers)))
        return request.headers.get("authorization", "")

    async def echo401(self, request: Request) -> Response:
        sent = self.record(request)
        body = f"refused {sent}\nfirst part: {sent.split(' ')[-1][:20]}... {sent.encode().hex()}"
        return Response(body, 401, headers={"WWW-Authenticate": f'Bearer realm="{sent}"'})

    async def token(self, request: Request) -> Response:
        sent = self.record(request).removeprefix("Basic ")
        self.tokens += 1
        return JSONResponse({"error": sent, "error_description": f"bad {sent}"}, 400)

    async def good_token(self, request: Request) -> Response:
        self.record(request)
        self.tokens += 1
        return JSONResponse({"access_token": f"{TOKEN}-{self.tokens}", "expires_in": 3600})

    async def always401(self, request: Request) -> Response:
        self.record(request)
        return JSONResponse({"error": "unauthorized"}, 401, headers={"WWW-Authenticate": "Bearer"})

    async def query(self, request: Request) -> Response:
        self.record(request)
        return JSONResponse({"query": list(request.query_params.multi_items())})

    async def deep(self, request: Request) -> Response:
        self.record(request)
        return Response(b"[" * 15_000, media_type="application/json")


@pytest.fixture(scope="module")
def hostile() -> Iterator[tuple[str, Hostile]]:
    server = Hostile()
    with serve(server.app()) as base:
        yield base, server


def text_of(result: Any) -> str:
    return json.dumps([result.content, result.structured_content])


def leaks(text: str, *secrets: str) -> list[str]:
    """Which secrets (or their first 12 characters, or their base64) ``text`` holds."""
    found = []
    for secret in secrets:
        forms = {secret, secret[:12], base64.b64encode(secret.encode()).decode()[:16]}
        found += [form for form in forms if form in text]
    return found


# -- the scrubber ---------------------------------------------------------------------------


def test_the_scrubber_knows_the_encodings_the_process_built() -> None:
    scrubber = Scrubber([CLIENT_SECRET, f"user:{PASSWORD}"])
    basic = basic_authorization(CLIENT_ID, CLIENT_SECRET).removeprefix("Basic ")
    plain = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    for prefix in ("", "x", "xy", "a-longer-client-id"):  # every base64 alignment
        echoed = base64.b64encode(f"{prefix}:{CLIENT_SECRET}".encode()).decode()
        scrubbed = scrubber.text(echoed)
        # what is left encodes the prefix (and the ':'), then at most 3 characters mixing the
        # secret's last bits with the padding
        left = len(scrubbed.replace(MARK, ""))
        assert MARK in scrubbed and left <= -(-4 * (len(prefix) + 1) // 3) + 3, (prefix, left)
    for text in (basic, plain):
        assert MARK in scrubber.text(f"echo {text} end"), text
    odd = "s3cr t+/x:y ü 100%"  # a form body carries it percent- or plus-encoded
    for sent in (quote(odd, safe=""), quote_plus(odd)):
        assert Scrubber([odd]).text(f"client_secret={sent}&x=1") == f"client_secret={MARK}&x=1"
    assert scrubber.text("form: canary-client-secret-77aa55") == f"form: {MARK}"


def test_cut_off_echoes_go_in_values_as_in_lines() -> None:
    """A 20-character echo of a sync header stored in a tool listing: ``redact`` knew
    8+ character cut-offs, ``scrub_values`` did not; the one scrubber does in both."""
    header = f"Bearer {TOKEN}"
    listing = {"description": f"the token {TOKEN[:20]}... is invalid", TOKEN[:9]: "key"}
    scrubbed = Scrubber([header]).value(listing)
    assert TOKEN[:8] not in json.dumps(scrubbed)
    assert scrubbed["description"] == f"the token {MARK}... is invalid"
    assert TOKEN[:8] not in redact(f"said: {TOKEN[:10]}", [header])
    assert Scrubber([header]).text("ordinary words stay") == "ordinary words stay"


def test_a_sync_stores_no_cut_off_echo() -> None:
    from dataclasses import dataclass

    @dataclass
    class Listing:
        tools: list[dict[str, Any]]
        server_info: dict[str, Any]
        protocol_version: str

    listing = Listing([{"name": "t", "description": f"hi {TOKEN[:20]}"}], {}, "2025-11-25")
    stored = scrubbed_listing(listing, secret_strings([f"Bearer {TOKEN}"]))
    assert TOKEN[:8] not in json.dumps(stored.tools)


def test_the_oauth_client_secret_as_basic_base64_never_reaches_last_error() -> None:
    inputs = {"oauth": {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}}
    echoed = basic_authorization(CLIENT_ID, CLIENT_SECRET).removeprefix("Basic ")
    message = failure_message(RuntimeError(f"invalid_client ({echoed})"), credentials(inputs))
    assert echoed[-12:] not in message and MARK in message


# -- HTTP tools -----------------------------------------------------------------------------


async def test_a_credential_ending_in_a_newline_is_trimmed(
    hostile: tuple[str, Hostile],
) -> None:
    spec = {
        "name": "t",
        "url": f"{hostile[0]}/echo401",
        "authentication": {"type": "bearer", "valueFromEnv": "T"},
    }
    tools, failures = load_http_tools({"webhookTools": [spec]}, {"T": TOKEN + "\r\n"})
    assert failures == []
    caller = HttpToolCaller(tools)
    result = await caller.call("t", {})
    await caller.aclose()
    assert hostile[1].seen[-1][2]["authorization"] == f"Bearer {TOKEN}"
    assert result.is_error and leaks(text_of(result), TOKEN) == []


async def test_a_control_byte_inside_a_credential_is_refused_unquoted() -> None:
    spec = {"name": "t", "url": "http://127.0.0.1:9/x", "authentication": {}}
    spec["authentication"] = {"type": "apiKey", "headerName": "X-Key", "valueFromEnv": "K"}
    _, failures = load_http_tools({"webhookTools": [spec]}, {"K": f"{TOKEN}\nX-Other: 1"})
    [(name, message)] = failures
    assert name == "t" and "K holds a control character" in message
    assert leaks(message, TOKEN) == []
    # built by hand, the entry is checked when called, again without the value
    caller = HttpToolCaller(
        [
            HttpToolEntry(
                "h",
                "http://127.0.0.1:9/x",
                auth_type="bearer",
                credential=f"{TOKEN}\x00",
                credential_env="E",
            )
        ]
    )
    result = await caller.call("h", {})
    assert result.is_error and leaks(text_of(result), TOKEN) == []
    assert "E holds a control character" in text_of(result)


@pytest.mark.parametrize("auth_type", ["bearer", "apiKey", "basic"])
async def test_a_401_echo_never_reaches_the_model(
    hostile: tuple[str, Hostile], auth_type: str
) -> None:
    credential = f"user:{PASSWORD}" if auth_type == "basic" else TOKEN
    entry = HttpToolEntry("t", f"{hostile[0]}/echo401", auth_type=auth_type, credential=credential)
    async with await connect_tool_registry(AgentServers([], http_tools=[entry])) as registry:
        result = await registry.call_tool("t", {})
    assert result.is_error
    assert "HTTP 401" in text_of(result)
    assert leaks(text_of(result), credential, PASSWORD) == []


async def test_a_token_endpoint_echoing_the_basic_header_never_reaches_the_model(
    hostile: tuple[str, Hostile],
) -> None:
    settings = {
        "tokenUrl": f"{hostile[0]}/token",
        "clientId": CLIENT_ID,
        "clientSecret": CLIENT_SECRET,
    }
    entry = HttpToolEntry(
        "t", f"{hostile[0]}/echo401", auth_type="oauth2", credential=json.dumps(settings)
    )
    caller = HttpToolCaller([entry])
    result = await caller.call("t", {})
    await caller.aclose()
    basic = basic_authorization(CLIENT_ID, CLIENT_SECRET).removeprefix("Basic ")
    assert result.is_error and "HTTP 400" in text_of(result)
    assert basic[-16:] not in text_of(result) and CLIENT_SECRET[:10] not in text_of(result)


def test_a_plain_http_token_url_is_refused_but_on_loopback() -> None:
    def failures(url: str) -> list[tuple[str, str]]:
        value = json.dumps({"tokenUrl": url, "clientId": "a", "clientSecret": CLIENT_SECRET})
        spec = {
            "name": "t",
            "url": "https://api.example.com/x",
            "authentication": {"type": "oauth2", "valueFromEnv": "O"},
        }
        return load_http_tools({"webhookTools": [spec]}, {"O": value})[1]

    [(_, message)] = failures("http://auth.example.com/token")
    assert "tokenUrl must be an https URL" in message and CLIENT_SECRET not in message
    assert failures("https://auth.example.com/token") == []
    assert failures("http://127.0.0.1:8080/token") == []


async def test_a_tool_that_always_answers_401_gets_each_post_once_and_few_tokens(
    hostile: tuple[str, Hostile],
) -> None:
    server = hostile[1]
    settings = {
        "tokenUrl": f"{hostile[0]}/good-token",
        "clientId": CLIENT_ID,
        "clientSecret": CLIENT_SECRET,
    }
    entry = HttpToolEntry(
        "t", f"{hostile[0]}/always401", auth_type="oauth2", credential=json.dumps(settings)
    )
    caller = HttpToolCaller([entry])
    server.seen.clear()
    results = [await caller.call("t", {"n": n}) for n in range(5)]
    posts = [path for method, path, _ in server.seen if path == "/always401"]
    await caller.aclose()
    assert all(r.is_error for r in results)
    # the 401 does not show the POST was not processed: never sent twice
    assert len(posts) == 5
    # one token, one replacement; then the backoff holds the refused one
    assert caller.token_fetches == 2
    # a GET is idempotent: resent once with the replacement token
    get = HttpToolEntry(
        "g",
        f"{hostile[0]}/always401",
        method="GET",
        auth_type="oauth2",
        credential=json.dumps(settings),
    )
    caller = HttpToolCaller([get])
    server.seen.clear()
    await caller.call("g", {})
    await caller.aclose()
    assert [path for _, path, _ in server.seen] == [
        "/good-token",
        "/always401",
        "/good-token",
        "/always401",
    ]


async def test_get_keeps_the_configured_query_and_refuses_overrides(
    hostile: tuple[str, Hostile],
) -> None:
    entry = HttpToolEntry("q", f"{hostile[0]}/query?apikey=fixed&v=2", method="GET")
    caller = HttpToolCaller([entry])
    kept = await caller.call("q", {"city": "Oslo"})
    override = await caller.call("q", {"apikey": "mine"})
    await caller.aclose()
    assert kept.structured_content == {"query": [["apikey", "fixed"], ["v", "2"], ["city", "Oslo"]]}
    assert override.is_error and "apikey: set by the tool's URL" in text_of(override)
    assert [q for _, p, q in hostile[1].seen if p == "/query"][-1:]  # only the first went


@pytest.mark.parametrize(
    "limit",
    [
        {"requestsPerMinute": 0},
        {"requestsPerMinute": -5},
        {"requestsPerMinute": "ten"},
        {"burst": 0},
        "fast",
    ],
)
async def test_a_hand_edited_rate_limit_is_refused_not_unlimited(limit: Any) -> None:
    spec = {"name": "t", "url": "http://127.0.0.1:9/x", "rateLimit": limit}
    tools, failures = load_http_tools(
        {"webhookTools": [spec, {"name": "u", "url": "http://x/"}]}, {}
    )
    assert [t.name for t in tools] == ["u"]  # the other tools stay usable
    [(name, message)] = failures
    assert name == "t" and "rateLimit" in message


# -- bounded JSON at the agent ----------------------------------------------------------------


async def test_a_deep_json_body_is_an_error_result_not_an_exception(
    hostile: tuple[str, Hostile],
) -> None:
    caller = HttpToolCaller([HttpToolEntry("d", f"{hostile[0]}/deep")])
    result = await caller.call("d", {})
    await caller.aclose()
    assert result.is_error is False and result.structured_content is None  # text, not JSON
    settings = {"tokenUrl": f"{hostile[0]}/deep", "clientId": "a", "clientSecret": "b" * 8}
    caller = HttpToolCaller(
        [
            HttpToolEntry(
                "o",
                f"{hostile[0]}/query",
                method="GET",
                auth_type="oauth2",
                credential=json.dumps(settings),
            )
        ]
    )
    result = await caller.call("o", {})
    await caller.aclose()
    assert result.is_error and "token endpoint answered HTTP 200" in text_of(result)


async def test_a_deep_discovery_document_marks_the_server_failed(
    hostile: tuple[str, Hostile],
) -> None:
    entry = ServerEntry("deep", f"{hostile[0]}/deep", transport="url")
    options = ClientOptions(connect_retries=0, deadline=5)
    async with await connect_tool_registry([entry], options) as registry:
        [status] = registry.servers()
    assert status.state == "failed"


# -- stdio children ---------------------------------------------------------------------------

ENV_SERVER = Path(__file__).resolve().parents[1] / "support" / "env_server.py"


async def test_a_stdio_child_gets_a_minimal_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TOKEN)
    monkeypatch.setenv("GATEWAY_MASTER_KEY", PASSWORD)
    monkeypatch.setenv("BASH_FUNC_x%%", "() { echo hi; }")
    options = stdio_options(transport="stdio")
    async with Session([sys.executable, str(ENV_SERVER)], options, env={"DECLARED": "1"}) as s:
        result = await s.call_tool("environment", {})
    names = set(json.loads(result.content[0]["text"]))
    assert "OPENAI_API_KEY" not in names and "GATEWAY_MASTER_KEY" not in names
    assert names - {"DECLARED", *INHERITED_ENV} <= {"LC_CTYPE"}  # Python may set LC_CTYPE
    assert "DECLARED" in names and "PATH" in names
    monkeypatch.setenv("SHELL", "() { x; }")  # a shell function: never passed on
    monkeypatch.setenv("HOME", "/h")
    assert "SHELL" not in child_environment({}) and child_environment({})["HOME"] == "/h"


# -- the command line -------------------------------------------------------------------------


def test_tools_call_agent_config_prints_no_credential(
    hostile: tuple[str, Hostile],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = {
        "webhookTools": [
            {
                "name": "t",
                "url": f"{hostile[0]}/echo401",
                "authentication": {"type": "bearer", "valueFromEnv": "AGENT_T"},
            }
        ]
    }
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(document))
    monkeypatch.setenv("AGENT_T", TOKEN)
    monkeypatch.delenv("MCP_SERVERS", raising=False)
    for output in ("json", "table"):
        code = main(["tools", "call", "--agent-config", str(config), "t", "--output", output])
        out, err = capsys.readouterr()
        assert code == 1 and "HTTP 401" in out + err
        assert leaks(out + err, TOKEN) == [], output


def test_deep_json_arguments_and_policy_config_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = "[" * 15_000
    config = tmp_path / "config.yaml"
    config.write_text("webhookTools: []\n")
    code = main(["tools", "call", "--agent-config", str(config), "t", "--arguments", deep])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "100 levels" in err
    policy = tmp_path / "policy.json"
    policy.write_text(deep)
    code = main(["check", "--stack", "dev", "--policy-config", str(policy)])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "100 levels" in err
    assert "Traceback" not in out + err


def test_a_url_expands_only_the_variables_its_entry_declares() -> None:
    from langop_infra.agent.runtime import load_agent_servers

    env = {"OPENAI_API_KEY": TOKEN, "REGION": "eu"}
    document = {
        "servers": [
            {"name": "sneaky", "url": "https://tools.example.com/mcp?k=${OPENAI_API_KEY}"},
            {
                "name": "declared",
                "url": "https://${REGION}.example.com/mcp",
                "env": {"REGION": "${REGION}"},
            },
            {"name": "defaulted", "url": "https://${HOST:-tools.example.com}/mcp"},
        ]
    }
    loaded = load_agent_servers(document, env=env)
    assert [s.url for s in loaded.servers] == [
        "https://eu.example.com/mcp",
        "https://tools.example.com/mcp",
    ]
    [failure] = loaded.failures
    assert failure.name == "sneaky" and TOKEN not in str(failure)
    assert "servers[0].url: ${OPENAI_API_KEY} is not declared in this server's env" in str(failure)


async def test_an_mcp_server_echoing_its_credential_is_scrubbed_by_the_registry() -> None:
    """A real SDK server over stdio that returns the credential its declared env gave it."""
    entry = ServerEntry(
        "envy",
        "",
        transport="stdio",
        command=(sys.executable, str(ENV_SERVER)),
        env={"API_TOKEN": TOKEN, "MODE": "plain"},
    )
    async with await connect_tool_registry([entry], stdio_options()) as registry:
        echoed = await registry.call_tool("envy__variable", {"name": "API_TOKEN"})
        plain = await registry.call_tool("envy__variable", {"name": "MODE"})
    assert leaks(text_of(echoed), TOKEN) == [] and MARK in text_of(echoed)
    assert "MODE=plain" in text_of(plain)  # a value not named like a credential is data


def test_learned_tokens_are_bounded_and_configured_credentials_kept() -> None:
    from langop_infra.core._redact import MAX_LEARNED

    scrubber = Scrubber([PASSWORD])
    tokens = [f"{n:04d}-token-abcdefghijkl" for n in range(MAX_LEARNED + 10)]
    for token in tokens:
        scrubber.learn(token)
    assert scrubber.text(tokens[-1]) == MARK and scrubber.text(PASSWORD) == MARK
    assert scrubber.text(tokens[0]) == tokens[0]  # the oldest went
    scrubber.learn(tokens[-MAX_LEARNED])  # learning again makes it the newest
    scrubber.learn("new0-token-abcdefghijkl")
    assert scrubber.text(tokens[-MAX_LEARNED]) == MARK
