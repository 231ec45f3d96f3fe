"""A LangChain chat model over any OpenAI-compatible ``POST {endpoint}/chat/completions`` (the
namespace gateway, LiteLLM, vLLM, Ollama), on httpx: what :class:`LangChainLLM` uses when it is
given no LangChain model, so AgentLab's chat works without ``langchain-openai`` (and the
``openai`` SDK it pulls in). Tools bind as OpenAI function definitions; the reply's
``tool_calls`` come back as LangChain's. Needs ``langop-infra[langchain]``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, cast

import httpx
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.messages.utils import convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

import langop_infra._json as _json
from langop_infra._errors import LangopError

__all__ = ["ModelCallError", "OpenAICompatibleChat"]

# A model's answer is text and tool calls: a bound on what is read keeps a broken or hostile
# endpoint from filling memory.
MAX_REPLY_BYTES = 8 * 1024 * 1024


class ModelCallError(LangopError, RuntimeError):
    """The model endpoint failed or answered something that is not a chat completion."""


class OpenAICompatibleChat(BaseChatModel):
    """``model`` at ``endpoint`` (``.../v1``-style base URL) with ``api_key`` as a bearer;
    the endpoint and key default to the agent's env, ``MODEL_ENDPOINT`` and ``MODEL_API_KEY``,
    so ``OpenAICompatibleChat(model="gpt-4")`` reads as ``ChatOpenAI(model="gpt-4")``."""

    endpoint: str = Field(default_factory=lambda: os.environ.get("MODEL_ENDPOINT", ""))
    model: str
    api_key: str | None = Field(default_factory=lambda: os.environ.get("MODEL_API_KEY") or None)
    timeout: float = 60.0

    @property
    def _llm_type(self) -> str:
        return "openai-compatible"

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[Any, AIMessage]:
        """The model with ``tools`` (LangChain tools, pydantic models, dicts) offered."""
        definitions = [convert_to_openai_tool(t) for t in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return cast("Runnable[Any, AIMessage]", self.bind(tools=definitions, **kwargs))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with httpx.Client(timeout=self.timeout, follow_redirects=False) as client:
            response = client.post(
                self._url(), json=self._body(messages, stop, kwargs), **self._auth()
            )
        return _result(response)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
            body = self._body(messages, stop, kwargs)
            response = await client.post(self._url(), json=body, **self._auth())
        return _result(response)

    def _url(self) -> str:
        if not self.endpoint:
            raise ModelCallError("no model endpoint: pass endpoint= or set MODEL_ENDPOINT")
        return self.endpoint.rstrip("/") + "/chat/completions"

    def _auth(self) -> dict[str, Any]:
        return {"headers": {"Authorization": f"Bearer {self.api_key}"}} if self.api_key else {}

    def _body(
        self, messages: list[BaseMessage], stop: list[str] | None, extra: dict[str, Any]
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": convert_to_openai_messages(messages),
        }
        if stop:
            body["stop"] = stop
        body.update({k: v for k, v in extra.items() if k in ("tools", "tool_choice")})
        return body


def _result(response: httpx.Response) -> ChatResult:
    if len(response.content) > MAX_REPLY_BYTES:
        raise ModelCallError(f"the model's answer is over {MAX_REPLY_BYTES} bytes")
    if response.status_code != 200:
        raise ModelCallError(
            f"the model answered HTTP {response.status_code}: {response.text[:200]}"
        )
    try:
        body = _json.read(response.content)
        message = cast("dict[str, Any]", body)["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ModelCallError(f"not a chat completion: {response.text[:200]!r}") from None
    calls = [_tool_call(mapping(c)) for c in items(message.get("tool_calls"))]
    reply = AIMessage(content=message.get("content") or "", tool_calls=calls)
    return ChatResult(generations=[ChatGeneration(message=reply)])


def _tool_call(call: dict[str, Any]) -> ToolCall:
    function = mapping(call.get("function"))
    text: object = function.get("arguments") or "{}"
    try:
        args: object = _json.read(text) if isinstance(text, str) else text
    except ValueError:
        args = {"__unparsed__": text}  # the tool refuses it, and the LLM reads why
    return ToolCall(
        name=str(function.get("name", "")), args=mapping(args), id=str(call.get("id", ""))
    )


def mapping(value: object) -> dict[str, Any]:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def items(value: object) -> list[object]:
    return cast("list[object]", value) if isinstance(value, list) else []
