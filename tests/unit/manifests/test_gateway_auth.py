"""``manifests/_gateway_auth.py``: who a presented gateway key belongs to, and the agents'
keys as the kubelet lays out a mounted Secret. LiteLLM's side of the hook (the 401s, the
identity it records) runs under the real proxy in tests/test_gateway_agent_keys.py."""

from __future__ import annotations

import hmac
from pathlib import Path

import pytest

from langop_infra.manifests import _gateway_auth as auth
from tests.support.secret_mount import write_secret_mount

AGENTS = {"researcher": "key-of-researcher-0001", "triage": "key-of-triage-00000002"}
MASTER = "sk-master-key-000000000000000"


def test_the_master_key_is_the_admin() -> None:
    assert auth.caller_of(MASTER, MASTER, AGENTS) == ":master"


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_an_agents_key_names_that_agent(agent: str) -> None:
    assert auth.caller_of(AGENTS[agent], MASTER, AGENTS) == agent
    assert auth.caller_of(AGENTS[agent], None, AGENTS) == agent


@pytest.mark.parametrize(
    "presented",
    [
        "",
        "key-of-researcher-000",  # a prefix
        "key-of-researcher-00011",  # one character more
        "KEY-OF-RESEARCHER-0001",
        " key-of-researcher-0001",
        "sk-master-key-00000000000000",
        MASTER + AGENTS["triage"],
    ],
)
def test_any_other_key_names_no_one(presented: str) -> None:
    assert auth.caller_of(presented, MASTER, AGENTS) is None


def test_without_a_master_key_no_key_is_the_admin() -> None:
    assert auth.caller_of("", None, {}) is None
    assert auth.caller_of("", "", {}) is None
    assert auth.caller_of(MASTER, None, AGENTS) is None
    assert auth.caller_of(MASTER, "", AGENTS) is None


def test_an_empty_key_matches_no_empty_entry() -> None:
    assert auth.caller_of("", "", {"blank": ""}) is None


def test_a_key_two_entries_share_names_the_master_then_the_first_agent() -> None:
    """Refused at no point, and deterministic: the master key first, then agents by name."""
    shared = {"b-agent": "same-key", "a-agent": "same-key"}
    assert auth.caller_of("same-key", None, shared) == "a-agent"
    assert auth.caller_of("same-key", "same-key", shared) == ":master"


def test_every_candidate_is_compared_as_an_equal_length_digest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Timing tells neither which entry matched nor a key's length: each call compares
    the presented key's digest with every entry's, all of one length."""
    seen: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def compare(a: bytes, b: bytes) -> bool:
        seen.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", compare)
    many = {f"agent-{i}": f"key-{i:04d}-{'x' * i}" for i in range(5)}
    for presented in (MASTER, many["agent-0"], many["agent-4"], "nobody's key"):
        seen.clear()
        auth.caller_of(presented, MASTER, many)
        assert seen == [(32, 32)] * 6


def test_the_keys_are_read_from_the_kubelets_layout(tmp_path: Path) -> None:
    mount = write_secret_mount(
        tmp_path / "keys",
        {"researcher": b"key-of-researcher-0001\n", "triage": b"  key-of-triage\t\n"},
    )
    assert auth.read_agent_keys(str(mount)) == {
        "researcher": "key-of-researcher-0001",
        "triage": "key-of-triage",
    }


def test_a_key_is_read_as_utf_8_whatever_the_locale(tmp_path: Path) -> None:
    mount = write_secret_mount(tmp_path / "keys", {"a": "clé-ünïcode-ключ".encode()})
    assert auth.read_agent_keys(str(mount)) == {"a": "clé-ünïcode-ключ"}
    assert auth.caller_of("clé-ünïcode-ключ", None, auth.read_agent_keys(str(mount))) == "a"


def test_empty_undecodable_hidden_and_folder_entries_are_no_agents(tmp_path: Path) -> None:
    mount = write_secret_mount(
        tmp_path / "keys",
        {"ok": b"fine-key", "blank": b"", "spaces": b" \n\t ", "binary": b"\xff\xfe\x00key"},
    )
    (mount / ".hidden").write_text("hidden-key")
    (mount / "folder").mkdir()
    assert auth.read_agent_keys(str(mount)) == {"ok": "fine-key"}


@pytest.mark.parametrize("directory", [None, "", "/nonexistent/langop-agent-keys"])
def test_no_folder_is_no_agents(directory: str | None) -> None:
    assert auth.read_agent_keys(directory) == {}


def test_a_file_in_place_of_the_folder_is_no_agents(tmp_path: Path) -> None:
    (tmp_path / "keys").write_text("not a folder")
    assert auth.read_agent_keys(str(tmp_path / "keys")) == {}


def test_a_removed_or_rotated_key_is_gone_at_the_next_read(tmp_path: Path) -> None:
    mount = write_secret_mount(tmp_path / "keys", {"a": b"key-a", "b": b"key-b"})
    assert auth.read_agent_keys(str(mount)) == {"a": "key-a", "b": "key-b"}
    write_secret_mount(mount, {"a": b"key-a2"})
    assert auth.read_agent_keys(str(mount)) == {"a": "key-a2"}


def test_a_kubelet_mount_is_read_again_when_its_data_link_moves(tmp_path: Path) -> None:
    mount = write_secret_mount(tmp_path / "keys", {"a": b"key-a", "b": b"key-b"})
    assert auth.agent_keys(str(mount)) == {"a": "key-a", "b": "key-b"}
    # The kubelet never edits a file in place: the same link means the same keys.
    (mount / "..data" / "a").write_text("edited-in-place")
    assert auth.agent_keys(str(mount)) == {"a": "key-a", "b": "key-b"}
    write_secret_mount(mount, {"a": b"key-a2"})
    assert auth.agent_keys(str(mount)) == {"a": "key-a2"}
    write_secret_mount(mount, {"a": b"key-a2", "c": b"key-c"})
    assert auth.agent_keys(str(mount)) == {"a": "key-a2", "c": "key-c"}


def test_a_folder_without_a_data_link_is_read_on_every_call(tmp_path: Path) -> None:
    folder = tmp_path / "keys"
    folder.mkdir()
    (folder / "a").write_text("key-a")
    assert auth.agent_keys(str(folder)) == {"a": "key-a"}
    (folder / "a").write_text("key-a2")
    (folder / "b").write_text("key-b")
    assert auth.agent_keys(str(folder)) == {"a": "key-a2", "b": "key-b"}


@pytest.mark.parametrize("directory", [None, ""])
def test_no_folder_named_is_no_agents(directory: str | None) -> None:
    assert auth.agent_keys(directory) == {}


def test_two_mounts_are_cached_apart(tmp_path: Path) -> None:
    one = write_secret_mount(tmp_path / "one", {"a": b"key-a"})
    two = write_secret_mount(tmp_path / "two", {"b": b"key-b"})
    assert auth.agent_keys(str(one)) == {"a": "key-a"}
    assert auth.agent_keys(str(two)) == {"b": "key-b"}
    assert auth.agent_keys(str(one)) == {"a": "key-a"}
