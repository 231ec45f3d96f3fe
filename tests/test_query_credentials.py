"""Query-string credentials (#36 §5): an MCP server's or webhook tool's URL with a
credential in its query (``?apikey=``, ``&key=``) no longer reaches a ConfigMap, an env
literal, a render or a message; its value goes into the agent's own Secret, reaches the pod
through ``secretKeyRef``, and the agent runtime puts it back into the URL it calls, byte for
byte. Fields that cannot route (model endpoints, HttpTool catalogue entries, schema-sync
URLs) keep the warning, and it says so.

The MCP server is the official SDK's (the tool kit's app) on 127.0.0.1; the webhook tool's
endpoint is a Starlette app on 127.0.0.1 that records what it is sent (any HTTP server is a
real webhook endpoint)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

import pytest
import yaml
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from langop_infra.agent.http_tools import HttpToolCaller
from langop_infra.agent.runtime import connect_tool_registry, load_agent_servers
from langop_infra.cli.main import main as cli_main
from langop_infra.components.agent import LanguageAgent
from langop_infra.config.checks._advice import cluster_warnings
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.manifests._query_secrets import route_query
from langop_infra.mcp import ClientOptions
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.policy.offline import check
from langop_infra.program.stack import main as stack_main
from langop_infra.testing.secrets import secret_leaves
from langop_infra.toolkit import MCPToolRegistry
from langop_infra.toolkit._server import build_app
from tests.support.loopback import serve
from tests.support.user_project import make_project, run_cli
from tests.test_secrets_audit import env_by_name, leaks, places_in, secret_holders

REPO = Path(__file__).resolve().parents[1]
SECRET_TYPE = "kubernetes:core/v1:Secret"
FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)
# Canaries: a value with an escaped '+', to show the value is kept as written.
SERVER_KEY = "cnry-query-server%2Bd41c"
WEBHOOK_KEY = "cnry-query-webhook-7e02"
PY_TOKEN = "cnry-query-python-c3a9"
CANARIES = [SERVER_KEY, WEBHOOK_KEY, "cnry-query-server+d41c"]
SERVER_VAR = "ARK_MCP_KIT_QUERY_APIKEY"
WEBHOOK_VAR = "AGENT_WEBHOOK_WEATHER_QUERY_KEY"
OUTPUT_HEAD = """
import pulumi
from langop_infra import LanguageAgent
"""


def agent(server_url: str, webhook_url: str) -> dict[str, Any]:
    return {
        "name": "helper",
        "image": "ghcr.io/acme/helper:1.0.0",
        "mcpServers": [{"name": "kit", "url": f"{server_url}/mcp?region=eu&apikey={SERVER_KEY}"}],
        "webhookTools": [
            {
                "name": "weather",
                "description": "Weather",
                "method": "GET",
                "url": f"{webhook_url}/w?appid=1&key={WEBHOOK_KEY}",
            }
        ],
    }


def stack_run(
    server_url: str = "https://tools.example.com", webhook: str = "https://w.example.com"
) -> ProgramRun:
    config = {
        "langop-infra:namespace": "apps",
        "langop-infra:agents": json.dumps([agent(server_url, webhook)]),
    }
    return run_program(stack_main, config=config)


def secret_data(run: ProgramRun, name: str) -> dict[str, str]:
    [reg] = [r for r in run.registrations if r.type == SECRET_TYPE and r.name.endswith(name)]
    return {p.lstrip("."): str(v) for p, v in secret_leaves(reg.inputs["stringData"])}


def config_yaml(run: ProgramRun) -> dict[str, Any]:
    [m] = [
        m
        for m in run.manifests()
        if m["kind"] == "ConfigMap" and m["metadata"]["name"] == "helper-config"
    ]
    return yaml.safe_load(m["data"]["config.yaml"])


# --- the stack side ------------------------------------------------------------------------


def test_a_stack_query_credential_appears_only_in_the_agents_secret() -> None:
    run = stack_run()
    assert leaks(places_in(run), CANARIES) == []
    held = secret_holders(run)
    assert SERVER_KEY in held and WEBHOOK_KEY in held
    assert secret_data(run, "helper-env") == {SERVER_VAR: SERVER_KEY, WEBHOOK_VAR: WEBHOOK_KEY}
    env = env_by_name(run)
    for variable in (SERVER_VAR, WEBHOOK_VAR):
        entry = env[f"apps/helper/{variable}"]
        assert "value" not in entry
        assert entry["valueFrom"] == {"secretKeyRef": {"name": "helper-env", "key": variable}}
    document = config_yaml(run)
    [server] = document["mcpServers"]
    assert server["url"] == f"https://tools.example.com/mcp?region=eu&apikey=${{{SERVER_VAR}}}"
    assert server["env"] == {SERVER_VAR: f"${{{SERVER_VAR}}}"}  # declared, so it expands
    [hook] = document["webhookTools"]
    assert hook["url"] == f"https://w.example.com/w?appid=1&key=${{{WEBHOOK_VAR}}}"
    assert hook["env"] == {WEBHOOK_VAR: f"${{{WEBHOOK_VAR}}}"}
    ark = json.loads(env["apps/helper/AGENT_MCP_SERVERS"]["value"])
    assert ark == [{"name": "kit", "url": server["url"], "env": server["env"]}]


def test_the_python_component_routes_the_same_way() -> None:
    def program() -> None:
        LanguageAgent(
            "py-agent",
            namespace="py",
            image="ghcr.io/acme/agent:1.0.0",
            mcp_servers=[
                {"name": "gh", "url": f"https://gh.example.com/mcp?access_token={PY_TOKEN}"}
            ],
        )

    run = run_program(program)
    assert leaks(places_in(run), [PY_TOKEN]) == []
    assert secret_data(run, "py-agent-env") == {"ARK_MCP_GH_QUERY_ACCESS_TOKEN": PY_TOKEN}
    entry = env_by_name(run)["py/py-agent/ARK_MCP_GH_QUERY_ACCESS_TOKEN"]
    assert entry["valueFrom"]["secretKeyRef"]["name"] == "py-agent-env"


def test_an_output_url_with_a_query_credential_is_a_field_error(tmp_path: Path) -> None:
    """Routing adds an env var and a Secret key, which must not wait for an Output: such a
    URL is refused when it resolves, naming the field and the fix, never the value."""
    body = (
        'LanguageAgent("helper", image="ghcr.io/acme/helper:2.0.0", namespace="apps", '
        "mcp_servers=[{'name': 'ok', 'url': pulumi.Output.from_input('https://a.example/mcp')},"
        " {'name': 'gh', 'url': pulumi.Output.from_input("
        f"'https://gh.example.com/mcp?access_token={PY_TOKEN}')}}])"
    )
    code, out, err = run_cli(
        make_project(tmp_path / "p", OUTPUT_HEAD + body), "render", "--stack", "dev"
    )
    assert code == 2
    assert PY_TOKEN not in out + err and "Traceback" not in err
    assert "invalid LanguageAgent 'helper': 1 problem (built at " in err
    assert (
        "  - mcp_servers[1].url: is an Output whose query carries a credential (?apikey=, "
        "&token=, ...); such a value is moved into the agent's Secret, which needs it now: "
        "give the URL as a plain string, or send the credential in a header from a Secret"
    ) in err


def test_an_output_url_without_a_credential_still_renders(tmp_path: Path) -> None:
    body = (
        'LanguageAgent("helper", image="ghcr.io/acme/helper:2.0.0", namespace="apps", '
        "mcp_servers=[{'name': 'ok', 'url': pulumi.Output.from_input("
        "'https://a.example/mcp?region=eu')}])"
    )
    code, out, err = run_cli(
        make_project(tmp_path / "p", OUTPUT_HEAD + body), "render", "--stack", "dev"
    )
    assert code == 0, err
    assert "url: https://a.example/mcp?region=eu" in out


def test_render_shows_no_value_and_the_warning_says_it_is_routed(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.q.yaml"
    config = {
        "langop-infra:namespace": "apps",
        "langop-infra:agents": [agent("https://tools.example.com", "https://w.example.com")],
    }
    path.write_text(yaml.safe_dump({"config": config}))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["render", "--config", str(path), "--project-dir", str(REPO)])
    assert code == 0, err.getvalue()
    assert leaks({"stdout": out.getvalue(), "stderr": err.getvalue()}, CANARIES) == []
    assert f"apikey=${{{SERVER_VAR}}}" in out.getvalue()


def query_findings(run: ProgramRun) -> list[str]:
    return [
        v.message
        for v in check(run, "dev", {"langop-endpoints": "mandatory"})
        if v.policy == "langop-endpoints" and "query parameter" in v.message
    ]


def test_the_policy_pack_no_longer_flags_the_routed_config_map() -> None:
    assert query_findings(stack_run()) == []
    # A model endpoint cannot route: its MODEL_ENDPOINT literal is still flagged.
    model = {
        "name": "local",
        "provider": "openai-compatible",
        "modelName": "llama",
        "endpoint": "https://llm.example.com/v1?api_key=cnry-model-1",
    }
    config = {
        "langop-infra:namespace": "apps",
        "langop-infra:models": json.dumps([model]),
        "langop-infra:agents": json.dumps(
            [{"name": "m", "image": "ghcr.io/acme/m:1.0.0", "models": [{"name": "local"}]}]
        ),
    }
    found = query_findings(run_program(stack_main, config=config))
    assert found and all("api_key" in f and "cnry" not in f for f in found)


# --- the agent runtime gets the full URL back --------------------------------------------


class Recorder:
    """Wraps a real ASGI app and keeps every HTTP request's query string."""

    def __init__(self, app: ASGIApp | None) -> None:
        self.app, self.queries = app, list[str]()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.queries.append(scope["query_string"].decode())
        assert self.app is not None
        await self.app(scope, receive, send)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def servers() -> Iterator[tuple[str, Recorder, str, list[str]]]:
    hooks: list[str] = []

    async def weather(request: Request) -> JSONResponse:
        hooks.append(request.url.query)
        return JSONResponse({"sunny": True})

    async def echo(request: Request) -> PlainTextResponse:
        """Hostile: refuses, quoting the query it was sent (decoded and as sent)."""
        decoded = dict(request.query_params)
        return PlainTextResponse(f"bad key {decoded} in {request.url.query}", status_code=401)

    recorder = Recorder(build_app(MCPToolRegistry()))
    app = Starlette(routes=[Route("/w", weather, methods=["GET"]), Route("/echo/w", echo)])
    with serve(recorder) as mcp_url, serve(app) as hook_url:
        yield mcp_url, recorder, hook_url, hooks


def pod_env(run: ProgramRun) -> dict[str, str]:
    """What the agent container's env holds: its literals and its own Secret's keys."""
    own = secret_data(run, "helper-env")
    env: dict[str, str] = {}
    for name, entry in env_by_name(run).items():
        variable = name.rpartition("/")[2]
        if "value" in entry:
            env[variable] = str(entry["value"])
        elif entry.get("valueFrom", {}).get("secretKeyRef", {}).get("name") == "helper-env":
            env[variable] = own[entry["valueFrom"]["secretKeyRef"]["key"]]
    return env


@pytest.mark.anyio
async def test_the_runtime_sends_the_credential_the_config_no_longer_holds(
    servers: tuple[str, Recorder, str, list[str]],
) -> None:
    mcp_url, recorder, hook_url, hooks = servers
    run = stack_run(mcp_url, hook_url)
    document, env = config_yaml(run), pod_env(run)
    assert SERVER_KEY not in json.dumps(document) and WEBHOOK_KEY not in json.dumps(document)
    found = load_agent_servers(document, env=env)
    assert found.failures == []
    async with await connect_tool_registry(found, FAST) as registry:
        assert "kit__get_current_datetime" in registry.tools
    assert recorder.queries and set(recorder.queries) == {f"region=eu&apikey={SERVER_KEY}"}
    caller = HttpToolCaller(found.http_tools)
    result = await caller.call("weather", {})
    assert not result.is_error, result.content
    assert hooks == [f"appid=1&key={WEBHOOK_KEY}"]


@pytest.mark.anyio
async def test_the_runtime_scrubs_a_routed_credential_echoed_back(
    servers: tuple[str, Recorder, str, list[str]],
) -> None:
    _, _, hook_url, _ = servers
    run = stack_run("https://tools.example.com", hook_url + "/echo")
    found = load_agent_servers(config_yaml(run), env=pod_env(run))
    [tool] = found.http_tools
    assert WEBHOOK_KEY not in repr(tool)
    result = await HttpToolCaller(found.http_tools).call("weather", {})
    text = json.dumps(result.content)
    assert result.is_error and "bad key" in text  # the 401 body reaches the model ...
    assert "7e02" not in text  # ... without any part of the credential it quoted


def echo_server(recorder: Recorder) -> Any:
    """Hostile: an official-SDK server whose one tool answers with the query it was called
    with (as sent and decoded)."""
    server = MCPServer("echo", version="1.0.0", log_level="WARNING")

    @server.tool()
    def whoami() -> str:
        """Say what the client sent."""
        sent = recorder.queries[-1]
        return f"you sent {sent} ({unquote_plus(sent)})"

    return server.streamable_http_app()


@pytest.mark.anyio
async def test_the_registry_scrubs_a_query_credential_a_server_echoes() -> None:
    recorder = Recorder(None)
    recorder.app = echo_server(recorder)
    with serve(recorder) as url:
        run = stack_run(url)
        found = load_agent_servers(config_yaml(run), env=pod_env(run))
        async with await connect_tool_registry(found, FAST) as registry:
            result = await registry.call_tool("kit__whoami", {})
    text = json.dumps(result.content)
    assert "you sent region=eu&apikey=" in text  # the echo reaches the model ...
    assert "d41c" not in text  # ... without any part of the credential


def test_a_url_without_the_declaration_is_refused_not_sent_literally() -> None:
    document = {
        "webhookTools": [
            {
                "name": "w",
                "url": "https://w.example.com/?key=${SOME_KEY}",
                "env": {"OTHER": "x"},
            }
        ]
    }
    found = load_agent_servers(document, env={"SOME_KEY": "leak"})
    assert [t.name for t in found.http_tools] == []
    assert [f.message for f in found.failures] == [
        "webhookTools[0].url: ${SOME_KEY} is not declared in this tool's env; a URL expands "
        "only the variables its entry declares (env: {SOME_KEY: ...})"
    ]


# --- the routing itself ------------------------------------------------------------------


def test_routing_keeps_everything_but_the_credential_values() -> None:
    routed = route_query("https://h/p?a=1&api-key=x%26y&token=&sig=s+t#frag", "P_")
    assert routed.url == "https://h/p?a=1&api-key=${P_API_KEY}&token=&sig=${P_SIG}#frag"
    assert routed.secrets == {"P_API_KEY": "x%26y", "P_SIG": "s+t"}
    twice = route_query("https://h/?key=1&KEY=2&key=${ALREADY}", "P_")
    assert twice.url == "https://h/?key=${P_KEY}&KEY=${P_KEY_2}&key=${ALREADY}"
    assert twice.secrets == {"P_KEY": "1", "P_KEY_2": "2"}
    assert route_query("https://h/p?region=eu", "P_").secrets == {}


# --- the warnings --------------------------------------------------------------------------


def test_the_warning_says_which_fields_route_and_why_the_others_cannot() -> None:
    stack = {
        "namespace": "apps",
        "models": [
            {
                "name": "local",
                "provider": "openai-compatible",
                "modelName": "llama",
                "endpoint": "https://llm.example.com/v1?api_key=cnry-model",
            }
        ],
        "httpTools": [
            {
                "name": "lookup",
                "displayName": "Lookup",
                "description": "Lookup",
                "endpoint": "https://lookup.example.com/x?token=cnry-http-tool",
            }
        ],
        "tools": [
            {
                "name": "memory",
                "image": "ghcr.io/acme/memory:1",
                "schemaSync": {"syncUrl": "https://memory.example.com/mcp?key=cnry-sync"},
            }
        ],
        "agents": [agent("https://tools.example.com", "https://w.example.com")],
    }
    warnings = {
        w.path: w.message
        for w in cluster_warnings(parse_cluster(stack))
        if w.kind == "langop_query_credential"
    }
    assert "cnry" not in " ".join(warnings.values())
    for routed in ("agents[0].mcpServers[0].url", "agents[0].webhookTools[0].url"):
        assert "the agent is given it from its own Secret <agent>-env" in warnings[routed]
        assert "cannot" not in warnings[routed]
    model = warnings["models[0].endpoint"]
    assert "cannot take from a Secret (a model endpoint reaches MODEL_ENDPOINT" in model
    assert "apiKey: {secretKeyRef" in model
    assert "ConfigMap <name>.http-tool" in warnings["httpTools[0].endpoint"]
    assert "at deploy time" in warnings["tools[0].schemaSync.syncUrl"]


def test_an_http_tool_routes_in_its_agents_not_in_its_catalogue_config_map() -> None:
    """The agent that references an HttpTool reads the value from its own Secret; the
    HttpTool's catalogue ConfigMap keeps the endpoint as written, which its warning says."""
    key = "cnry-http-tool-e11f"
    tool = {
        "name": "lookup",
        "displayName": "Lookup",
        "description": "Lookup",
        "endpoint": f"https://lookup.example.com/x?token={key}",
    }
    helper = {
        "name": "helper",
        "image": "ghcr.io/acme/helper:1.0.0",
        "httpTools": [{"name": "lookup"}],
    }
    config = {
        "langop-infra:namespace": "apps",
        "langop-infra:httpTools": json.dumps([tool]),
        "langop-infra:agents": json.dumps([helper]),
    }
    run = run_program(stack_main, config=config)
    assert sorted(leaks(places_in(run), [key])) == [
        f"{key} in ConfigMap lookup.http-tool tool.json",
        f"{key} in input kubernetes:core/v1:ConfigMap apps/lookup-http-tool.data.tool.json",
        f"{key} in manifests",  # all of them in one text: the catalogue ConfigMap's
    ]
    assert secret_data(run, "helper-env") == {"AGENT_WEBHOOK_LOOKUP_QUERY_TOKEN": key}
    [hook] = config_yaml(run)["webhookTools"]
    assert hook["url"] == "https://lookup.example.com/x?token=${AGENT_WEBHOOK_LOOKUP_QUERY_TOKEN}"
