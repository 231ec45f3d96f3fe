"""``langop-infra validate``: check a stack's config the way render and ``pulumi up`` do.

Silent with exit 0 when the stack is valid (warnings, such as a credential header given as a
literal value, go to stderr and do not change the exit code); otherwise every problem, with its
config path, and exit 2. ``-o json`` (or ``-o yaml``) prints ``{"valid": ..., "problems":
[{"path", "message"}], "warnings": [...]}`` instead. ``--strict`` counts every warning as a
problem (exit 2).
A project whose program is the package's stack program is checked from its stack file alone,
without importing Pulumi (``offline.validate``: the same reader and checks, the same report);
any other program runs under the mock engine, so checks made by the program itself count.
"""

from __future__ import annotations

import argparse
import os
import sys

from langop_infra.cli._output import add_output_argument, dump, emit
from langop_infra.cli._stack import (
    CommandError,
    add_stack_arguments,
    run_stack,
    stack_file_warnings,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stack_arguments(parser)
    add_output_argument(
        parser,
        ("yaml", "json"),
        None,
        'print {"valid", "problems": [{"path", "message"}], "warnings"} as',
        json_alias=True,
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="count warnings (e.g. schema sync our own policies refuse) as problems: exit 2",
    )


def run(args: argparse.Namespace) -> int:
    try:
        warnings = found_warnings(args)
    except CommandError as exc:
        if not args.output:
            print(f"langop-infra validate: error: {exc}", file=sys.stderr)
            return exc.code
        problems = exc.problems or ({"path": "", "message": str(exc), "kind": ""},)
        _print_report(args.output, False, problems)
        return exc.code
    if args.strict and warnings:
        problems = tuple(_as_problem(w) for w in warnings)
        if args.output:
            _print_report(args.output, False, problems)
        else:
            print(
                f"langop-infra validate: error: {len(problems)} warning(s) under --strict",
                file=sys.stderr,
            )
            for warning in warnings:
                print(f"  - {warning}", file=sys.stderr)
        return 2
    if args.output:
        _print_report(args.output, True, (), warnings)
        return 0
    for warning in warnings:
        print(f"langop-infra validate: warning: {warning}", file=sys.stderr)
    return 0


def found_warnings(args: argparse.Namespace) -> list[str]:
    """The stack's warnings; read from the stack file alone when the project runs the
    package's stack program (no Pulumi imported), else from a run under the mock engine.
    ``LANGOP_INFRA_VALIDATE_RUN=1`` always runs the program (the tests compare both). Every
    output mode only formats what this finds."""
    if os.environ.get("LANGOP_INFRA_VALIDATE_RUN") != "1":
        found = stack_file_warnings(args)
        if found is not None:
            return found
    return run_stack(args, "validate").warnings


def _print_report(
    output: str,
    valid: bool,
    problems: tuple[dict[str, object], ...],
    warnings: list[str] | None = None,
) -> None:
    report = {"valid": valid, "problems": list(problems), "warnings": list(warnings or ())}
    emit(dump(report, output))


def _as_problem(warning: str) -> dict[str, object]:
    """``path: message`` split as the report lists problems."""
    path, sep, message = warning.partition(": ")
    if not (sep and " " not in path):
        path, message = "", warning
    return {"path": path, "message": message, "kind": "warning"}
