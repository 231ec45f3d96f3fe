"""``langop_infra.core._redact``: what a message, a stored schema or a terminal line keeps of a
credential (nothing), function by function. The survivors of #37's mutation run are here:
4-character secrets, bare JWTs, ``client_secret``, secrets echoed as dictionary keys."""

from __future__ import annotations

import base64
import json

import pytest

from langop_infra.core import _redact as r

MARK = "[secret]"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2lnbmF0dXJl"


def test_the_mark_is_the_clients_and_the_limits_are_as_documented() -> None:
    assert r.MARK == MARK
    assert (r.LIMIT, r.MIN_SECRET, r.MIN_PREFIX) == (300, 4, 8)


# --- secret_strings ---------------------------------------------------------------------------


def test_secret_strings_walks_maps_lists_and_sets_longest_first() -> None:
    found = r.secret_strings(
        {"Authorization": "Bearer tok-123456", "X-Key": " k3y! "},
        ["listed-value", ("tupled",)],
        {"in-a-set"},
        frozenset({"frozen-one"}),
        "plain-string",
    )
    assert found == sorted(found, key=len, reverse=True)
    assert set(found) == {
        "Bearer tok-123456",
        "tok-123456",
        "k3y!",
        "listed-value",
        "tupled",
        "in-a-set",
        "frozen-one",
        "plain-string",
    }


def test_secret_strings_keeps_four_characters_and_drops_three() -> None:
    assert r.secret_strings("abcd") == ["abcd"]
    assert r.secret_strings("abc", "  ab  ", 1234, None) == []


def test_secret_strings_takes_the_token_of_a_scheme_only_when_it_is_long_enough() -> None:
    assert r.secret_strings("Basic abcd") == ["Basic abcd", "abcd"]
    assert r.secret_strings("Basic abc") == ["Basic abc"]
    # no space: nothing to split off
    assert r.secret_strings("tokenvalue") == ["tokenvalue"]


def test_secret_strings_splits_the_scheme_at_the_first_space() -> None:
    assert r.secret_strings("Scheme abcd efgh") == ["Scheme abcd efgh", "abcd efgh"]


def test_secret_strings_ignores_keys_of_a_map() -> None:
    assert r.secret_strings({"a-long-header-name": "vvvv"}) == ["vvvv"]


# --- redact -----------------------------------------------------------------------------------


def test_a_four_character_secret_is_redacted_and_a_three_character_one_is_not() -> None:
    assert r.redact("token was wxyz here", ["wxyz"]) == f"token was {MARK} here"
    assert r.redact("the cat sat", ["cat"]) == "the cat sat"


def test_a_secret_with_inner_whitespace_is_found_in_folded_text() -> None:
    assert r.redact("sent a\n  b  c d", ["a b  c d"]) == f"sent {MARK}"
    assert r.redact("sent a b  c d", ["a b  c d"]) == f"sent {MARK}"


def test_every_occurrence_of_every_secret_goes() -> None:
    text = "one s3cr3t, two s3cr3t, and t0k3n"
    assert r.redact(text, ["s3cr3t", "t0k3n"]) == f"one {MARK}, two {MARK}, and {MARK}"


def test_a_bare_jwt_is_redacted_without_being_told() -> None:
    assert r.redact(f"got {JWT} back") == f"got {MARK} back"
    # the signature may be empty (alg none), the header and payload may not be short
    assert r.redact("x eyJabcd.efgh. y") == f"x {MARK} y"
    assert r.redact("x eyJabc.efgh.ijkl y") == "x eyJabc.efgh.ijkl y"
    assert r.redact("x eyJabcd.efg.ijkl y") == "x eyJabcd.efg.ijkl y"


def test_a_jwt_inside_a_word_is_not_cut_apart() -> None:
    assert r.redact("xeyJabcd.efgh.ijkl") == "xeyJabcd.efgh.ijkl"


@pytest.mark.parametrize(
    "key",
    [
        "access_token",
        "refresh_token",
        "id_token",
        "client_secret",
        "api_key",
        "api-key",
        "apikey",
        "APIKEY",
        "token",
        "password",
        "passwd",
        "secret",
    ],
)
def test_credential_keys_lose_their_values(key: str) -> None:
    assert r.redact(f"{key}=abcd1234") == f"{key}={MARK}"
    assert r.redact(f'{{"{key}": "abcd1234"}}') == f'{{"{key}": "{MARK}"}}'
    assert r.redact(f"{key} : 'abcd1234'") == f"{key} : '{MARK}'"


def test_client_secret_in_a_form_body_is_redacted() -> None:
    # at the start of a line, where no query rule applies: only the key rule can catch it
    assert r.redact("client_secret=s3cr3t-v4lue sent") == f"client_secret={MARK} sent"
    assert r.redact("invalid client_secret: 'k3y-v4lue'") == f"invalid client_secret: '{MARK}'"
    # "secret" alone needs a word boundary, which "client_secret" does not give it
    assert r.redact("xsecret=abcd1234") == "xsecret=abcd1234"


def test_a_key_value_shorter_than_four_characters_is_kept() -> None:
    assert r.redact("token=abc") == "token=abc"


def test_key_value_stops_at_separators() -> None:
    assert r.redact("password=abcdef;rest") == f"password={MARK};rest"
    assert r.redact("password=abcdef,rest") == f"password={MARK},rest"
    assert r.redact("password=abcdef<b>") == f"password={MARK}<b>"


def test_bearer_and_basic_tokens_are_redacted_but_auth_params_are_not() -> None:
    assert r.redact("Authorization: Bearer abcd") == f"Authorization: Bearer {MARK}"
    assert r.redact("basic dXNlcjpwYXNzd29yZA==") == f"basic {MARK}"
    # base64 of letters only, then padding: a credential, not an auth-param (user:pass)
    assert r.redact("Basic dXNlcjpwYXNz==") == f"Basic {MARK}"
    assert r.redact("Basic dXNlcjpwYXNzdw=") == f"Basic {MARK}"
    assert r.redact("Basic dXNlcjpwYXNzdw=, realm") == f"Basic {MARK}, realm"
    assert r.redact("Bearer abc") == "Bearer abc"
    challenge = 'Bearer error="invalid_token", realm="x"'
    assert r.redact(challenge) == challenge


def test_url_userinfo_is_redacted_with_or_without_a_password() -> None:
    assert r.redact("GET https://user:pw@host/x") == f"GET https://{MARK}@host/x"
    assert r.redact("GET https://justuser@host/x") == f"GET https://{MARK}@host/x"
    assert r.redact("mail me at someone@example.com") == "mail me at someone@example.com"


def test_query_values_are_redacted_and_names_kept() -> None:
    assert r.redact("GET /x?code=abc&state=def#f") == f"GET /x?code={MARK}&state={MARK}#f"
    assert r.redact("GET /x?flag") == "GET /x?flag"


def test_control_characters_become_question_marks_on_one_line() -> None:
    assert r.redact("a\x1b[31mred\x7f\u202eevil\u200b") == "a?[31mred??evil?"
    assert r.redact("two\nlines\r\n  here") == "two lines here"


def test_the_line_is_cut_at_the_limit() -> None:
    assert r.redact("x" * 300) == "x" * 300
    assert r.redact("x" * 301) == "x" * 297 + "..."
    assert r.redact("y" * 20, limit=10) == "y" * 7 + "..."


def test_redact_accepts_any_object() -> None:
    assert r.redact(ValueError("password=hunter22")) == f"password={MARK}"


# --- truncated echoes -------------------------------------------------------------------------


def test_a_cut_off_echo_of_eight_characters_is_redacted() -> None:
    secret = "abcdefghijklmnop"
    assert r.redact("invalid abcdefgh...", [secret]) == f"invalid {MARK}..."
    assert r.redact("invalid abcdefgh", [secret]) == f"invalid {MARK}"


def test_a_run_of_seven_or_a_run_that_is_no_prefix_is_kept() -> None:
    secret = "abcdefghijklmnop"
    assert r.redact("invalid abcdefg...", [secret]) == "invalid abcdefg..."
    assert r.redact("invalid bcdefghij", [secret]) == "invalid bcdefghij"


def test_only_secrets_of_eight_or_more_characters_have_their_prefixes_redacted() -> None:
    assert r._cut_off_echoes("echo abcdefgh...", ["abcdefghij"]) == f"echo {MARK}..."
    assert r._cut_off_echoes("echo abcdefg...", ["abcdefghij"]) == "echo abcdefg..."
    assert r.redact("echo abcdefgh", ["abcdefghi"]) == f"echo {MARK}"


def test_a_prefix_ending_in_dots_keeps_its_dots() -> None:
    assert r.redact("was abcdefgh.....", ["abcdefghijkl"]) == f"was {MARK}....."


def test_only_dots_are_taken_off_the_end_of_a_run() -> None:
    assert r._cut_off_echoes("abcdefghX", ["abcdefghXYZ"]) == MARK
    assert r._cut_off_echoes("abcdefghX", ["abcdefghY"]) == f"{MARK}X"


def test_truncated_echoes_without_secrets_changes_nothing() -> None:
    assert r._cut_off_echoes("abcdefghij", []) == "abcdefghij"
    assert r.Scrubber(["abc"]).text("abcdefghij") == "abcdefghij"


# --- Scrubber.value (was scrub_values) ---------------------------------------------------


def test_secrets_echoed_as_dictionary_keys_are_scrubbed() -> None:
    schema = {"properties": {"tok-5e0c2b7d": {"type": "string"}}, "required": ["tok-5e0c2b7d"]}
    scrubbed = r.Scrubber(["tok-5e0c2b7d"]).value(schema)
    assert scrubbed == {"properties": {MARK: {"type": "string"}}, "required": [MARK]}


def test_scrub_values_walks_strings_lists_tuples_and_keeps_other_values() -> None:
    value = {"a": ["x wxyz y", ("wxyz",)], "n": 3, "b": True, "none": None, 7: "wxyzwxyz"}
    assert r.Scrubber(["wxyz"]).value(value) == {
        "a": [f"x {MARK} y", [MARK]],
        "n": 3,
        "b": True,
        "none": None,
        "7": f"{MARK}{MARK}",
    }


def test_scrub_values_with_only_short_secrets_returns_the_value_itself() -> None:
    value = {"k": "abc"}
    assert r.Scrubber(["abc", ""]).value(value) is value


def test_scrub_values_replaces_every_secret_in_a_string() -> None:
    assert r.Scrubber(["one-1111", "two-2222"]).value("one-1111 two-2222") == f"{MARK} {MARK}"


# --- escape and json_text ---------------------------------------------------------------------


def test_escape_writes_controls_bidi_and_separators_as_u_escapes() -> None:
    assert r.escape("a\x1bb\u202ec\u2028d\u2029e\x85f") == (
        "a\\u001bb\\u202ec\\u2028d\\u2029e\\u0085f"
    )
    assert r.escape("tab\there\n", keep="\n") == "tab\\u0009here\n"
    assert r.escape("plain ünïcode") == "plain ünïcode"


@pytest.mark.parametrize("char", sorted(r._BIDI_CHARS))
def test_escape_covers_every_bidi_control(char: str) -> None:
    assert r.escape(char) == f"\\u{ord(char):04x}"


def test_json_text_keeps_unicode_escapes_what_a_terminal_acts_on_and_still_parses() -> None:
    document = {"name": "ünï", "evil": "a\x9b31mb\u202ec\u2028d\u061ce"}
    text = r.json_text(document)
    assert "ünï" in text
    assert "\\u009b" in text and "\\u202e" in text and "\\u2028" in text and "\\u061c" in text
    assert "\x9b" not in text and "\u202e" not in text
    assert json.loads(text) == document
    assert text.startswith('{\n  "name"')
    assert r.json_text({"a": 1}, indent=None) == '{"a": 1}'


# --- Scrubber: the forms a secret was sent in, learned tokens, cut-off echoes -----------------

LONG = "p@ss w/rd+long"  # every encoding changes it


def test_a_secret_is_found_in_every_form_it_may_have_been_sent_in() -> None:
    from urllib.parse import quote, quote_plus

    scrub = r.Scrubber([LONG])
    assert scrub.text(f"<{LONG}>") == f"<{MARK}>"
    assert scrub.text(f"<{quote(LONG, safe='')}>") == f"<{MARK}>"
    assert scrub.text(f"<{quote_plus(LONG)}>") == f"<{MARK}>"
    assert scrub.text("<p@ss  w/rd+long>".replace("  ", " ")) == f"<{MARK}>"
    for prefix in ("", "a:", "ab:", "abc:"):  # every base64 alignment
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            sent = encode((prefix + LONG).encode()).decode()
            assert MARK in scrub.text(sent), (prefix, encode)
        quoted = base64.b64encode((prefix + quote(LONG, safe="")).encode()).decode()
        assert MARK in scrub.text(quoted), prefix


def test_short_secrets_have_no_base64_forms_and_tiny_forms_are_dropped() -> None:
    assert set(r.Scrubber(["ab cd"]).forms) == {"ab cd", "ab%20cd", "ab+cd"}
    assert r.Scrubber(["abc"]).forms == []
    assert r._forms("abcdefg") == {"abcdefg"}
    assert len(r._forms("abcdefgh")) > 1  # eight characters: base64 forms too


def test_base64_cores_are_what_every_prefix_and_suffix_leave_untouched() -> None:
    raw = b"abcdefghijkl"
    cores = r._base64_cores(raw)
    assert sorted(len(c) for c in cores) == [15, 15, 16]
    for core in cores:
        hits = [
            core in base64.b64encode(prefix + raw + suffix).decode()
            for prefix in (b"", b"x", b"xy", b"xyz")
            for suffix in (b"", b"!", b"!!")
        ]
        assert hits.count(True) >= 3, core  # its own alignment, with any suffix
    assert "YWJjZGVmZ2hpamts" in cores
    assert r._base64_cores(b"abcde") == set()


def test_the_longest_form_goes_first() -> None:
    assert r.Scrubber(["abcd", "abcdwxyz"]).text("abcdwxyz") == MARK


def test_learned_tokens_are_bounded_and_kept_ones_stay() -> None:
    scrub = r.Scrubber(["kept-secret-1"])
    scrub.learn("0000-token")
    for i in range(1, 64):
        scrub.learn(f"{i:04d}-token")
    scrub.learn("0000-token")  # learned again: the newest now
    scrub.learn("0064-token")
    assert scrub.text("0000-token") == MARK
    assert scrub.text("0001-token") == "0001-token"  # the oldest went
    assert scrub.text("0064-token") == MARK
    assert scrub.text("kept-secret-1") == MARK
    assert r.MAX_LEARNED == 64
    scrub.add({"h": "Bearer added-later"})
    assert scrub.text("added-later") == MARK


def test_scrubber_value_scrubs_keys_and_returns_what_it_cannot_change() -> None:
    empty = {"k": "v"}
    assert r.Scrubber().value(empty) is empty
    assert r.Scrubber(["secret-1"]).value({"secret-1": ["x secret-1", 3]}) == {
        MARK: [f"x {MARK}", 3]
    }


@pytest.mark.parametrize(
    ("text", "forms", "expected"),
    [
        ("x abcdefghij y abcdefgh", ["abcdefghijkl"], f"x {MARK} y {MARK}"),
        ("abcdefghiX", ["abcdefghij"], f"{MARK}X"),
        ("abcdefghijk", ["abcdefghij"], f"{MARK}k"),
        ("abcdefghijkl", ["abcdefghij", "cdefghijkl"], f"{MARK}{MARK}"),
        ("abcdefghijkl", ["abcdefghijkl", "cdefghij"], MARK),
        ("ab abcdefg ab", ["abcdefghij"], "ab abcdefg ab"),
        ("", ["abcdefghij"], ""),
        ("zzabcdefgh", ["abcdefghij"], f"zz{MARK}"),
    ],
)
def test_cut_off_echoes(text: str, forms: list[str], expected: str) -> None:
    assert r._cut_off_echoes(text, forms) == expected
