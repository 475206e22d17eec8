"""The hub display at game over: the final ranking, winner first, paged so no seat is dropped."""

from __future__ import annotations

import json
import random
from typing import Any

from firmware.hub.actor import PAGE_SECONDS, TableActor, next_wake
from firmware.hub.bindings import binding_for
from firmware.hub.config import TableConfig
from firmware.hub.hostmenu import HostMenu
from firmware.hub.publish import Publisher, final_ranking
from firmware.hub.table import Seating, Table
from firmware.link import protocol as proto
from firmware.link.lang import short_colour
from hardware.keys import COLOURS, load_keyset
from tests.support.games.identites_cryptees import bot as ic_bot

#: As hub.toml names seats by default: the box's colours, then seat9, seat10…
NAMES16 = [*COLOURS, *(f"seat{i + 1}" for i in range(len(COLOURS), 16))]


def finished(game: str, players: int, seed: int = 1) -> Table:
    """A table whose game random legal moves have played to the end."""
    stations = [f"p{i + 1}" for i in range(players)]
    table = Table(
        game,
        players,
        {},
        seed,
        Seating(stations, NAMES16[:players]),
        load_keyset(),
        binding_for(game),
    )
    r = random.Random(seed)
    while not table.over:
        if game == "identites-cryptees":  # the playout tests' bot: its games end
            action = ic_bot(table.state, r)
        else:
            actions = [
                a for s in range(players) for a in table.engine.legal_actions(table.state, s)
            ]
            action = r.choice(actions)
        table.state, _ = table.engine.apply(table.state, action)
        table.events += 1
    return table


class Recorder:
    """Stands for the MQTT client: keeps what was published."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
        self.sent.append((topic, payload))


def seat_tag(seat: int) -> str:
    """A seat as the hub's glass names it: its short colour and, unless it has one, its
    number (colour alone fails a colour-blind host)."""
    short = short_colour(NAMES16[seat])
    return short if short.startswith("S") and short[1:].isdigit() else f"{short}{seat + 1}"


def hub_screens(table: Table, times: list[float]) -> list[dict[str, Any]]:
    """The host screens published at each clock time."""
    stations = [f"p{i + 1}" for i in range(table.players)]
    actor = TableActor(TableConfig("main", stations), proto.Topics("main"), HostMenu([], 16))
    actor.table, actor.client = table, Recorder()
    now = [0.0]
    out = Publisher(lambda: now[0])
    screens = []
    for t in times:
        now[0] = t
        out.host(actor)
        screens.append(json.loads(actor.published[actor.topics.host_screen]))
    return screens


def test_sixteen_seats_page_through_the_whole_ranking() -> None:
    """Identités cryptées at 16: three pages of three rows, together naming all 16 seats,
    each ending on what the host's ok does now (back to the menu)."""
    table = finished("identites-cryptees", 16)
    rows = final_ranking(table)
    assert len(rows) == 8 and all(len(r) <= 21 for r in rows)
    pages = hub_screens(table, [0.0, PAGE_SECONDS + 0.1, 2 * PAGE_SECONDS + 0.1])
    assert [p["title"] for p in pages] == ["Game over 1/3", "Game over 2/3", "Game over 3/3"]
    assert all(p["lines"][-1] == "ok: back to the menu" for p in pages)
    assert [line for p in pages for line in p["lines"][:-1] if line] == rows
    winner = table.engine.ranking(table.state)[0][0]
    assert rows[0].startswith(f"1.{seat_tag(winner)} ")
    shown = [seat_tag(s) for s in range(16)]  # a colour and its number: Red1, Yel2, … S9
    assert shown[:2] == ["Red1", "Yel2"] and shown[8] == "S9"
    assert len(set(shown)) == 16, shown
    for name in shown:
        assert f".{name} " in " ".join(rows), name


def test_a_paged_screen_wakes_the_hub_to_turn_the_page() -> None:
    """The hub's loop wakes when the next page is due (it has no countdown to wake it)."""
    table = finished("identites-cryptees", 12)
    stations = [f"p{i + 1}" for i in range(12)]
    actor = TableActor(TableConfig("main", stations), proto.Topics("main"), HostMenu([], 16))
    actor.table, actor.client = table, Recorder()
    Publisher(lambda: 1.0).host(actor)
    assert actor.host_pages == 2  # six rows, three a page above the host's hint
    wake = next_wake([actor], 1.0)
    assert wake is not None and 0 < wake <= PAGE_SECONDS


def test_six_seats_fit_one_page_winner_first_with_ties_sharing_a_place() -> None:
    """Identiquest at 6: one page, places as the engine ranks them (ties share one)."""
    table = finished("identiquest", 6, seed=3)
    (screen,) = hub_screens(table, [0.0])
    assert screen["title"] == "Game over" and len(screen["lines"]) == 4
    assert screen["lines"][-1] == "ok: back to the menu"
    scores = table.engine.scores(table.state)
    place = 1
    text = " ".join(screen["lines"])
    for group in table.engine.ranking(table.state):
        for seat in group:
            assert f"{place}.{seat_tag(seat)} {scores[seat]}" in text
        place += len(group)
