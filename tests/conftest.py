"""Shared fixtures: run code under the Pulumi mock engine and validate what it registers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from langop_infra.offline.mock_engine import run_program
from tests.support.manifests import Rendered, validate_manifests


@pytest.fixture
def render() -> Callable[..., Rendered]:
    """``render(program, **run_program_kwargs)``: run under mocks, validate every object."""

    def _render(program: Callable[[], Any], **kwargs: Any) -> Rendered:
        rendered = Rendered(run_program(program, **kwargs))
        validate_manifests(rendered.manifests)
        return rendered

    return _render
