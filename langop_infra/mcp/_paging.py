"""Following ``tools/list`` pages within the caps on pages, tools and bytes over all pages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from langop_infra.mcp._errors import MalformedResponse, ResponseTooLarge
from langop_infra.mcp._options import ClientOptions

Call = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


async def list_all_tools(
    call: Call, received: Callable[[], int | None], options: ClientOptions, label: str
) -> list[dict[str, Any]]:
    """Every tool over every page; ``received()`` is the transport's running byte count.

    A listing stops with :class:`ResponseTooLarge` once its pages add up to more than
    ``max_total_bytes`` or ``max_tools``: a hostile server can make the client hold at
    most that much (plus one response of ``max_response_bytes``), never more.
    """
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    names: set[str] = set()
    cursor: str | None = None
    start = received()
    for _ in range(options.max_pages):
        result = await call({"cursor": cursor} if cursor else {})
        total = received()
        if start is not None and total is not None and total - start > options.max_total_bytes:
            raise ResponseTooLarge(
                f"{label} sent more than {options.max_total_bytes} bytes of tools/list pages "
                f"(at least {total - start}); raise max_total_bytes (--max-bytes) if it "
                "really has that many tools",
                limit=options.max_total_bytes,
                target=label,
            )
        page = _named_tools(result.get("tools"))
        if page is None:
            raise MalformedResponse(
                f"{label} answered tools/list without a list of named tools; "
                "the server does not follow MCP",
                target=label,
            )
        if len(tools) + len(page) > options.max_tools:
            raise ResponseTooLarge(
                f"{label} listed more than {options.max_tools} tools; raise max_tools if it "
                "really has that many",
                limit=options.max_tools,
                target=label,
            )
        given = result.get("nextCursor")
        if given not in (None, "") and (not isinstance(given, str) or given in seen):
            raise MalformedResponse(
                f"{label} sent tools/list cursor {given!r} twice (or not a string): "
                "its pagination loops; fix the server's nextCursor",
                target=label,
            )
        cursor = given
        # A later page repeating an earlier page's tool: the list changed under us.
        repeated = sorted({t["name"] for t in page} & names)
        if repeated:
            raise MalformedResponse(
                f"{label} listed tool {repeated[0]!r} again on a later tools/list "
                "page: its list changed while paging; retry, or fix the server",
                target=label,
            )
        names.update(t["name"] for t in page)
        tools.extend(page)
        if cursor is None or cursor == "":
            return tools
        seen.add(cursor)
    raise MalformedResponse(
        f"{label} kept paging tools/list past {options.max_pages} pages; "
        "raise max_pages (--max-pages) if it really has that many tools, else fix its "
        "nextCursor",
        target=label,
    )


def _named_tools(page: object) -> list[dict[str, Any]] | None:
    """``page`` when it is a list of objects each with a string ``name``; None otherwise."""
    if not isinstance(page, list):
        return None
    items = cast("list[object]", page)
    if not all(
        isinstance(t, dict) and isinstance(cast("dict[str, Any]", t).get("name"), str)
        for t in items
    ):
        return None
    return cast("list[dict[str, Any]]", items)
