"""The display's host console on a real table: the console linked to the hub as the host
user, what ``coffre host`` sends and hears, and waiting for a condition (the console tests
with and without a browser share them)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from firmware.display.console import Console
from firmware.display.console_link import MqttHubLink
from firmware.hub.brokerconf import HOST_USER
from firmware.link import protocol as proto
from firmware.tools import host
from firmware.tools.simtable import TABLE, SimTable
from tests.support.browser import start_display


def console_display(sim: SimTable, **display: Any) -> tuple[Console, str]:
    """The display's console, linked to the hub as the host user; its page's address.
    ``display``: more of the display's settings (``names``)."""
    console = Console([TABLE], MqttHubLink(sim.broker.config(HOST_USER), [TABLE]))
    server = start_display(sim, console=console, **display)
    assert console.link is not None and console.link.client.wait_connected(10)  # type: ignore[attr-defined]
    return console, f"{server.url}host/{TABLE}"


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
