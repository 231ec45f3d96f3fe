"""The ``langop-infra`` command (also ``python -m langop_infra``).

Each subcommand lives in ``langop_infra.cli.<module>`` with ``add_arguments(parser)`` and
``run(args) -> int``; modules are imported only when their subcommand runs, so ``--help``
stays fast (no Pulumi, pydantic or httpx import). Errors print one line prefixed
``langop-infra <command>: error:``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NamedTuple

from langop_infra import __version__


class Subcommand(NamedTuple):
    help: str
    exit_codes: str


_STACK_EXIT = "0 ok, 1 error in your program, 2 invalid stack file or config, or usage"
# name -> help and exit codes; langop_infra.cli.<name with _ for -> implements it.
SUBCOMMANDS: dict[str, Subcommand] = {
    "render": Subcommand(
        "render a stack's Kubernetes manifests offline (Pulumi mock engine)", _STACK_EXIT
    ),
    "diff": Subcommand(
        "compare two renders for review: objects and fields added, removed, changed, moved",
        "0 no differences, 1 differences, 2 an input is not a render, or usage",
    ),
    "validate": Subcommand(
        "check a stack's config; silent when valid, every problem otherwise", _STACK_EXIT
    ),
    "outputs": Subcommand(
        "a stack's outputs (endpoints, phases, agents' env names and config.yaml), offline",
        _STACK_EXIT,
    ),
    "check": Subcommand(
        "judge a stack's offline render with the policy pack (as pulumi preview would)",
        "0 no mandatory violation, 1 a mandatory violation or an error in your program, "
        "2 invalid stack file or config, or usage",
    ),
    "graph": Subcommand(
        "who may reach whom under a stack's NetworkPolicies (text or Mermaid)", _STACK_EXIT
    ),
    "config-schema": Subcommand(
        "print the JSON Schema of a Pulumi.<env>.yaml stack file (for editor completion)",
        "0 ok, 2 usage",
    ),
    "completion": Subcommand("print a shell completion script: bash, zsh or fish", "0 ok, 2 usage"),
    "tools": Subcommand(
        "list an MCP server's tools, or call one (streamable HTTP, legacy SSE or stdio)",
        "0 ok, 1 error, 2 usage",
    ),
    "import": Subcommand(
        "convert language-operator, ark, STOA, kagent and ToolHive manifests to stack config",
        "0 ok, 2 a file cannot be read or holds no manifest import reads, or usage",
    ),
    "schemas": Subcommand(
        "sync every tool's schema and check it against a lock file",
        "0 ok or compatible changes only, 1 breaking change (any with --strict) or "
        "unreachable tool, 2 usage or config",
    ),
}
COMMON_EXIT = "130 interrupted (Ctrl-C), 141 the output pipe was closed (e.g. | head)"


# Subcommands whose name is not a valid module name.
MODULES = {"import": "import_cmd"}


def module_name(command: str) -> str:
    return f"langop_infra.cli._{MODULES.get(command, command.replace('-', '_'))}"


def build_parser(argv: Sequence[str], *, every: bool = False) -> argparse.ArgumentParser:
    """The parser; only the chosen subcommand's module is imported (all with ``every``)."""
    parser = argparse.ArgumentParser(
        prog="langop-infra",
        description="Deploy MCP tool servers and agents onto Kubernetes with Pulumi.",
        epilog=f"exit status: as each command's --help says; 2 usage; {COMMON_EXIT}",
    )
    parser.add_argument("--version", action="version", version=f"langop-infra {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, command in SUBCOMMANDS.items():
        sp = sub.add_parser(
            name,
            help=command.help,
            description=command.help,
            epilog=f"exit status: {command.exit_codes}; {COMMON_EXIT}",
        )
        if every or name == chosen:
            module = importlib.import_module(module_name(name))
            module.add_arguments(sp)
            sp.set_defaults(_run=module.run, _parser=sp)
    return parser


def error(command: str, message: str) -> None:
    """Print ``langop-infra <command>: error: <message>`` on stderr."""
    print(f"langop-infra {command}: error: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the process's own command line: Ctrl-C ends the process, from here on
        _exit_on_interrupt(next((a for a in args_list if not a.startswith("-")), ""))
    parser = build_parser(args_list)
    args, extra = parser.parse_known_args(args_list)
    # A command may take positionals after its options (`tools call --agent-config F NAME`):
    # it names the attribute they belong to; anything else left over is an error, shown with
    # the subcommand's usage, not the top level's: the flag is wrong for this command.
    into = getattr(args, "_positionals", None)
    if extra and into and "--" not in args_list and not any(e.startswith("-") for e in extra):
        setattr(args, into, [*getattr(args, into), *extra])
    elif extra:
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    if argv is None:
        _exit_on_interrupt(args.command)  # now with the command's name as parsed
        return _logged(args)
    return _run(args, own_process=False)


def _logged(args: argparse.Namespace) -> int:
    """The command with the process's log records (``LANGOP_LOG_LEVEL``, default WARNING)
    on stderr, every line through the one scrubber."""
    from langop_infra._errors import LangopError
    from langop_infra.core._log_scrub import log_level, scrubbed_logging

    try:
        level = log_level(os.environ.get("LANGOP_LOG_LEVEL"), "WARNING")
    except LangopError as exc:
        error(args.command, str(exc))
        return 2
    with scrubbed_logging(level):
        return _run(args, own_process=True)


def _run(args: argparse.Namespace, *, own_process: bool) -> int:
    try:
        code = int(args._run(args))
        # Buffered output reaches a closed pipe here at the latest, not at interpreter exit.
        sys.stdout.flush()
        if own_process:
            # The process ends next: spare it the collections at interpreter exit, which walk
            # every object (models, schemas) to find no garbage worth the time: a third of a
            # `validate`. atexit handlers and finalizers of live objects still run.
            gc.freeze()
        return code
    except KeyboardInterrupt:
        import logging

        # The interrupted engine task would be reported again when collected at exit.
        logging.getLogger("asyncio").disabled = True
        error(args.command, "interrupted")
        return 130
    except BrokenPipeError:
        _drop_stdout()
        return 141
    except MemoryError:
        # Under a memory limit (ulimit -v, a container's) a one-line error beats a traceback.
        error(args.command, "out of memory; raise the process's memory limit or lower the caps")
        return 1


def _exit_on_interrupt(command: str) -> None:
    """On SIGINT, print one line naming the command and end the process at once, 130
    (:func:`langop_infra._interrupt.exit_on_interrupt`). An interrupted render has nothing
    worth flushing; a half-written stdout is dropped."""
    from langop_infra._interrupt import exit_on_interrupt

    exit_on_interrupt(f"langop-infra {command}" if command else "langop-infra")


def _drop_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
