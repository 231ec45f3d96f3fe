"""``agent/_settings.py``: what the runtime reads at start, from env and config.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from langop_infra.agent._settings import (
    PATH_ROOT_ENV,
    Peer,
    RuntimeSettings,
    SettingsError,
    container_path,
    load_peers,
    load_settings,
    prefixed_headers,
)

MODEL = {"MODEL_ENDPOINT": " , http://gw:8000/ , http://other", "LLM_MODEL": "m1, m2"}


def settings(tmp_path: Path, config: str | None = None, **env: str) -> RuntimeSettings:
    if config is not None:
        path = tmp_path / "etc" / "agent" / "config.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config)
    return load_settings({PATH_ROOT_ENV: str(tmp_path), **MODEL, **env})


def refused(tmp_path: Path, config: str | None = None, **env: str) -> str:
    with pytest.raises(SettingsError) as info:
        settings(tmp_path, config, **env)
    return str(info.value)


def test_the_defaults(tmp_path: Path) -> None:
    assert settings(tmp_path) == RuntimeSettings(
        model_endpoint="http://gw:8000",
        model="m1",
        api_key=None,
        system_prompt="",
        max_iterations=10,
        history_messages=40,
        history_bytes=256 * 1024,
        max_request_bytes=1024 * 1024,
        health_port=9090,
        tool_timeout=30.0,
        model_timeout=120.0,
        model_retries=3,
        turn_timeout=600.0,
        tool_concurrency=4,
        port=8080,
        path="/",
        card_path=tmp_path / "etc/agent/a2a/agent-card.json",
        config_path=tmp_path / "etc/agent/config.yaml",
        mode="serve",
        input="",
        memory_tool=None,
        memory_shared=False,
        memory_headers={},
        required_tools=(),
        require_approval=(),
        peers=(),
        peer_timeout=120.0,
        max_hops=3,
        agent_name="agent",
        config={},
    )


def test_the_dataclass_defaults_match_what_load_settings_gives(tmp_path: Path) -> None:
    given = RuntimeSettings(model_endpoint="http://gw:8000", model="m1")
    loaded = settings(tmp_path)
    assert given == RuntimeSettings(
        **{**loaded.__dict__, "card_path": given.card_path, "config_path": given.config_path}
    )
    assert (str(given.card_path), str(given.config_path)) == (
        "/etc/agent/a2a/agent-card.json",
        "/etc/agent/config.yaml",
    )
    assert "secret" not in repr(RuntimeSettings("e", "m", api_key="secret"))
    assert "h-secret" not in repr(Peer("p", "u", headers={"A": "h-secret"}))
    assert Peer("p", "u").card_url == "" and dict(Peer("p", "u").headers) == {}


def test_every_env_setting_is_read(tmp_path: Path) -> None:
    got = settings(
        tmp_path,
        MODEL_API_KEY="k",
        AGENT_INSTRUCTIONS="Be brief.",
        AGENT_PERSONA="Tone: dry.",
        AGENT_MAX_ITERATIONS="5",
        AGENT_HISTORY_MESSAGES="2",
        AGENT_HISTORY_BYTES="1024",
        A2A_MAX_REQUEST_BYTES="1024",
        AGENT_TOOL_TIMEOUT_SECONDS="0.001",
        AGENT_TIMEOUT_SECONDS="0.5",
        AGENT_MODEL_RETRIES="0",
        AGENT_TURN_TIMEOUT_SECONDS="7.5",
        AGENT_TOOL_CONCURRENCY="1",
        A2A_PORT="9000",
        A2A_HEALTH_PORT="9001",
        A2A_PATH="rpc",
        A2A_AGENT_CARD="/card.json",
        AGENT_MODE="scheduled",
        AGENT_INPUT="go",
        AGENT_MEMORY_SCOPE="shared",
        AGENT_MEMORY_HEADER_X_API_KEY="v",
        A2A_PEER_TIMEOUT_SECONDS="3",
        A2A_MAX_HOPS="0",
        AGENT_NAME="helper",
    )
    assert (got.api_key, got.system_prompt) == ("k", "Be brief.\n\nTone: dry.")
    assert (got.max_iterations, got.history_messages, got.history_bytes) == (5, 2, 1024)
    assert (got.max_request_bytes, got.tool_timeout, got.model_timeout) == (1024, 0.001, 0.5)
    assert (got.model_retries, got.turn_timeout, got.tool_concurrency) == (0, 7.5, 1)
    assert (got.port, got.health_port, got.path) == (9000, 9001, "/rpc")
    assert got.card_path == tmp_path / "card.json"
    assert (got.mode, got.input, got.memory_shared) == ("scheduled", "go", True)
    assert dict(got.memory_headers) == {"X-Api-Key": "v"}
    assert (got.peer_timeout, got.max_hops, got.agent_name) == (3.0, 0, "helper")


def test_ark_names_and_empty_values(tmp_path: Path) -> None:
    got = settings(
        tmp_path,
        LLM_MODEL="",
        AGENT_MODEL="ark-model",
        AGENT_SYSTEM_PROMPT="ark prompt",
        AGENT_MODE="",
        MODEL_API_KEY="",
        AGENT_MAX_ITERATIONS="",
    )
    assert (got.model, got.system_prompt, got.mode, got.api_key) == (
        "ark-model",
        "ark prompt",
        "serve",
        None,
    )
    assert got.max_iterations == 10
    assert settings(tmp_path, AGENT_PERSONA="Only persona.").system_prompt == "Only persona."


def test_without_a_model_the_runtime_does_not_start(tmp_path: Path) -> None:
    message = (
        "the agent has no model: MODEL_ENDPOINT and LLM_MODEL (or ark's AGENT_MODEL) must be "
        "set; give the agent a model (models: or model:) in the stack"
    )
    assert refused(tmp_path, MODEL_ENDPOINT=" , ") == message
    assert refused(tmp_path, LLM_MODEL="") == message
    for missing in ("MODEL_ENDPOINT", "LLM_MODEL"):
        env = {PATH_ROOT_ENV: str(tmp_path), **{k: v for k, v in MODEL.items() if k != missing}}
        with pytest.raises(SettingsError):
            load_settings(env)
    ark = {PATH_ROOT_ENV: str(tmp_path), "MODEL_ENDPOINT": "http://gw/apiX/", "AGENT_MODEL": "a"}
    assert (load_settings(ark).model, load_settings(ark).model_endpoint) == ("a", "http://gw/apiX")


def test_peers_are_read_at_start(tmp_path: Path) -> None:
    got = settings(tmp_path, A2A_PEERS='[{"name": "p", "url": "http://p"}]')
    assert got.peers == (Peer("p", "http://p"),)


@pytest.mark.parametrize(
    ("name", "raw", "why"),
    [
        ("AGENT_HISTORY_MESSAGES", "1", "must be at least 2"),
        ("AGENT_HISTORY_BYTES", "1023", "must be at least 1024"),
        ("A2A_MAX_REQUEST_BYTES", "1023", "must be at least 1024"),
        ("AGENT_TOOL_TIMEOUT_SECONDS", "0.0009", "must be at least 0.001"),
        ("AGENT_TIMEOUT_SECONDS", "0", "must be at least 0.001"),
        ("AGENT_TURN_TIMEOUT_SECONDS", "0", "must be at least 0.001"),
        ("A2A_PEER_TIMEOUT_SECONDS", "0", "must be at least 0.001"),
        ("AGENT_MODEL_RETRIES", "-1", "must be at least 0"),
        ("A2A_MAX_HOPS", "-1", "must be at least 0"),
        ("AGENT_TOOL_CONCURRENCY", "0", "must be at least 1"),
        ("AGENT_MAX_ITERATIONS", "0.5", "must be at least 1"),
        ("A2A_PORT", "0", "must be at least 1"),
        ("A2A_HEALTH_PORT", "0", "must be at least 1"),
        ("A2A_PORT", "eighty", "expected a number"),
        ("A2A_PORT", "inf", "expected a finite number"),
        ("A2A_PORT", "nan", "expected a finite number"),
    ],
)
def test_a_bad_number_names_the_variable(tmp_path: Path, name: str, raw: str, why: str) -> None:
    assert refused(tmp_path, **{name: raw}) == f"{name}={raw!r}: {why}"


CONFIG = """\
agent: {maxIterations: 7}
a2a: {port: 9100, path: a2a, cardPath: /etc/agent/a2a/card.json}
memory: {name: notes, scope: shared}
tools:
  search:
    required: true
    requireApproval: [delete, purge]
    overrides: {delete: {name: remove}, purge: {description: x}}
  fetch: {required: "true", requireApproval: [get]}
  other: plain
"""


def test_config_yaml_settings(tmp_path: Path) -> None:
    got = settings(tmp_path, CONFIG)
    assert (got.max_iterations, got.port, got.path) == (7, 9100, "/a2a")
    assert got.card_path == tmp_path / "etc/agent/a2a/card.json"
    assert (got.memory_tool, got.memory_shared) == ("notes", True)
    assert got.required_tools == ("search",)
    assert got.require_approval == (
        "search__delete",
        "search__remove",
        "search__purge",
        "fetch__get",
    )
    assert got.config["memory"] == {"name": "notes", "scope": "shared"}


def test_env_wins_over_config_yaml(tmp_path: Path) -> None:
    got = settings(
        tmp_path,
        CONFIG,
        AGENT_MAX_ITERATIONS="3",
        A2A_PORT="9200",
        A2A_PATH="/x",
        AGENT_MEMORY_SCOPE="conversation",
    )
    assert (got.max_iterations, got.port, got.path, got.memory_shared) == (3, 9200, "/x", False)
    assert settings(tmp_path, A2A_PATH="//Xrpc").path == "/Xrpc"


def test_config_yaml_of_other_shapes(tmp_path: Path) -> None:
    got = settings(tmp_path, "agent: 1\na2a: []\nmemory: x\ntools: [a]\n")
    assert (got.max_iterations, got.port, got.memory_tool, got.required_tools) == (
        10,
        8080,
        None,
        (),
    )
    assert got.require_approval == ()
    got = settings(tmp_path, "tools: {t: {requireApproval: x, overrides: []}}\n")
    assert got.require_approval == ()
    got = settings(tmp_path, "tools: {t: {requireApproval: [a], overrides: {a: {name: ''}}}}\n")
    assert got.require_approval == ("t__a",)
    assert settings(tmp_path, "").config == {}


def test_a_config_yaml_that_is_not_a_mapping_or_not_yaml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "etc/agent/config.yaml"
    assert refused(tmp_path, "[1, 2]\n") == f"agent config {path} is not a YAML mapping"
    assert refused(tmp_path, "a: [\n").startswith(f"cannot read agent config {path}: ")


def test_the_config_path_is_read_from_env_under_the_root(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("agent: {maxIterations: 4}\n")
    got = settings(tmp_path, AGENT_CONFIG_PATH="/mine.yaml")
    assert (got.config_path, got.max_iterations) == (tmp_path / "mine.yaml", 4)


def test_an_unknown_memory_scope_is_refused(tmp_path: Path) -> None:
    assert refused(tmp_path, "memory: {scope: global}\n") == (
        "memory scope 'global' (AGENT_MEMORY_SCOPE or config.yaml memory.scope): expected "
        "conversation or shared"
    )


def test_container_paths_move_under_the_root_only_when_absolute() -> None:
    assert container_path("/etc/a", {PATH_ROOT_ENV: "/r"}) == Path("/r/etc/a")
    assert container_path("/Xa", {PATH_ROOT_ENV: "/r"}) == Path("/r/Xa")
    assert container_path("etc/a", {PATH_ROOT_ENV: "/r"}) == Path("etc/a")
    assert container_path("/etc/a", {PATH_ROOT_ENV: ""}) == Path("/etc/a")
    assert container_path("/etc/a", {}) == Path("/etc/a")


def test_prefixed_headers() -> None:
    env = {"P_X_API_KEY": "1", "P_": "empty", "Q_X": "other", "P_AUTHORIZATION": "2"}
    assert prefixed_headers(env, "P_") == {"X-Api-Key": "1", "Authorization": "2"}


def test_peers_with_headers_and_tokens() -> None:
    env = {
        "A2A_PEERS": ' [{"name": "re-search", "url": "http://a", "cardUrl": "http://a/c"},'
        ' {"name": "b", "url": "http://b", "cardUrl": null}, {"name": "c", "url": "http://c"}] ',
        "A2A_PEER_RE_SEARCH_HEADER_X_TEAM": "t",
        "A2A_PEER_RE_SEARCH_TOKEN": " tok ",
        "A2A_PEER_B_TOKEN": " ",
        "A2A_PEER_B_HEADER_AUTHORIZATION": "Basic x",
    }
    assert load_peers(env) == (
        Peer("re-search", "http://a", "http://a/c", {"X-Team": "t", "Authorization": "Bearer tok"}),
        Peer("b", "http://b", "", {"Authorization": "Basic x"}),
        Peer("c", "http://c", "", {}),
    )
    env["A2A_PEER_B_TOKEN"] = "tb"
    assert load_peers(env)[1].headers == {"Authorization": "Basic x"}  # the header wins
    assert load_peers({}) == () and load_peers({"A2A_PEERS": "  "}) == ()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{", "A2A_PEERS: not JSON (Expecting property name enclosed in double quotes)"),
        ('{"name": "a"}', "A2A_PEERS: expected a JSON list of {name, url, cardUrl}"),
        ('[{"name": "a", "url": "u"}, {"name": "b"}]', "A2A_PEERS[1]: needs a name and a url"),
        ('[{"url": "u"}]', "A2A_PEERS[0]: needs a name and a url"),
        ('["a"]', "A2A_PEERS[0]: needs a name and a url"),
    ],
)
def test_bad_peers_are_refused(raw: str, message: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_peers({"A2A_PEERS": raw})
    assert str(info.value) == message
