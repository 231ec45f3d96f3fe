"""Deprecated path, kept for one release: this module moved to
:mod:`langop_infra.agent.runtime`."""

import sys
import warnings

from langop_infra.agent import runtime as _moved

warnings.warn(
    "langop_infra.agent_runtime moved to langop_infra.agent.runtime; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
