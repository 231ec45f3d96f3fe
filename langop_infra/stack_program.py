"""Deprecated path, kept for one release: this module moved to
:mod:`langop_infra.program.stack`."""

import sys
import warnings

from langop_infra.program import stack as _moved

warnings.warn(
    "langop_infra.stack_program moved to langop_infra.program.stack; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
