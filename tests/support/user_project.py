"""A user's own Pulumi project in a temporary folder outside this repository, and the CLI run
in-process against it."""

from __future__ import annotations

import contextlib
import io
import textwrap
from pathlib import Path

from langop_infra.cli.main import main


def make_project(folder: Path, program: str, config: str = "config: {}\n") -> Path:
    """``Pulumi.yaml`` (project ``shop``), ``Pulumi.dev.yaml`` and ``__main__.py`` in
    ``folder``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Pulumi.yaml").write_text(
        "name: shop\nruntime:\n  name: python\n  options:\n    virtualenv: venv\n"
    )
    (folder / "Pulumi.dev.yaml").write_text(config)
    (folder / "__main__.py").write_text(textwrap.dedent(program))
    return folder


def run_cli(project: Path, *argv: str) -> tuple[int, str, str]:
    """``langop-infra <argv> --project-dir <project>`` in-process: code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "--project-dir", str(project)])
    return code, out.getvalue(), err.getvalue()
