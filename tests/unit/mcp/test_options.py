"""``ClientOptions``: every bound named in one message, and a hash over every field."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import httpx2
import pytest

from langop_infra.mcp import ClientOptions


def test_every_lower_bound_is_named_with_the_value_given() -> None:
    with pytest.raises(ValueError) as caught:
        ClientOptions(
            connect_retries=-1,
            retry_backoff=-0.5,
            max_response_bytes=0,
            max_pages=0,
            max_total_bytes=0,
            max_concurrent_calls=0,
            max_queued_calls=-1,
            max_tools=0,
        )
    assert str(caught.value) == (
        "invalid ClientOptions: connect_retries must be >= 0, got -1; "
        "retry_backoff must be >= 0, got -0.5; max_response_bytes must be >= 1, got 0; "
        "max_pages must be >= 1, got 0; max_total_bytes must be >= 1, got 0; "
        "max_concurrent_calls must be >= 1, got 0; max_queued_calls must be >= 0, got -1; "
        "max_tools must be >= 1, got 0"
    )


def test_the_bounds_themselves_are_allowed() -> None:
    options = ClientOptions(connect_retries=0, retry_backoff=0, max_queued_calls=0, max_tools=1)
    assert (options.connect_retries, options.max_queued_calls, options.max_tools) == (0, 0, 1)


OTHER: dict[str, Any] = {
    "headers": {"X-A": "1"},
    "timeout": 11.0,
    "deadline": None,
    "connect_retries": 4,
    "retry_backoff": 0.3,
    "max_response_bytes": 9,
    "max_pages": 7,
    "max_total_bytes": 10,
    "max_tools": 3,
    "protocol": "2025-11-25",
    "listen": False,
    "verify": False,
    "cert": "client.pem",
    "transport": "sse",
    "auth": httpx2.BasicAuth("u", "p"),
    "confine_to": "https://api.example/proxy/",
    "tls_server_name": "kubernetes",
    "max_concurrent_calls": 2,
    "max_queued_calls": 5,
}


def test_the_hash_covers_every_field() -> None:
    assert set(OTHER) == {f.name for f in fields(ClientOptions)}
    base = ClientOptions()
    for name, value in OTHER.items():
        assert hash(replace(base, **{name: value})) != hash(base), name


def test_equal_options_hash_alike_headers_by_content_auth_by_identity() -> None:
    auth = httpx2.BasicAuth("u", "p")
    first = ClientOptions(headers={"A": "1", "B": "2"}, auth=auth)
    second = ClientOptions(headers={"B": "2", "A": "1"}, auth=auth)
    assert hash(first) == hash(second)
    assert hash(first) != hash(replace(first, auth=httpx2.BasicAuth("u", "p")))
