"""The stdio transport: spawn the server, newline-delimited JSON-RPC on its stdin and stdout.

Ours, not the SDK's ``stdio_client``: that one buffers a line without limit, and a line is
where a hostile server's response would grow; ``readline`` here stops at ``max_response_bytes``.

The server's stderr is kept (its last few KiB) and quoted in error messages, since that is
where a crashing server explains itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, get_default_environment

import langop_infra._json as _json
import langop_infra.mcp._jsonrpc as jsonrpc
from langop_infra.mcp._errors import MCPError, ResponseTooLarge, ServerUnreachable, TransportError
from langop_infra.mcp._jsonrpc import Message, PendingRequests
from langop_infra.mcp._options import ClientOptions

_STDERR_KEEP = 8 * 1024
# What a child inherits of our environment: the SDK's list (HOME, LOGNAME, PATH, SHELL, TERM
# and USER on POSIX); the agent's own keys (OPENAI_API_KEY, the gateway's key) stay with it.
INHERITED_ENV: tuple[str, ...] = tuple(DEFAULT_INHERITED_ENV_VARS)
_EXIT_WAIT = 1.0  # seconds for each step of shutdown: EOF on stdin, then SIGTERM, then SIGKILL


def child_environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """A stdio child's environment, as the SDK's ``stdio_client`` builds it: our
    :data:`INHERITED_ENV` (shell functions, values starting ``()``, left out), then ``env``."""
    return {**get_default_environment(), **(env or {})}


class StdioTransport:
    """A running server process; a reader task hands its responses to waiting requests."""

    name = "stdio"

    def __init__(self, process: asyncio.subprocess.Process, label: str, limit: int) -> None:
        self._process = process
        self.label = label
        self._limit = limit
        self._pending = PendingRequests()
        self._stderr = bytearray()
        self._write_lock = asyncio.Lock()
        self.protocol_version: str | None = None
        self.on_notification: Callable[[Message], None] | None = None
        self.received_bytes = 0
        self._subscription: asyncio.Task[None] | None = None
        self._reader = asyncio.create_task(self._read_stdout())
        self._stderr_reader = asyncio.create_task(self._read_stderr())

    @classmethod
    async def start(
        cls, command: Sequence[str], options: ClientOptions, env: Mapping[str, str] | None = None
    ) -> StdioTransport:
        """Spawn ``command`` with :func:`child_environment`; :class:`ServerUnreachable` if it
        fails."""
        label = shlex.join(command)
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                env=child_environment(env),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                # readline() refuses a line longer than this: the response size cap.
                limit=options.max_response_bytes,
            )
        except OSError as exc:
            raise ServerUnreachable(
                f"cannot start stdio server `{label}`: {exc.strerror or exc}; "
                "check the command and PATH",
                target=label,
            ) from None
        return cls(process, label, options.max_response_bytes)

    def diagnostics(self) -> str:
        """The last lines the server wrote to stderr, on one line."""
        lines = [ln.strip() for ln in self._stderr.decode("utf-8", "replace").splitlines()]
        text = " | ".join(ln for ln in lines[-3:] if ln)
        return text if len(text) <= 300 else "..." + text[-297:]

    def reset_session(self) -> None:
        """A stdio session lives as long as the process; nothing to forget."""
        self.protocol_version = None

    def subscribe(self, message: Message, headers: Mapping[str, str]) -> None:
        """Send ``subscriptions/listen``: its notifications arrive on stdout like any other."""
        self._subscription = asyncio.create_task(self.notify(message))

    async def request(self, message: Message, headers: Mapping[str, str] | None = None) -> Message:
        """Write a request and wait for the response with its id (``headers`` are HTTP's)."""
        return await self._pending.answer(message["id"], lambda: self.notify(message))

    async def notify(self, message: Message) -> None:
        """Write one message line to the server's stdin."""
        stdin = self._process.stdin
        assert stdin is not None
        try:
            async with self._write_lock:
                stdin.write(jsonrpc.encode(message) + b"\n")
                await stdin.drain()
        except (OSError, RuntimeError):
            raise self._exited("while we wrote to it") from None

    async def _read_stdout(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                self.received_bytes += len(line)
                await self._handle(line)
        except ValueError:  # StreamReader's "line too long"
            return self._pending.fail_all(
                ResponseTooLarge(
                    f"stdio server `{self.label}` wrote a line over {self._limit} bytes; raise "
                    "max_response_bytes if it really returns that much",
                    limit=self._limit,
                    target=self.label,
                )
            )
        except MCPError as exc:
            return self._pending.fail_all(exc)
        # Let the exit code and the last of stderr arrive: the message quotes both.
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
            await asyncio.wait_for(self._process.wait(), _EXIT_WAIT)
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_reader), _EXIT_WAIT)
        self._pending.fail_all(self._exited("before answering"))

    async def _handle(self, line: bytes) -> None:
        """Hand on the messages of one line; log lines on stdout break the protocol: skipped."""
        try:
            payload = _json.read(line, max_bytes=max(len(line), _json.MAX_BYTES))
        except _json.JSONTooDeep:
            raise jsonrpc.too_deep(self.label) from None
        except ValueError:
            return
        batch = cast("list[object]", payload) if isinstance(payload, list) else [payload]
        for message in (cast("Message", m) for m in batch if isinstance(m, dict)):
            if self._pending.deliver(message) or "method" not in message:
                continue
            if message.get("id") is not None:
                await self.notify(jsonrpc.answer_to(message))
            elif self.on_notification is not None:
                self.on_notification(message)

    async def _read_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        while chunk := await stderr.read(4096):
            self._stderr += chunk
            del self._stderr[:-_STDERR_KEEP]

    def _exited(self, when: str) -> TransportError:
        code = self._process.returncode
        status = f"exited with code {code}" if code is not None else "closed its stdout"
        detail = self.diagnostics()
        return TransportError(
            f"stdio server `{self.label}` {status} {when}"
            + (f"; its stderr ends with: {detail}" if detail else "; it wrote nothing to stderr"),
            target=self.label,
        )

    async def aclose(self) -> None:
        """Close stdin, give the server a moment to exit, then terminate, then kill it."""
        process = self._process
        assert process.stdin is not None
        for stop in (process.stdin.close, process.terminate, process.kill):
            if process.returncode is not None:
                break
            with contextlib.suppress(OSError, RuntimeError):  # ProcessLookupError included
                stop()
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                await asyncio.wait_for(process.wait(), _EXIT_WAIT)
        for task in filter(None, (self._reader, self._stderr_reader, self._subscription)):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        # A server that flooded stdout after we stopped reading leaves its pipe paused, never
        # at EOF: close it now, inside the loop, or its __del__ raises "Event loop is closed"
        # at exit. asyncio offers no public handle on the pipes of a Process.
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()
            await asyncio.sleep(0)  # let the pipes' connection_lost callbacks run
