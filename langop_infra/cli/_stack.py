"""What the commands that render a stack share: options, progress, and the errors of the
user's own program."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import threading
import traceback
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langop_infra._errors import LangopError

if TYPE_CHECKING:
    from langop_infra.core.problems import SpecError
    from langop_infra.offline._mock_engine import ProgramRun

PROGRESS_AFTER = 2.0  # seconds; LANGOP_INFRA_PROGRESS_AFTER overrides it


class UsageError(LangopError):
    """Bad arguments or configuration: the command exits with status 2."""


class CommandError(LangopError):
    """An error the command prints with its prefix; ``code`` is the exit status, and
    ``problems`` the configuration problems behind it (``Problem.as_dict()``, plus the
    ``component`` and where it was ``builtAt`` for a component's)."""

    def __init__(
        self, message: str, code: int = 2, problems: tuple[dict[str, Any], ...] = ()
    ) -> None:
        super().__init__(message)
        self.code = code
        self.problems = problems


def add_stack_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--stack", "-s", help="stack name: reads Pulumi.<stack>.yaml")
    source.add_argument("--config", type=Path, help="a stack config file to use instead")
    parser.add_argument(
        "--project-dir",
        type=Path,
        default=Path("."),
        help="where to look for Pulumi.yaml, then in parent folders (default: .)",
    )
    parser.add_argument(
        "--environment-values",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="the values of an ESC environment the stack imports: the output of "
        "`pulumi env open <env> --format json` (repeatable; later files win)",
    )


def run_stack(
    args: argparse.Namespace,
    command: str,
    *,
    keep_ciphertext: bool = False,
    rollout_key: str | None = None,
) -> ProgramRun:
    """Render the stack the arguments name, with a progress line on a slow render.

    Raises :class:`CommandError`: exit 2 for a stack or config problem, exit 1 for an
    exception in the user's program (its own frames first, framework frames left out).
    """
    from langop_infra.offline._mock_engine import close_event_loop
    from langop_infra.offline._project import Project, choose_stack
    from langop_infra.offline._render import render_stack

    project_dir = Path(args.project_dir)
    path = None
    try:
        project = Project.find(project_dir)
        project_dir = project.directory
        stack, path = choose_stack(project, args.stack, args.config)
        # Which stack and file the output came from, for the render's banner.
        args.stack_name, args.stack_source = stack, _shown(path, project.directory)
        environment_values: list[Path] = getattr(args, "environment_values", None) or []
        _warn_unread_environments(args, stack, path, command)
        with _progress(f"langop-infra {command}: rendering stack {stack}..."):
            return render_stack(
                project.directory,
                stack=stack,
                config_file=args.config,
                keep_ciphertext=keep_ciphertext,
                environment_values=environment_values,
                project=project,
                rollout_key=rollout_key,
            )
    except Exception as caught:
        # The failed run's other Output tasks end here, not in a finaliser during a later
        # compile of this process (CPython 3.11 then reports an AST recursion mismatch).
        gc.collect()
        raise _command_error(caught, project_dir, path) from None
    finally:
        close_event_loop()


def _warn_unread_environments(
    args: argparse.Namespace, stack: str, path: Path, command: str = "validate"
) -> None:
    """One warning, before anything else, for a stack importing ESC environments whose
    values were not given (once per command, whichever path it takes)."""
    from langop_infra.offline._esc import imported_environments, unread_warning
    from langop_infra.offline._project import load_stack_file

    if getattr(args, "environment_values", None) or getattr(args, "esc_warned", False):
        return
    args.esc_warned = True
    if not path.is_file():
        return
    try:
        environments = imported_environments(load_stack_file(path))
    except Exception:  # an unreadable stack file: the render reports it
        return
    if environments:
        print(
            f"langop-infra {command}: warning: {unread_warning(stack, environments)}",
            file=sys.stderr,
        )


def stack_file_warnings(args: argparse.Namespace) -> list[str] | None:
    """What :func:`render` would warn of, found without running the program when the
    project runs the package's own stack program (``offline.validate``); ``None`` when
    only a run can tell. Raises :class:`CommandError` as :func:`render` does."""
    from langop_infra.offline._project import Project, choose_stack
    from langop_infra.offline._validate import validate_stack_file

    project_dir = Path(args.project_dir)
    path = None
    try:
        project = Project.find(project_dir)
        project_dir = project.directory
        stack, path = choose_stack(project, args.stack, args.config)
        args.stack_name, args.stack_source = stack, _shown(path, project.directory)
        if getattr(args, "environment_values", None):
            return None  # ESC values to merge: only a run of the program takes them
        _warn_unread_environments(args, stack, path)
        return validate_stack_file(project.directory, stack=stack, config_file=args.config)
    except Exception as caught:
        raise _command_error(caught, project_dir, path) from None


def _command_error(caught: Exception, project_dir: Path, path: Path | None) -> CommandError:
    """The CommandError for what a stack's run raised: its problems, located in ``path``."""
    from langop_infra.core.problems import SpecError

    exc = _spec_error(caught)
    if exc is None:
        return CommandError(program_error(caught, project_dir), code=1)
    if path is not None:
        from langop_infra.offline._locate import located

        exc = SpecError(located(exc.problems, path), subject=exc.subject, where=exc.where)
    component = {"component": exc.subject} if exc.subject != "configuration" else {}
    component.update({"builtAt": exc.where} if exc.where else {})
    problems = tuple({**p.as_dict(), **component} for p in exc.problems)
    return CommandError(str(exc), problems=problems)


def _spec_error(exc: BaseException) -> SpecError | None:
    """The SpecError behind ``exc``: a value that resolved during the run and failed its
    checks reaches us wrapped in the engine's ValueErrors."""
    from langop_infra.core.problems import SpecError

    # Both links: the SDK's `raise exn from cause` can make an exception its own cause.
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        found = todo.pop(0)
        if found is None or id(found) in seen:
            continue
        if isinstance(found, SpecError):
            return found
        seen.add(id(found))
        todo += [found.__cause__, found.__context__]
    return None


def _shown(path: Path, project_dir: Path) -> str:
    """``path`` relative to the project when inside it (renders stay machine-independent)."""
    try:
        return str(path.resolve().relative_to(project_dir))
    except ValueError:
        return str(path)


def run_command(command: str, body: Callable[[], int]) -> int:
    """``body()``, with a :class:`CommandError` printed as one prefixed error."""
    try:
        return body()
    except CommandError as exc:
        print(f"langop-infra {command}: error: {exc}", file=sys.stderr)
        return exc.code


@contextmanager
def _progress(message: str) -> Generator[None, None, None]:
    """Print ``message`` on stderr if the block is still running after a while, on a TTY."""
    if not sys.stderr.isatty():
        yield
        return
    delay = float(os.environ.get("LANGOP_INFRA_PROGRESS_AFTER", PROGRESS_AFTER))
    timer = threading.Timer(delay, lambda: print(message, file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def program_error(exc: BaseException, project_dir: Path) -> str:
    """The user's innermost frame and the message first, then the user's frames only.

    A frame is the user's when its file is under the project folder and not inside this
    package or an installed one. With no such frame the error is ours: full traceback.
    """
    if isinstance(exc, SyntaxError) and _is_users(Path(exc.filename or ""), project_dir):
        return _syntax_error(exc)
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if _is_users(Path(f.filename), project_dir)]
    message = f"{type(exc).__name__}: {exc}"
    if not own:
        full = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return f"internal error, please report it: {message}\n{full.rstrip()}"
    last = own[-1]
    lines = [f"your program failed at {last.filename}:{last.lineno} in {last.name}: {message}"]
    for frame in own:
        lines.append(f'    File "{frame.filename}", line {frame.lineno}, in {frame.name}')
        lines += [f"      {frame.line.strip()}"] if frame.line else []
    lines.append("  (frames of langop-infra and Pulumi left out)")
    return "\n".join(lines)


def _syntax_error(exc: SyntaxError) -> str:
    """A syntax error in the user's own file: where, what, and the line with a caret; the
    frames that compiled it (runpy's, ours) are no help."""
    where = f"{exc.filename}:{exc.lineno}" + (f":{exc.offset}" if exc.offset else "")
    lines = [f"your program does not compile: {where}: {type(exc).__name__}: {exc.msg}"]
    if exc.text:
        text = exc.text.rstrip("\n")
        indent = len(text) - len(text.lstrip())
        lines.append(f"    {text.strip()}")
        if exc.offset and exc.offset > indent:
            lines.append("    " + " " * (exc.offset - 1 - indent) + "^")
    return "\n".join(lines)


def _is_users(file: Path, project_dir: Path) -> bool:
    if not file.is_absolute() or not file.is_file():
        return False  # <frozen runpy>, <string>
    try:
        relative = file.resolve().relative_to(project_dir.resolve())
    except (ValueError, OSError):
        return False
    parts = relative.parts
    return not (
        parts[:1] == ("langop_infra",)
        or any(p in ("site-packages", "dist-packages") or p.startswith("venv") for p in parts)
        or parts[:1] == (".venv",)
    )
