"""The text/event-stream parser the client reads with (httpx2's, under the official SDK's
transports, behind the bridge's :class:`LeadingBOM`), against the WHATWG parsing rules.

Two differences from the rules are httpx2's and harmless to MCP: ``retry`` is reported on
the event that carries it (the SDK keeps the last one), and an event whose data is empty
is still handed on (the SDK skips it)."""

from __future__ import annotations

import itertools

import httpx2
import pytest
from httpx2 import EventSource, ServerSentEvent, SSEError
from hypothesis import given, strategies as st

from langop_infra.mcp._bridge import LeadingBOM

EventTooLarge = SSEError


def decode(*chunks: bytes, max_event_size: int | None = None) -> list[ServerSentEvent]:
    """The events of a stream arriving in ``chunks`` that the SDK acts on: those with data,
    and priming events (an id and a retry time, no data)."""
    bom = LeadingBOM()
    response = httpx2.Response(
        200,
        headers={"content-type": "text/event-stream"},
        content=iter([bom.feed(chunk) for chunk in chunks]),
        request=httpx2.Request("GET", "http://127.0.0.1/mcp"),
    )
    events = EventSource(response, max_event_size=max_event_size)
    return [event for event in events if event.data or event.retry is not None]


def test_one_event() -> None:
    assert decode(b"data: hello\n\n") == [ServerSentEvent(data="hello")]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(newline: bytes) -> None:
    stream = newline.join([b"event: update", b"id: 7", b"data: a", b"data: b", b"", b""])
    assert decode(stream) == [ServerSentEvent(event="update", data="a\nb", id="7")]


def test_mixed_line_endings() -> None:
    assert decode(b"data: a\r\ndata: b\rdata: c\n\r\n") == [ServerSentEvent(data="a\nb\nc")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    stream = b": keep-alive\n:another\nfoo: bar\ndata: x\n\n"
    assert decode(stream) == [ServerSentEvent(data="x")]


def test_only_one_space_after_the_colon_is_dropped() -> None:
    assert decode(b"data:x\n\ndata:  y\n\n") == [
        ServerSentEvent(data="x"),
        ServerSentEvent(data=" y"),
    ]


def test_field_without_colon_has_an_empty_value() -> None:
    assert decode(b"data\ndata\n\n") == [ServerSentEvent(data="\n")]


def test_priming_event_with_empty_data_is_dispatched_with_its_id() -> None:
    events = decode(b"id: abc\nretry: 3000\ndata:\n\n")
    assert events == [ServerSentEvent(data="", id="abc", retry=3000)]


def test_fieldless_blank_lines_dispatch_nothing_but_keep_the_id() -> None:
    # The event type of the discarded event does not leak into the next one.
    events = decode(b"\n\nid: 5\n\nevent: ignored\n\n", b"data: x\n\n")
    assert events == [ServerSentEvent(data="x", id="5")]


def test_invalid_retry_and_id_with_nul_are_ignored() -> None:
    events = decode(b"retry: 10s\nid: a\x00b\ndata: x\n\n")
    assert events == [ServerSentEvent(data="x", id="", retry=None)]


def test_event_type_resets_after_dispatch() -> None:
    assert decode(b"event: endpoint\ndata: /messages\n\ndata: {}\n\n") == [
        ServerSentEvent(event="endpoint", data="/messages"),
        ServerSentEvent(event="message", data="{}"),
    ]


def test_leading_bom_is_stripped_once_even_when_split() -> None:
    assert decode(b"\xef\xbb", b"\xbfdata: a\n\n") == [ServerSentEvent(data="a")]
    # A second BOM is content: it makes the field name unknown, so nothing is dispatched.
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n") == []


def test_incomplete_event_at_end_of_stream_is_not_dispatched() -> None:
    assert decode(b"data: complete\n\ndata: cut") == [ServerSentEvent(data="complete")]
    assert decode(b"data: cut\n") == []


def test_crlf_split_across_chunks_is_one_line_break() -> None:
    # Read as two breaks, the blank line would dispatch "a" and "b" as two events.
    assert decode(b"data: a\r", b"\ndata: b\r\n\r\n") == [ServerSentEvent(data="a\nb")]
    assert decode(b"data: a\r", b"\n", b"\r", b"\n") == [ServerSentEvent(data="a")]


def test_utf8_split_across_chunks() -> None:
    encoded = "data: héllo ✓ 🎉\n\n".encode()
    events = decode(*(encoded[i : i + 1] for i in range(len(encoded))))
    assert events == [ServerSentEvent(data="héllo ✓ 🎉")]


SAMPLE = (
    "\ufeff: comment\r\n"
    "retry: 100\r\n"
    "id: 1\r\n"
    "data:\r\n"
    "\r\n"
    'event: message\ndata: {"jsonrpc":"2.0",\ndata: "id":1}\n\n'
    "data: ünïcödé 🎉\r\r"
    "id: 2\rdata: last\r\n\r\n"
).encode()
SAMPLE_EVENTS = [
    ServerSentEvent(data="", id="1", retry=100),
    ServerSentEvent(data='{"jsonrpc":"2.0",\n"id":1}', id="1"),
    ServerSentEvent(data="ünïcödé 🎉", id="1"),
    ServerSentEvent(data="last", id="2"),
]


def test_sample_stream_in_one_chunk() -> None:
    assert decode(SAMPLE) == SAMPLE_EVENTS


@pytest.mark.parametrize("split", range(1, len(SAMPLE)))
def test_sample_stream_split_at_every_byte_boundary(split: int) -> None:
    assert decode(SAMPLE[:split], SAMPLE[split:]) == SAMPLE_EVENTS


def test_sample_stream_one_byte_at_a_time() -> None:
    assert decode(*(SAMPLE[i : i + 1] for i in range(len(SAMPLE)))) == SAMPLE_EVENTS


@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=12))
def test_sample_stream_split_anywhere(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(SAMPLE)]
    chunks = [SAMPLE[a:b] for a, b in itertools.pairwise(bounds)]
    assert decode(*chunks) == SAMPLE_EVENTS


@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\r\n", codec="utf-8"), max_size=20),
        max_size=5,
    ),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_any_data_lines_round_trip(lines: list[str], newline: str) -> None:
    if not any(lines):  # no data at all: an empty event, which the SDK skips
        return
    stream = "".join(f"data: {line}{newline}" for line in lines) + newline
    events = decode(stream.encode())
    assert events == [ServerSentEvent(data="\n".join(lines))]


def test_size_limit_applies_to_data_and_to_an_unterminated_line() -> None:
    with pytest.raises(EventTooLarge):
        decode(b"data: " + b"x" * 60 + b"\ndata: " + b"y" * 60 + b"\n", max_event_size=100)
    with pytest.raises(EventTooLarge):
        decode(b"data: " + b"x" * 50, b"x" * 60, max_event_size=100)
    # Dispatching frees the budget: many small events never add up.
    small = [b"data: " + b"z" * 50 + b"\n\n"] * 50
    assert decode(*small, max_event_size=100) == [ServerSentEvent(data="z" * 50)] * 50
