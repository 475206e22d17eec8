"""Every timed phase of every game shows its running clock on the hub display, and its
last seconds are marked; the table's sound setting is on the glass during a game."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.bindings.common import LAST_MARK, LAST_SECONDS
from firmware.hub.config import TableConfig
from firmware.hub.events import PanelPress
from firmware.hub.publish import game_screen, page_count, paged
from firmware.hub.service import Hub
from firmware.hub.table import Table
from firmware.link.lang import speaking
from firmware.link.mqtt import BrokerConfig
from firmware.link.render import CHARS, glass
from rules import get_info
from tests.support.hub import KEYS, claimed, host
from tests.support.hubrig import Clock, T, voting_rig
from tests.support.screens import GAMES, tables

#: The table settings that turn every binding's timer on: a reveal delay of more than
#: LAST_SECONDS, so a clock shows both unmarked and marked seconds.
TIMED = {"reveal_delay": 12.0}


def clock_problems(table: Table, left: float) -> list[str]:
    """What is wrong with every page of the hub display while ``left`` seconds run."""
    shown = math.ceil(left)
    table.timer_left = left
    try:
        title, lines, hint = game_screen(table)
    finally:
        table.timer_left = None
    problems = []
    for page in range(page_count(lines, hint)):
        text, _body = paged(title, lines, hint, page)
        if not re.search(rf"(?<!\d){shown}s(?!\w)", text):
            problems.append(f"{shown}s not in {text!r}")
        if text.startswith(LAST_MARK) != (shown <= LAST_SECONDS):
            problems.append(f"{shown}s: {text!r} marked wrong")
        if len(glass(text)) > CHARS:
            problems.append(f"{text!r} does not fit")
    return problems


def seat_problems(table: Table, left: float) -> list[str]:
    """Station lines that do not fit the glass while ``left`` seconds run."""
    table.timer_left = left
    try:
        screens = [table.binding.station_screen(table, seat) for seat in range(table.players)]
    finally:
        table.timer_left = None
    return [
        f"seat line {line!r} does not fit"
        for screen in screens
        for line in (screen.title, *screen.lines)
        if len(glass(line)) > CHARS
    ]


def timed_playouts(game: str, language: str) -> tuple[int, set[str]]:
    """Random whole games at the smallest and largest table with every timer on at its
    longest (each timed option at the panel's longest choice, a reveal delay): how many
    steps ran a timer, and what the hub display got wrong at each."""
    timed, problems = 0, set()
    for players in GAMES[game]:
        info = get_info(game)
        longest = {o.name: max(o.menu) for o in info.options if o.kind == "seconds" and o.menu}
        options = {**info.table_defaults(language), **longest}
        for step, table in enumerate(tables(game, players, seed=3, options=options)):
            if step == 0:  # the table's settings are its binding's (as the hub's are)
                table.binding = binding_for(game, **TIMED)
            with speaking(language):
                timer = None if table.over else table.binding.timer(table)
                if timer is None:
                    title, _lines, _hint = game_screen(table)
                    if title.startswith(LAST_MARK):
                        problems.add(f"{players}p: no timer, marked {title!r}")
                    continue
                timed += 1
                full = timer[0]
                for left in {full, full - 0.5, LAST_SECONDS + 0.5, LAST_SECONDS, 1.0, 0.2}:
                    if 0 < left <= full:
                        problems.update(f"{players}p: {p}" for p in clock_problems(table, left))
                        problems.update(f"{players}p: {p}" for p in seat_problems(table, left))
    return timed, problems


#: Every timed phase the games have: Incognito's drawing and voting countdowns,
#: Identités cryptées' interrupt window, Secret Identity's reveal delay.
TIMED_GAMES = {"incognito", "identites-cryptees", "secret-identity"}


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_running_timer_shows_its_seconds_on_the_hub(game: str, language: str) -> None:
    """Whenever a game's timer runs, every page of the hub display says its seconds
    ("45s"); in the last LAST_SECONDS its title starts with LAST_MARK, never otherwise."""
    timed, problems = timed_playouts(game, language)
    assert not problems, sorted(problems)[:20]
    assert (timed > 0) == (game in TIMED_GAMES), f"{game}: {timed} timed steps"


def test_the_hub_display_counts_a_reveal_delay_down(tmp_path: Path) -> None:
    """Secret Identity with an 8 s reveal delay, on a hub: the host screen it publishes
    counts the seconds down as the hub's clock runs, marked in the last five."""
    clock = Clock()
    rig = voting_rig(tmp_path, reveal_delay=8.0, clock=clock)
    for voter in range(3):  # every seat votes on every other safe
        for safe in range(3):
            if safe != voter:
                assert rig.vote(voter, rig.stations[safe], safe + 1)["ok"]
    assert rig.public()["view"]["phase"] == "reveal"
    titles, seats = [], []
    for _second in range(8):
        titles.append(rig.last(T.host_screen)["title"])
        seats.append(rig.last(T.station("p2", "screen"))["lines"])
        clock.now += 1.0
        rig.hub._tick()
    expected = [(n, n <= LAST_SECONDS) for n in range(8, 0, -1)]
    said = [
        (int(m[1]), t.startswith(LAST_MARK)) for t in titles if (m := re.search(r" (\d+)s$", t))
    ]
    assert said == expected, titles
    # A note (the host turns the sound off) takes the title, but not from the last seconds.
    rig.host("next")  # the next safe, its delay from the first second again
    rig.host("sound", sound="off")
    assert rig.last(T.host_screen)["title"] == "Sound: off"
    clock.now += 8.0 - LAST_SECONDS + 0.5
    rig.hub._tick()
    rig.host("sound", sound="cues")
    assert rig.last(T.host_screen)["title"].startswith(LAST_MARK), rig.last(T.host_screen)
    # Every seat sees the same seconds, and what they lead to.
    assert [lines[-2] for lines in seats] == [f"Next safe in {n}s" for n in range(8, 0, -1)]


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", {"narration": "Sound: cues+speech", "off": "Sound: off"}),
        ("fr", {"narration": "Son : signaux+voix", "off": "Son : coupé"}),
    ],
)
def test_the_help_page_says_what_the_table_hears(
    tmp_path: Path, language: str, said: dict[str, str]
) -> None:
    """During a game, ok leads to the help page, whose title is the table's sound setting
    in the table's language; ``coffre host sound`` mid-game changes it there at once."""
    clock = Clock()
    config = TableConfig("t", ["p1", "p2", "p3", "p4"], language=language)
    hub = claimed(Hub(BrokerConfig(port=1), [config], tmp_path / "hub.db", keys=KEYS, clock=clock))
    sent: list[tuple[str, Any]] = []
    hub.client.publish = lambda topic, payload, **_kw: sent.append(  # type: ignore[method-assign]
        (topic, json.loads(payload))
    )
    hub.out.panel_actor = actor = hub.actors["t"]
    host(hub, {"cmd": "sound", "sound": "narration"})
    host(hub, {"cmd": "start", "game": "identiquest", "players": 4, "seed": 3})
    clock.now += 60.0  # past the "Game started" note
    pages = actor.host_pages
    for _press in range(pages + 1 if pages > 1 else 1):  # each page, then the help page
        hub.submit(PanelPress("ok"))
    help_page = host_screens(sent)[-1]
    assert help_page["title"] == said["narration"], help_page
    assert help_page["lines"][1:3] != ["", ""]  # the buttons are still there
    host(hub, {"cmd": "sound", "sound": "off"})
    assert host_screens(sent)[-1]["title"] == said["off"]
    assert all(len(glass(t)) <= CHARS for t in said.values())


def host_screens(sent: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [p for t, p in sent if t == T.host_screen]
