"""A compliant LanguageTool: long-term memory (`remember`, `recall`) over MCP, stored in SQLite.

Serves MCP (streamable HTTP) at ``POST /mcp`` and readiness at ``GET /health``.

Environment:
    PORT            port to listen on (default 8080)
    HOST            address to bind (default 0.0.0.0)
    MEMORY_DB_PATH  SQLite database file (default /data/memory.db, a volume in Kubernetes)
    LOG_LEVEL       uvicorn log level (default info)
"""

# No `from __future__ import annotations`: pydantic and the SDK evaluate these annotations at
# runtime, and the module may be loaded from a file path without a sys.modules entry.
import json
import logging
import os
import sqlite3
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

import anyio.to_thread
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, ToolAnnotations
from pydantic import BaseModel, Field, StringConstraints
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__version__ = "0.1.0"

DEFAULT_DB_PATH = "/data/memory.db"
DEFAULT_PORT = 8080
# `recall` uses at most this many distinct query words, which bounds the SQL it builds.
MAX_QUERY_TERMS = 16

log = logging.getLogger("memory_tool")

Tag = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class Memory(BaseModel):
    """One stored memory."""

    id: int = Field(description="Identifier of the memory, increasing in storage order")
    content: str = Field(description="The stored information")
    tags: list[str] = Field(description="Labels given when the memory was stored")
    created_at: str = Field(description="When it was stored (ISO 8601, UTC)")


class RecallResult(BaseModel):
    """Memories matching a query, best match first."""

    memories: list[Memory] = Field(description="Matching memories, best match first")


class StoreUnavailable(Exception):
    """The SQLite store cannot be opened or used; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MemoryStore:
    """One SQLite connection per process.

    Tool handlers run store calls in worker threads (so the event loop never waits on disk);
    the lock serializes them because a sqlite3 connection must not be used concurrently.
    The connection opens lazily and reopens after a failure, so a volume that appears late heals.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def open(self) -> None:
        """Open the database now (idempotent); raises `StoreUnavailable`."""
        with self._lock:
            self._connection()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def problem(self) -> str | None:
        """None when the store can take writes, else the reason it cannot."""
        with self._lock:
            try:
                conn = self._connection()
                # Takes the write lock without writing: proves the file and its WAL are writable.
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("ROLLBACK")
            except StoreUnavailable as exc:
                return exc.reason
            except sqlite3.Error as exc:
                self._discard()
                return f"{self.path}: {exc}"
        return None

    def add(self, content: str, tags: list[str]) -> Memory:
        created_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._lock:
            cursor = self._execute(
                "INSERT INTO memories (content, tags, created_at) VALUES (?, ?, ?)",
                (content, json.dumps(tags, ensure_ascii=False), created_at),
            )
            memory_id = cursor.lastrowid
        assert memory_id is not None
        return Memory(id=memory_id, content=content, tags=tags, created_at=created_at)

    def search(self, query: str, limit: int) -> list[Memory]:
        """Memories whose content or tags contain any term of ``query``.

        Ranked by how many terms match, then newest first. Matching is substring and
        case-insensitive for ASCII (SQLite's LIKE).
        """
        terms = list(dict.fromkeys(query.split()))[:MAX_QUERY_TERMS]
        if not terms:
            return []
        match = "(content LIKE ? ESCAPE '\\' OR tags LIKE ? ESCAPE '\\')"
        score = " + ".join(f"(CASE WHEN {match} THEN 1 ELSE 0 END)" for _ in terms)
        sql = (
            "SELECT id, content, tags, created_at FROM ("
            f"SELECT id, content, tags, created_at, {score} AS score FROM memories"
            ") WHERE score > 0 ORDER BY score DESC, id DESC LIMIT ?"
        )
        params: list[object] = []
        for term in terms:
            pattern = "%" + _escape_like(term) + "%"
            params += [pattern, pattern]
        params.append(limit)
        with self._lock:
            rows = self._execute(sql, params).fetchall()
        return [
            Memory(id=row[0], content=row[1], tags=json.loads(row[2]), created_at=row[3])
            for row in rows
        ]

    def _execute(self, sql: str, params: Sequence[object]) -> sqlite3.Cursor:
        conn = self._connection()
        try:
            return conn.execute(sql, params)
        except sqlite3.Error as exc:
            # A broken connection (file removed, disk gone) is reopened by the next call.
            self._discard()
            raise StoreUnavailable(f"{self.path}: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: autocommit; each statement is its own transaction.
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            try:
                conn.execute("PRAGMA busy_timeout = 5000")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS memories ("
                    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                    " content TEXT NOT NULL,"
                    " tags TEXT NOT NULL DEFAULT '[]',"
                    " created_at TEXT NOT NULL)"
                )
            except sqlite3.Error:
                conn.close()
                raise
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open {self.path}: {exc}") from exc
        self._conn = conn
        return conn

    def _discard(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _unavailable(exc: StoreUnavailable) -> MCPError:
    # The LanguageTool contract's error shape: JSON-RPC -32603 with the reason in data.
    return MCPError(
        code=INTERNAL_ERROR, message="Memory store unavailable", data={"reason": exc.reason}
    )


def build_server(store: MemoryStore) -> MCPServer:
    """The MCP server with the `remember` and `recall` tools and `GET /health`."""
    server = MCPServer(
        name="memory",
        title="Memory",
        version=__version__,
        instructions="Long-term memory: `remember` stores information, `recall` finds it again.",
    )

    @server.tool(
        title="Remember",
        description="Store information in long-term memory",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
    )
    async def remember(
        content: Annotated[
            str,
            Field(description="Information to remember", min_length=1, max_length=100_000),
        ],
        tags: Annotated[
            list[Tag],
            Field(
                default_factory=list,
                description="Labels to file the memory under, e.g. 'preferences'",
                max_length=50,
            ),
        ],
    ) -> Memory:
        try:
            return await anyio.to_thread.run_sync(store.add, content, list(dict.fromkeys(tags)))
        except StoreUnavailable as exc:
            raise _unavailable(exc) from exc

    @server.tool(
        title="Recall",
        description="Retrieve information from long-term memory",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def recall(
        query: Annotated[
            str,
            Field(
                description="What to search for",
                min_length=1,
                max_length=1_000,
            ),
        ],
        limit: Annotated[int, Field(description="Most memories to return", ge=1, le=100)] = 10,
    ) -> RecallResult:
        try:
            memories = await anyio.to_thread.run_sync(store.search, query, limit)
        except StoreUnavailable as exc:
            raise _unavailable(exc) from exc
        return RecallResult(memories=memories)

    @server.custom_route("/health", methods=["GET"])
    async def health(_request: Request) -> JSONResponse:
        reason = await anyio.to_thread.run_sync(store.problem)
        if reason is not None:
            return JSONResponse({"status": "unavailable", "reason": reason}, status_code=503)
        return JSONResponse({"status": "ok"})

    return server


class JsonWhenUnasked:
    """A POST without ``Accept`` is handed on with ``Accept: application/json``.

    language-operator's controller discovers tools with Go's ``client.Post``, which sends no
    ``Accept``; the SDK would answer 406. No ``Accept`` means any type is acceptable (RFC 9110).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope.get("headers", [])
        asked = any(k.lower() == b"accept" and v.strip() for k, v in headers)
        if scope["type"] == "http" and scope["method"] == "POST" and not asked:
            kept = [(k, v) for k, v in headers if k.lower() != b"accept"]
            scope = {**scope, "headers": [*kept, (b"accept", b"application/json")]}
        await self.app(scope, receive, send)


def build_app(db_path: str | os.PathLike[str]) -> Starlette:
    """The ASGI app: MCP at ``POST /mcp``, readiness at ``GET /health``, store at ``db_path``."""
    store = MemoryStore(db_path)
    server = build_server(store)
    mcp_app = server.streamable_http_app(
        # Stateless: a restarted pod or another replica serves any client without a
        # session to lose, and clients need no sticky routing.
        stateless_http=True,
        # Plain JSON bodies, not event streams: the LanguageTool contract's discovery request
        # (``POST /mcp`` with ``Content-Type: application/json`` and no Accept at all, which
        # JsonWhenUnasked admits) and the upstream operator's schema sync read the response
        # as one JSON document.
        json_response=True,
        # Callers reach the tool by its Service DNS name or through the API server proxy,
        # Host values that cannot be listed here; a ClusterIP Service is no browser target.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            await anyio.to_thread.run_sync(store.open)
        except StoreUnavailable as exc:
            # Not fatal: /health reports 503 with the reason and the store is retried per call.
            log.error("memory store unavailable: %s", exc.reason)
        try:
            async with server.session_manager.run():
                yield
        finally:
            store.close()

    return Starlette(
        routes=list(mcp_app.routes), lifespan=lifespan, middleware=[Middleware(JsonWhenUnasked)]
    )


def main() -> None:
    """Serve on ``HOST:PORT`` with the store at ``MEMORY_DB_PATH``."""
    host = os.environ.get("HOST", "0.0.0.0")
    port_text = os.environ.get("PORT", str(DEFAULT_PORT))
    try:
        port = int(port_text)
        if not 0 < port < 65536:
            raise ValueError
    except ValueError:
        sys.exit(f"PORT must be a TCP port number (1-65535), got {port_text!r}")
    db_path = os.environ.get("MEMORY_DB_PATH", DEFAULT_DB_PATH)
    log_level = os.environ.get("LOG_LEVEL", "info").lower()
    if log_level not in uvicorn.config.LOG_LEVELS:
        sys.exit(
            f"LOG_LEVEL must be one of {', '.join(uvicorn.config.LOG_LEVELS)}, got {log_level!r}"
        )
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    uvicorn.run(
        build_app(db_path),
        host=host,
        port=port,
        log_level=log_level,
        # Kubernetes sends SIGTERM, then SIGKILL after the grace period (30 s by default).
        timeout_graceful_shutdown=10,
    )


if __name__ == "__main__":
    main()
