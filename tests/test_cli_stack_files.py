"""Stack files that must be refused before anything is built: duplicate keys, alias bombs,
deep nesting, bytes that are not UTF-8, and ``secure:`` values that are not this stack's."""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path

import pytest
import yaml

from langop_infra.cli.main import main
from langop_infra.offline._stack_secrets import PBKDF2_ITERATIONS

ROOT = Path(__file__).resolve().parents[1]
DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--project-dir", str(ROOT)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def render_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, name: str = "qa"
) -> tuple[int, str, str, Path]:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_bytes(content)
    return (*run(capsys, "render", "--config", str(path)), path)


def test_a_duplicate_key_names_both_lines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text = DEV.replace(
        "  langop-infra:partOf: research-assistant\n",
        "  langop-infra:partOf: research-assistant\n  langop-infra:namespace: other\n",
    )
    first = DEV.splitlines().index("  langop-infra:namespace: research-dev") + 1
    code, out, err, path = render_file(tmp_path, capsys, text.encode())
    assert (code, out) == (2, "")
    assert err == (
        "langop-infra render: error: invalid configuration: 1 problem\n"
        f"  - {path}:{first + 2}:3: key 'langop-infra:namespace' given twice, at line {first} "
        "and line "
        f"{first + 2}; keep one\n"
    )


def test_a_duplicate_key_deep_inside_a_tool(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text = DEV.replace("      port: 9090\n", "      port: 9090\n      port: 9191\n")
    code, _, err, _ = render_file(tmp_path, capsys, text.encode())
    assert code == 2
    assert "key 'port' given twice, at line " in err


BOMB = b"""config:
  langop-infra:namespace: x
  langop-infra:unknownKey:
    a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
    f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
    g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
    h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
    i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def test_an_alias_bomb_is_refused_before_it_is_expanded(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """About 1 KB that would expand to 387 million strings, under an unknown key."""
    assert len(BOMB) < 1024
    code, out, err, path = render_file(tmp_path, capsys, BOMB)
    assert (code, out) == (2, "")
    assert re.search(rf"  - {re.escape(str(path))}:\d+:1: expands to more than 200000 values", err)
    assert "write the values out or use fewer aliases" in err


def test_an_alias_that_contains_itself_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code, _, err, path = render_file(tmp_path, capsys, b"config:\n  a: &a [1, *a]\n")
    assert code == 2
    assert f"  - {path}:2:1: an alias refers to itself at line 2" in err


def test_nesting_past_64_levels_is_refused_with_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # Under libyaml's own limit (1000 levels), so the package's check is the one that answers.
    deep = b"config:\n  langop-infra:tools: " + b"[" * 200 + b"]" * 200 + b"\n"
    code, out, err, path = render_file(tmp_path, capsys, deep)
    assert (code, out) == (2, "")
    assert err.endswith(f"  - {path}:2:1: nested more than 64 levels deep at line 2\n")


def test_5000_levels_of_nesting_exit_2_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """libyaml (PyYAML >= 6.0.4) refuses this itself, before the package's check: either
    answer is a one-line error naming the file, never a traceback."""
    deep = b"config:\n  langop-infra:tools: " + b"[" * 5000 + b"]" * 5000 + b"\n"
    code, out, err, path = render_file(tmp_path, capsys, deep)
    assert (code, out) == (2, "")
    assert f"  - {path}:" in err
    assert "nested more than 64 levels deep" in err or "depth" in err
    assert "Traceback" not in err


def test_a_stack_file_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    latin1 = DEV.replace("research-assistant", "recherche-équipe").encode("latin-1")
    code, out, err, path = render_file(tmp_path, capsys, latin1)
    assert (code, out) == (2, "")
    offset = latin1.index(b"\xe9")
    assert err.endswith(
        f"  - {path}: not UTF-8 text (byte {offset} is b'\\xe9'); save the file as UTF-8\n"
    )


def test_the_limits_apply_to_validate_too(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_bytes(BOMB)
    code, out, err = run(capsys, "validate", "--config", str(path), "-o", "json")
    assert code == 2
    assert '"valid": false' in out and "expands to more than 200000 values" in out
    assert err == ""


def test_a_file_without_duplicates_still_renders_as_before(capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run(capsys, "render", "--stack", "dev")
    assert code == 0
    assert next(d["kind"] for d in yaml.safe_load_all(out) if d) == "Namespace"


# --- secure: values of the passphrase secrets provider ------------------------------------------

PASSPHRASE = "correct horse battery staple"
CANARY = "canary-secure-plaintext-7f3a"


def _aes(key: bytes, plaintext: str, nonce: bytes) -> str:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    sealed = AESGCM(key).encrypt(nonce, plaintext.encode(), None)
    return f"v1:{base64.b64encode(nonce).decode()}:{base64.b64encode(sealed).decode()}"


def passphrase_stack(salt: bytes, phrase: str = PASSPHRASE) -> tuple[str, bytes]:
    """``encryptionsalt`` as the Pulumi CLI writes it, and the stack's key."""
    key = hashlib.pbkdf2_hmac("sha256", phrase.encode(), salt, PBKDF2_ITERATIONS, 32)
    check = _aes(key, "pulumi", os.urandom(12))
    return f"v1:{base64.b64encode(salt).decode()}:{check}", key


@pytest.fixture(scope="module")
def stacks() -> dict[str, tuple[str, bytes]]:
    return {"qa": passphrase_stack(b"qa-salt-"), "prod": passphrase_stack(b"prod-sal")}


def stack_text(salt: str, token: str) -> bytes:
    text = DEV.replace("token: dev-search-token-not-for-prod", f"token:\n        secure: {token}")
    return f"encryptionsalt: {salt}\n{text}".encode()


def test_a_secure_value_that_is_not_a_ciphertext_of_the_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    salt = "v1:cWEtc2FsdC0=:v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    code, out, err, path = render_file(tmp_path, capsys, stack_text(salt, "AAABADx9"))
    assert (code, out) == (2, "")
    assert err.endswith(
        f"  - {path}:langop-infra:secrets.search-credentials.token: not a ciphertext of this "
        "stack's passphrase secrets provider (v1:<nonce>:<ciphertext>); set it again with "
        "`pulumi config set --secret --path 'secrets.search-credentials.token' -s qa < FILE` "
        "(the value from FILE, or typed at the prompt without `< FILE`; never as an argument, "
        "which shell history and `ps` keep)\n"
    )


@pytest.mark.slow
def test_a_secure_value_copied_from_another_stack_does_not_decrypt(
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    stacks: dict[str, tuple[str, bytes]],
) -> None:
    qa_salt, _ = stacks["qa"]
    _, prod_key = stacks["prod"]
    copied = _aes(prod_key, CANARY, os.urandom(12))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", PASSPHRASE)
    code, out, err, path = render_file(tmp_path, capsys, stack_text(qa_salt, copied))
    assert (code, out) == (2, "")
    assert err == (
        "langop-infra render: error: invalid configuration: 1 problem\n"
        f"  - {path}:langop-infra:secrets.search-credentials.token: does not decrypt for stack "
        "'qa' (copied from another stack's file?); set it again with `pulumi config set "
        "--secret --path 'secrets.search-credentials.token' -s qa < FILE` (the value from "
        "FILE, or typed at the prompt without `< FILE`; never as an argument, which shell "
        "history and `ps` keep)\n"
    )
    assert CANARY not in err and PASSPHRASE not in err


@pytest.mark.slow
def test_a_value_copied_from_a_stack_beside_it_is_copied_again_with_config_cp(
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    stacks: dict[str, tuple[str, bytes]],
) -> None:
    """The prod stack's file is beside qa's and the passphrase unlocks it: the advice names
    prod and `pulumi config cp`, which re-encrypts the value without it ever being typed."""
    qa_salt, _ = stacks["qa"]
    prod_salt, prod_key = stacks["prod"]
    copied = _aes(prod_key, CANARY, os.urandom(12))
    (tmp_path / "Pulumi.prod.yaml").write_bytes(stack_text(prod_salt, copied))
    # A stack file beside them that the passphrase does not unlock is passed over.
    (tmp_path / "Pulumi.other.yaml").write_bytes(
        stack_text(passphrase_stack(b"othersal", "x")[0], copied)
    )
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", PASSPHRASE)
    code, out, err, path = render_file(tmp_path, capsys, stack_text(qa_salt, copied))
    assert (code, out) == (2, "")
    assert err == (
        "langop-infra render: error: invalid configuration: 1 problem\n"
        f"  - {path}:langop-infra:secrets.search-credentials.token: does not decrypt for stack "
        "'qa' (it was encrypted for stack 'prod' and copied from its file); copy it with "
        "`pulumi config cp --path 'secrets.search-credentials.token' --stack prod --dest qa`\n"
    )
    assert CANARY not in err and PASSPHRASE not in err and "<value>" not in err


@pytest.mark.slow
def test_this_stacks_secure_value_renders_redacted(
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    stacks: dict[str, tuple[str, bytes]],
) -> None:
    qa_salt, qa_key = stacks["qa"]
    own = _aes(qa_key, CANARY, os.urandom(12))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", PASSPHRASE)
    code, out, err, _ = render_file(tmp_path, capsys, stack_text(qa_salt, own))
    assert (code, err) == (0, "")
    assert CANARY not in out and own not in out
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "not the passphrase")
    code, out, err, path = render_file(tmp_path, capsys, stack_text(qa_salt, own))
    assert code == 2
    assert err.endswith(
        f"  - {path}:encryptionsalt: PULUMI_CONFIG_PASSPHRASE does not unlock this stack; "
        "set the stack's passphrase\n"
    )


def test_without_a_passphrase_only_the_form_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Honest limit: offline, without the passphrase, a well-formed value of another stack
    cannot be told apart; render accepts it (and never decrypts it)."""
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    salt = "v1:cWEtc2FsdC0=:v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    well_formed = _aes(b"k" * 32, CANARY, b"n" * 12)
    code, out, _, _ = render_file(tmp_path, capsys, stack_text(salt, well_formed))
    assert code == 0
    assert CANARY not in out
