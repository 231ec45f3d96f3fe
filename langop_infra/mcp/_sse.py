"""An incremental ``text/event-stream`` decoder, as the WHATWG HTML standard parses it.

Feed it bytes as they arrive, in chunks of any size; it returns the events completed so far.
Handles CRLF, LF and CR line endings (a CRLF split across chunks included), ``:`` comments,
multi-line ``data:``, ``event:``, ``id:``, ``retry:``, a leading BOM and UTF-8 characters split
across chunks. Events with an empty data buffer are still dispatched (MCP servers send such
"priming" events to carry an ``id``); a field-less blank line dispatches nothing.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from langop_infra._errors import LangopError

__all__ = ["EventTooLarge", "SSEDecoder", "ServerSentEvent"]

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event; ``id`` is the stream's last event id when it was dispatched."""

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: int | None = None


class EventTooLarge(LangopError):
    """One event (or one unterminated line) grew past the decoder's ``max_event_size``."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"event of {size}+ characters exceeds the limit of {limit}")
        self.size = size
        self.limit = limit


class SSEDecoder:
    """Turns a byte stream into :class:`ServerSentEvent` objects, one chunk at a time."""

    def __init__(self, max_event_size: int | None = None) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._max = max_event_size
        self._tail: list[str] = []  # pieces of the current unterminated line
        self._tail_size = 0
        self._skip_lf = False  # the last chunk ended with CR: a leading LF finishes that CRLF
        self._at_start = True  # a BOM is stripped only at the very start of the stream
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self.last_event_id = ""
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Decode ``chunk`` and return the events it completed (often none, sometimes many)."""
        return self.feed_text(self._utf8.decode(chunk))

    def feed_text(self, text: str) -> list[ServerSentEvent]:
        """Like :meth:`feed`, for already decoded text."""
        if not text:
            return []
        if self._at_start:
            self._at_start = False
            if text[0] == "\ufeff":
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text[:1] == "\n":
                text = text[1:]
                if not text:
                    return []
        events: list[ServerSentEvent] = []
        start = 0
        for match in _LINE_END.finditer(text):
            piece = text[start : match.start()]
            if self._tail:
                self._tail.append(piece)
                line = "".join(self._tail)
                self._tail.clear()
                self._tail_size = 0
            else:
                line = piece
            start = match.end()
            event = self._process_line(line)
            if event is not None:
                events.append(event)
        if start < len(text):
            rest = text[start:]
            self._tail.append(rest)
            self._tail_size += len(rest)
            self._check_size()
        elif text.endswith("\r"):
            self._skip_lf = True
        return events

    def _process_line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_size += len(value) + 1
            self._check_size()
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        # A bounded length: int() of thousands of digits raises (and no wait is that long).
        elif name == "retry" and value.isascii() and value.isdigit() and len(value) <= 9:
            self.retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = ServerSentEvent(
            event=self._event or "message",
            data="\n".join(self._data),
            id=self.last_event_id,
            retry=self.retry,
        )
        self._data = []
        self._data_size = 0
        self._event = ""
        return event

    def _check_size(self) -> None:
        if self._max is not None and self._data_size + self._tail_size > self._max:
            raise EventTooLarge(self._data_size + self._tail_size, self._max)
