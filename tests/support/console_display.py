"""The display's host console on a real table: the console linked to the hub as the host
user, what ``coffre host`` sends and hears, and waiting for a condition (the console tests
with and without a browser share them)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from firmware.display.console import Console
from firmware.display.console_auth import SETTLE_SECONDS
from firmware.display.console_link import MqttHubLink
from firmware.display.server import Display
from firmware.hub.brokerconf import HOST_USER, SPECTATOR_USER
from firmware.link import protocol as proto
from firmware.tools import host
from firmware.tools.brokers import BrokerSetup
from firmware.tools.simtable import TABLE, SimTable

#: A phone's viewport.
PHONE = {"width": 390, "height": 844}


def shot(page: Any, name: str) -> None:
    """A screenshot of the whole page to ``$COFFRE_SHOTS/console-<name>.png``, when set."""
    where = os.environ.get("COFFRE_SHOTS")
    if where:
        page.screenshot(path=str(Path(where) / f"console-{name}.png"), full_page=True)


def console_display(sim: SimTable, **display: Any) -> tuple[Console, str]:
    """The display's console, linked to the hub as the host user; its page's address.
    ``display``: more of the display's settings (``names``)."""
    console, server, url = start_console(sim.broker, **display)
    sim.on_stop.append(server.stop)
    return console, url


def start_console(
    broker: BrokerSetup, table: str = TABLE, **settings: Any
) -> tuple[Console, Display, str]:
    """A display (as the spectator user) serving the console of ``table``, linked to the
    hub as the host user; the caller stops the display. Its console page's address.
    ``settings``: more of the display's settings (``names``)."""
    console = Console([table], MqttHubLink(broker.config(HOST_USER), [table]))
    display = Display(
        broker.config(SPECTATOR_USER),
        [table],
        host="127.0.0.1",
        port=0,
        console=console,
        **settings,
    )
    display.start()
    assert console.link is not None and console.link.client.wait_connected(10)  # type: ignore[attr-defined]
    return console, display, f"{display.url}host/{table}"


def granted(console: Console, table: str = TABLE) -> str:
    """A session as the host's yes gives one (the door's own grant: the hub's side of the
    yes is the hub's), for the browser on this machine."""
    clock = console.door.clock
    request, secret = console.door.ask(table, "127.0.0.1")
    request.born = clock() - SETTLE_SECONDS
    console.door.grant(table, request.code)
    _request, token = console.door.state(secret, "127.0.0.1", "Linux")
    assert token
    return token


def cli(broker: Any, action: str, station: str | None = None) -> proto.Ack:
    """What ``coffre host --table sim ACTION [STATION]`` sends, and the hub's answer."""
    cmd = proto.HostCommand(cmd=action, station=station, id=f"cli-{time.monotonic_ns()}")  # type: ignore[arg-type]
    return host.send(broker, TABLE, cmd)


def until(check: Callable[[], Any], seconds: float = 10.0) -> bool:
    """Whether ``check()`` comes true within ``seconds`` (asked every 100 ms)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return bool(check())
