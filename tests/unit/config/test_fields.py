"""``langop_infra.config._fields``: the shared field validators and types, one by one. The
survivors of #37's mutation run are here: a header value holding a bare LF, and a URL with a
user name and no password."""

from __future__ import annotations

import math
from typing import Any

import pydantic
import pytest
from pydantic_core import PydanticCustomError

from langop_infra.config import _fields as f


def refused(check: Any, value: Any) -> PydanticCustomError:
    with pytest.raises(PydanticCustomError) as caught:
        check(value)
    return caught.value


def test_invalid_carries_a_langop_type_slug_and_the_message_as_given() -> None:
    error = f.invalid("thing", "say {what} to do")
    assert error.type == "langop_thing"
    assert error.message() == "say {what} to do"


# --- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "a-b", "0a", "a" * 63, "abc123"])
def test_dns_label_accepts(name: str) -> None:
    assert f.dns_label(name) == name


@pytest.mark.parametrize("name", ["", "A", "-a", "a-", "a_b", "a.b", "a" * 64])
def test_dns_label_refuses(name: str) -> None:
    error = refused(f.dns_label, name)
    assert error.type == "langop_dns_label"
    assert error.message() == (
        f"{name!r} is not a valid name: use at most 63 lower-case letters, digits and '-', "
        "starting and ending with a letter or digit (a DNS-1123 label)"
    )


def test_dns1035_label_wants_a_letter_first() -> None:
    assert f.dns1035_label("memory") == "memory"
    error = refused(f.dns1035_label, "1memory")
    assert error.type == "langop_dns1035_label"
    assert error.message() == (
        "'1memory' is not a valid tool name: start it with a letter, as a Service name must "
        "(a DNS-1035 label)"
    )
    assert refused(f.dns1035_label, "Memory").type == "langop_dns_label"


@pytest.mark.parametrize("name", ["a", "a.b", "a-b.c-d", "a" * 63 + "." + "b" * 63])
def test_dns_subdomain_accepts(name: str) -> None:
    assert f.dns_subdomain(name) == name


@pytest.mark.parametrize("name", ["", "a..b", ".a", "a.", "A.b", ("a" * 63 + ".") * 4])
def test_dns_subdomain_refuses(name: str) -> None:
    error = refused(f.dns_subdomain, name)
    assert error.type == "langop_dns_subdomain"
    assert error.message() == (
        f"{name!r} is not a valid name: use lower-case letters, digits, '-' and '.' "
        "(a DNS-1123 subdomain, at most 253 characters)"
    )


def test_dns_subdomain_length_limit_is_253() -> None:
    name = ".".join(["a" * 63] * 3) + "." + "b" * 61  # 253 characters
    assert len(name) == 253
    assert f.dns_subdomain(name) == name
    assert refused(f.dns_subdomain, name + "b").type == "langop_dns_subdomain"


# --- paths and URLs ---------------------------------------------------------------------------


def test_http_path() -> None:
    assert f.http_path("/mcp") == "/mcp"
    for bad in ("mcp", "/a b", "/a\tb", ""):
        error = refused(f.http_path, bad)
        assert error.type == "langop_http_path"
        assert (
            error.message() == f"{bad!r} is not an HTTP path: start it with '/' and use no spaces"
        )


@pytest.mark.parametrize(
    ("path", "canonical"),
    [
        ("/mcp", "/mcp"),
        ("/%7Euser/mcp", "/~user/mcp"),
        ("/a%41b", "/aAb"),
        ("/a%3ab", "/a%3Ab"),
        ("/a%2Db%5f", "/a-b_"),
        ("/x/", "/x/"),
    ],
)
def test_canonical_mcp_path_normalises_escapes(path: str, canonical: str) -> None:
    assert f.canonical_mcp_path(path) == canonical


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/mcp?x=1", "must not carry a query string or fragment"),
        ("/mcp#frag", "must not carry a query string or fragment"),
        ("/a//b", "must not contain '//' or '\\'"),
        ("/a\\b", "must not contain '//' or '\\'"),
        ("/a/%2e%2e/b", "must not contain encoded '.', '/' or '\\' (%2e, %2f, %5c)"),
        ("/a%2Fb", "must not contain encoded '.', '/' or '\\' (%2e, %2f, %5c)"),
        ("/a%5Cb", "must not contain encoded '.', '/' or '\\' (%2e, %2f, %5c)"),
        ("/a/../b", "must not contain '.' or '..' segments"),
        ("/a/./b", "must not contain '.' or '..' segments"),
        ("/..", "must not contain '.' or '..' segments"),
    ],
)
def test_canonical_mcp_path_refuses_what_could_climb_out(path: str, says: str) -> None:
    error = refused(f.canonical_mcp_path, path)
    assert error.type == "langop_canonical_mcp_path"
    assert error.message() == f"{says}; write it as a plain path such as /mcp"


def test_canonical_mcp_path_checks_http_path_first() -> None:
    assert refused(f.canonical_mcp_path, "mcp").type == "langop_http_path"


@pytest.mark.parametrize(
    "url", ["http://h", "https://h:8443/a/b?c=d", "https://10.0.0.1/x", "http://svc.ns.svc:80"]
)
def test_http_url_accepts(url: str) -> None:
    assert f.http_url(url) == url


@pytest.mark.parametrize("url", ["ftp://h/x", "https://", "https:///x", "h/x", "https://h/a b"])
def test_http_url_refuses_what_is_no_http_url(url: str) -> None:
    error = refused(f.http_url, url)
    assert error.type == "langop_http_url"
    assert error.message() == (
        f"{url!r} is not an http(s) URL: write it as https://host[:port]/path"
    )


@pytest.mark.parametrize(
    "url", ["https://user:pw@h/x", "https://user@h/x", "http://:pw@h", "https://user@h"]
)
def test_http_url_refuses_a_user_with_or_without_a_password(url: str) -> None:
    error = refused(f.http_url, url)
    assert error.type == "langop_http_url"
    assert error.message() == (
        "the URL carries a user or password; remove them and send credentials in a "
        "header from a Secret"
    )


@pytest.mark.parametrize(
    "url", ["https://h/users/@me", "https://h/a@b/c", "https://h/x?next=http://u@b"]
)
def test_an_at_sign_after_the_authority_is_no_user(url: str) -> None:
    assert f.http_url(url) == url


# --- durations --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("30s", 30.0),
        ("1m", 60.0),
        ("500ms", 0.5),
        ("1h", 3600.0),
        ("2", 2.0),
        (" 1.5 m ", 90.0),
        (3, 3.0),
        (0.25, 0.25),
    ],
)
def test_parse_duration(value: Any, seconds: float) -> None:
    assert f.parse_duration(value) == seconds


@pytest.mark.parametrize("value", ["30x", "", "s", "-1s", "1e3", None, [1]])
def test_parse_duration_refuses(value: Any) -> None:
    error = refused(f.parse_duration, value)
    assert error.type == "langop_parse_duration"
    assert error.message() == (
        f"{value!r} is not a duration: write it as '30s', '1m', '500ms' or seconds"
    )


def test_parse_duration_refuses_booleans_and_overflow() -> None:
    error = refused(f.parse_duration, True)
    assert error.message() == "expected a duration such as '30s' or '1m'"
    assert error.type == "langop_parse_duration"
    huge = refused(f.parse_duration, 10**400)
    assert huge.message() == "far too long a duration: give at most a few minutes"
    assert huge.type == "langop_parse_duration"


def test_duration_between_is_inclusive() -> None:
    check = f.duration_between(1, 60).func
    assert check(1.0) == 1.0
    assert check(60.0) == 60.0
    for bad in (0.5, 60.5):
        error = refused(check, bad)
        assert error.type == "langop_duration_between"
        assert error.message() == f"must be between 1s and 60s, got {bad:g}s"


# --- images, env, labels ----------------------------------------------------------------------


def test_non_empty_image() -> None:
    assert f.non_empty_image("ghcr.io/a/b:1") == "ghcr.io/a/b:1"
    for bad in ("", "   ", "a b", "a\tb"):
        error = refused(f.non_empty_image, bad)
        assert error.type == "langop_non_empty_image"
        assert error.message() == (
            "set a container image reference such as 'ghcr.io/org/tool:1.2.3'"
        )


@pytest.mark.parametrize("name", ["A", "_a", "a.b-c", "-x", ".x", "A1"])
def test_env_name_accepts(name: str) -> None:
    assert f.env_name(name) == name


@pytest.mark.parametrize("name", ["", "1A", "A B", "A=B", "Ä"])
def test_env_name_refuses(name: str) -> None:
    error = refused(f.env_name, name)
    assert error.type == "langop_env_name"
    assert error.message() == (
        f"{name!r} is not a valid environment variable name: use letters, digits, '_', '-' "
        "and '.', not starting with a digit"
    )


@pytest.mark.parametrize("key", ["app", "example.com/app", "a-b_c.d", "A", "x/Y", "langop.io"])
def test_label_key_accepts(key: str) -> None:
    assert f.label_key(key) == key


@pytest.mark.parametrize("key", ["", "-a", "a/", "/a", "a b", "Example.com/a", "a" * 317])
def test_label_key_refuses(key: str) -> None:
    error = refused(f.label_key, key)
    assert error.type == "langop_label_key"
    assert error.message() == f"{key!r} is not a valid label or annotation key"


def test_label_key_length_limit_is_316() -> None:
    key = "a" * 253 + "/" + "b" * 62
    assert len(key) == 316
    assert f.label_key(key) == key


@pytest.mark.parametrize("key", ["langop.io/tool", "access.langop.io/memory"])
def test_label_key_refuses_our_prefixes(key: str) -> None:
    error = refused(f.label_key, key)
    assert error.type == "langop_label_key"
    assert error.message() == (
        f"{key!r} is reserved for labels langop-infra sets (langop.io/, access.langop.io/); "
        "reference the tool instead, or pick another key"
    )


def test_label_key_allows_lookalike_prefixes() -> None:
    assert f.label_key("xlangop.io/a") == "xlangop.io/a"
    assert f.label_key("langop.io.example/a") == "langop.io.example/a"


@pytest.mark.parametrize("value", ["", "a", "a-b_c.d", "A1", "a" * 63])
def test_label_value_accepts(value: str) -> None:
    assert f.label_value(value) == value


@pytest.mark.parametrize("value", ["-a", "a-", "a b", "a/b", "a" * 64])
def test_label_value_refuses(value: str) -> None:
    error = refused(f.label_value, value)
    assert error.type == "langop_label_value"
    assert error.message() == (
        f"{value!r} is not a valid label value: at most 63 letters, digits, '-', '_' and '.', "
        "starting and ending with a letter or digit"
    )


# --- headers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["plain", "with\ttab", "", "ünïcode", " x "])
def test_header_value_accepts(value: str) -> None:
    assert f.header_value(value) == value


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\r\nb", "\n", "a\x00b", "a\x1fb", "a\x7fb"])
def test_header_value_refuses_a_bare_lf_cr_or_other_controls(value: str) -> None:
    error = refused(f.header_value, value)
    assert error.type == "langop_header_value"
    assert error.message() == (
        "a header value cannot hold a line break or other control character (CR, LF)"
    )


def test_header_value_accepts_the_first_printable_and_the_last_below_del() -> None:
    assert f.header_value(" ~") == " ~"
    assert f.header_value("\x80") == "\x80"


def test_header_name() -> None:
    assert f.header_name("X-Api-Key") == "X-Api-Key"
    for bad in ("", "X Key", "X:Key", "X\nKey"):
        error = refused(f.header_name, bad)
        assert error.type == "langop_header_name"
        assert error.message() == f"{bad!r} is not a valid HTTP header name (an RFC 9110 token)"


def test_header_spec_takes_exactly_one_source() -> None:
    assert f.HeaderSpec(name="X-A", value="v").value == "v"
    assert f.HeaderSpec.model_validate(
        {"name": "X-A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    ).value_from == f.SecretSource(secret_key_ref=f.SecretKeyRef(name="s", key="k"))
    assert f.HeaderSpec(name="X-A", secret="s3cr3t").secret == "s3cr3t"
    with pytest.raises(pydantic.ValidationError) as none:
        f.HeaderSpec(name="X-A")
    assert "header 'X-A' needs exactly one of value, valueFrom, secret (found none)" in str(
        none.value
    )
    with pytest.raises(pydantic.ValidationError) as two:
        f.HeaderSpec(name="X-A", value="v", secret="s")
    assert "(found value and secret)" in str(two.value)


def test_header_spec_refuses_a_bare_lf_in_a_value_or_a_secret() -> None:
    for field in ("value", "secret"):
        with pytest.raises(pydantic.ValidationError) as caught:
            f.HeaderSpec.model_validate({"name": "X-A", field: "a\nb"})
        assert caught.value.errors()[0]["type"] == "langop_header_value"
        assert "a\nb" not in str(caught.value).replace("input_value='a\\nb'", "")


def test_header_spec_secret_must_be_a_string_or_an_output() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        f.HeaderSpec(name="X-A", secret=42)
    assert caught.value.errors()[0]["type"] == "langop_secret"
    assert "secret must be a string or a pulumi secret Output" in str(caught.value)


# --- mounts, annotations, numbers -------------------------------------------------------------


def test_not_reserved_mount_normalises() -> None:
    assert f.not_reserved_mount("/data//x/") == "/data/x"
    assert f.not_reserved_mount("data") == "/data"


@pytest.mark.parametrize("path", ["/a/../b", "/a/./b", ".."])
def test_not_reserved_mount_refuses_dot_segments(path: str) -> None:
    error = refused(f.not_reserved_mount, path)
    assert error.type == "langop_mount_path"
    assert error.message() == (
        f"{path!r} has '.' or '..' segments; write the path plainly, e.g. /data"
    )


@pytest.mark.parametrize("path", ["/", "//", ""])
def test_not_reserved_mount_refuses_the_root(path: str) -> None:
    error = refused(f.not_reserved_mount, path)
    assert error.type == "langop_mount_path"
    assert error.message() == "cannot mount over the container's root '/'; pick a folder"


def test_not_reserved_mount_refuses_every_spelling_of_a_reserved_mount() -> None:
    reserved = f.RESERVED_MOUNTS[0]
    for spelling in (reserved, reserved + "/", "/" + reserved, reserved.replace("/", "//")):
        error = refused(f.not_reserved_mount, spelling)
        assert error.type == "langop_not_reserved_mount"
        assert error.message() == (
            f"{spelling!r} is already mounted in every pod (/tmp, /etc/agent); pick another path"
        )


def test_annotations_size_counts_bytes_of_keys_and_values() -> None:
    room = f.ANNOTATIONS_LIMIT - f.OWN_ANNOTATIONS_RESERVE
    assert room == 256 * 1024 - 1024
    fits = {"k": "v" * (room - 1)}
    assert f.annotations_size(fits) == fits
    over = {"k": "v" * room}
    error = refused(f.annotations_size, over)
    assert error.type == "langop_annotations_size"
    assert error.message() == (
        f"annotations take {room + 1} bytes (keys and values); Kubernetes allows 262144 per "
        f"object and langop-infra needs up to 1024 of them, so keep yours under {room}"
    )
    # bytes, not characters
    wide = {"k": "é" * (room // 2)}
    assert refused(f.annotations_size, wide).type == "langop_annotations_size"


def test_not_bool() -> None:
    assert f.not_bool(1) == 1
    assert f.not_bool("x") == "x"
    error = refused(f.not_bool, True)
    assert error.type == "langop_int_not_bool"
    assert error.message() == "expected an integer, got true/false; write a number"
    assert refused(f.not_bool, False).type == "langop_int_not_bool"


@pytest.mark.parametrize(
    ("value", "text"), [(1, "1"), (0.5, "0.5"), (2.0, "2"), (1e-07, "0.0000001"), (250, "250")]
)
def test_number_quantity(value: Any, text: str) -> None:
    assert f.number_quantity(value) == text


def test_number_quantity_leaves_other_types_and_refuses_non_finite() -> None:
    assert f.number_quantity(True) is True
    assert f.number_quantity("250m") == "250m"
    for bad in (math.inf, math.nan):
        error = refused(f.number_quantity, bad)
        assert error.type == "langop_quantity"
        assert error.message() == f"{bad!r} is not a Kubernetes quantity such as '250m'"


@pytest.mark.parametrize("value", ["1", "250m", "0.5", "256Mi", "1Gi", "2k", "3E"])
def test_quantity_accepts(value: str) -> None:
    assert f.quantity(value) == value


@pytest.mark.parametrize("value", ["", "m", "1.", ".5", "1mi", "-1", "1 Gi"])
def test_quantity_refuses(value: str) -> None:
    error = refused(f.quantity, value)
    assert error.type == "langop_quantity"
    assert error.message() == (f"{value!r} is not a Kubernetes quantity such as '250m' or '256Mi'")


def test_cidr() -> None:
    assert f.cidr("10.0.0.0/8") == "10.0.0.0/8"
    assert f.cidr("10.1.2.3/8") == "10.1.2.3/8"  # host bits are not strict
    assert f.cidr("fd00::/8") == "fd00::/8"
    error = refused(f.cidr, "10.0.0.1")
    assert error.type == "langop_cidr"
    assert (
        error.message() == "'10.0.0.1' is an address, not a CIDR: write it as 10.0.0.1/32 or /128"
    )
    bad = refused(f.cidr, "10.0.0.0/33")
    assert bad.type == "langop_cidr"
    assert bad.message() == "'10.0.0.0/33' is not a CIDR such as '10.0.0.0/8'"


# --- secrets ----------------------------------------------------------------------------------


def test_secret_key() -> None:
    assert f.secret_key("a-b_c.D1") == "a-b_c.D1"
    assert f.secret_key("k" * 253) == "k" * 253
    for bad in ("", "a/b", "a b", "k" * 254):
        error = refused(f.secret_key, bad)
        assert error.type == "langop_secret_key"
        assert error.message().startswith(f"{bad!r} is not a valid Secret key")


class _OutputLike:
    """Has what :func:`is_secret_value` looks for on a ``pulumi.Output``."""

    def apply(self) -> None: ...

    future = None


def test_is_secret_value() -> None:
    assert f.is_secret_value("s")
    assert f.is_secret_value(_OutputLike())
    assert not f.is_secret_value(3)
    assert not f.is_secret_value(None)

    class OnlyApply:
        def apply(self) -> None: ...

    assert not f.is_secret_value(OnlyApply())


def test_secret_text() -> None:
    assert f.secret_text("s") == "s"
    error = refused(f.secret_text, 12)
    assert error.type == "langop_secret_text"
    assert error.message() == "a secret value must be a string, got int; quote it in YAML"


def test_secret_env_value() -> None:
    assert f.secret_env_value("s") == "s"
    ref = {"secretKeyRef": {"name": "s", "key": "k"}}
    assert f.secret_env_value(ref) == f.SecretSource.model_validate(ref)
    source = f.SecretSource.model_validate(ref)
    assert f.secret_env_value(source) is source
    error = refused(f.secret_env_value, 5)
    assert error.type == "langop_secret_env_value"
    assert error.message() == (
        "a secret env value is a string, a pulumi secret, or {secretKeyRef: {name, key}}"
    )


def test_instructions_text_limit_is_64_kib_in_bytes() -> None:
    assert f.MAX_INSTRUCTIONS_BYTES == 65536
    fits = "x" * 65536
    assert f.instructions_text(fits) == fits
    error = refused(f.instructions_text, "é" * 32769)
    assert error.type == "langop_instructions_text"
    assert error.message() == (
        "instructions are 65538 bytes, over the limit of 65536 (64 KiB) that an env var and "
        "the ConfigMap can carry; shorten them"
    )


# --- issuer_allowed ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://issuer.example/", True),
        ("http://127.0.0.1:9000/as", True),
        ("http://[::1]/as", True),
        ("http://localhost:8080/", True),
        ("http://LOCALHOST/", True),
        ("http://issuer.example/", False),
        ("http://10.0.0.1/", False),
        ("ftp://127.0.0.1/", False),
        ("ftp://localhost/", False),
    ],
)
def test_issuer_allowed(url: str, allowed: bool) -> None:
    assert f.issuer_allowed(url) is allowed


# --- Spec and overlay -------------------------------------------------------------------------


def test_spec_takes_both_spellings_refuses_unknown_fields_and_is_frozen() -> None:
    ref = f.SecretSource.model_validate({"secret_key_ref": {"name": "s", "key": "k"}})
    assert ref == f.SecretSource.model_validate({"secretKeyRef": {"name": "s", "key": "k"}})
    with pytest.raises(pydantic.ValidationError) as caught:
        f.SecretKeyRef.model_validate({"name": "s", "key": "k", "extra": 1})
    assert caught.value.errors()[0]["type"] == "extra_forbidden"
    with pytest.raises(pydantic.ValidationError):
        ref.secret_key_ref.name = "other"  # type: ignore[misc]


class _Inner(f.Spec):
    cpu: str = "100m"
    memory: str = "128Mi"


class _Outer(f.Spec):
    inner: _Inner = _Inner()
    name: str = "base"
    extra: _Inner | None = None


def test_overlay_merges_nested_specs_field_by_field() -> None:
    base = _Outer(inner=_Inner(cpu="1", memory="1Gi"), name="b")
    merged = f.overlay(base, _Outer.model_validate({"inner": {"cpu": "2"}}))
    assert merged == _Outer(inner=_Inner(cpu="2", memory="1Gi"), name="b")
    assert f.overlay(base, None) is base
    # a nested spec the base does not have is taken as it is
    assert f.overlay(base, _Outer(extra=_Inner(cpu="3"))).extra == _Inner(cpu="3")
    assert f.overlay(base, _Outer(name="o")) == _Outer(
        inner=_Inner(cpu="1", memory="1Gi"), name="o"
    )
