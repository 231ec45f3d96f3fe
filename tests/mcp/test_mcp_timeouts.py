"""The 3.10 stand-in for ``asyncio.timeout`` behaves like it (tested on every version)."""

from __future__ import annotations

import asyncio

import pytest

from langop_infra.mcp._timeouts import timeout_after, timeout_after_compat

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("scope", [timeout_after, timeout_after_compat])
async def test_expiry_raises_timeout_error(scope: object) -> None:
    # The sleep would end without an error: TimeoutError means the scope cut it short.
    with pytest.raises(TimeoutError):
        async with scope(0.05):  # type: ignore[operator]
            await asyncio.sleep(30)


@pytest.mark.parametrize("scope", [timeout_after, timeout_after_compat])
async def test_no_expiry_and_none(scope: object) -> None:
    async with scope(1):  # type: ignore[operator]
        await asyncio.sleep(0)
    async with scope(None):  # type: ignore[operator]
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("scope", [timeout_after, timeout_after_compat])
async def test_the_outer_scope_claims_its_own_expiry(scope: object) -> None:
    inner_saw: list[str] = []
    with pytest.raises(TimeoutError):
        async with scope(0.05):  # type: ignore[operator]
            try:
                async with scope(10):  # type: ignore[operator]
                    await asyncio.sleep(5)
            except TimeoutError:
                inner_saw.append("timeout")  # wrong: the inner scope did not expire
                raise
    assert inner_saw == []


@pytest.mark.parametrize("scope", [timeout_after, timeout_after_compat])
async def test_outside_cancellation_is_not_a_timeout(scope: object) -> None:
    async def body() -> None:
        async with scope(10):  # type: ignore[operator]
            await asyncio.sleep(5)

    task = asyncio.ensure_future(body())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
