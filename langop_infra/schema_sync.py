"""The schema-sync provider's old module path, for state written before the move.

A dynamic provider is pickled into Pulumi state by reference (module and class name), so
stacks deployed earlier name ``langop_infra.schema_sync.ToolSchemaSyncProvider``. This module
stands for :mod:`langop_infra.sync.provider` so that ``refresh``, ``destroy`` and the first
``up`` after the upgrade can still load it. Do not import it in new code.
"""

import sys

from langop_infra.sync import provider as _moved

sys.modules[__name__] = _moved
