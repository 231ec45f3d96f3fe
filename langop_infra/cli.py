"""The ``langop-infra`` command.

Each subcommand lives in ``langop_infra.commands.<name>`` with ``add_arguments(parser)`` and
``run(args) -> int``; modules are imported only when their subcommand runs, so ``--help``
stays fast (no Pulumi, pydantic or httpx import).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from langop_infra import __version__

# name -> one-line help; the module langop_infra.commands.<name> implements it.
SUBCOMMANDS: dict[str, str] = {
    "render": "render a stack's Kubernetes manifests offline (Pulumi mock engine)",
    "diff": "compare two renders: objects added, removed and changed",
    "tools": "list an MCP server's tools (streamable HTTP, legacy SSE or stdio)",
    "schemas": "sync every tool's schema and check it against a lock file",
}


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="langop-infra",
        description="Deploy MCP tool servers and agents onto Kubernetes with Pulumi.",
    )
    parser.add_argument("--version", action="version", version=f"langop-infra {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, help_text in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            module = importlib.import_module(f"langop_infra.commands.{name}")
            module.add_arguments(sp)
            sp.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_list)
    args = parser.parse_args(args_list)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    return int(args._run(args))


if __name__ == "__main__":
    sys.exit(main())
