"""``langop_infra.mcp.oauth._errors``: scrubbing the client secret, a refresh token or an
authorization code out of what an authorization server's error says before it becomes the
message of an :class:`OAuthError`."""

from __future__ import annotations

from langop_infra.mcp.oauth._errors import OAuthError, scrub


def test_every_occurrence_of_every_secret_becomes_the_mark() -> None:
    text = "bad client ci:s3cr3t (s3cr3t), refresh rt-9f, code c0de"
    assert scrub(text, ["s3cr3t", None, "rt-9f", "c0de"]) == (
        "bad client ci:[secret] ([secret]), refresh [secret], code [secret]"
    )


def test_four_characters_are_a_secret_and_shorter_values_are_not() -> None:
    assert scrub("abcd abc", ["abcd"]) == "[secret] abc"
    assert scrub("abcd abc", ["abc"]) == "abcd abc"  # 'abc' would blank common words
    assert scrub("abcd", ["", None]) == "abcd"


def test_the_error_kind_is_oauth() -> None:
    assert OAuthError("x").kind == "oauth"
