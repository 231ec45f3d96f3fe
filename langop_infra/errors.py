"""The package's validation error: every problem at once, each with its path and fix; and
the translation of pydantic's errors into such problems."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel, to_snake


@dataclass(frozen=True)
class Problem:
    """One invalid value: where it is (``agents[1].tools[0].name``) and what to do."""

    path: str
    message: str
    # What kind of problem, for machines: pydantic's type or ours (``langop_dns_label``).
    kind: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class SpecError(ValueError):
    """Invalid configuration. Raised before any resource is registered.

    ``problems`` lists every problem found, not only the first.
    """

    def __init__(self, problems: Iterable[Problem], *, subject: str = "configuration") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.subject = subject
        count = len(self.problems)
        header = f"invalid {subject}: {count} problem{'s' if count != 1 else ''}"
        super().__init__("\n".join([header, *(f"  - {p}" for p in self.problems)]))


def one_line(text: str, limit: int = 300) -> str:
    """``text`` folded onto one line of at most ``limit`` characters (for phases, CLI output)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def join_path(prefix: str, path: str) -> str:
    """``join_path("tools[0]", "port") == "tools[0].port"``; indexes attach without a dot."""
    if not prefix:
        return path
    if not path:
        return prefix
    return f"{prefix}{path}" if path.startswith("[") else f"{prefix}.{path}"


PLAIN_KEY = re.compile(r"[A-Za-z0-9_/:-]+(\.[A-Za-z0-9_/:-]+)*")


def loc_path(loc: Iterable[int | str]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path = join_path(path, f"[{part}]")
        elif PLAIN_KEY.fullmatch(part):
            path = join_path(path, part)
        else:
            # Keys with spaces, brackets or line breaks are quoted, so a path stays one line.
            path = join_path(path, f"[{json.dumps(part)}]")
    return path


def _data_loc(data: Any, loc: tuple[int | str, ...]) -> list[int | str]:
    """The parts of pydantic's ``loc`` that are keys or indexes of the data; it also holds
    validator tags (``function-after[...]``) that are not."""
    if data is None:
        return [p for p in loc if not (isinstance(p, str) and "[" in p)]
    kept: list[int | str] = []
    node = data
    # "[key]" marks an error in a mapping's key rather than its value: the key names it.
    loc = tuple(p for p in loc if p != "[key]")
    for n, part in enumerate(loc):
        in_mapping = isinstance(node, Mapping) and part in node
        in_list = isinstance(node, (list, tuple)) and isinstance(part, int) and part < len(node)
        if in_mapping or in_list:
            kept.append(part)
            node = node[part]
        elif n == len(loc) - 1 or not (isinstance(part, str) and "[" in part):
            # a missing field's name, or a key under a model instance given as is
            kept.append(part)
            node = None
    return kept


def _given_twice(data: Any, loc: list[int | str]) -> str | None:
    """The other spelling of ``loc[-1]`` when the same mapping holds both."""
    parent = data
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return None
    if not isinstance(parent, Mapping) or not loc:
        return None
    field = str(loc[-1])
    spellings = {to_camel(field), to_snake(field)} - {field}
    return next((s for s in spellings if s in parent), None)


def problems_from(
    error: ValidationError,
    prefix: str = "",
    data: Any = None,
    known_fields: Sequence[str] = (),
) -> list[Problem]:
    """Turn pydantic's errors into problems with paths and a fix.

    ``known_fields`` are the field names a misspelt key may be matched against.
    """
    problems = []
    for item in error.errors(include_url=False):
        loc = _data_loc(data, item["loc"])
        path = join_path(prefix, loc_path(loc))
        kind, message = item["type"], item["msg"]
        if kind == "extra_forbidden":
            field = str(loc[-1]) if loc else ""
            close = difflib.get_close_matches(field, known_fields, n=1, cutoff=0.75)
            twin = _given_twice(data, loc)
            if twin is not None:
                message = (
                    f"given twice, as {twin!r} and {field!r} (camelCase and snake_case name "
                    "the same field); keep one"
                )
            elif close and close[0] != field:
                message = f"unknown field; did you mean {close[0]!r}?"
            elif close:
                message = "unknown field: this object has no such field; remove it"
            else:
                message = "unknown field; remove it or fix its spelling"
        elif kind == "missing":
            message = "required field is missing; add it"
        elif kind == "value_error":
            # a validator that raised ValueError: its own text, without pydantic's preamble
            message = str(item.get("ctx", {}).get("error", message))
        elif kind == "string_pattern_mismatch":
            pattern = item["ctx"]["pattern"]
            message = f"{item.get('input')!r} does not match the allowed pattern {pattern}"
        problems.append(Problem(path, message, kind))
    return problems
