"""A small OpenAI-compatible chat server for the gateway tests.

A fake, because no real model provider is reachable here (loopback only). It answers
``POST /v1/chat/completions`` (and ``/chat/completions``) with a completion naming the model it
was asked for, records every request (model, ``Authorization`` header, body), and answers 500
for the models in ``failing`` so that LiteLLM's retries and fallbacks can be observed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


@dataclass
class FakeOpenAI:
    failing: set[str] = field(default_factory=set)
    requests: list[dict[str, Any]] = field(default_factory=list)
    script: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None

    def app(self) -> Starlette:
        routes = [
            Route(path, self._chat, methods=["POST"])
            for path in ("/v1/chat/completions", "/chat/completions")
        ]
        return Starlette(routes=routes)

    def models_asked(self) -> list[str]:
        return [r["model"] for r in self.requests]

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        model = body.get("model", "")
        self.requests.append(
            {
                "model": model,
                "authorization": request.headers.get("authorization"),
                "body": body,
            }
        )
        message: dict[str, Any] | None = {"role": "assistant", "content": f"hello from {model}"}
        if self.script is not None:
            message = self.script(body)
        if model in self.failing or message is None:
            return JSONResponse(
                {"error": {"message": "upstream down", "type": "server_error"}}, status_code=500
            )
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6},
            }
        )
