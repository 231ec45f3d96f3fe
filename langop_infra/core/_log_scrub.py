"""Every log line of the agent runtime and the CLI through the one scrubber.

:func:`scrubbed_logging` puts one handler on the root logger whose formatter hands the whole
formatted record (message, arguments, traceback) to :class:`~langop_infra.core._redact.Scrubber`
``masked``: URL userinfo and query values, token-looking strings and every credential a
watched scrubber knows become ``[secret]``, at every level. A formatter, not a filter: a
traceback is only text once it is formatted. Records of libraries (httpx's request lines,
uvicorn's errors) reach the same handler by propagation.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from langop_infra._errors import LangopError
from langop_infra.core._redact import Scrubber, escape

__all__ = ["LEVELS", "ScrubbingFormatter", "log_level", "scrubbed_logging", "watch"]

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# One INFO line per request, naming the full URL: noise at INFO, kept (scrubbed) at DEBUG.
CHATTY = ("httpx", "httpx2", "httpcore")  # httpx2: the MCP SDK's client

_WATCHED: list[Scrubber] = [Scrubber()]


def watch(scrubber: Scrubber) -> Scrubber:
    """Let log lines be scrubbed of what ``scrubber`` knows, now and as it learns more."""
    if not any(known is scrubber for known in _WATCHED):
        _WATCHED.append(scrubber)
    return scrubber


def scrub_log_text(text: str) -> str:
    """``text`` as a log may show it: credentials masked, control characters but newline
    and tab escaped (a tool's text must not repaint the terminal reading the log)."""
    for scrubber in _WATCHED:
        text = scrubber.masked(text)
    return escape(text, keep="\n\t")


class ScrubbingFormatter(logging.Formatter):
    """A formatter whose every line went through :func:`scrub_log_text`."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub_log_text(super().format(record))


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever ``sys.stderr`` is when a record comes (tests swap it)."""

    @property
    def stream(self) -> TextIO:  # pyright: ignore[reportIncompatibleVariableOverride]
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def log_level(value: str | None, default: str) -> str:
    """``LANGOP_LOG_LEVEL``'s value checked: one of :data:`LEVELS` (any case)."""
    level = (value or default).strip().upper()
    if level not in LEVELS:
        raise LangopError(
            f"LANGOP_LOG_LEVEL={value!r}: use one of {', '.join(LEVELS)} (default {default})"
        )
    return level


@contextmanager
def scrubbed_logging(level: str, fmt: str = "%(message)s") -> Iterator[logging.Handler]:
    """Log ``level`` and above to stderr, every line scrubbed; the previous root level,
    handlers and library levels come back when the block ends."""
    root = logging.getLogger()
    saved = root.level, {name: logging.getLogger(name).level for name in CHATTY}
    handler = _StderrHandler()
    handler.setFormatter(ScrubbingFormatter(fmt))
    root.addHandler(handler)
    root.setLevel(level)
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.NOTSET if level == "DEBUG" else logging.WARNING)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(saved[0])
        for name, old in saved[1].items():
            logging.getLogger(name).setLevel(old)
