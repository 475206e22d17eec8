"""A console to attack: its real routes on aiohttp's real test server, one table, a fake
clock, and a hub that records the host commands reaching it and answers sign-in requests as
the host would on the panel (tests/redteam's console attacks and pages share it)."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from firmware.display.console import Console
from firmware.display.console_auth import ConsoleDoor, Request
from firmware.display.server import STATIC
from firmware.link import protocol as proto

TABLE = "main"


class Hub:
    """The hub as the console meets it: requests it shows and the host answers, and the
    host commands that reach it (nothing may reach it from an attacker)."""

    def __init__(self) -> None:
        self.commands: list[proto.HostCommand] = []
        #: How it answers each command (its message id and fields too, as the hub's
        #: answer with fields carries them).
        self.answers = proto.answer(None, True, "")
        self.asked: dict[str, tuple[Request, asyncio.Future[tuple[bool, str]]]] = {}
        self.withdrawn: list[Request] = []

    async def ask(self, table: str, request: Request) -> tuple[bool, str]:
        future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        self.asked[table] = (request, future)
        return await future

    def withdraw(self, table: str, request: Request) -> None:
        self.withdrawn.append(request)

    async def command(self, table: str, cmd: proto.HostCommand) -> proto.Ack:
        self.commands.append(cmd)
        return msgspec.structs.replace(self.answers, id=cmd.id)

    @property
    def glass(self) -> Request | None:
        """The request the hub's glass shows."""
        shown = self.asked.get(TABLE)
        return None if shown is None or shown[0] in self.withdrawn else shown[0]

    async def answer(self, granted: bool) -> None:
        """The host's ok (or back) on the panel for the request the glass shows."""
        _request, future = self.asked.pop(TABLE)
        future.set_result((granted, "Console granted" if granted else "Refused by the host"))
        for _ in range(3):
            await asyncio.sleep(0)  # the console hears it


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


Rig = tuple[Console, Hub, Clock, Callable[[], Awaitable[TestClient[Any, Any]]]]


def run(test: Callable[[Rig], Awaitable[None]], hub: Hub | None = None) -> None:
    """Run one attack against a fresh console (one table, a fake clock), on ``hub`` (a
    fresh :class:`Hub` by default)."""

    async def go() -> None:
        clock = Clock()
        hub_ = hub or Hub()
        console = Console([TABLE], hub_, ConsoleDoor(clock))
        app = web.Application()
        app.add_routes([*console.routes(), web.static("/static", STATIC)])
        server = TestServer(app)
        clients: list[TestClient[Any, Any]] = []

        async def browser() -> TestClient[Any, Any]:
            client: TestClient[Any, Any] = TestClient(server)
            await client.start_server()
            clients.append(client)
            return client

        try:
            await test((console, hub_, clock, browser))
        finally:
            for task in console._tasks:
                task.cancel()
            for client in clients:
                await client.close()
            await server.close()

    asyncio.run(go())


def origin(client: TestClient[Any, Any]) -> dict[str, str]:
    """The header a browser sends with a POST from the console's own page."""
    return {"Origin": f"http://{client.host}:{client.port}"}


async def sign_in(rig: Rig, client: TestClient[Any, Any]) -> str:
    """Ask, have the host confirm the code, pick the session up; the page's CSRF token."""
    _console, hub, _clock, _browser = rig
    asked = await client.post(f"/host/{TABLE}/ask", headers=origin(client))
    assert asked.status == 200, await asked.text()
    assert hub.glass is not None and hub.glass.code == (await asked.json())["code"]
    await hub.answer(True)
    picked = await client.get(f"/host/{TABLE}/ask")
    assert (await picked.json())["state"] == "taken"
    page = await (await client.get(f"/host/{TABLE}")).text()
    found = re.search(r'data-csrf="([^"]+)"', page)
    assert found, page
    return found.group(1)


async def write(
    client: TestClient[Any, Any], path: str, fields: dict[str, str], headers: dict[str, str]
) -> tuple[int, str]:
    response = await client.post(f"/host/{TABLE}/{path}", data=fields, headers=headers)
    return response.status, await response.text()


def fields(csrf: str, **more: str) -> dict[str, str]:
    return {"csrf": csrf, "nonce": secrets.token_urlsafe(16), **more}
