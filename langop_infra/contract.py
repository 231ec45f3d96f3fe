"""Deprecated path, kept for one release: this module moved to
:mod:`langop_infra.build.contract`."""

import sys
import warnings

from langop_infra.build import contract as _moved

warnings.warn(
    "langop_infra.contract moved to langop_infra.build.contract; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
