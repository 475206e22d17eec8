"""The host's console sessions on the hub's glass, on a real table: a real mosquitto with its
ACL, the real hub and the display's real console door reporting its phones (no browser:
the session is the door's own grant). The panel lists the phones and ends one; the
display signs it out."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from firmware.display.console import ASK_COOKIE, Console
from firmware.display.console_auth import SETTLE_SECONDS
from firmware.hub.brokerconf import HOST_USER
from firmware.tools.simtable import TABLE, SimTable
from tests.support.console_display import cli, console_display, until
from tests.support.tables import TableFactory


def _sessions(sim: SimTable) -> str:
    """What ``coffre host --table sim console-sessions`` answers."""
    return cli(sim.broker.config(HOST_USER), "console-sessions").message


def _glass(sim: SimTable) -> dict[str, Any]:
    with sim.watch.changed:
        return dict(sim.watch.host)


def _signed_in(console: Console, url: str) -> None:
    """A phone signs in: the host's yes on the door (the hub's side of the yes is the hub's,
    tested with the panel in tests/platform/test_console.py), then the phone's own poll of
    its request, which hands it the session and has the display report it to the hub."""
    clock = console.door.clock
    request, secret = console.door.ask(TABLE, "127.0.0.1")
    request.born = clock() - SETTLE_SECONDS
    console.door.grant(TABLE, request.code)
    poll = urllib.request.Request(
        f"{url}/ask", headers={"Cookie": f"{ASK_COOKIE}={secret}", "User-Agent": "iPhone"}
    )
    with urllib.request.urlopen(poll, timeout=10) as answer:
        assert json.load(answer)["state"] == "taken"  # the session is the phone's now


def _shows(sim: SimTable, title: str | None = None, line: str | None = None) -> bool:
    """Whether the hub display comes to show ``title`` (a title's start: arrows may follow)
    and ``line`` (within 10 s)."""

    def shown() -> bool:
        glass = _glass(sim)
        return (title is None or str(glass.get("title")).startswith(title)) and (
            line is None or line in glass.get("lines", [])
        )

    return until(shown)


def test_the_panel_lists_the_signed_in_phone_and_ends_it(make_table: TableFactory) -> None:
    """No phone: the menu has no "Phones" row. A phone signs in: the row appears after
    Start, ok shows the phone by its id's first four characters, ok asks once more
    and a second ok signs it out at the display; the row goes away."""
    sim = make_table(players=3)
    console, url = console_display(sim)
    assert _shows(sim, title="New game")
    sim.panel.press("prev")  # the last row: Start while no phone is signed in
    assert _shows(sim, line="> Start")

    _signed_in(console, url)
    (session,) = console.door.of_table(TABLE)
    assert until(lambda: _sessions(sim).startswith("1: "))
    sim.panel.press("next")  # Start is no longer the last row
    assert _shows(sim, line="> Phones: 1"), _glass(sim)
    sim.panel.press("ok")
    assert _shows(sim, title="Phones: 1")
    assert any(line.startswith(f"> {session.id[:4]} ") for line in _glass(sim)["lines"])
    sim.panel.press("ok")
    assert _shows(sim, title=f"End {session.id[:4]}? ok")
    assert console.door.of_table(TABLE) == [session]  # one ok ends nothing
    sim.panel.press("ok")
    assert until(lambda: not console.door.of_table(TABLE), seconds=5)
    assert _shows(sim, title="Phone signed out")
    assert _sessions(sim) == "No phone is signed in"
    assert _shows(sim, line="> Start")  # the row went with the phone, the cursor to Start
