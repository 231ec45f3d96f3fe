"""Ctrl-C from the first instant of a command of ours: one line on stderr, exit status 130.

``langop_infra/__init__`` runs before any other code of the package, whichever way a command
starts (the ``langop-infra`` script, ``python -m langop_infra``, ``python -m
langop_infra.agent``); installed there, the handler covers the imports that come before the
command's own ``main``, where a KeyboardInterrupt would print a traceback. A process that
only imports the package (a user's program, a test run) keeps Python's handler.
"""

from __future__ import annotations

import os
import signal
import sys

# How ``python -m`` or a script names each of our commands -> the prefix of its lines.
_COMMANDS = {
    "langop-infra": "langop-infra",
    "langop_infra": "langop-infra",
    "langop_infra.cli": "langop-infra",
    "langop_infra.agent": "langop-agent",
}


def exit_on_interrupt(prefix: str) -> None:
    """On SIGINT, write ``<prefix>: error: interrupted`` and end the process at once, 130.

    Not a KeyboardInterrupt: raised inside an event loop or a worker thread, it could leave
    tasks pending (asyncio warnings at exit), be caught by a library (an internal error), or
    leave a non-daemon thread the interpreter's exit waits for.
    """
    line = f"{prefix}: error: interrupted\n".encode()

    def interrupted(signum: int, frame: object) -> None:
        try:
            os.write(2, line)
        finally:
            os._exit(130)

    signal.signal(signal.SIGINT, interrupted)


def command_prefix(orig_argv: list[str]) -> str | None:
    """The prefix of the command this process runs, if it is one of ours: with the
    subcommand (``langop-infra render``), read as the CLI's ``main`` reads it, when it has one."""
    args = orig_argv[1:]
    while args and args[0].startswith("-") and args[0] != "-m":
        # The interpreter's own options (-u, -X importtime, -W error, ...).
        args = args[2:] if args[0] in ("-X", "-W") else args[1:]
    if args[:1] == ["-m"] and len(args) > 1:
        prefix, rest = _COMMANDS.get(args[1]), args[2:]
    elif args:
        prefix, rest = _COMMANDS.get(os.path.basename(args[0])), args[1:]
    else:
        return None
    command = next((a for a in rest if not a.startswith("-")), "")
    return f"{prefix} {command}" if prefix == "langop-infra" and command else prefix


def install_for_commands() -> None:
    """The handler, when this process runs one of our commands (and is the main thread)."""
    prefix = command_prefix(list(getattr(sys, "orig_argv", [])))
    if prefix is not None and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        exit_on_interrupt(prefix)
