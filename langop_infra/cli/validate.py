"""``langop-infra validate``: check a stack's config the way render and ``pulumi up`` do.

Silent with exit 0 when the stack is valid (warnings, such as a credential header given as a
literal value, go to stderr and do not change the exit code); otherwise every problem, with its
config path, and exit 2. ``--json`` prints ``{"valid": ..., "problems": [{"path", "message"}],
"warnings": [...]}`` instead. ``--strict`` counts every warning as a problem (exit 2).
The project's program runs under the mock engine, so checks made by the program itself count.
"""

from __future__ import annotations

import argparse
import json
import sys

from langop_infra.cli._stack import CommandError, add_stack_arguments, render


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stack_arguments(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"valid", "problems": [{"path", "message"}], "warnings": [...]}',
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="count warnings (e.g. schema sync our own policies refuse) as problems: exit 2",
    )


def run(args: argparse.Namespace) -> int:
    try:
        result = render(args, "validate")
    except CommandError as exc:
        if not args.json:
            print(f"langop-infra validate: error: {exc}", file=sys.stderr)
            return exc.code
        problems = exc.problems or (("", str(exc)),)
        _print_json(False, problems)
        return exc.code
    if args.strict and result.warnings:
        problems = tuple(_as_problem(w) for w in result.warnings)
        if args.json:
            _print_json(False, problems)
        else:
            print(
                f"langop-infra validate: error: {len(problems)} warning(s) under --strict",
                file=sys.stderr,
            )
            for warning in result.warnings:
                print(f"  - {warning}", file=sys.stderr)
        return 2
    if args.json:
        _print_json(True, (), result.warnings)
        return 0
    for warning in result.warnings:
        print(f"langop-infra validate: warning: {warning}", file=sys.stderr)
    return 0


def _print_json(
    valid: bool, problems: tuple[tuple[str, str], ...], warnings: list[str] | None = None
) -> None:
    listed = [{"path": path, "message": message} for path, message in problems]
    report = {"valid": valid, "problems": listed, "warnings": list(warnings or ())}
    print(json.dumps(report, indent=2, ensure_ascii=False))


def _as_problem(warning: str) -> tuple[str, str]:
    """``path: message`` split as the JSON report lists problems."""
    path, sep, message = warning.partition(": ")
    return (path, message) if sep and " " not in path else ("", warning)
