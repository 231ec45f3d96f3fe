"""Deprecated path, kept for one release: this module moved to
:mod:`langop_infra.sync.compare`."""

import sys
import warnings

from langop_infra.sync import compare as _moved

warnings.warn(
    "langop_infra.schema_compare moved to langop_infra.sync.compare; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
