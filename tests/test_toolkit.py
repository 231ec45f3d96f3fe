"""Seed 003's tool kit (langop_infra.toolkit): the seed's own test templates, run against the
ported ``get_current_datetime`` and a calculator written from the seed's listing; the
registry; LangChain tools; and ``serve`` on the official MCP SDK (MCP, ``/health``,
``/mpc/tools``), checked with ``langop-infra tools check`` and our MCP client."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any, Literal

import httpx
import pytest
from pydantic import Field

from langop_infra.cli.main import main
from langop_infra.mcp import ClientOptions
from langop_infra.mcp._session import Session
from langop_infra.toolkit import (
    AgentStep,
    MCPToolBase,
    MCPToolInput,
    MCPToolOutput,
    MCPToolRegistry,
    ToolCall,
    ToolResult,
    get_registry,
    reset_registry,
)
from langop_infra.toolkit._server import build_app
from langop_infra.toolkit.tools._datetime_tool import DateTimeTool
from tests.support.loopback import serve


class CalculatorInput(MCPToolInput):
    """Input schema for calculator tool (seed 003, step 1)."""

    operation: Literal["add", "subtract", "multiply", "divide"] = Field(
        description="Mathematical operation to perform"
    )
    a: float = Field(description="First operand")
    b: float = Field(description="Second operand")


class CalculatorOutput(MCPToolOutput):
    success: bool = Field(description="Whether calculation succeeded")
    result: float | None = Field(default=None, description="Calculation result")
    error: str | None = Field(default=None, description="Error message if failed")


class CalculatorTool(MCPToolBase):
    """Seed 003's step 2, as listed (its models under input_schema/output_schema)."""

    @property
    def name(self) -> str:
        return "calculator"

    @property
    def description(self) -> str:
        return "Perform basic arithmetic operations (add, subtract, multiply, divide)."

    @property
    def input_schema(self) -> type[CalculatorInput]:
        return CalculatorInput

    @property
    def output_schema(self) -> type[CalculatorOutput]:
        return CalculatorOutput

    async def execute(self, **kwargs: Any) -> dict[str, Any]:
        inputs = CalculatorInput(**kwargs)
        if inputs.operation == "divide" and inputs.b == 0:
            return {"success": False, "result": None, "error": "Division by zero"}
        result = {
            "add": inputs.a + inputs.b,
            "subtract": inputs.a - inputs.b,
            "multiply": inputs.a * inputs.b,
            "divide": inputs.a / inputs.b if inputs.b else 0.0,
        }[inputs.operation]
        return {"success": True, "result": result, "error": None}


@pytest.fixture(autouse=True)
def reset_test_registry() -> Iterator[None]:
    """Reset registry before each test (seed 003's fixture)."""
    reset_registry()
    yield
    reset_registry()


# --- seed 003's unit test template, for get_current_datetime ---------------------------


def test_my_tool_success() -> None:
    tool = DateTimeTool()
    result = asyncio.run(tool.execute(format="iso", timezone="America/New_York"))
    assert result["success"] is True
    assert "datetime" in result
    assert result["error"] is None
    assert result["datetime"][-6:] in ("-05:00", "-04:00")
    assert (result["format"], result["timezone"]) == ("iso", "America/New_York")


def test_my_tool_invalid_input() -> None:
    tool = DateTimeTool()
    with pytest.raises(ValueError, match="Input validation failed") as caught:
        asyncio.run(tool.execute_with_validation(invalid_param="bad"))
    assert "invalid_param: Extra inputs are not permitted" in str(caught.value)
    with pytest.raises(ValueError, match="Input validation failed: format"):
        asyncio.run(tool.execute_with_validation(format="roman"))


def test_my_tool_error_handling() -> None:
    tool = DateTimeTool()
    result = asyncio.run(tool.execute(timezone="Mars/Olympus_Mons"))
    assert result["success"] is False
    assert result["error"] == (
        "Invalid timezone: 'Mars/Olympus_Mons' (use an IANA name such as Europe/Paris)"
    )


def test_my_tool_metadata() -> None:
    metadata = DateTimeTool().get_metadata()
    assert metadata["name"] == "get_current_datetime"
    assert "description" in metadata
    assert metadata["input_schema"]["properties"]["format"]["default"] == "iso"
    assert set(metadata["output_schema"]["properties"]) == {
        "success",
        "datetime",
        "format",
        "timezone",
        "error",
    }


def test_both_model_names_answer() -> None:
    tool = CalculatorTool()
    assert tool.input_model is tool.input_schema is CalculatorInput
    assert tool.output_model is tool.output_schema is CalculatorOutput


# --- seed 003's registry template, and its registry operations ---------------------------


def test_tool_registration() -> None:
    registry = MCPToolRegistry()
    tool = CalculatorTool()
    registry.register(tool)
    assert registry.has_tool("calculator")
    assert registry.get_tool("calculator") == tool
    assert registry.list_tools() == ["get_current_datetime", "calculator"]
    with pytest.raises(ValueError, match="a tool named 'calculator' is registered already"):
        registry.register(CalculatorTool())
    assert MCPToolRegistry(builtins=False).list_tools() == []


def test_the_global_registry_is_one_until_reset() -> None:
    first = get_registry()
    assert get_registry() is first
    first.register(CalculatorTool())
    reset_registry()
    assert get_registry() is not first
    assert get_registry().list_tools() == ["get_current_datetime"]
    info = get_registry().get_tool_info("get_current_datetime")
    assert info is not None and info["name"] == "get_current_datetime"
    assert get_registry().get_tool_info("nope") is None


def test_langchain_tools_run_with_validation() -> None:
    registry = MCPToolRegistry()
    registry.register(CalculatorTool())
    tools = registry.get_langchain_tools(["calculator"])
    assert [t.name for t in tools] == ["calculator"]
    assert asyncio.run(tools[0].ainvoke({"operation": "multiply", "a": 6, "b": 7})) == {
        "success": True,
        "result": 42.0,
        "error": None,
    }
    every = [t.name for t in registry.get_langchain_tools()]
    assert every == ["get_current_datetime", "calculator"]
    with pytest.raises(KeyError, match="no tools named nope"):
        registry.get_langchain_tools(["nope"])


def test_records_have_the_seeds_fields() -> None:
    call = ToolCall("calculator", {"a": 1}, "call_1")
    result = ToolResult("calculator", True, {"result": 2}, call_id="call_1")
    step = AgentStep(1, "calculator", {"a": 1}, {"result": 2}, reasoning="needs a sum")
    assert call.to_dict() == {
        "tool_name": "calculator",
        "tool_args": {"a": 1},
        "call_id": "call_1",
        "timestamp": None,
    }
    assert (result.error, result.call_id) == (None, "call_1")
    assert step.to_dict()["step_number"] == 1


def test_a_records_dict_is_asdicts_with_iso_times_and_shares_nothing_with_it() -> None:
    """``to_dict`` copies without ``asdict``'s deepcopy (a turn's records are built on every
    A2A answer), and still as ``asdict`` would: nested containers are fresh, a datetime
    field is ISO text, a nested datetime and any other object a copy."""
    when = datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc)
    args: dict[str, Any] = {"city": "Lyon", "at": [when, ("a", 1.5)], "n": {"deep": [None, True]}}
    call = ToolCall("geo__population", args, "c1", when)
    expected = {**dataclasses.asdict(call), "timestamp": "2026-11-29T09:00:00+00:00"}
    data = call.to_dict()
    assert data == expected
    assert type(data["tool_args"]["at"][1]) is tuple
    data["tool_args"]["n"]["deep"].append("changed")
    data["tool_args"]["at"].clear()
    assert call.tool_args == {"city": "Lyon", "at": [when, ("a", 1.5)], "n": {"deep": [None, True]}}
    assert data["tool_args"] is not args


# --- serve(registry): MCP on the official SDK, /health and /mpc/tools ---------------------


@pytest.fixture
def served() -> Iterator[str]:
    registry = MCPToolRegistry()
    registry.register(CalculatorTool())
    with serve(build_app(registry)) as url:
        yield url


def test_served_tools_pass_the_languagetool_check(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["tools", "check", served, "-o", "json", "--timeout", "5"])
    checks = json.loads(capsys.readouterr().out)
    assert code == 0, checks
    assert all(c["passed"] for c in checks) and len(checks) == 4


def test_rest_endpoints(served: str) -> None:
    names = httpx.get(f"{served}/mpc/tools/names").json()
    assert names == {"tools": ["get_current_datetime", "calculator"], "count": 2}
    listed = httpx.get(f"{served}/mpc/tools").json()
    assert [t["name"] for t in listed] == names["tools"]
    one = httpx.get(f"{served}/mpc/tools/calculator").json()
    assert one["input_schema"]["required"] == ["operation", "a", "b"]
    missing = httpx.get(f"{served}/mpc/tools/unknown_tool")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "Tool 'unknown_tool' not found"}


async def _call(url: str, name: str, arguments: dict[str, Any]) -> Any:
    session = Session(f"{url}/mcp", ClientOptions(timeout=5))
    try:
        await session.initialize()
        return await session.call_tool(name, arguments)
    finally:
        await session.aclose()


def test_success_false_is_an_mcp_error_result(served: str) -> None:
    good = asyncio.run(_call(served, "calculator", {"operation": "add", "a": 2, "b": 3}))
    assert (good.is_error, good.structured_content) == (
        False,
        {"success": True, "result": 5.0, "error": None},
    )
    bad = asyncio.run(_call(served, "calculator", {"operation": "divide", "a": 1, "b": 0}))
    assert bad.is_error is True
    assert bad.structured_content["error"] == "Division by zero"
    wrong = asyncio.run(_call(served, "calculator", {"operation": "pow", "a": 1, "b": 0}))
    assert wrong.is_error is True
    assert "calculator: Input validation failed: operation" in wrong.content[0]["text"]
    unknown = asyncio.run(_call(served, "nope", {}))
    assert unknown.is_error is True
    assert unknown.content[0]["text"].startswith("Tool 'nope' not found")


def test_the_ported_datetime_tool_answers_over_mcp(served: str) -> None:
    result = asyncio.run(_call(served, "get_current_datetime", {"format": "date"}))
    assert result.is_error is False
    assert result.structured_content["timezone"] == "UTC"
    assert len(result.structured_content["datetime"]) == len("2026-01-31")
