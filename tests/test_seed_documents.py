"""The seeds' own documents, verbatim: STOA's Tool manifest as an ``httpTools`` entry,
its placeholder endpoint refused, every problem in one pass, its ``conditions``; language-operator's
``command`` string; language-operator's JSON-RPC error ``data`` reaching the agent and ``tools call
-o json``; seed 003's chat examples run against a scripted OpenAI-compatible model with only
their import lines changed."""

from __future__ import annotations

import ast
import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError as SdkMCPError

from langop_infra.agent.runtime import connect_tool_registry, load_agent_servers
from langop_infra.cli.main import main
from langop_infra.config._http_tool import HttpToolSpec
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import SpecError
from langop_infra.mcp import ClientOptions
from langop_infra.program.stack import main as stack_program
from tests.fake_openai import FakeOpenAI
from tests.support.loopback import serve

FIXTURES = Path(__file__).parent / "fixtures" / "import"
COMPLETE = yaml.safe_load((FIXTURES / "seed004-complete.yaml").read_text())
EXAMPLES = list(yaml.safe_load_all((FIXTURES / "seed004-examples.yaml").read_text()))
FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)
AGENT = {
    "name": "billing",
    "image": "ghcr.io/acme/billing:1",
    "httpTools": [{"name": "payment-create"}],
}


def problems(document: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as caught:
        parse_cluster(document)
    return [str(p) for p in caught.value.problems]


def test_the_seeds_manifest_is_an_entry_and_every_problem_comes_at_once() -> None:
    # Verbatim, status included: the placeholder endpoint and the missing Secret, together.
    found = problems({"namespace": "tenant-acme", "httpTools": [COMPLETE], "agents": [AGENT]})
    assert found == [
        "httpTools[0].endpoint: 'https://api.<YOUR_DOMAIN>/acme/payment-api/v2/payments' "
        "holds the template placeholder <YOUR_DOMAIN>: replace it with the real value",
        "httpTools[0].authentication.secretRef.name: no Secret 'payment-api-token' under "
        "secrets or externalSecrets; declare it under secrets, or list it in externalSecrets "
        "if something outside this program creates it",
    ]


def test_the_manifest_form_reads_as_the_flattened_entry() -> None:
    manifest = json.loads(json.dumps(COMPLETE))
    manifest["spec"]["endpoint"] = "https://api.acme.example/acme/payment-api/v2/payments"
    flat = {
        **{k: manifest["metadata"][k] for k in ("name", "namespace", "labels", "annotations")},
        **manifest["spec"],
    }
    assert HttpToolSpec.model_validate(manifest) == HttpToolSpec.model_validate(flat)
    cluster = parse_cluster(
        {
            "namespace": "tenant-acme",
            "httpTools": [manifest],
            "externalSecrets": ["payment-api-token"],
            "agents": [AGENT],
        }
    )
    assert cluster.http_tools[0].labels == {"app.kubernetes.io/part-of": "payment-api"}


def test_another_kind_under_http_tools_is_refused_by_name() -> None:
    other = {
        "apiVersion": "kagent.dev/v1alpha2",
        "kind": "RemoteMCPServer",
        "metadata": {"name": "x"},
        "spec": {"url": "https://x.example/mcp"},
    }
    [message] = problems({"namespace": "n", "httpTools": [other]})
    assert "kagent.dev/v1alpha2 RemoteMCPServer is not STOA's Tool" in message
    assert "langop-infra import" in message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.<YOUR_DOMAIN>/x", "holds the template placeholder <YOUR_DOMAIN>"),
        ("https://{{ .Values.host }}/x", "holds the template placeholder {{ .Values.host }}"),
        ("https://${API_HOST}/x", "holds ${API_HOST}, which nothing expands here"),
        ("https://:99999/x", "has no host"),
        ("https://api.example.com:99999/x", "port '99999' is not a number in 1-65535"),
        ("https://api.example.com:0/x", "port '0' is not a number in 1-65535"),
        ("ftp://api.example.com/x", "is not an http(s) URL"),
    ],
)
def test_an_endpoint_must_be_a_real_url(url: str, expected: str) -> None:
    entry = {"name": "t", "displayName": "T", "description": "d", "endpoint": url}
    [message] = problems({"namespace": "n", "httpTools": [entry]})
    assert message.startswith("httpTools[0].endpoint: ")
    assert expected in message


@pytest.mark.parametrize(
    "url",
    ["https://api.example.com:8443/x", "http://[::1]:8080/mcp", "https://api.example.com/x?at=1:2"],
)
def test_real_urls_pass(url: str) -> None:
    entry = {"name": "t", "displayName": "T", "description": "d", "endpoint": url}
    assert parse_cluster({"namespace": "n", "httpTools": [entry]}).http_tools[0].endpoint == url


def test_conditions_sit_beside_the_phase(render) -> None:
    echo, salesforce, _ = EXAMPLES
    disabled = {
        **salesforce,
        "metadata": {"name": "off", "namespace": "tenant-enterprise"},
        "spec": {**salesforce["spec"], "enabled": False},
    }
    config = {
        "langop-infra:namespace": "tenant-demo",
        "langop-infra:httpTools": json.dumps([echo, salesforce, disabled]),
        "langop-infra:externalSecrets": json.dumps(["salesforce-oauth"]),
    }
    outputs = render(stack_program, config=config).outputs["httpTools"]
    conditions = {name.split("/")[-1]: (o["phase"], o["conditions"]) for name, o in outputs.items()}
    assert len(conditions) == 3, sorted(outputs)
    assert conditions["echo"] == (
        "Pending",
        [
            {
                "type": "Ready",
                "status": "False",
                "reason": "Pending",
                "message": "no endpoint yet: agents are not given the tool",
                "lastTransitionTime": "",
            }
        ],
    )
    assert conditions["salesforce-query"][1][0]["status"] == "True"
    assert conditions["salesforce-query"][1][0]["reason"] == "Registered"
    assert conditions["off"][1][0]["reason"] == "Disabled"


def test_a_stdio_command_may_be_a_string_with_args_beside_it() -> None:
    # language-operator's servers.json: "command": "npx", "args": [...]
    tool = ToolSpec.model_validate(
        {
            "name": "everything",
            "image": "ghcr.io/acme/mcp:1",
            "transport": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-everything"],
        }
    )
    assert tool.command == ["npx"]
    assert tool.args == ["-y", "@modelcontextprotocol/server-everything"]


# --- language-operator's MCP error format ------------------------------------------------

SEED_ERROR_DATA = {"reason": "connection refused"}


def failing_memory_app() -> Any:
    """An official-SDK low-level server whose tool answers language-operator's error response."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="remember", input_schema={"type": "object"})]
        )

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        raise SdkMCPError(-32603, "Memory store unavailable", SEED_ERROR_DATA)

    return Server(
        "memory", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
    ).streamable_http_app()


def test_the_errors_data_reaches_the_agent() -> None:
    async def call(base: str) -> Any:
        document = {"tools": {"memory": {"endpoint": base, "protocol": "mcp"}}}
        async with await connect_tool_registry(
            load_agent_servers(document, env={}), FAST
        ) as registry:
            return await registry.call_tool("memory__remember", {"content": "x"})

    with serve(failing_memory_app()) as base:
        result = asyncio.run(call(base))
    assert result.is_error
    texts = [c["text"] for c in result.content]
    assert "Memory store unavailable" in texts[0]
    assert texts[1] == 'error data: {"reason": "connection refused"}'
    assert result.structured_content == {
        "error": {"code": -32603, "message": "Memory store unavailable", "data": SEED_ERROR_DATA}
    }


def test_tools_call_json_prints_json_on_an_error(capsys) -> None:
    with serve(failing_memory_app()) as base:
        code = main(
            [
                "tools",
                "call",
                f"{base}/mcp",
                "remember",
                "--arguments",
                '{"content": "x"}',
                "-o",
                "json",
            ]
        )
    captured = capsys.readouterr()
    assert code == 1
    document = json.loads(captured.out)
    assert document["isError"] is True
    assert document["error"]["code"] == -32603
    assert document["error"]["data"] == SEED_ERROR_DATA
    assert "langop-infra tools: error:" in captured.err


def test_the_editor_schema_admits_what_validation_admits() -> None:
    import jsonschema

    schema = json.loads(
        (Path(__file__).parents[1] / "schemas" / "stack-config.schema.json").read_text()
    )
    validator = jsonschema.Draft7Validator(schema)
    manifest = {
        "config": {"langop-infra:namespace": "tenant-acme", "langop-infra:httpTools": [COMPLETE]}
    }
    command = {
        "config": {
            "langop-infra:namespace": "n",
            "langop-infra:tools": [
                {
                    "name": "e",
                    "image": "ghcr.io/acme/mcp:1",
                    "transport": "stdio",
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-everything"],
                }
            ],
        }
    }
    assert [e.message for e in validator.iter_errors(manifest)] == []
    assert [e.message for e in validator.iter_errors(command)] == []
    stray = {
        "config": {
            "langop-infra:namespace": "n",
            "langop-infra:httpTools": [{**COMPLETE, "extra": 1}],
        }
    }
    assert list(validator.iter_errors(stray)) != []


# --- seed 003's chat examples, run with only their import lines changed ---------------------

SEED003 = Path(__file__).parent / "fixtures" / "seed003" / "chat-examples.md"
# The seed's import lines and ours; nothing else of an example is changed.
SEED003_IMPORTS = {
    "from agentlab.mcp import get_registry": "from langop_infra.toolkit import get_registry",
    "from langchain_openai import ChatOpenAI": (
        "from langop_infra.toolkit import OpenAICompatibleChat as ChatOpenAI"
    ),
    "from agentlab.core.llm_interface import LangChainLLM": (
        "from langop_infra.toolkit import LangChainLLM"
    ),
    "from agentlab.models import ChatMessage": "from langop_infra.toolkit import ChatMessage",
}


def seed003_blocks() -> dict[str, str]:
    """Each fenced block of the seed's chat examples by the heading above it."""
    text = SEED003.read_text()
    found = re.findall(r"^### (.+?)\n\n```\w+\n(.*?)^```", text, re.S | re.M)
    return dict(found)


def ported(code: str) -> str:
    lines = code.splitlines()
    for seed, ours in SEED003_IMPORTS.items():
        lines = [ours if line == seed else line for line in lines]
    assert not any("agentlab" in ln or "langchain_openai" in ln for ln in lines), code
    return "\n".join(lines)


def run_example(code: str, namespace: dict[str, Any]) -> None:
    """Run ``code`` as the seed's reader would, top-level ``await`` included."""
    compiled = compile(ported(code), str(SEED003), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    pending = eval(compiled, namespace)  # a coroutine when the code awaits
    if pending is not None:
        asyncio.run(pending)


def time_in(body: dict[str, Any]) -> dict[str, Any]:
    """SCRIPTED model: asks for ``get_current_datetime`` in the question's city, then answers
    with what the tool said."""
    answered = [m for m in body["messages"] if m["role"] == "tool"]
    if answered:  # read as a model reads it: JSON, or the seed's str(dict)
        told = re.search(r"""['"]datetime['"]: ['"]([^'"]+)""", answered[-1]["content"])
        return {"role": "assistant", "content": f"It is {told and told[1]} there."}
    question = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    zone = {"Tokyo": "Asia/Tokyo", "London": "Europe/London"}.get(
        question.rstrip("?").split()[-1], "America/New_York"
    )
    arguments = json.dumps({"format": "iso", "timezone": zone})
    function = {"name": "get_current_datetime", "arguments": arguments}
    call = {"id": "call_1", "type": "function", "function": function}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


@pytest.fixture
def scripted_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """The scripted OpenAI-compatible model on loopback, named by the agent's env."""
    from langop_infra.toolkit import reset_registry

    reset_registry()  # the global registry: the built-in tools only
    fake = FakeOpenAI(script=time_in)
    with serve(fake.app()) as url:
        monkeypatch.setenv("MODEL_ENDPOINT", f"{url}/v1")
        monkeypatch.setenv("LLM_MODEL", "scripted")
        monkeypatch.setenv("MODEL_API_KEY", "sk-test")
        yield fake


def test_seed003_with_langchain(scripted_model: FakeOpenAI) -> None:
    namespace: dict[str, Any] = {}
    run_example(seed003_blocks()["With LangChain"], namespace)
    [call] = namespace["response"].tool_calls
    assert (call["name"], call["args"]) == (
        "get_current_datetime",
        {"format": "iso", "timezone": "America/New_York"},
    )
    sent = scripted_model.requests[0]
    assert sent["authorization"] == "Bearer sk-test"
    assert sent["body"]["model"] == "gpt-4"
    assert [t["function"]["name"] for t in sent["body"]["tools"]] == ["get_current_datetime"]


def test_seed003_integrated_chat_with_tools(
    scripted_model: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    run_example(seed003_blocks()["Integrated Chat with Tools"], {})
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"Response: It is \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+09:00 there\.", lines[0])
    assert lines[1:4] == [
        "Tools used: 1",
        "Step 1: Called get_current_datetime",
        "  Args: {'format': 'iso', 'timezone': 'Asia/Tokyo'}",
    ]
    assert "'success': True" in lines[4] and "'timezone': 'Asia/Tokyo'" in lines[4]
    assert [m["role"] for m in scripted_model.requests[1]["body"]["messages"]] == [
        "user",
        "assistant",
        "tool",
    ]


def test_seed003_tool_execution_loop(scripted_model: FakeOpenAI) -> None:
    blocks = seed003_blocks()
    namespace: dict[str, Any] = {}
    run_example(blocks["Binding Tools to LLM"], namespace)
    run_example(blocks["Tool Execution Loop"], namespace)
    answer = asyncio.run(namespace["chat_with_tools"]("What time is it in London?"))
    assert re.fullmatch(r"It is \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[01]:00 there\.", answer)


def test_seed003_llm_chat_endpoint_with_memory(scripted_model: FakeOpenAI) -> None:
    import httpx

    from langop_infra.toolkit import LangChainLLM, MCPToolRegistry
    from langop_infra.toolkit._server import build_app

    curl = seed003_blocks()["Via API with Memory"]
    body = json.loads(curl.split("-d '", 1)[1].rsplit("'", 1)[0])
    with serve(build_app(MCPToolRegistry(), llm=LangChainLLM())) as base:
        first = httpx.post(f"{base}/llm/chat", json=body, timeout=10).json()
        follow_up = {**body, "messages": [{"role": "user", "content": "Thanks!"}]}
        follow_up["use_tools"] = False
        second = httpx.post(f"{base}/llm/chat", json=follow_up, timeout=10).json()
    assert first["tools_used"] is True and first["session_id"] == "user-123"
    assert [c["tool_name"] for c in first["tool_calls"]] == ["get_current_datetime"]
    assert first["tool_calls"][0]["tool_args"] == {"format": "iso", "timezone": "Europe/London"}
    assert first["tool_results"][0]["success"] is True
    assert first["agent_steps"][0]["step_number"] == 1
    assert first["response"].startswith("It is ")
    assert (second["tools_used"], second["tool_calls"]) == (False, [])
    remembered = scripted_model.requests[-1]["body"]
    assert "tools" not in remembered  # use_tools false: the model is offered none
    contents = [m["content"] for m in remembered["messages"]]
    assert contents[0] == "What time is it in London?"
    assert contents[1].startswith("Tool result: get_current_datetime: {")
    assert contents[2:] == [first["response"], "Thanks!"]


def test_llm_chat_refuses_a_tool_it_does_not_have(scripted_model: FakeOpenAI) -> None:
    import httpx

    from langop_infra.toolkit import LangChainLLM, MCPToolRegistry
    from langop_infra.toolkit._server import build_app

    body = {"messages": [{"role": "user", "content": "hi"}], "available_tools": ["calculator"]}
    with serve(build_app(MCPToolRegistry(), llm=LangChainLLM())) as base:
        answer = httpx.post(f"{base}/llm/chat", json=body, timeout=10)
    assert answer.status_code == 400
    assert answer.json() == {
        "detail": "unknown tools ['calculator']; the tools are: get_current_datetime"
    }
    assert scripted_model.requests == []
