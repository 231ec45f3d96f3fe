"""``-o/--output`` as kubectl and helm spell it, shared by every command that prints data, and
the older ``--json``/``--format`` kept as deprecated aliases for one release."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence


class DeprecatedOutput(argparse.Action):
    """An old spelling of ``-o``: sets ``output`` and says what to write instead."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        value = self.const if self.nargs == 0 else values
        print(
            f"{parser.prog}: warning: {option_string} is deprecated and goes away in the next "
            f"release; use -o {value}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, value)


def add_output_argument(
    parser: argparse.ArgumentParser,
    choices: Sequence[str],
    default: str | None,
    help: str,
    *,
    json_alias: bool = False,
    format_alias: bool = False,
) -> None:
    """``-o/--output {choices}``; with ``json_alias`` also ``--json`` (= ``-o json``), with
    ``format_alias`` also ``--format X`` (= ``-o X``), both hidden from ``--help``."""
    parser.add_argument(
        "-o", "--output", choices=tuple(choices), default=default, metavar="FORMAT",
        help=f"{help} ({'|'.join(choices)})",
    )  # fmt: skip
    if json_alias:
        parser.add_argument(
            "--json", action=DeprecatedOutput, dest="output", nargs=0, const="json",
            help=argparse.SUPPRESS,
        )  # fmt: skip
    if format_alias:
        parser.add_argument(
            "--format", action=DeprecatedOutput, dest="output", choices=tuple(choices),
            help=argparse.SUPPRESS,
        )  # fmt: skip


def dump(data: object, output: str) -> str:
    """``data`` as JSON (indented, keys in the given order) or YAML."""
    if output == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    from langop_infra.core import _yaml_io as yaml_io

    return yaml_io.dump(data, sort_keys=False, literal_blocks=True)


def emit(text: str) -> None:
    """Write ``text`` to stdout, all of it or ``BrokenPipeError``.

    CPython's buffered stdout can take a partial write into a pipe whose reader went away
    (``| head``) as done, and exit 0 with the rest lost; writing to the descriptor in a loop
    sees the closed pipe, so the command exits 141 as documented. A stdout that is not a
    descriptor (a test's capture, an embedding host) is written as usual."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    data = memoryview(text.encode(sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict"))
    while data:
        data = data[os.write(fd, data) :]
