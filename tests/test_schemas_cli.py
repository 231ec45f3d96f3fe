"""``langop-infra schemas`` end to end against real official-SDK MCP servers on loopback, the
lock logic of ``langop_infra.sync._lock``, and a concurrency check of its sync."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp.server.mcpserver import MCPServer

from langop_infra.cli.main import main
from langop_infra.sync._compare import schema_hash
from langop_infra.sync._lock import (
    LockEntry,
    LockError,
    SyncTarget,
    check_lock,
    dump_lock,
    load_lock,
    parse_lock,
    save_lock,
    sync_all,
    updated_lock,
)
from tests.faultservers import gathering_server_app, slow_server_app
from tests.support.loopback import free_port, serve

PROJECT_DIR = Path(__file__).resolve().parents[1]

# The shape of stacks/Pulumi.dev.yaml: two service tools with schema sync, plus a sidecar tool
# and a tool with sync disabled, neither of which may appear in the lock.
STACK_CONFIG = """
config:
  kubernetes:context: ci
  langop-infra:namespace: research-ci
  langop-infra:partOf: research-assistant
  langop-infra:secrets:
    sync-credentials:
      token: ci-sync-token
  langop-infra:tools:
    - name: memory
      image: ghcr.io/acme/memory-mcp:main
      persistence: {size: 1Gi, mountPath: /data}
      schemaSync:
        timeout: 5s
        headers:
          - name: X-Sync-Token
            valueFrom:
              secretKeyRef: {name: sync-credentials, key: token}
    - name: docs-search
      image: ghcr.io/acme/docs-search-mcp:main
      port: 9090
      schemaSync: {timeout: 5s}
    - name: legacy-search
      image: ghcr.io/acme/legacy-search-mcp:main
      schemaSync: {enabled: false}
    - name: workspace-files
      image: ghcr.io/acme/files-mcp:main
      deploymentMode: sidecar
      port: 8181
  langop-infra:agents:
    - name: researcher
      image: ghcr.io/acme/research-agent:main
      tools:
        - name: memory
        - name: docs-search
        - name: workspace-files
"""


def memory_server() -> MCPServer:
    server = MCPServer("memory")

    @server.tool()
    def remember(content: str, tags: list[str] | None = None) -> str:
        """Store information in long-term memory."""
        return "Stored."

    return server


def docs_server() -> MCPServer:
    server = MCPServer("docs-search")

    @server.tool()
    def search(query: str, limit: int = 10) -> str:
        """Search the documentation."""
        return "nothing found"

    @server.tool()
    def fetch_page(url: str) -> str:
        """Fetch one documentation page."""
        return ""

    return server


class HeaderRecorder:
    """ASGI wrapper keeping the ``X-Sync-Token`` header of every HTTP request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.tokens: list[str | None] = []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            token = headers.get(b"x-sync-token")
            self.tokens.append(token.decode() if token else None)
        await self.app(scope, receive, send)


@dataclass
class Fleet:
    """The two tool servers, each stoppable on its own."""

    memory: MCPServer
    docs: MCPServer
    urls: dict[str, str]
    recorder: HeaderRecorder
    stacks: dict[str, ExitStack] = field(default_factory=dict)

    def stop(self, name: str) -> None:
        self.stacks[name].close()


@pytest.fixture
def fleet() -> Iterator[Fleet]:
    memory, docs = memory_server(), docs_server()
    recorder = HeaderRecorder(memory.streamable_http_app())
    stacks = {"memory": ExitStack(), "docs-search": ExitStack()}
    urls = {
        "memory": stacks["memory"].enter_context(serve(recorder)) + "/mcp",
        "docs-search": stacks["docs-search"].enter_context(serve(docs.streamable_http_app()))
        + "/mcp",
    }
    try:
        yield Fleet(memory, docs, urls, recorder, stacks)
    finally:
        close_all(stacks.values())


def close_all(stacks: Iterable[ExitStack]) -> None:
    """Stop servers in parallel: each uvicorn takes ~0.2 s to notice it should exit."""
    with ThreadPoolExecutor() as pool:
        list(pool.map(ExitStack.close, stacks))


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "Pulumi.ci.yaml"
    path.write_text(STACK_CONFIG)
    return path


def schemas(
    capsys: pytest.CaptureFixture[str],
    config: Path,
    lock: Path,
    urls: dict[str, str],
    *extra: str,
) -> tuple[int, str, str]:
    """Run ``langop-infra schemas`` in-process: exit code, stdout, stderr."""
    argv = ["schemas", "--config", str(config), "--project-dir", str(PROJECT_DIR)]
    argv += ["--lock", str(lock), *extra]
    for tool, url in urls.items():
        argv += ["--url", f"{tool}={url}"]
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# The shipped stack's sidecar tool is synced through agent pods, which no run here reaches.
SIDECAR_NOTE = (
    "langop-infra schemas: note: skipped sidecar tool workspace-files (it listens inside agent "
    "pods); lock it with --url workspace-files=<its MCP URL>\n"
)


def listed_tools(server: MCPServer) -> list[dict[str, Any]]:
    """The server's tools as ``tools/list`` sends them (what the lock must hold)."""
    tools = asyncio.run(server.list_tools())
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


@pytest.fixture
def locked(fleet: Fleet, tmp_path: Path) -> Path:
    """The lock of the fleet as it starts, written the way ``--update`` writes it (without
    rendering the stack again: the update test covers that path)."""
    lock = tmp_path / "schemas.lock.yaml"
    targets = [SyncTarget(name, url) for name, url in fleet.urls.items()]
    update = updated_lock({}, sync_all(targets, deadline=5))
    assert update.ok, update.errors
    save_lock(lock, update.entries)
    return lock


# --- end to end ----------------------------------------------------------------------------


def test_update_writes_the_lock_with_the_served_schemas(
    fleet: Fleet, config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "schemas.lock.yaml"
    code, out, err = schemas(capsys, config_file, lock, fleet.urls, "--update")
    assert code == 0, err
    assert "docs-search: 2 tools" in out and "(added)" in out
    assert f"wrote {lock}" in out

    data = yaml.safe_load(lock.read_text())
    assert data["version"] == 1
    assert sorted(data["tools"]) == ["docs-search", "memory"]  # no sidecar, no disabled tool
    memory, docs = data["tools"]["memory"], data["tools"]["docs-search"]
    assert set(docs) == {"schemaHash", "tools"}  # nothing time-dependent
    assert [t["name"] for t in docs["tools"]] == ["fetch_page", "search"]
    assert [t["name"] for t in memory["tools"]] == ["remember"]
    assert memory["schemaHash"] == schema_hash(listed_tools(fleet.memory))
    assert docs["schemaHash"] == schema_hash(listed_tools(fleet.docs))
    assert memory["tools"][0]["inputSchema"]["required"] == ["content"]
    assert memory["tools"][0]["description"] == "Store information in long-term memory."
    # The secretKeyRef header reached the server, unwrapped from its secret.
    assert fleet.recorder.tokens and set(fleet.recorder.tokens) == {"ci-sync-token"}

    # Deterministic: a second update with nothing changed rewrites the same bytes.
    before = lock.read_bytes()
    code, out, _ = schemas(capsys, config_file, lock, fleet.urls, "--update")
    assert code == 0 and "memory: 1 tool" in out and "(unchanged)" in out
    assert lock.read_bytes() == before


def test_json_lock_by_extension(
    fleet: Fleet, config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "schemas.lock.json"
    assert schemas(capsys, config_file, lock, fleet.urls, "--update")[0] == 0
    data = json.loads(lock.read_text())
    assert data["tools"]["docs-search"]["schemaHash"] == schema_hash(listed_tools(fleet.docs))
    code, out, _ = schemas(capsys, config_file, lock, fleet.urls)
    assert code == 0
    assert "docs-search: no changes" in out and "memory: no changes" in out


def test_unchanged_servers_exit_0_with_no_changes(
    fleet: Fleet, config_file: Path, locked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = schemas(capsys, config_file, locked, fleet.urls, "--strict")
    assert code == 0, err
    assert out.splitlines() == [
        "docs-search: no changes",
        "memory: no changes",
        "2 tool(s): 2 unchanged; no changes",
    ]


def test_added_tool_is_compatible_and_fails_only_under_strict(
    fleet: Fleet, config_file: Path, locked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    @fleet.memory.tool()
    def recall(query: str) -> str:
        """Retrieve information from long-term memory."""
        return ""

    code, out, err = schemas(capsys, config_file, locked, fleet.urls)
    assert code == 0, err
    assert "memory: 0 breaking, 1 compatible change(s)\n  compatible recall: tool added\n" in out
    assert "docs-search: no changes" in out
    assert out.rstrip().endswith("changes, none breaking")

    code, out, _ = schemas(capsys, config_file, locked, fleet.urls, "--strict")
    assert code == 1
    assert "compatible recall: tool added" in out


def test_optional_input_field_is_compatible(
    fleet: Fleet, config_file: Path, locked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet.docs.remove_tool("search")

    @fleet.docs.tool()
    def search(query: str, limit: int = 10, section: str | None = None) -> str:
        """Search the documentation."""
        return ""

    code, out, err = schemas(capsys, config_file, locked, fleet.urls)
    assert code == 0, err
    assert "docs-search: 0 breaking, 1 compatible change(s)" in out
    assert "compatible search: input field 'section' added as optional" in out


def test_removed_tool_is_breaking(
    fleet: Fleet, config_file: Path, locked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet.docs.remove_tool("fetch_page")
    code, out, err = schemas(capsys, config_file, locked, fleet.urls)
    assert code == 1
    assert "docs-search: 1 breaking, 0 compatible change(s)\n" in out
    assert "  BREAKING fetch_page: tool removed" in out
    assert "memory: no changes" in out
    assert out.rstrip().endswith("breaking changes")
    assert err == SIDECAR_NOTE


def test_new_required_input_field_is_breaking(
    fleet: Fleet, config_file: Path, locked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet.memory.remove_tool("remember")

    @fleet.memory.tool()
    def remember(content: str, namespace: str, tags: list[str] | None = None) -> str:
        """Store information in long-term memory."""
        return "Stored."

    code, out, _ = schemas(capsys, config_file, locked, fleet.urls)
    assert code == 1
    assert "memory: 1 breaking, 0 compatible change(s)" in out
    assert "BREAKING remember: input field 'namespace' added as required" in out


def test_stopped_server_exits_1_with_its_error(
    fleet: Fleet, config_file: Path, locked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet.stop("docs-search")
    code, out, err = schemas(capsys, config_file, locked, fleet.urls)
    assert code == 1
    [line] = err.replace(SIDECAR_NOTE, "").splitlines()
    assert line.startswith("langop-infra schemas: docs-search: ")
    assert "refused" in line and fleet.urls["docs-search"].rsplit("/", 1)[0] in line
    assert "docs-search: unreachable (error on stderr)" in out
    assert "memory: no changes" in out


def test_update_keeps_the_entry_of_an_unreachable_tool(
    fleet: Fleet, config_file: Path, locked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = yaml.safe_load(locked.read_text())["tools"]

    @fleet.memory.tool()
    def recall(query: str) -> str:
        """Retrieve information from long-term memory."""
        return ""

    fleet.stop("docs-search")
    code, out, err = schemas(capsys, config_file, locked, fleet.urls, "--update")
    assert code == 1
    assert "docs-search: not synced, kept its previous entry" in out
    assert "refused" in err
    new = yaml.safe_load(locked.read_text())["tools"]
    assert new["docs-search"] == old["docs-search"]
    assert [t["name"] for t in new["memory"]["tools"]] == ["recall", "remember"]
    assert new["memory"]["schemaHash"] == schema_hash(listed_tools(fleet.memory))


def test_usage_and_config_errors_exit_2(
    fleet: Fleet, config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.lock.yaml"
    code, out, err = schemas(capsys, config_file, missing, fleet.urls)
    assert code == 2 and out == ""
    assert f"{missing}: no such lock file" in err and "--update" in err

    code, _, err = schemas(
        capsys, config_file, missing, {"search": "http://127.0.0.1:1/mcp"}, "--update"
    )
    assert code == 2
    assert "--url names search, not a schema-synced tool" in err
    assert "docs-search, memory" in err

    code, _, err = schemas(capsys, config_file, tmp_path / "lock.txt", {}, "--update")
    assert code == 2 and "must end in .yaml, .yml or .json" in err

    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text(STACK_CONFIG.replace("port: 9090", "port: 70000"))
    code, _, err = schemas(capsys, bad, tmp_path / "l.yaml", {}, "--update")
    assert code == 2
    assert "invalid configuration" in err and "port" in err
    assert not (tmp_path / "l.yaml").exists()


# --- the lock logic, without the CLI -------------------------------------------------------


def tool(name: str, **properties: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


def test_dump_is_deterministic_and_round_trips() -> None:
    a = {"memory": LockEntry.from_tools([tool("recall"), tool("remember", content={})])}
    b = {"memory": LockEntry.from_tools([tool("remember", content={}), tool("recall")])}
    for fmt in ("yaml", "json"):
        text = dump_lock(a, fmt)
        assert text == dump_lock(b, fmt)
        assert parse_lock(text) == a
    assert [t["name"] for t in a["memory"].tools] == ["recall", "remember"]


def test_parse_rejects_what_is_not_a_lock(tmp_path: Path) -> None:
    with pytest.raises(LockError, match="not a schema lock"):
        parse_lock("tools: {}\n", "x.yaml")
    with pytest.raises(LockError, match=r"tools\.memory\.tools: expected a list"):
        parse_lock("version: 1\ntools: {memory: {tools: [{description: x}]}}\n")
    with pytest.raises(LockError, match="not valid YAML"):
        parse_lock("version: [1\n")
    assert load_lock(_write(tmp_path / "empty.yaml", "version: 1\n")) == {}


def test_check_reports_removed_from_stack_as_breaking_and_new_as_compatible() -> None:
    from langop_infra.mcp import ToolListing
    from langop_infra.sync._lock import SyncResult

    lock = {"old": LockEntry.from_tools([tool("a")])}
    listing = ToolListing([tool("b")], {}, "2025-11-25", "streamable-http")
    report = check_lock(lock, {"fresh": SyncResult("fresh", listing)})
    assert [(c.name, c.status) for c in report.checks] == [("fresh", "new"), ("old", "removed")]
    assert report.is_breaking and report.exit_code() == 1
    assert "old: in the lock but no longer in the stack: 1 breaking" in report.summary()
    assert "fresh: new, not in the lock: 0 breaking, 1 compatible" in report.summary()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- concurrency ---------------------------------------------------------------------------

SERVERS = 10


def test_sync_of_ten_servers_is_concurrent() -> None:
    """Each server answers tools/list only once all ten have been asked (a barrier): the
    syncs finish only if all ten run at once. No clock is read; the barrier's timeout and the
    deadline only bound a hang (then the syncs fail with the barrier broken)."""
    barrier = threading.Barrier(SERVERS, timeout=60)
    stacks = [ExitStack() for _ in range(SERVERS)]
    try:
        targets = [
            SyncTarget(
                f"tool-{i}",
                stack.enter_context(serve(gathering_server_app(barrier, f"tool_{i}_lookup")))
                + "/mcp",
            )
            for i, stack in enumerate(stacks)
        ]
        results = sync_all(targets, deadline=120)
    finally:
        barrier.abort()  # a server still waiting gives up at once
        close_all(stacks)
    assert {name: r.error for name, r in results.items()} == {t.name: "" for t in targets}
    assert results["tool-7"].listing is not None
    assert [t["name"] for t in results["tool-7"].listing.tools] == ["tool_7_lookup"]


def test_sync_reports_each_failure_without_hiding_the_others() -> None:
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    with serve(slow_server_app(0.0, "alive")) as base:
        results = sync_all(
            [SyncTarget("alive", base + "/mcp"), SyncTarget("dead", dead, timeout=2)],
            deadline=5,
        )
    assert results["alive"].ok and not results["dead"].ok
    assert "refused" in results["dead"].error and "\n" not in results["dead"].error


# --- OAuth and caps, as `pulumi up` uses them ------------------------------------------------

OAUTH_SECRET = "schemas-oauth-secret-canary-5d1c"


def oauth_stack(tmp_path: Path, issuer: str, **sync: Any) -> Path:
    """One tool whose schema sync takes a client-credentials token from ``issuer``."""
    auth = {
        "clientId": "sync-client",
        "clientSecret": {"secretKeyRef": {"name": "sync-oauth", "key": "secret"}},
        "issuer": issuer,
    }
    config = {
        "kubernetes:context": "ci",
        "langop-infra:namespace": "research-ci",
        "langop-infra:secrets": {"sync-oauth": {"secret": OAUTH_SECRET}},
        "langop-infra:tools": [
            {
                "name": "memory",
                "image": "ghcr.io/acme/memory-mcp:main",
                # auth never passes the API server proxy: direct, as validate demands
                "schemaSync": {"timeout": "5s", "access": "direct", "auth": auth, **sync},
            }
        ],
    }
    path = tmp_path / "Pulumi.ci.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return path


@pytest.fixture
def oauth_tool() -> Iterator[tuple[str, str]]:
    """The official SDK server demanding OAuth tokens from a client-credentials stand-in
    authorization server (tests/mcp/servers/oauth_servers.py): its MCP URL and issuer."""
    from tests.mcp.conftest import load_server_module

    servers = load_server_module("oauth_servers")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    issuer = servers.StandInAuthorizationServer(f"{base}/as", "sync-client", OAUTH_SECRET)

    def tools(server: MCPServer) -> MCPServer:
        @server.tool()
        def remember(content: str) -> str:
            """Store information in long-term memory."""
            return "Stored."

        @server.tool()
        def forget(content: str) -> str:
            """Drop a memory."""
            return "Dropped."

        return server

    with serve(servers.client_credentials_server(base, issuer, ["tools"], tools), port):
        yield f"{base}/mcp", issuer.base_url


def test_oauth_of_the_stack_takes_the_token_as_pulumi_up_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, oauth_tool: tuple[str, str]
) -> None:
    url, issuer = oauth_tool
    lock = tmp_path / "schemas.lock.yaml"
    code, out, err = schemas(
        capsys, oauth_stack(tmp_path, issuer), lock, {"memory": url}, "--update"
    )
    assert code == 0, err
    assert sorted(t["name"] for t in load_lock(lock)["memory"].tools) == ["forget", "remember"]
    assert OAUTH_SECRET not in out + err + lock.read_text()


def test_the_stacks_caps_bound_the_listing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, oauth_tool: tuple[str, str]
) -> None:
    url, issuer = oauth_tool
    config = oauth_stack(tmp_path, issuer, maxTools=1)
    code, out, err = schemas(capsys, config, tmp_path / "l.yaml", {"memory": url}, "--update")
    assert code == 1
    assert "memory" in err and "more than 1 tool" in err, err
    assert OAUTH_SECRET not in out + err


def test_an_oauth_secret_that_cannot_be_decrypted_fails_that_tool_with_the_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = oauth_stack(tmp_path, "http://127.0.0.1:9/as")
    text = config.read_text().replace(OAUTH_SECRET, "{secure: AAABADx9bm90LWEtY2lwaGVydGV4dA==}")
    config.write_text(text)
    code, out, err = schemas(
        capsys, config, tmp_path / "l.yaml", {"memory": "http://127.0.0.1:9/mcp"}, "--update"
    )
    assert (code, out) == (1, f"memory: not synced, no entry\nwrote {tmp_path / 'l.yaml'}\n")
    assert err == (
        "langop-infra schemas: memory: schemaSync.auth.clientSecret is a `secure:` config value "
        "that cannot be decrypted here (only the passphrase provider's can, with "
        "PULUMI_CONFIG_PASSPHRASE set); without it no token can be asked for: let `pulumi up` "
        "sync this tool\n"
    )


def test_a_url_without_a_path_gets_mcp_as_tools_does() -> None:
    from langop_infra.cli._schemas import parse_overrides

    assert parse_overrides(
        ["memory=http://127.0.0.1:18080", "docs=http://h:1/", "files=https://h/custom/mcp"]
    ) == {
        "memory": "http://127.0.0.1:18080/mcp",
        "docs": "http://h:1/mcp",
        "files": "https://h/custom/mcp",
    }
