"""What the host's console says: its sessions (which phone, when it signed in, when it
was last seen), each seat's last seen, and its words in the table's language or the one a
session chose. The console's real routes on aiohttp's real server, through the attack
tests' rig (a recorder for the hub, a fake clock)."""

from __future__ import annotations

import asyncio
import html
import re
import time
from typing import Any

from aiohttp.test_utils import TestClient

from firmware.display import console_auth as auth
from firmware.display import console_link
from firmware.display.console_live import LastSeen, seats_fragment
from firmware.display.spectator import Snapshot
from firmware.hub.console import phones
from firmware.link import protocol as proto
from firmware.link.lang import speaking
from firmware.link.mqtt import BrokerConfig, LinkState, Message
from tests.support.console_rig import (
    TABLE,
    Hub,
    Rig,
    fields,
    origin,
    run,
    sign_in,
    write,
)


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
        # Backups are taken and put back on the hub: the page says how, in its language.
        assert "Sauvegardes" in said and "sudo coffre restore /media/usb/" in said
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


def test_the_console_says_when_the_last_backup_was_made() -> None:
    """The hub's status carries its last backup's stamp (a time and a name): the page
    says how long ago, in its language; a hub that says none: none yet; a hub not heard
    (or one that does not say): nothing. A name is text, never markup."""

    async def attack(rig: Rig) -> None:
        console, hub, _clock, browser = rig
        phone = await browser()
        await sign_in(rig, phone)
        snap = table()
        console.snapshot = lambda _table: snap
        assert "No backup made yet" not in await page(phone), "a hub that does not say"
        snap.status["backup"] = None
        assert "No backup made yet" in await page(phone)
        made = {"at": int(time.time()) - 2 * 3600 - 30, "name": "coffre-hub.tar.gz", "size": 9}
        snap.status["backup"] = made
        said = await page(phone)
        assert "Backups Last backup: 2 h ago (coffre-hub.tar.gz)" in said
        assert "No backup made yet" not in said
        snap.status["language"] = "fr"
        assert "Dernière sauvegarde : il y a 2 h (coffre-hub.tar.gz)" in await page(phone)
        snap.status["language"] = "en"
        snap.status["backup"] = {**made, "name": "<img src=x onerror=alert(1)>"}
        raw = await (await phone.get(f"/host/{TABLE}")).text()
        assert "<img" not in raw and "&lt;img src=x" in raw
        snap.status = {"state": "lost"}
        said = await page(phone)
        assert "Last backup" not in said and "No backup made yet" not in said
        assert hub.commands == []

    run(attack)


class ListeningHub(Hub):
    """A hub that also hears the console's reports of its phones, and answers each when
    the test says (as the real one holds them until the host ends a phone)."""

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[tuple[list[str], asyncio.Future[list[str] | None]]] = []
        self.sent: list[proto.HostCommand] = []

    async def report(self, table: str, cmd: proto.HostCommand) -> list[str] | None:
        assert cmd.cmd == "console-report" and table == TABLE
        future: asyncio.Future[list[str] | None] = asyncio.get_running_loop().create_future()
        self.sent.append(cmd)
        self.reports.append(([s[0] for s in cmd.options["sessions"]], future))
        return await future


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_the_hub_hears_of_each_phone_and_a_phone_it_ends_is_signed_out_at_once() -> None:
    hub = ListeningHub()

    async def attack(rig: Rig) -> None:
        console, _hub, _clock, browser = rig
        phone, other = await browser(), await browser()
        await sign_in(rig, phone)
        await settle()
        (first,) = console.door.of_table(TABLE)
        assert [ids for ids, _ in hub.reports] == [[first.id]]
        await sign_in(rig, other)
        await settle()
        both = hub.reports[-1][0]
        assert len(both) == 2 and first.id in both
        # The newer report went out while the first waited; the hub ends the first phone
        # in its answer to the newest.
        hub.reports[-1][1].set_result([first.id])
        await settle()
        left = [s.id for s in console.door.of_table(TABLE)]
        assert len(left) == 1 and first.id not in left
        assert (await phone.get(f"/host/{TABLE}/live")).status == 401
        assert (await other.get(f"/host/{TABLE}/live")).status == 200
        assert hub.reports[-1][0] == left  # and the hub hears the list without it
        # Ids, browsers and times only: no token or CSRF value ever goes to the hub.
        secrets_ = {s.csrf for s in console.door.of_table(TABLE)} | {
            s.token_hash for s in console.door.of_table(TABLE)
        }
        assert not any(secret in str(cmd.options) for cmd in hub.sent for secret in secrets_)
        assert all(len(item) == 4 for cmd in hub.sent for item in cmd.options["sessions"])
        assert hub.commands == []

    run(attack, hub)


def test_a_tables_most_sessions_fit_in_one_report() -> None:
    """Every session a table keeps, each from the longest-named browser, in one
    ``console-report`` the hub reads (a host command is at most MAX_INPUT_BYTES)."""
    hub = ListeningHub()

    async def attack(rig: Rig) -> None:
        console, _hub, _clock, _browser = rig
        for n in range(auth.SESSIONS_PER_TABLE):
            console.door._new_session(TABLE, f"10.0.0.{n}", "Macintosh", 1000.0)
        cmd = console._report_command(TABLE)
        payload = console_link.payload(cmd)
        assert len(payload) <= proto.MAX_INPUT_BYTES, len(payload)
        read = phones(proto.decode_host_command(payload).options)
        assert read is not None and len(read) == auth.SESSIONS_PER_TABLE

    run(attack, hub)


def test_a_command_is_not_sent_before_the_link_hears_the_hubs_answers() -> None:
    """Connected but not yet subscribed to ``host/ack`` (just after a reconnection): the
    command is not sent (the hub would apply it and its answer would be lost)."""
    from firmware.link.mqtt import BrokerConfig

    link = console_link.MqttHubLink(BrokerConfig(port=1), [TABLE])
    sent: list[bytes] = []
    link.client.publish = lambda _topic, payload, **_kw: sent.append(payload)  # type: ignore[method-assign,assignment,misc]
    link.client.connected.set()
    cmd = proto.HostCommand(cmd="next", id="console-a")
    assert asyncio.run(link.command(TABLE, cmd)).ok is False and sent == []


def test_the_table_section_presses_what_the_hub_says_and_the_page_names_the_table() -> None:
    """The table's sound (its ``public``) and language (its status) are the pressed buttons,
    in the page and in each refresh; a hub that is not there presses none. The page is
    called by the table's name (display.toml's [names]), as text, else by its id."""

    async def attack(rig: Rig) -> None:
        console, _hub, _clock, browser = rig
        snap = table("fr")
        snap.public["sound"] = "narration"
        console.snapshot = lambda _table: snap
        phone = await browser()
        await sign_in(rig, phone)
        raw = await (await phone.get(f"/host/{TABLE}")).text()
        pressed = re.findall(r'data-cmd="(\w+)" data-value="(\w+)" aria-pressed="true"', raw)
        assert pressed == [("sound", "narration"), ("language", "fr")]
        assert f"<title>coffre · {TABLE}</title>" in raw and f"<h1>{TABLE}</h1>" in raw
        said = await page(phone)
        assert "Table Son Coupé Signaux seuls Signaux et voix" in said
        assert "Langue de la table English Français" in said
        snap.public["sound"], snap.status["language"] = "off", "en"
        live = await (await phone.get(f"/host/{TABLE}/live")).text()
        assert '<span id="table-now" hidden data-sound="off" data-language="en"></span>' in live
        snap.name = "Salon <b>bleu</b>"
        raw = await (await phone.get(f"/host/{TABLE}")).text()
        assert "<h1>Salon &lt;b&gt;bleu&lt;/b&gt;</h1>" in raw
        assert "<title>coffre · Salon &lt;b&gt;bleu&lt;/b&gt;</title>" in raw
        stranger = await browser()
        raw = await (await stranger.get(f"/host/{TABLE}")).text()
        assert "<h1>Salon &lt;b&gt;bleu&lt;/b&gt;: host console</h1>" in raw
        snap.status = {"state": "lost"}  # its public stays retained on the broker
        raw = await (await phone.get(f"/host/{TABLE}")).text()
        assert 'aria-pressed="true"' not in raw and raw.count('aria-pressed="false"') == 5
        live = await (await phone.get(f"/host/{TABLE}/live")).text()
        assert '<span id="table-now" hidden></span>' in live

    run(attack)


def test_a_waiting_code_shows_beside_its_seat_and_only_a_code_the_hub_could_say() -> None:
    """The host screen's codes, as the console's link keeps them: a station's name and
    four digits each, anything else left out (it never reaches the page). A seat asking
    with a code shows it, the question and Pair carrying that code; one asking without
    (an older hub, a request not revealed yet) gets the field for the code on its glass;
    a code for a seat that does not ask shows nowhere. In French too."""
    screen = (
        b'{"title": "Pair p1? 4721", "lines": [], "pairing": {"p1": "4721", "p2": "0042", '
        b'"p3": "<b>1</b>", "../x": "1234", "p4": 1234, "p5": "12345"}}'
    )
    codes = console_link.pairing_codes(screen)
    assert codes == {"p1": "4721", "p2": "0042"}
    for garbage in (b"", b"[]", b'{"pairing": ["p1"]}', b"\xff", b'{"title": "x"}'):
        assert console_link.pairing_codes(garbage) == {}
    snap = table(seats={"p1": "pairing", "p2": "online", "p3": "pairing"})  # p2 asks not
    fragment = seats_fragment(snap, codes=codes)
    known = re.search(r'<form class="pair known" data-station="p1"[^>]*>.*?</form>', fragment)
    assert known is not None, fragment
    assert '<p class="hub-code"' in known.group(0) and ">4721</p>" in known.group(0)
    assert "Same code on p1's screen?" in html.unescape(known.group(0))
    assert '<input type="hidden" name="code" value="4721">' in known.group(0)
    assert "0042" not in fragment and 'data-station="p2"' not in fragment
    typed = re.search(r'<form class="pair" data-station="p3">.*?</form>', fragment)
    assert typed is not None and 'inputmode="numeric"' in typed.group(0)
    with speaking("fr"):
        french = html.unescape(seats_fragment(snap, codes=codes))
    assert "Même code sur l’écran de p1 ?" in french


def test_pair_sends_the_code_the_page_showed() -> None:
    """The console's Pair beside a shown code posts that station and code, as the page's
    script does; the hub hears exactly them (it grants only the request with that code)."""

    class Hearing(Hub):
        def codes(self, table: str) -> dict[str, str]:
            return {"p1": "4721"}

    async def attack(rig: Rig) -> None:
        console, hub, _clock, browser = rig
        console.snapshot = lambda _t: table(seats={"p1": "pairing"})
        client = await browser()
        csrf = await sign_in(rig, client)
        live = await (await client.get(f"/host/{TABLE}/live")).text()
        shown = re.search(r'data-station="p1" data-code="([0-9]{4})"', live)
        hidden = re.search(r'name="code" value="([0-9]{4})"', live)
        assert shown is not None and hidden is not None and shown[1] == hidden[1] == "4721"
        form = fields(csrf, cmd="pair", station="p1", code=hidden[1])
        assert (await write(client, "command", form, origin(client)))[0] == 200
        assert [(c.cmd, c.station, c.code) for c in hub.commands] == [("pair", "p1", "4721")]

    run(attack, Hearing())


def test_the_link_keeps_the_host_screens_codes_and_forgets_them_when_it_drops() -> None:
    """The console's link hears the table's host screen beside its answers: the codes are
    kept per table, an answer is still an answer, and a dropped link forgets the codes
    (the broker sends the retained screen again on reconnection)."""
    link = console_link.MqttHubLink(BrokerConfig("127.0.0.1", 1), [TABLE])
    topics = proto.Topics(TABLE)
    assert topics.host_screen in link.client.subscriptions
    inbox = link.client.inbox
    inbox.put(Message(topics.host_screen, b'{"title": "", "pairing": {"p2": "0815"}}', True))
    inbox.put(Message(topics.host_ack, b'{"id": "x", "ok": true, "message": "Done"}'))
    inbox.put(None)
    link._read()
    assert link.codes(TABLE) == {"p2": "0815"} and link.codes("other") == {}
    link._state(LinkState("disconnected", "Broker lost"))
    assert link.codes(TABLE) == {}
