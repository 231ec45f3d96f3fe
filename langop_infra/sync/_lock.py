"""The schema lock: every service tool's MCP tool list, committed so CI can catch schema drift.

``langop-infra schemas`` syncs each tool concurrently (:func:`sync_all`), then either writes the
lock (:func:`updated_lock`, :func:`save_lock`) or compares the live lists with it
(:func:`check_lock`). Everything here but the sync is pure and needs neither a stack nor a CLI.

The lock is YAML or JSON (by extension), deterministic so that an unchanged stack rewrites it
byte for byte: sorted keys, each tool's MCP tools sorted by name, no timestamps::

    version: 1
    tools:
      memory:
        schemaHash: 3f1c...
        tools: [{name: recall, description: ..., inputSchema: {...}}, ...]
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from langop_infra._errors import LangopError
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.core._atomic import WriteError, write_atomically
from langop_infra.core._redact import redact, secret_strings
from langop_infra.core._text import one_line
from langop_infra.sync import _lock_json as lock_json
from langop_infra.sync._compare import (
    MAX_NESTING,
    SchemaComparison,
    SchemaTooDeep,
    compare_tools,
    schema_hash,
)

if TYPE_CHECKING:
    from langop_infra.mcp import ToolListing

LOCK_VERSION = 1
DEFAULT_TIMEOUT = 10.0
MAX_LOCK_BYTES = 64 * 1024 * 1024
CONNECT_RETRIES = 1
# The client enforces the deadline itself; this margin only catches a client that overruns it.
_BACKSTOP = 1.0

LockFormat = Literal["yaml", "json"]
Status = Literal["unchanged", "changed", "new", "removed", "unreachable"]


class LockError(LangopError, ValueError):
    """The lock file cannot be used: missing, unreadable, or not a lock."""


@dataclass(frozen=True)
class LockEntry:
    """One tool server's locked schema: its MCP tools (sorted by name) and their hash."""

    schema_hash: str
    tools: tuple[dict[str, Any], ...]

    @classmethod
    def from_tools(cls, tools: Sequence[Mapping[str, object]]) -> LockEntry:
        ordered = sorted((dict(t) for t in tools), key=lambda t: str(t.get("name", "")))
        return cls(schema_hash(ordered), tuple(ordered))

    def to_data(self) -> dict[str, Any]:
        return {"schemaHash": self.schema_hash, "tools": list(self.tools)}


@dataclass(frozen=True)
class SyncTarget:
    """Where to list one tool server's MCP tools, and how."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    timeout: float = DEFAULT_TIMEOUT
    tls: Mapping[str, Any] = field(default_factory=dict[str, Any])  # ClientOptions' verify / cert
    oauth: Mapping[str, Any] | None = None  # schemaSync.auth: the client-credentials grant
    # schemaSync's protocol and caps
    limits: Mapping[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True)
class SyncResult:
    """A tool server's live listing, or the one-line reason there is none."""

    name: str
    listing: ToolListing | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.listing is not None


# --- sync ----------------------------------------------------------------------------------


async def sync_targets(
    targets: Sequence[SyncTarget], *, deadline: float | None = None
) -> dict[str, SyncResult]:
    """List every target's tools concurrently; all of it ends within ``deadline`` seconds.

    ``deadline`` defaults to the largest target timeout. A failure is a result, never an
    exception, so one dead server cannot hide the others' results.
    """
    from langop_infra.mcp import MCPError, fetch_tool_listing
    from langop_infra.mcp._timeouts import timeout_after
    from langop_infra.sync._kube_proxy import proxied_refusal
    from langop_infra.sync.provider import listing_options, scrubbed_listing, sent_secrets

    bound = deadline if deadline is not None else max((t.timeout for t in targets), default=1.0)

    async def one(target: SyncTarget) -> SyncResult:
        oauth_secret = (target.oauth or {}).get("client_secret") or ""
        try:
            options = listing_options(
                target.headers,
                target.tls,
                min(target.timeout, bound),
                CONNECT_RETRIES,
                oauth=target.oauth,
                limits=target.limits,
                deadline=bound,
            )
        except (ValueError, TypeError, MCPError) as exc:  # e.g. a cap out of range
            sent = secret_strings(target.headers, [oauth_secret])
            return SyncResult(target.name, error=redact(one_line(str(exc)), sent))
        result = await attempt(target, options)
        # A server may echo what it was sent; stderr and CI logs must not show it.
        sent = sent_secrets(options, [oauth_secret])
        listing = result.listing and scrubbed_listing(result.listing, sent)
        return SyncResult(target.name, listing, redact(result.error, sent))

    async def attempt(target: SyncTarget, options: Any) -> SyncResult:
        try:
            async with timeout_after(bound + _BACKSTOP):
                listing = await fetch_tool_listing(target.url, options)
            schema_hash(listing.tools)  # a listing that cannot be hashed fails here, per tool
        except (MCPError, SchemaTooDeep) as exc:
            # Through the API server's proxy, a refusal is said as whose it is.
            said = proxied_refusal(exc, target.tls.get("confine_to"))
            return SyncResult(target.name, error=str(said))
        except TimeoutError:
            return SyncResult(target.name, error=f"{target.url}: no listing within {bound:g}s")
        except Exception as exc:  # reported per tool; the other tools' results still count
            return SyncResult(target.name, error=f"{type(exc).__name__}: {exc}")
        return SyncResult(target.name, listing=listing)

    results = await asyncio.gather(*(one(t) for t in targets))
    return {r.name: r for r in results}


def sync_all(
    targets: Sequence[SyncTarget], *, deadline: float | None = None
) -> dict[str, SyncResult]:
    """:func:`sync_targets` from synchronous code (what ``langop-infra schemas`` calls)."""
    return asyncio.run(sync_targets(targets, deadline=deadline))


# --- the lock file -------------------------------------------------------------------------


def lock_format(path: str | Path) -> LockFormat:
    """JSON for ``.json``, YAML for ``.yaml`` / ``.yml``."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    raise LockError(f"{path}: a lock file must end in .yaml, .yml or .json")


def dump_lock(entries: Mapping[str, LockEntry], fmt: LockFormat = "yaml") -> str:
    """The lock's text: the same entries always give the same bytes."""
    data = {
        "version": LOCK_VERSION,
        "tools": {name: entries[name].to_data() for name in sorted(entries)},
    }
    if fmt == "json":
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return yaml_io.dump(data)


def _named_tools(listed: object) -> bool:
    """A list of mappings, each with a string ``name``."""
    if not isinstance(listed, list):
        return False
    return all(
        isinstance(t, Mapping) and isinstance(cast("Mapping[str, object]", t).get("name"), str)
        for t in cast("list[object]", listed)
    )


def parse_lock(text: str, source: str = "lock") -> dict[str, LockEntry]:
    """Entries by tool name; :class:`LockError` naming what is wrong otherwise."""
    data = _bounded_document(text, source)
    document = cast("Mapping[str, Any]", data) if isinstance(data, Mapping) else None
    if document is None or document.get("version") != LOCK_VERSION:
        raise LockError(
            f"{source}: not a schema lock (expected version: {LOCK_VERSION} and tools:); "
            "write one with langop-infra schemas --update"
        )
    tools: object = document.get("tools") or {}
    if not isinstance(tools, Mapping):
        raise LockError(f"{source}: tools: expected a mapping of tool name to entry")
    entries: dict[str, LockEntry] = {}
    for name, entry in cast("Mapping[object, object]", tools).items():
        fields: Mapping[str, Any] = (
            cast("Mapping[str, Any]", entry) if isinstance(entry, Mapping) else {}
        )
        listed: Any = fields.get("tools")
        if not _named_tools(listed):
            raise LockError(f"{source}: tools.{name}.tools: expected a list of named tool objects")
        # The hash is recomputed rather than trusted: a hand-edited lock stays consistent.
        try:
            entries[str(name)] = LockEntry.from_tools(listed)
        except SchemaTooDeep as exc:
            raise LockError(f"{source}: tools.{name}: {exc}") from None
    return entries


def _bounded_document(text: str, source: str) -> Any:
    """The lock's one document, read as stack files are (a pull request can change it): no
    alias bomb, duplicate key or nesting beyond what a synced schema can have."""
    found = lock_json.read(text, max_depth=MAX_NESTING + 4, max_bytes=MAX_LOCK_BYTES)
    if found is not None:
        return found
    data = text.encode("utf-8")
    try:
        return yaml_io.load_config(  # JSON is YAML too
            data,
            max_bytes=MAX_LOCK_BYTES,
            max_depth=MAX_NESTING + 4,  # version/tools/<name>/tools/ above each tool list
            max_values=max(yaml_io.MAX_VALUES, len(data)),  # a value takes a byte or more
        )
    except yaml_io.ConfigYAMLError as exc:
        raise LockError(f"{source}: refused: {exc}") from None
    except yaml_io.YAMLError as exc:
        raise LockError(f"{source}: not valid YAML or JSON: {one_line(str(exc))}") from None


def load_lock(path: str | Path) -> dict[str, LockEntry]:
    path = Path(path)
    lock_format(path)
    try:
        if path.stat().st_size > MAX_LOCK_BYTES:
            raise LockError(f"{path}: over {MAX_LOCK_BYTES} bytes; not a lock file")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LockError(
            f"{path}: no such lock file; create it with langop-infra schemas --update"
        ) from None
    except OSError as exc:
        raise LockError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise LockError(f"{path}: not UTF-8 text; not a lock file") from None
    return parse_lock(text, str(path))


def save_lock(path: str | Path, entries: Mapping[str, LockEntry]) -> None:
    """Write atomically (:func:`~langop_infra.core._atomic.write_atomically`): a failed or
    killed run never leaves half a lock behind, nor a temporary file; the lock keeps its file
    mode (a new one gets the umask's). :class:`WriteError` names what went wrong."""
    path = Path(path)
    text = dump_lock(entries, lock_format(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(f"{path.parent}: cannot make the folder: {exc.strerror}") from None
    write_atomically(path, text.encode("utf-8"))


# --- update and check ----------------------------------------------------------------------


@dataclass(frozen=True)
class LockUpdate:
    """The new lock, and per tool what happened to its entry."""

    entries: dict[str, LockEntry]
    lines: tuple[str, ...]
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def updated_lock(old: Mapping[str, LockEntry], results: Mapping[str, SyncResult]) -> LockUpdate:
    """The lock for the stack's tools (``results``); a tool that failed keeps its old entry."""
    entries: dict[str, LockEntry] = {}
    lines: list[str] = []
    errors: list[str] = []
    for name in sorted(results):
        result = results[name]
        previous = old.get(name)
        if result.listing is None:
            errors.append(f"{name}: {result.error}")
            if previous is not None:
                entries[name] = previous
                lines.append(f"{name}: not synced, kept its previous entry")
            else:
                lines.append(f"{name}: not synced, no entry")
            continue
        entry = LockEntry.from_tools(result.listing.tools)
        entries[name] = entry
        state = (
            "added"
            if previous is None
            else "unchanged"
            if previous.schema_hash == entry.schema_hash
            else "updated"
        )
        lines.append(f"{name}: {_count(len(entry.tools))}, {entry.schema_hash[:12]} ({state})")
    for name in sorted(old.keys() - results.keys()):
        lines.append(f"{name}: no longer in the stack, dropped")
    return LockUpdate(entries, tuple(lines), tuple(errors))


@dataclass(frozen=True)
class ToolCheck:
    """One tool server against its lock entry."""

    name: str
    status: Status
    comparison: SchemaComparison = field(default_factory=SchemaComparison)
    error: str = ""

    @property
    def is_breaking(self) -> bool:
        return self.comparison.is_breaking

    def summary(self) -> str:
        head, _, rest = self.comparison.summary().partition("\n")
        if self.status == "unreachable":
            text = "unreachable (error on stderr)"
        elif self.status == "new":
            text = f"new, not in the lock: {head}"
        elif self.status == "removed":
            text = f"in the lock but no longer in the stack: {head}"
        else:
            text = head
        return f"{self.name}: {text}" + (f"\n{rest}" if rest else "")


@dataclass(frozen=True)
class LockReport:
    """Every tool of the stack (and of the lock) checked; ``exit_code`` is the CI verdict."""

    checks: tuple[ToolCheck, ...]

    @property
    def is_breaking(self) -> bool:
        return any(c.is_breaking for c in self.checks)

    @property
    def unreachable(self) -> tuple[ToolCheck, ...]:
        return tuple(c for c in self.checks if c.status == "unreachable")

    @property
    def has_changes(self) -> bool:
        return any(not c.comparison.is_equal for c in self.checks)

    def exit_code(self, strict: bool = False) -> int:
        """1 on a breaking change or an unreachable tool (or any change when strict), else 0."""
        failed = self.is_breaking or bool(self.unreachable) or (strict and self.has_changes)
        return 1 if failed else 0

    def errors(self) -> list[str]:
        return [f"{c.name}: {c.error}" for c in self.unreachable]

    def summary(self) -> str:
        counts = {
            status: sum(c.status == status for c in self.checks)
            for status in ("unchanged", "changed", "new", "removed", "unreachable")
        }
        breaking = sum(c.is_breaking for c in self.checks)
        tally = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        verdict = (
            "breaking changes"
            if breaking
            else "changes, none breaking"
            if self.has_changes
            else "no changes"
        )
        lines = [c.summary() for c in self.checks]
        lines.append(f"{len(self.checks)} tool(s): {tally or 'none'}; {verdict}")
        return "\n".join(lines) + "\n"


def check_lock(lock: Mapping[str, LockEntry], results: Mapping[str, SyncResult]) -> LockReport:
    """Compare each live listing with the lock; tools are reported in name order."""
    checks: list[ToolCheck] = []
    for name in sorted(results.keys() | lock.keys()):
        result, entry = results.get(name), lock.get(name)
        if result is None:
            assert entry is not None
            checks.append(ToolCheck(name, "removed", compare_tools(entry.tools, [])))
        elif result.listing is None:
            checks.append(ToolCheck(name, "unreachable", error=result.error))
        elif entry is None:
            checks.append(ToolCheck(name, "new", compare_tools([], result.listing.tools)))
        else:
            comparison = compare_tools(entry.tools, result.listing.tools)
            status: Status = "unchanged" if comparison.is_equal else "changed"
            checks.append(ToolCheck(name, status, comparison))
    return LockReport(tuple(checks))


def _count(n: int) -> str:
    return f"{n} tool{'s' if n != 1 else ''}"
