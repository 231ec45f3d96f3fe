"""``langop_infra.mcp._confinement``: which URLs a confined client refuses, and why. The
survivors of #37's mutation run are here: a double-encoded ``%252e`` and user info in a URL."""

from __future__ import annotations

import httpx
import pytest

from langop_infra.mcp import _confinement as c
from langop_infra.mcp._errors import ConfinementError

PREFIX = "https://api.example:6443/api/v1/namespaces/tools/services/memory:8080/proxy/"


# --- prefix_problem ---------------------------------------------------------------------------


def test_a_good_prefix_has_no_problem() -> None:
    assert c.prefix_problem(PREFIX) is None
    assert c.prefix_problem("http://127.0.0.1:8080/") is None


@pytest.mark.parametrize(
    "prefix",
    [
        "ftp://host/x/",
        "https:///x/",
        "https://host/x",
        "https://host/x/?q=1",
        "https://host/x/#frag",
        "host/x/",
    ],
)
def test_a_prefix_that_cannot_confine_is_refused_with_the_rules(prefix: str) -> None:
    assert c.prefix_problem(prefix) == (
        "confine_to must be an http(s) URL with a host whose path ends in '/', "
        f"without query or fragment, got {prefix!r}"
    )


def test_a_prefix_that_is_no_url_says_so() -> None:
    assert c.prefix_problem("http://[::1") == "confine_to 'http://[::1' is not a URL"


# --- outside_reason ---------------------------------------------------------------------------


def test_urls_under_the_prefix_are_inside() -> None:
    assert c.outside_reason(PREFIX + "mcp", PREFIX) is None
    assert c.outside_reason(PREFIX + "mcp/messages?session=1", PREFIX) is None
    assert c.outside_reason(httpx.URL(PREFIX + "a/b/"), PREFIX) is None
    # the default port written out is the same port
    assert c.outside_reason("http://h/p/x", "http://h:80/p/") is None
    assert c.outside_reason("https://h:443/p/x", "https://h/p/") is None


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://api.example:6443/api/v1/namespaces/", "it is on another scheme, host or port"),
        ("https://other.example:6443/api/", "it is on another scheme, host or port"),
        ("https://api.example:6444/api/", "it is on another scheme, host or port"),
        ("https://api.example/api/", "it is on another scheme, host or port"),
    ],
)
def test_another_origin_is_outside(url: str, reason: str) -> None:
    assert c.outside_reason(url, PREFIX) == reason


def test_a_url_with_a_user_and_password_is_outside() -> None:
    url = "https://admin:pw@api.example:6443/api/v1/namespaces/tools/services/memory:8080/proxy/x"
    assert c.outside_reason(url, PREFIX) == "it carries a user name"


def test_a_url_with_a_user_name_and_no_password_is_outside() -> None:
    url = "https://admin@api.example:6443/api/v1/namespaces/tools/services/memory:8080/proxy/x"
    assert c.outside_reason(url, PREFIX) == "it carries a user name"


@pytest.mark.parametrize(
    "tail",
    ["%2e%2e/%2e%2e/secrets", "%2E/x", "a/%2e%2e", "%2e%2E/"],
)
def test_climbing_segments_plain_or_encoded_are_outside(tail: str) -> None:
    assert c.outside_reason(PREFIX + tail, PREFIX) == (
        "its path climbs with '.' or '..' segments once decoded"
    )


@pytest.mark.parametrize(
    "tail", ["%252e%252e/secrets", "%252E/x", "a%5cb", "a%5Cb", "a%00b", "%25"]
)
def test_double_encoding_a_backslash_or_a_nul_is_outside(tail: str) -> None:
    assert c.outside_reason(PREFIX + tail, PREFIX) == (
        "its path holds a backslash, a NUL or a double percent-encoding"
    )


def test_an_empty_segment_is_outside_but_a_trailing_slash_is_not() -> None:
    assert c.outside_reason(PREFIX + "a//b", PREFIX) == "its path has an empty segment ('//')"
    assert c.outside_reason(PREFIX + "a%2f%2fb", PREFIX) == ("its path has an empty segment ('//')")
    assert c.outside_reason(PREFIX + "a/", PREFIX) is None


@pytest.mark.parametrize("tail", ["../../../secrets", "./../x", "a/../../../b"])
def test_plain_dot_segments_are_cleaned_by_httpx_then_land_outside(tail: str) -> None:
    assert c.outside_reason(PREFIX + tail, PREFIX) == "its path is not under the prefix"


def test_a_sibling_path_is_outside() -> None:
    sibling = "https://api.example:6443/api/v1/namespaces/tools/services/memory:8080/proxy-x/"
    assert c.outside_reason(sibling, PREFIX) == "its path is not under the prefix"
    assert c.outside_reason("https://api.example:6443/api/v1/", PREFIX) == (
        "its path is not under the prefix"
    )


def test_an_encoded_prefix_path_is_compared_decoded() -> None:
    prefix = "https://h/api/v1/services/memory%3A8080/proxy/"
    assert c.outside_reason("https://h/api/v1/services/memory:8080/proxy/mcp", prefix) is None
    assert c.outside_reason("https://h/api/v1/services/memory%3A8080/proxy/mcp", prefix) is None


def test_an_invalid_url_is_outside() -> None:
    assert c.outside_reason("https://h:abc/x", PREFIX) == "it is not a valid URL"
    assert c.outside_reason("http://[::1", PREFIX) == "it is not a valid URL"


# --- check and shown --------------------------------------------------------------------------


def test_check_without_a_prefix_allows_anything() -> None:
    assert c.check("https://anywhere.example/x", None, "a request") is None


def test_check_raises_naming_the_request_the_url_the_prefix_and_the_reason() -> None:
    target = "https://bob:pw@evil.example/x?token=abcd#f"
    with pytest.raises(ConfinementError) as caught:
        c.check(target, PREFIX, "the message endpoint")
    message = str(caught.value)
    assert message == (
        "refused to send the message endpoint to https://evil.example/x, outside "
        f"{PREFIX} (it is on another scheme, host or port): this client's credentials are "
        "valid beyond the server, so every request stays under that prefix"
    )
    assert caught.value.target == "https://evil.example/x"
    assert "pw" not in message and "abcd" not in message


def test_check_passes_a_url_inside() -> None:
    assert c.check(PREFIX + "mcp", PREFIX, "a request") is None


def test_shown_drops_user_query_and_fragment() -> None:
    assert c.shown("https://u:p@h:1/a/b?x=1#y") == "https://h:1/a/b"
    assert c.shown(httpx.URL("https://u@h/a")) == "https://h/a"
    assert c.shown("https://h/a") == "https://h/a"


def test_a_path_that_starts_with_an_empty_segment_is_outside() -> None:
    assert c.outside_reason("https://h//x", "https://h/") == "its path has an empty segment ('//')"


def test_the_default_port_of_the_scheme_is_the_one_compared() -> None:
    assert c.outside_reason("http://h/p/x", "http://h:81/p/") == (
        "it is on another scheme, host or port"
    )
    assert c.outside_reason("https://h/p/x", "https://h:444/p/") == (
        "it is on another scheme, host or port"
    )


def test_the_query_is_not_part_of_the_path() -> None:
    assert c.outside_reason(PREFIX + "mcp?next=/../x", PREFIX) is None
    assert c.outside_reason("https://h/p/y", "https://h/p/?x") is None
