"""The package's validation error: every problem at once, each with its path and fix."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from langop_infra._errors import LangopError
from langop_infra.core._construction import construction_site


@dataclass(frozen=True)
class Problem:
    """One invalid value: where it is (``agents[1].tools[0].name``) and what to do."""

    path: str
    message: str
    # What kind of problem, for machines: pydantic's type or ours (``langop_dns_label``).
    kind: str = field(default="", compare=False)
    # Where the offending key is in a stack file (1-based), when the problem came from one.
    file: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: " if self.file and self.line else ""
        return where + (f"{self.path}: {self.message}" if self.path else self.message)

    def as_dict(self) -> dict[str, Any]:
        """For ``-o json``: path, message, kind, and file/line/column when known."""
        found: dict[str, object] = {"path": self.path, "message": self.message, "kind": self.kind}
        if self.file and self.line:
            found.update(file=self.file, line=self.line, column=self.column)
        return found


class SpecError(LangopError, ValueError):
    """Invalid configuration. Raised before any resource is registered.

    ``problems`` lists every problem found, not only the first. A component's error
    (``subject`` such as ``LanguageTool 'memory'``) also names ``where``: the file and line
    of the user's code that built it (the first frame outside this package).
    """

    def __init__(
        self,
        problems: Iterable[Problem],
        *,
        subject: str = "configuration",
        where: str | None = None,
    ) -> None:
        # Several checks may find one fault; the same path and message is reported once.
        self.problems: tuple[Problem, ...] = tuple(dict.fromkeys(problems))
        self.subject = subject
        if where is None:
            # A component's error (`LanguageTool 'memory'`): where the user's code built it.
            where = construction_site() if _COMPONENT.match(subject) else ""
        self.where = where
        count = len(self.problems)
        header = f"invalid {subject}: {count} problem{'s' if count != 1 else ''}"
        header += f" (built at {where})" if where else ""
        super().__init__("\n".join([header, *(f"  - {p}" for p in self.problems)]))


# A component's subject (`LanguageTool 'memory'`): its error names where the user built it.
_COMPONENT = re.compile(r"^[A-Z][A-Za-z]+ '")


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
