"""``langop-infra diff OLD NEW``: what changed between two renders, for review.

Multi-line strings (an agent's config.yaml) get a line diff; named list entries that moved
are reported as moves; secrets show as "secret value changed" when both renders were made
with the same ``render --fingerprint-key-env`` key, and otherwise the report says that secret
changes cannot be seen.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from langop_infra.cli._output import add_output_argument, dump, emit
from langop_infra.cli._stack import CommandError, run_command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="a render: YAML stream file or --out folder")
    parser.add_argument("new", type=Path, help="a render: YAML stream file or --out folder")
    add_output_argument(
        parser,
        ("text", "markdown", "json", "yaml"),
        "text",
        "text (default), markdown (a pull-request comment), json or yaml",
        format_alias=True,
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour text output: auto (on a terminal, unless NO_COLOR is set), always, never",
    )


def run(args: argparse.Namespace) -> int:
    return run_command("diff", lambda: _diff(args))


def _diff(args: argparse.Namespace) -> int:
    from langop_infra.core.problems import SpecError
    from langop_infra.offline._diff_report import report
    from langop_infra.offline._manifest_diff import diff_renders, load_render

    try:
        result = diff_renders(load_render(args.old), load_render(args.new))
    except SpecError as exc:
        raise CommandError(str(exc)) from None
    if args.output == "yaml":
        from langop_infra.offline._diff_report import as_json

        emit(dump(as_json(result), "yaml"))
    else:
        emit(report(result, args.output, colour=use_colour(args.color)))
    return 0 if result.equal else 1


def use_colour(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return not os.environ.get("NO_COLOR") and sys.stdout.isatty()
