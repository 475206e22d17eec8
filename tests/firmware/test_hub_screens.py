"""What the hub sends the stations: the game step on every screen, and the interrupt
window's seconds counting down on the stations; what the hub display says of the host's
next press."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from firmware.hub.actor import PAGE_SECONDS
from firmware.hub.bindings import ultra_secret
from firmware.hub.bindings.common import HINT
from firmware.hub.config import TableConfig
from firmware.hub.events import PanelPress
from firmware.hub.publish import game_screen, page_count, paged
from firmware.hub.service import Hub
from firmware.link.lang import COLOUR_NAMES, COLOUR_SHORT, _, in_language, speaking
from firmware.link.mqtt import BrokerConfig
from firmware.link.render import BODY_LINES, CHARS, glass
from rules import get_info
from rules._identites_cryptees_cards import load as load_cards
from tests.support.hub import KEYS, Clock, T, claimed, deliver, four_seat_hub, host, screens
from tests.support.screens import GAMES, tables


def test_every_station_screen_names_the_game_step(tmp_path: Path) -> None:
    """Each screen carries its round and phase ("1/draw"), so a station ends a toast when
    the step changes; the step moves with the game."""
    hub, sent = four_seat_hub(tmp_path, Clock())
    host(hub, {"cmd": "start", "game": "incognito", "players": 4, "seed": 3})
    assert screens(sent, "p1")[-1]["phase"] == "1/draw"
    for n, station in enumerate(["p1", "p2", "p3", "p4"]):
        deliver(hub, T.station(station, "input"), {"id": f"b{n}:1", "kind": "press"})
    assert screens(sent, "p1")[-1]["phase"] == "1/vote"


def test_the_interrupt_window_counts_down_on_the_stations(tmp_path: Path) -> None:
    """Identités cryptées: once an action is declared, the other stations' status line and
    the menu's title tick 5s, 4s, 3s... as the hub's clock runs."""
    clock = Clock()
    hub, sent = four_seat_hub(tmp_path, clock)
    host(hub, {"cmd": "start", "game": "identites-cryptees", "players": 4, "seed": 5})
    table = hub.actors["t"].table
    assert table is not None
    seat = table.view(None)["table"]["active"]
    menu = table.binding.menu(table, seat)  # type: ignore[attr-defined]
    draw = next(i for i, o in enumerate(menu) if o.label == "Draw a program")
    station = f"p{seat + 1}"
    deliver(hub, T.station(station, "input"), {"id": "a:1", "kind": "knob", "step": draw})
    deliver(hub, T.station(station, "input"), {"id": "a:2", "kind": "press"})
    other = f"p{(seat + 1) % 4 + 1}"
    shown = [screens(sent, other)[-1]["lines"][0]]
    for _second in range(3):
        clock.now += 1.0
        hub._tick()
        shown.append(screens(sent, other)[-1]["lines"][0])
    assert [line.split(":")[0] for line in shown] == [
        "Window 5s",
        "Window 4s",
        "Window 3s",
        "Window 2s",
    ]


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_hub_screen_says_what_next_does(game: str, language: str) -> None:
    """Random whole games at the smallest and largest table: every page the hub display
    shows ends on a line that says what the host's next press does and that ok leads to
    the help page (undo, end game), within the glass, whole ("next:close vote ok:?")."""
    problems: set[str] = set()
    for players in GAMES[game]:
        options = get_info(game).table_defaults(language)
        for table in tables(game, players, seed=3, options=options):
            with speaking(language):
                head, tail = _(HINT, what="\0").split("\0")  # "next:" and " ok:?"
                title, lines, hint = game_screen(table)
                if not table.over and not (hint.startswith(head) and hint.endswith(tail)):
                    problems.add(f"{players}p: hint {hint!r}")
                for page in range(page_count(lines, hint)):
                    shown, body = paged(title, lines, hint, page)
                    if len(body) > BODY_LINES or body[-1] != hint:
                        problems.add(f"{players}p: {body!r}")
                    for text in (shown, *body):
                        if len(glass(text)) > CHARS or "~" in text:
                            problems.add(f"{players}p: {text!r} does not fit")
    assert not problems, sorted(problems)[:20]


def card_names(game: str) -> list[str]:
    """The names of the game's cards in the language spoken now, each also as the hub cuts
    it to fit ("Blue Bad."), longest first: "Red Chip" is a card, not a seat."""
    if game != "identites-cryptees":
        return []
    cards = load_cards("generic")
    every = (*cards.ids, *cards.loyalty, *cards.programs, *cards.weapons)
    names = {in_language(msgspec.to_builtins(card.name)) for card in every}
    cuts = {n[:k].rstrip() + "." for n in names for k in range(4, len(n))}
    return sorted(names | cuts, key=len, reverse=True)


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_no_hub_screen_tells_a_seat_by_its_colour_alone(game: str, language: str) -> None:
    """Random whole games at the smallest and largest table: wherever the hub display names
    a seat by its colour, whole or short ("Red", "Yel"), the seat's number follows it
    ("Red1", "Yel2"), so a host who cannot tell red from green still finds the seat."""
    problems: set[str] = set()
    for players in GAMES[game]:
        options = get_info(game).table_defaults(language)
        for table in tables(game, players, seed=3, options=options):
            with speaking(language):
                colours = [*COLOUR_NAMES.values(), *COLOUR_SHORT.values()]
                colours += [
                    *ultra_secret.COLOUR_NAMES.values(),
                    *ultra_secret.COLOUR_SHORT.values(),
                ]
                words = {_(c) for c in colours}
                cards = card_names(game)
                title, lines, hint = game_screen(table)
            for text in (title, *lines, hint):
                bare = text
                for card in cards:
                    bare = bare.replace(card, "")
                for word in words:
                    if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", bare):
                        problems.add(f"{players}p: {word!r} alone in {text!r}")
    assert not problems, sorted(problems)[:20]


def host_screens(sent: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [p for t, p in sent if t == T.host_screen]


def test_ok_leaves_the_final_ranking_for_the_menu(tmp_path: Path) -> None:
    """After the last move the hub shows the ranking and says ok goes back to the menu;
    ok does, and the menu's presses then show on the glass (they moved it unseen)."""
    clock = Clock()
    hub, sent = four_seat_hub(tmp_path, clock)
    hub.out.panel_actor = actor = hub.actors["t"]
    host(hub, {"cmd": "start", "game": "identiquest", "players": 4, "seed": 3})
    clock.now += 60.0  # past the "Game started" note
    *_, finished = tables("identiquest", 4, seed=3)
    assert finished.over
    actor.table = finished
    hub.out.host(actor)
    over = host_screens(sent)[-1]
    assert over["title"] == "Game over" and over["lines"][-1] == "ok: back to the menu"
    hub.submit(PanelPress("next"))  # not ok: the ranking stays
    assert host_screens(sent)[-1] == over
    hub.submit(PanelPress("ok"))
    menu = host_screens(sent)[-1]
    assert menu["title"].startswith("New game") and menu["lines"][0].startswith(">")
    hub.submit(PanelPress("next"))
    assert host_screens(sent)[-1]["lines"] != menu["lines"]  # the cursor moved, in sight


def test_ok_holds_a_page_of_the_hub_display_then_shows_the_help(tmp_path: Path) -> None:
    """Identités cryptées at 9: the hub's pages turn every few seconds; ok steps to a page
    and holds it while the clock runs, then a help page names undo and abort."""
    clock = Clock()
    config = TableConfig("t", [f"p{i + 1}" for i in range(9)])
    hub = claimed(Hub(BrokerConfig(port=1), [config], tmp_path / "hub.db", keys=KEYS, clock=clock))
    sent: list[tuple[str, Any]] = []
    hub.client.publish = lambda topic, payload, **_kw: sent.append(  # type: ignore[method-assign]
        (topic, json.loads(payload))
    )
    hub.out.panel_actor = actor = hub.actors["t"]
    host(hub, {"cmd": "start", "game": "identites-cryptees", "players": 9, "seed": 5})
    pages = actor.host_pages
    assert pages > 1
    clock.now += 10 * PAGE_SECONDS  # past the "Game started" note
    hub.submit(PanelPress("ok"))
    held = host_screens(sent)[-1]
    assert held["title"].endswith(f" 1/{pages}")
    for _turn in range(3):
        clock.now += PAGE_SECONDS
        hub.out.host(actor)
        assert host_screens(sent)[-1] == held  # held: no turning
    for _page in range(pages):
        hub.submit(PanelPress("ok"))
    help_page = host_screens(sent)[-1]
    assert help_page["title"] == "Sound: cues"  # the table's setting (hub.toml's default)
    assert help_page["lines"][0].startswith("next:")
    assert "back twice: undo" in help_page["lines"]
    assert "stop twice: end game" in help_page["lines"]
