"""Where the user's code built a component: the first frame outside this package."""

from __future__ import annotations

import contextlib
import inspect
import os
import sysconfig

# The package's folder: frames under it are ours.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARIES = tuple(
    {os.path.abspath(sysconfig.get_paths()[k]) for k in ("stdlib", "purelib", "platlib")}
)


_CONTEXTLIB = os.path.abspath(contextlib.__file__)


def construction_site() -> str:
    """``file:line`` of the innermost caller outside this package, when that is the user's
    code (not the standard library, an installed package, or the event loop)."""
    here = inspect.currentframe()
    frame = here.f_back if here is not None else None
    while frame is not None:
        file = os.path.abspath(frame.f_code.co_filename)
        # contextlib runs our `with component_error(...)` blocks: part of our frames.
        if not file.startswith(_PACKAGE + os.sep) and file != _CONTEXTLIB:
            if frame.f_code.co_filename.startswith("<") or file.startswith(_LIBRARIES):
                return ""
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return ""
