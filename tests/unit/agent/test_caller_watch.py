"""``agent/_caller_watch``: a request's caller leaving marks that request's ``CALLER`` gone,
driven here through ASGI by hand (a scripted server: body messages, then a disconnect when
the test says)."""

from __future__ import annotations

import asyncio
from typing import Any

from langop_infra.agent._caller_watch import CALLER, Caller, CallerWatch

HTTP = {"type": "http", "method": "POST", "path": "/", "headers": []}


class Server:
    """The server's side of ``receive``: the body chunks, then nothing until ``hang_up``."""

    def __init__(self, *chunks: bytes) -> None:
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for n, chunk in enumerate(chunks):
            more = n < len(chunks) - 1
            self.queue.put_nowait({"type": "http.request", "body": chunk, "more_body": more})
        self.asked = 0

    async def receive(self) -> dict[str, Any]:
        self.asked += 1
        return await self.queue.get()

    def hang_up(self) -> None:
        self.queue.put_nowait({"type": "http.disconnect"})


async def no_send(message: Any) -> None:
    raise AssertionError(f"nothing is sent here: {message}")


def run_app(server: Server, app: Any, scope: dict[str, Any] = HTTP) -> Any:
    async def main() -> Any:
        return await CallerWatch(app)(scope, server.receive, no_send)

    return asyncio.run(main())


def test_the_caller_leaving_after_the_body_sets_the_request_event() -> None:
    server = Server(b"ab", b"cd")
    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((await receive())["body"])
        gone = CALLER.get().gone
        seen.append(gone.is_set())
        seen.append((await receive())["body"])
        CALLER.get().listen()
        await asyncio.sleep(0)
        seen.append(gone.is_set())  # the last chunk is read, the caller still there
        server.hang_up()
        await asyncio.wait_for(gone.wait(), 5)
        seen.append(await receive())  # the app asking later hears the disconnect too

    run_app(server, app)
    assert seen == [b"ab", False, b"cd", False, {"type": "http.disconnect"}]


def test_nothing_is_watched_while_the_body_is_still_coming() -> None:
    server = Server(b"ab", b"cd")
    asked: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await asyncio.sleep(0.01)
        asked.append(server.asked)  # the watcher did not take the second chunk
        assert (await receive())["body"] == b"cd"

    run_app(server, app)
    assert asked == [1]


def test_a_disconnect_while_reading_the_body_sets_the_event() -> None:
    server = Server(b"ab", b"cd")
    server.queue = asyncio.Queue()
    server.queue.put_nowait({"type": "http.request", "body": b"ab", "more_body": True})
    server.hang_up()
    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        seen.append((await receive())["type"])
        seen.append(CALLER.get().gone.is_set())

    run_app(server, app)
    assert seen == ["http.disconnect", True]


def test_a_server_message_other_than_a_disconnect_is_not_one() -> None:
    server = Server(b"ab")
    seen: list[bool] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        CALLER.get().listen()
        server.queue.put_nowait({"type": "http.request", "body": b"", "more_body": False})
        await asyncio.sleep(0.01)
        seen.append(CALLER.get().gone.is_set())
        server.hang_up()
        await asyncio.wait_for(CALLER.get().gone.wait(), 5)
        seen.append(CALLER.get().gone.is_set())

    run_app(server, app)
    assert seen == [False, True]


def test_each_request_has_its_own_event_and_none_outlives_it() -> None:
    events: list[asyncio.Event] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        CALLER.get().listen()
        await asyncio.sleep(0)  # the listener asks the server, and waits
        events.append(CALLER.get().gone)

    async def main() -> tuple[bool, int]:
        watch = CallerWatch(app)
        servers = [Server(b"a"), Server(b"b")]
        for server in servers:
            await watch(HTTP, server.receive, no_send)
        await asyncio.sleep(0.01)
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return CALLER.get(None) is None, len(pending)

    assert asyncio.run(main()) == (True, 0)  # watchers cancelled, the variable reset
    assert len(events) == 2 and events[0] is not events[1]
    assert not any(event.is_set() for event in events)


def test_other_scopes_pass_through_unwatched() -> None:
    server, seen = Server(), []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.extend([scope["type"], CALLER.get(None), receive == server.receive])
        seen.append(send is no_send)

    run_app(server, app, {"type": "lifespan"})
    assert seen == ["lifespan", None, True, True]


def test_the_app_gets_the_request_and_the_server_send() -> None:
    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.extend([scope, send is no_send])

    run_app(Server(b"a"), app)
    assert seen == [HTTP, True]


def test_a_body_message_without_more_body_is_the_last() -> None:
    server = Server()
    server.queue.put_nowait({"type": "http.request", "body": b"ab"})
    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        CALLER.get().listen()
        server.hang_up()
        await asyncio.wait_for(CALLER.get().gone.wait(), 5)  # watched: the body was whole
        seen.append(CALLER.get().gone.is_set())

    run_app(server, app)
    assert seen == [True]


def test_a_caller_leaving_calls_back_once_and_not_what_was_forgotten() -> None:
    async def main() -> tuple[list[str], bool]:
        caller, called = Caller(), []
        caller.on_leave(lambda: called.append("kept"))
        forget = caller.on_leave(lambda: called.append("forgotten"))
        forget()
        caller.leave()
        caller.leave()
        return called, caller.gone.is_set()

    assert asyncio.run(main()) == (["kept"], True)


def test_nothing_asks_the_server_until_something_listens() -> None:
    server = Server(b"ab")
    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        server.hang_up()
        await asyncio.sleep(0.01)
        gone = CALLER.get().gone
        seen.extend([server.asked, gone.is_set()])  # no listener: the disconnect waits unread
        CALLER.get().on_leave(lambda: seen.append("left"))
        await asyncio.wait_for(gone.wait(), 5)
        seen.append(server.asked)

    run_app(server, app)
    assert seen == [1, False, "left", 2]


def test_listening_before_the_body_is_read_starts_once_it_is() -> None:
    server = Server(b"ab", b"cd")
    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        CALLER.get().on_leave(lambda: seen.append("left"))
        seen.append((await receive())["body"])
        await asyncio.sleep(0.01)
        seen.append(server.asked)  # listening waits for the body's last chunk
        seen.append((await receive())["body"])
        server.hang_up()
        await asyncio.wait_for(CALLER.get().gone.wait(), 5)

    run_app(server, app)
    assert seen == [b"ab", 1, b"cd", "left"]


def test_a_listener_starts_once_however_often_it_is_asked_for() -> None:
    server = Server(b"ab")
    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        caller = CALLER.get()
        caller.listen()
        caller.on_leave(lambda: seen.append("left"))
        caller.listen()
        await asyncio.sleep(0.01)
        seen.append(server.asked)  # one listener asked once, and waits
        server.hang_up()
        await asyncio.wait_for(caller.gone.wait(), 5)

    run_app(server, app)
    assert seen == [2, "left"]
