"""The repository's own scripts under ``tools/``, loaded as modules for the tests (they are
not part of the installed package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def load(name: str) -> ModuleType:
    """``tools/<name>.py`` as a module."""
    spec = importlib.util.spec_from_file_location(f"repo_tools.{name}", TOOLS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


generate_args = load("generate_args")
