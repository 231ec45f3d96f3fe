"""The tool author's template (examples/datetime_tool): its own tests, run as part of ours,
so the template a tool author copies stays green."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[1] / "examples" / "datetime_tool" / "test_server.py"

_spec = importlib.util.spec_from_file_location("datetime_tool_template", TEMPLATE)
assert _spec is not None and _spec.loader is not None
_template = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _template
_spec.loader.exec_module(_template)

# Its tests and its fixture, collected here as if written here.
globals().update(
    {name: value for name, value in vars(_template).items() if name.startswith("test_")}
)
url = _template.url
