"""What the host's console says: its sessions (which phone, when it signed in, when it
was last seen), each seat's last seen, and its words in the table's language or the one a
session chose. The console's real routes on aiohttp's real server, through the attack
tests' rig (a recorder for the hub, a fake clock)."""

from __future__ import annotations

import html
import re
from typing import Any

from aiohttp.test_utils import TestClient

from firmware.display.console_live import LastSeen, seats_fragment
from firmware.display.spectator import Snapshot
from firmware.link.lang import speaking
from tests.redteam.test_console_attacks import TABLE, Rig, fields, origin, run, sign_in, write


def table(language: str = "en", seats: dict[str, str] | None = None) -> Snapshot:
    """A table as the display knows it: the hub online, speaking ``language``."""
    stations = {seat: {"state": state} for seat, state in (seats or {"p1": "online"}).items()}
    status = {"state": "ready", "language": language, "stations": stations}
    return Snapshot(TABLE, status=status, broker=True)


async def page(client: TestClient[Any, Any]) -> str:
    """The console page's text as a reader sees it (tags out, entities and spaces plain)."""
    raw = await (await client.get(f"/host/{TABLE}")).text()
    text = html.unescape(re.sub(r"<[^>]+>", " ", raw)).replace("\u00a0", " ")
    return re.sub(r"\s+", " ", text)


def test_each_session_is_listed_with_when_it_signed_in_and_was_last_seen() -> None:
    async def attack(rig: Rig) -> None:
        console, _hub, clock, browser = rig
        first, second = await browser(), await browser()
        await sign_in(rig, first)
        clock.now += 40 * 60
        await first.get(f"/host/{TABLE}/live")  # the first phone's page refreshes
        clock.now += 5 * 60
        await sign_in(rig, second)
        said = await page(second)
        assert "signed in 45 min ago · last seen 5 min ago" in said
        assert "(this one) signed in just now · last seen just now" in said
        assert len(console.door.of_table(TABLE)) == 2

    run(attack)


def test_a_session_ended_from_the_list_stops_at_once() -> None:
    async def attack(rig: Rig) -> None:
        console, hub, _clock, browser = rig
        host, other = await browser(), await browser()
        csrf = await sign_in(rig, host)
        await sign_in(rig, other)
        mine = {s.label for s in console.door.of_table(TABLE)}
        assert len(mine) == 1  # both are "a browser": told apart by id
        raw = await (await host.get(f"/host/{TABLE}")).text()
        ids = re.findall(r'data-session="([0-9a-f]+)"', raw)
        assert len(ids) == 2
        theirs = next(s.id for s in console.door.of_table(TABLE) if s.csrf != csrf and s.id in ids)
        status, _ = await write(host, "revoke", fields(csrf, session=theirs), origin(host))
        assert status == 200
        assert (await other.get(f"/host/{TABLE}/live")).status == 401
        assert "Ask for the console" in await page(other)
        assert hub.commands == []

    run(attack)


def test_a_seat_that_went_away_reads_when_it_was_last_seen() -> None:
    seen = LastSeen()
    snap = table(seats={"p1": "online", "p2": "online", "p3": "never-seen"})
    seen.observe(snap, 100.0)
    snap.status["stations"]["p2"] = {"state": "offline"}
    seen.observe(snap, 160.0)
    # While the hub is not heard its last word says nothing new: nobody counts as seen.
    lost = table(seats={"p2": "online"})
    lost.broker = False
    seen.observe(lost, 200.0)
    lines = re.sub(r"<[^>]+>", " ", seats_fragment(snap, seen, 100.0 + 12 * 60))
    assert "p1 online " in lines.replace("  ", " ")
    assert "offline, last seen 12 min ago" in lines
    assert "never seen" in lines and "never seen, last seen" not in lines
    with speaking("fr"):
        french = html.unescape(seats_fragment(snap, seen, 100.0 + 3 * 3600))
    assert "hors ligne, vue il y a 3 h" in french


def test_the_console_speaks_the_tables_language_and_a_session_may_choose_another() -> None:
    async def attack(rig: Rig) -> None:
        console, hub, _clock, browser = rig
        console.snapshot = lambda _table: table("fr")
        phone = await browser()
        before = await page(phone)
        assert "Demander la console" in before and "Ask for the console" not in before
        csrf = await sign_in(rig, phone)
        said = await page(phone)
        assert "Annuler" in said and "Abandon" in said and "Undo" not in said
        asked = await phone.post(
            f"/host/{TABLE}/command", data=fields(csrf, cmd="undo"), headers=origin(phone)
        )
        assert (await asked.json())["confirm"] == "Annuler le dernier coup ?"
        # A cross-site form cannot change it; the page's own write can.
        status, _ = await write(phone, "language", fields(csrf, language="en"), {})
        assert status == 403
        assert "Annuler" in await page(phone)
        status, _ = await write(phone, "language", fields(csrf, language="xx"), origin(phone))
        assert status == 400
        status, _ = await write(phone, "language", fields(csrf, language="en"), origin(phone))
        assert status == 200
        said = await page(phone)
        assert "Undo" in said and "Annuler" not in said
        live = await (await phone.get(f"/host/{TABLE}/live")).text()
        assert "Seats" in live and "online" in live
        assert hub.commands == []

    run(attack)
