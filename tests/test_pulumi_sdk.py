"""The one adapter over the Pulumi SDK's private internals (``core/_pulumi_sdk.py``), checked
against the installed SDK, which must be one pyproject allows: an upgrade that moves or
changes a private part fails here, not in a render."""

from __future__ import annotations

import ast
import asyncio
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pulumi
from packaging.specifiers import SpecifierSet
from pulumi.runtime import resource as sdk_resource, settings
from pulumi.runtime.proto import source_pb2

from langop_infra.core import _pulumi_sdk as pulumi_sdk
from tests.support.source import parse_source

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "langop_infra"


def test_the_adapter_is_written_for_the_sdk_versions_we_allow() -> None:
    pin = re.search(r'^\s*"pulumi([<>=~][^"]*)",', (ROOT / "pyproject.toml").read_text(), re.M)
    assert pin, "pyproject.toml pins pulumi"
    assert SpecifierSet(pin.group(1)) == SpecifierSet(pulumi_sdk.SUPPORTED)
    assert version("pulumi") in SpecifierSet(pulumi_sdk.SUPPORTED)


def test_the_secret_marker_is_the_sdks() -> None:
    # The values of Pulumi's wire format (sdk/go/common/resource/sig): fixed across the SDKs.
    assert pulumi_sdk.SIG_KEY == "4dabf18193072939515e22adb298388d"
    assert pulumi_sdk.SECRET_SIG == "1b47061264138c4ac30d75fd1eb44270"


def test_sync_await_resolves_an_output_from_plain_code() -> None:
    loop = pulumi_sdk.ensure_event_loop()
    assert isinstance(loop, asyncio.AbstractEventLoop) and not loop.is_closed()
    assert pulumi_sdk.ensure_event_loop() is loop

    async def seven() -> int:
        return 7

    assert pulumi_sdk.sync_await(seven()) == 7
    output = pulumi.Output.secret("x")
    assert pulumi_sdk.sync_await(output.future()) == "x"
    assert pulumi_sdk.sync_await(output.is_secret()) is True


def test_run_state_is_reset() -> None:
    state: Any = settings.SETTINGS
    before = state.rpc_manager.rpcs
    pulumi_sdk.clear_run_state()
    assert state.rpc_manager.rpcs is not before and state.rpc_manager.rpcs == []
    assert len(state.outputs) == 0
    pulumi_sdk.clear_root()
    assert pulumi.runtime.get_root_resource() is None


def test_stack_traces_are_skipped_inside_and_restored_after() -> None:
    saved = sdk_resource._get_stack_trace  # pyright: ignore[reportPrivateUsage]
    with pulumi_sdk.without_stack_traces():
        trace = sdk_resource._get_stack_trace()  # pyright: ignore[reportPrivateUsage]
        assert isinstance(trace, source_pb2.StackTrace) and list(trace.frames) == []
    assert sdk_resource._get_stack_trace is saved  # pyright: ignore[reportPrivateUsage]


def test_no_other_module_touches_the_sdks_private_parts() -> None:
    """``_sync_await``, ``_ensure_event_loop``, ``rpc._special_*``, ``_get_stack_trace``,
    ``SETTINGS``, ``ROOT``: only through the adapter."""
    private = re.compile(r"\b(_sync_await|_ensure_event_loop|_special_\w+|_get_stack_trace)\b")
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(pulumi_sdk.__file__):
            continue
        tree = parse_source(path.read_text())
        for node in ast.walk(tree):
            name = node.attr if isinstance(node, ast.Attribute) else None
            name = name or (node.id if isinstance(node, ast.Name) else None)
            if isinstance(node, ast.alias):
                name = node.name
            if name and (private.fullmatch(name) or name in ("SETTINGS", "ROOT")):
                found.append(f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)} {name}")
    assert found == []
