"""Unit tests. Under mutmut (``MUTANT_UNDER_TEST`` set), hypothesis runs 3 examples per
property instead of 100: hundreds of mutants each rerun the properties that cover them."""

from __future__ import annotations

import os

from hypothesis import settings

if os.environ.get("MUTANT_UNDER_TEST"):
    settings.register_profile("mutation", settings.get_profile("langop"), max_examples=3)
    settings.load_profile("mutation")
