"""The host's console in Chromium at phone size, on a real table: a real mosquitto with its
ACL, the real hub, the display serving ``/host`` and sending host commands as the host
user. Screenshots go to ``$COFFRE_SHOTS`` when it is set (to be looked at)."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from firmware.cli import main
from firmware.display.console import SESSION_COOKIE
from firmware.display.console_auth import SETTLE_SECONDS
from firmware.hub.brokerconf import HOST_USER
from firmware.hub.hostmenu import language_key, sound_key
from firmware.hub.store import Store
from firmware.link import protocol as proto
from firmware.tools import host
from firmware.tools.simtable import TABLE, SimTable
from tests.support.browser import chromium, new_page
from tests.support.console_display import PHONE, cli, console_display, granted, shot, until
from tests.support.tables import TableFactory, director, wait_host_title

GAME = "secret-identity"


def ask(page: Any, sim: SimTable) -> str:
    """The phone asks for a session: its page shows a code, the hub's glass the same one."""
    page.click("#ask")
    expect(page.locator("#code")).to_have_text(re.compile(r"^[0-9]{4}$"))
    code = page.locator("#code").text_content() or ""
    wait_host_title(sim, f"Console? {code}")
    return code


def test_a_phone_signs_in_with_the_hosts_yes_on_the_code_the_glass_shows(
    make_table: TableFactory,
) -> None:
    """Without a session the page is the sign-in page and nothing else. The phone asks;
    the hub's glass shows its code; ``coffre host console-ok`` with another code grants
    nothing, with that code signs the phone in. ``console-sessions`` then lists it on the
    hub and ``console-end`` signs it out at once."""
    sim = make_table(players=3)
    console, url = console_display(sim)
    broker = sim.broker.config(HOST_USER)
    with chromium() as browser:
        page = new_page(browser, PHONE)
        page.goto(url)
        assert page.locator("#ask").is_visible()
        assert page.locator("button.cmd").count() == 0
        shot(page, "sign-in")
        code = ask(page, sim)
        shot(page, "code")
        other = f"{(int(code) + 1) % 10_000:04d}"
        wrong = host.send(broker, TABLE, ok_command(other))
        assert (wrong.ok, wrong.message) == (False, "The request shows another code")
        assert page.locator("button.cmd").count() == 0
        right = host.send(broker, TABLE, ok_command(code))
        assert (right.ok, right.message) == (True, "Console granted")
        expect(page.locator("button.cmd")).to_have_count(3, timeout=10_000)
        cookies = {c["name"]: c for c in page.context.cookies()}
        assert (
            cookies[SESSION_COOKIE]["httpOnly"] and cookies[SESSION_COOKIE]["sameSite"] == "Strict"
        )

        # The hub lists the phone (the display reports its sessions) and signs it out:
        # the phone's session ends at once.
        listed = until(lambda: cli(broker, "console-sessions").message.startswith("1: "))
        (session,) = console.door.of_table(TABLE)
        assert listed and session.id in cli(broker, "console-sessions").message
        assert (cli(broker, "console-end", "00000000").ok, len(console.door.of_table(TABLE))) == (
            False,
            1,
        )
        ended = cli(broker, "console-end", session.id)
        assert (ended.ok, ended.message) == (True, "Phone signed out")
        assert until(lambda: not console.door.of_table(TABLE), seconds=3)
        page.reload()
        expect(page.locator("#ask")).to_be_visible()
        assert page.locator("button.cmd").count() == 0
        assert until(lambda: cli(broker, "console-sessions").message == "No phone is signed in")


def test_the_panels_back_refuses_and_the_phone_is_told(make_table: TableFactory) -> None:
    sim = make_table(players=3)
    _console, url = console_display(sim)
    with chromium() as browser:
        page = new_page(browser, PHONE)
        page.goto(url)
        ask(page, sim)
        sim.panel.press("back")
        expect(page.locator("#said")).to_have_text("Refused by the host", timeout=10_000)
        assert page.locator("button.cmd").count() == 0


def test_the_panels_ok_grants_the_request_once_it_has_been_on_the_glass(
    make_table: TableFactory,
) -> None:
    """An ok pressed as the code appears only shows it (it may have come under the host's
    finger); an ok once it has been on the glass 1.5 s signs the phone in."""
    sim = make_table(players=3)
    _console, url = console_display(sim)
    with chromium() as browser:
        page = new_page(browser, PHONE)
        page.goto(url)
        code = ask(page, sim)
        sim.panel.press("ok")
        page.wait_for_timeout(800)
        assert page.locator("button.cmd").count() == 0
        assert sim.watch.host.get("title") == f"Console? {code}"
        page.wait_for_timeout(int(SETTLE_SECONDS * 1000))
        sim.panel.press("ok")
        expect(page.locator("button.cmd")).to_have_count(3, timeout=10_000)


def ok_command(code: str) -> proto.HostCommand:
    return proto.HostCommand(cmd="console-ok", code=code, id=f"cli-{code}-{time.monotonic_ns()}")


def test_a_game_is_set_up_started_undone_and_aborted_from_the_phone(
    make_table: TableFactory,
) -> None:
    """The phone picks the game, its players and an option and starts; a second start is
    refused while the game runs; the table plays a little; undo and abort ask once more on
    the page (no browser dialog, which a browser may suppress: this one dismisses any),
    "no" changes nothing, "yes" does it and the table's public state follows at once."""
    sim = make_table(players=3)
    console, url = console_display(sim)
    with chromium() as browser:
        page = new_page(browser, PHONE)
        page.context.add_cookies([{"name": SESSION_COOKIE, "value": granted(console), "url": url}])
        page.goto(url)
        assert page.locator("button.cmd").count() == 3
        page.select_option("#start select[name=game]", GAME)
        chosen = page.locator(f"#start fieldset[data-game={GAME}]")
        chosen.locator("select[name=players]").select_option("3")
        chosen.locator("select[name='o.mode']").select_option(label="co-op")
        shot(page, "console")
        page.click("#start button[type=submit]")
        expect(page.locator("#said")).to_have_text("Game started")
        public = sim.watch.wait(lambda p: p.get("game") == GAME and p.get("version") == 0)
        assert public["view"]["mode"] == "coop"
        current = Store(sim.store_path).current_game(TABLE)
        assert current is not None and (current.players, current.options["mode"]) == (3, "coop")
        page.click("#start button[type=submit]")
        expect(page.locator("#said")).to_have_text("A game is running: abort it first")

        director(sim, seed=3, options={"mode": "coop"}, stop_at=(2, "answer")).play()
        skipped = _settled_version(sim.watch)
        # A double tap on Next skips the step on the page, not the one after it.
        expect(page.locator("#table-now")).to_have_attribute("data-step", "2/answer")
        page.dblclick("button[data-cmd=next]")
        expect(page.locator("#said")).to_have_text("The game moved on: look again")
        version = _settled_version(sim.watch)
        assert version == skipped + 1
        assert sim.watch.public["phase"] != "answer"
        again = page.locator("#again")
        page.click("button[data-cmd=undo]")
        expect(again).to_be_visible()
        expect(again.locator("p")).to_have_text("Undo the last move?")
        shot(page, "undo-question")
        again.locator("button.no").click()  # no: nothing undone
        expect(again).to_be_hidden()
        page.wait_for_timeout(500)
        assert sim.watch.public["version"] == version
        page.click("button[data-cmd=undo]")
        again.locator("button.yes").click()
        sim.watch.wait(lambda p: p.get("version") == version - 1)
        expect(again).to_be_hidden()
        page.click("button[data-cmd=abort]")
        expect(again.locator("p")).to_have_text("Abort the game? It cannot be resumed.")
        again.locator("button.yes").click()
        sim.watch.wait(lambda p: p.get("game") is None)
        last = Store(sim.store_path).last_game(TABLE)
        assert last is not None and last.status == "aborted"
        page.click("button[data-cmd=next]")
        expect(page.locator("#said")).to_have_text("No game running")
        shot(page, "no-game")


def _settled_version(watch: Any) -> int:
    """The public table's version once the last move's update has arrived (the bots stop
    on their own move, whose public update may still be on its way): unchanged for 1 s."""
    last = watch.public["version"]
    while True:
        time.sleep(1.0)
        now = watch.public["version"]
        if now == last:
            return int(now)
        last = now


def test_the_seats_health_follows_the_hub(make_table: TableFactory, tmp_path: Path) -> None:
    """Every seat reads online from the hub's status, and when the last backup was made;
    when the hub stops the page says so within a refresh."""
    sim = make_table(players=3)
    console, url = console_display(sim)
    with chromium() as browser:
        page = new_page(browser, PHONE)
        page.context.add_cookies([{"name": SESSION_COOKIE, "value": granted(console), "url": url}])
        page.goto(url)
        seats = page.locator("#live ul.seats li")
        expect(seats).to_have_count(len(sim.stations))
        for seat in sim.stations:
            expect(page.locator(f"#live li.seat:has-text('{seat}') .state")).to_have_text("online")
        shot(page, "seats")
        expect(page.locator(".care .last-backup")).to_have_text("No backup made yet")
        archive = tmp_path / "coffre-hub.tar.gz"
        args = ["--store", str(sim.store_path), "--etc", "/nonexistent", "--broker-dir", "/none"]
        assert main(["backup", "--out", str(archive), *args]) == 0
        sim.host({"cmd": "sound", "sound": "off"})  # the hub publishes its status again
        sim.watch.wait_hub(lambda s: bool(s.get("backup")), "the backup in the hub's status")
        said = "Last backup: just now (coffre-hub.tar.gz)"
        deadline = time.monotonic() + 10  # the display hears the status as the watcher did
        while page.locator(".care .last-backup").text_content() != said:
            assert time.monotonic() < deadline, page.locator(".care").text_content()
            time.sleep(0.2)
            page.reload()
        sim.stop_hub()
        expect(page.locator("#live .alert").first).to_contain_text("Hub offline", timeout=15_000)


def test_a_french_table_s_console_speaks_french_and_every_control_fits_a_finger(
    make_table: TableFactory,
) -> None:
    """A table that speaks French gets its console in French (its run buttons, the second
    question, the seats); the host may switch the console to English; at phone size every
    button, field and choice is at least 44 px high."""
    sim = make_table(players=3, language="fr")
    console, url = console_display(sim)
    with chromium() as browser:
        page = new_page(browser, PHONE)
        page.goto(url)
        expect(page.locator("#ask")).to_have_text("Demander la console")
        page.context.add_cookies([{"name": SESSION_COOKIE, "value": granted(console), "url": url}])
        page.goto(url)
        assert page.locator("html").get_attribute("lang") == "fr"
        expect(page.locator("button.cmd")).to_have_text(["Suivant", "Annuler", "Abandon"])
        expect(page.locator("#live li.seat .state").first).to_have_text("en ligne")
        page.click("button[data-cmd=abort]")
        expect(page.locator("#again p")).to_have_text(
            "Abandonner la partie ? Elle ne pourra pas reprendre."
        )
        shot(page, "fr")
        controls = page.locator("main button:visible, main select:visible, main input:visible")
        heights = [
            box["height"]
            for box in controls.evaluate_all(
                "els => els.map(e => e.getBoundingClientRect().toJSON())"
            )
        ]
        assert heights and min(heights) >= 44, heights
        page.locator("#again button.no").click()
        page.select_option("#language", "en")
        expect(page.locator("button.cmd")).to_have_text(["Next", "Undo", "Abort"])
        assert page.locator("html").get_attribute("lang") == "en"


def test_the_phone_sets_the_tables_sound_and_language_and_follows_the_panel(
    make_table: TableFactory,
) -> None:
    """The console's Table section presses what the hub says; a press sends the host
    command, the hub keeps it and every screen follows (the TV's ``public``, the stations,
    the hub's status); a change made on the panel is pressed on the phone within a
    refresh. The table's name from display.toml is the page's title."""
    sim = make_table(players=3, language="fr")
    console, url = console_display(sim, names={TABLE: "Salon bleu"})
    sound = "section.table-settings button[data-cmd=sound]"
    language = "section.table-settings button[data-cmd=language]"
    with chromium() as browser:
        page = new_page(browser, PHONE)
        page.context.add_cookies([{"name": SESSION_COOKIE, "value": granted(console), "url": url}])
        page.goto(url)
        expect(page.locator("main > h1")).to_have_text("Salon bleu")
        assert page.title() == "coffre · Salon bleu"
        expect(page.locator(f"{sound}[aria-pressed=true]")).to_have_text("Signaux seuls")
        expect(page.locator(f"{language}[aria-pressed=true]")).to_have_text("Français")
        page.click(f"{sound}[data-value=narration]")
        sim.watch.wait(lambda p: p.get("sound") == "narration")
        expect(page.locator("#said")).to_have_text("Son : signaux+voix")
        expect(page.locator(f"{sound}[aria-pressed=true]")).to_have_text("Signaux et voix")
        page.click(f"{language}[data-value=en]")
        sim.watch.wait_hub(lambda s: s.get("language") == "en", "the hub speaks English")
        # Said in the console's language, the table's: French, or already English when the
        # display heard the hub's new status before its answer.
        expect(page.locator("#said")).to_have_text(
            re.compile(r"^(Langue : anglais|Language: English)$")
        )
        expect(page.locator(f"{language}[aria-pressed=true]")).to_have_text("English")
        assert until(
            lambda: all(
                st.screen is not None and "Waiting for the host" in st.screen.lines
                for st in sim.stations.values()
            )
        )
        stored = Store(sim.store_path)
        try:
            assert stored.get_setting(sound_key(TABLE)) == "narration"
            assert stored.get_setting(language_key(TABLE)) == "en over fr"
        finally:
            stored.close()
        shot(page, "table")
        sim.host({"cmd": "sound", "sound": "off"})  # the panel or coffre host, elsewhere
        expect(page.locator(f"{sound}[aria-pressed=true]")).to_have_text("Coupé", timeout=10_000)
        page.reload()  # the console speaks the table's language from the next page on
        expect(page.locator(f"{sound}[aria-pressed=true]")).to_have_text("Off")
        expect(page.locator("button.cmd")).to_have_text(["Next", "Undo", "Abort"])


class Phone:
    """A signed-in phone without a browser: its page and the writes its script sends
    (the session's cookie, CSRF token, a fresh nonce, the page's own origin)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.csrf = re.findall(r'data-csrf="([^"]+)"', self.page())[0]

    def page(self) -> str:
        got = urllib.request.Request(self.url, headers={"Cookie": f"{SESSION_COOKIE}={self.token}"})
        with urllib.request.urlopen(got, timeout=10) as answer:
            return str(answer.read().decode())

    def post(self, path: str, **fields: str) -> dict[str, Any]:
        form = {"csrf": self.csrf, "nonce": os.urandom(12).hex(), **fields}
        origin = "/".join(self.url.split("/")[:3])
        sent = urllib.request.Request(
            f"{self.url}/{path}",
            data=urllib.parse.urlencode(form).encode(),
            headers={"Cookie": f"{SESSION_COOKIE}={self.token}", "Origin": origin},
        )
        try:
            with urllib.request.urlopen(sent, timeout=20) as answer:
                said: dict[str, Any] = json.load(answer)
        except urllib.error.HTTPError as err:
            said = json.load(err)
        return said


#: What the console says, by the table's language: the form's words for an option and
#: its values, the hub's answers with fields, the console's own refusals.
SAID = {
    "en": {
        "mystery": '<span>Secret no.</span><select name="o.mystery">'
        '<option value="" selected>default</option>'
        '<option value="&quot;keys&quot;">by key</option>'
        '<option value="&quot;dealt&quot;">dealt</option></select>',
        "stations": "Only 3 stations here",
        "pair": "No pairing waits for p2",
        "players": "Secret Identity is for 3-8 players",
        "unknown": "Unknown command",
        "session": "No such session",
    },
    "fr": {
        "mystery": '<span>Numéros</span><select name="o.mystery">'
        '<option value="" selected>par défaut</option>'
        '<option value="&quot;keys&quot;">par clé</option>'
        '<option value="&quot;dealt&quot;">tirés</option></select>',
        "stations": "Seulement 3 stations ici",
        "pair": "Aucun appairage en attente pour p2",
        "players": "Secret Identity se joue de 3 à 8 joueurs",
        "unknown": "Commande inconnue",
        "session": "Session inconnue",
    },
}


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_hubs_answers_and_the_game_form_speak_the_consoles_language(
    make_table: TableFactory, language: str
) -> None:
    """The hub's answers with fields (too many players for the stations, no pairing
    waiting for that seat), the form's option labels and values and the console's own
    refusals are in the console's language; the host's command line still prints the
    hub's English line; a session that picks another language hears that one."""
    sim = make_table(players=3, language=language)
    console, url = console_display(sim)
    phone = Phone(url, granted(console))
    said = SAID[language]
    # The display speaks and offers what the hub's status and public say, once it has them.
    assert until(lambda: said["mystery"] in phone.page()), phone.page()
    assert phone.post("command", cmd="start", game=GAME, players="4") == {
        "ok": False,
        "message": said["stations"],
    }
    assert phone.post("command", cmd="pair", station="p2", code="1234") == {
        "ok": False,
        "message": said["pair"],
    }
    refused = phone.post("command", cmd="start", game=GAME, players="9")
    assert refused == {"ok": False, "message": said["players"]}
    assert phone.post("command", cmd="dance")["message"] == said["unknown"]
    assert phone.post("revoke", session="00000000")["message"] == said["session"]
    assert sim.watch.public.get("game") is None  # none of it started anything

    cmd = proto.HostCommand(cmd="start", id="cli-too-many", game=GAME, players=4)
    ack = host.send(sim.broker.config(HOST_USER), TABLE, cmd)
    assert host.describe(TABLE, cmd, ack) == f"{TABLE}: start refused: Only 3 stations here"

    other = "en" if language == "fr" else "fr"
    assert phone.post("language", language=other)["ok"] is True
    answer = phone.post("command", cmd="start", game=GAME, players="4")
    assert answer["message"] == SAID[other]["stations"]


#: A phone, a small tablet held upright, a tablet on its side.
SCREENS = [PHONE, {"width": 820, "height": 1180}, {"width": 1180, "height": 820}]


def test_the_console_reads_on_a_phone_and_a_tablet_without_sideways_scrolling(
    make_table: TableFactory,
) -> None:
    """During a game, in French and English, upright and on its side: the page never
    scrolls sideways, no control runs past the screen's edge, and on a tablet the page
    keeps a readable column (no line of text wider than 700 px)."""
    sim = make_table(players=3)
    console, url = console_display(sim)
    sim.host({"cmd": "start", "game": GAME, "players": 3})
    sim.watch.wait(lambda p: p.get("game") == GAME)
    problems = []
    token = granted(console)  # one phone: its session's language is the one picked
    with chromium() as browser:
        for screen in SCREENS:
            for language in ("en", "fr"):
                page = new_page(browser, screen)
                page.context.add_cookies([{"name": SESSION_COOKIE, "value": token, "url": url}])
                page.goto(url)
                with page.expect_navigation():  # the page reloads in the language picked
                    page.select_option("#language", language)
                where = f"{screen['width']}x{screen['height']} {language}"
                wide = page.evaluate("document.documentElement.scrollWidth")
                if wide > screen["width"]:
                    problems.append(f"{where}: {wide} px wide")
                boxes = page.locator(
                    "main button:visible, main select:visible, main p"
                ).evaluate_all(
                    "els => els.map(e => [e.textContent.slice(0, 30),"
                    " e.getBoundingClientRect().toJSON()])"
                )
                for text, box in boxes:
                    if box["right"] > screen["width"] + 0.5 or box["left"] < -0.5:
                        problems.append(f"{where}: {text!r} past the edge {box}")
                    if box["width"] > 700:
                        problems.append(f"{where}: {text!r} {box['width']:.0f} px wide")
                if language == "en" and screen is not PHONE:
                    shot(page, f"tablet-{screen['width']}")
                page.close()
    assert not problems, "\n".join(problems[:20])
