"""Deprecated path, kept for one release: this module moved to
:mod:`langop_infra.program.package`."""

import sys
import warnings

from langop_infra.program import package as _moved

warnings.warn(
    "langop_infra.package moved to langop_infra.program.package; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
