"""Unit tests. Under mutmut (``MUTANT_UNDER_TEST`` set), hypothesis runs 3 examples per
property instead of 100: hundreds of mutants each rerun the properties that cover them.

mutmut runs each mutant's tests in a child forked from the process that ran them all once.
That process's event loop keeps a default executor whose threads the child lacks: the mock
engine's registrations, queued to it, would never run, and every mutant of a component
would end as a timeout. The child gets a loop of its own."""

from __future__ import annotations

import asyncio
import os

from hypothesis import settings

if os.environ.get("MUTANT_UNDER_TEST"):
    settings.register_profile("mutation", settings.get_profile("langop"), max_examples=3)
    settings.load_profile("mutation")
    os.register_at_fork(after_in_child=lambda: asyncio.set_event_loop(asyncio.new_event_loop()))
