"""The package's validation error: every problem at once, each with its path and fix."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One invalid value: where it is (``agents[1].tools[0].name``) and what to do."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class SpecError(ValueError):
    """Invalid configuration. Raised before any resource is registered.

    ``problems`` lists every problem found, not only the first.
    """

    def __init__(self, problems: Iterable[Problem], *, subject: str = "configuration") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
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
