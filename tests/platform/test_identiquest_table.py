"""Identiquest at the table: whole games through mock stations' knobs on mosquitto."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest

from firmware.link import protocol as proto
from firmware.tools.bots.identiquest import Bot
from firmware.tools.sim import recorded_frames
from firmware.tools.simtable import TABLE, SimTable
from tests.support.golden import frame_problems
from tests.support.tables import (
    TableFactory,
    assert_hub_shows_ranking,
    assert_readable,
    check_against_piles,
    drain,
    snapshot,
    spy,
)


def bots(sim: SimTable, seed: int = 1, **kwargs: Any) -> Bot:
    return Bot(sim, sim.watch, random.Random(seed), say=lambda _: None, **kwargs)


def test_four_player_game_scores_and_screens(make_table: TableFactory) -> None:
    """Knob menus only: the game ends, right scores, hub display, golden screens."""
    sim = make_table(4)
    players = bots(sim, seed=3)
    players.start_game(4)
    final = players.play()
    time.sleep(0.3)  # let the last screens land

    assert final["over"] is True and final["game"] == "identiquest"
    check_against_piles(players, final)
    assert players.counts["steal"] > 10 and players.counts.get("accuse", 0) > 0
    host = sim.watch.host
    assert_hub_shows_ranking(host, final, sim.table_config.seating().colours[:4])
    problems = [
        p for n in sim.names for p in frame_problems(f"identiquest-4p/{n}", recorded_frames(sim, n))
    ]
    assert not problems, problems


def test_give_choose_game_through_the_flap_menus(make_table: TableFactory) -> None:
    """give=choose, 5 players: givers pick gems under their flap; piles still add up."""
    sim = make_table(5)
    players = bots(sim, seed=8, options={"give": "choose"}, accuse_rate=0.6)
    players.start_game(5)
    final = players.play()
    assert final["over"] is True and final["view"]["give"] == "choose"
    assert players.counts.get("give", 0) > 0
    check_against_piles(players, final)


def test_station_hears_only_its_own_identity(make_table: TableFactory) -> None:
    """p1 ('#') gets no other screen; public has no identity or score until the end."""
    sim = make_table(3)
    t = proto.Topics(TABLE)
    listener = spy(sim, "p1", ["#", t.station("p2", "screen")])
    players = bots(sim, seed=5, options={"give": "choose"}, accuse_rate=0.5)
    players.start_game(3)
    players.play()
    time.sleep(0.3)
    messages = drain(listener)
    listener.stop()

    own = {t.station("p1", leaf) for leaf in ("screen", "ack", "status")}
    topics = {topic for topic, _ in messages}
    assert topics <= {*own, t.public, t.hub_status}, topics
    publics = [json.loads(p) for topic, p in messages if topic == t.public]
    assert len(publics) > 20
    for pub in publics:
        view = pub.get("view") or {}
        if pub.get("game") == "identiquest" and not pub["over"]:
            assert pub["scores"] is None and view["scores"] is None
            assert view["identities"] is None
            assert "identity" not in json.dumps(pub)
            for seat, colour in enumerate(view["unmasked"]):
                assert colour is None or colour == players.identity[seat]
    screens = [json.loads(p) for topic, p in messages if topic == t.station("p1", "screen")]
    mine = f"You are {players.identity[0]}"
    assert len(screens) > 20
    for screen in screens:
        if "secret" in screen:
            assert screen["secret"]["lines"][0] == mine
        assert all("You are" not in line for line in screen.get("lines", []))


@pytest.fixture
def started(make_table: TableFactory) -> SimTable:
    """A 3-player table at the first turn."""
    sim = make_table(3)
    bots(sim).start_game(3)
    return sim


def refused(sim: SimTable, station: str, act: Any) -> str:
    ack = sim.gesture(station, act)
    assert ack is not None and not ack.ok
    assert_readable(ack.message)
    assert sim.controls(station).beeps[-1] == "error"
    return ack.message


def test_a_waiting_player_cannot_press(started: SimTable) -> None:
    """A press on a station whose turn it is not: refused, nothing stored (its knob turns
    the pages under its flap, the key's)."""
    turn = started.watch.public["view"]["turn"]
    waiting = started.names[(turn + 1) % 3]
    who = started.table_config.seating().name(turn)
    before = snapshot(started)
    assert refused(started, waiting, lambda c: c.press()) == f"Wait: it's {who}'s turn"
    assert snapshot(started) == before


def test_a_tag_is_refused(started: SimTable) -> None:
    """Any NFC tag on a station: this game has no cards."""
    turn = started.watch.public["view"]["turn"]
    before = snapshot(started)
    ack = started.tap(started.names[turn], started.keys.uid_for("vote", "red", 1))
    assert ack is not None and not ack.ok
    assert ack.message == "No cards in this game: use the knob"
    assert snapshot(started) == before


def test_accuse_without_two_gems_is_refused_at_the_menu(started: SimTable) -> None:
    """First turn: choosing Accuse with an empty loot is refused; the menu stays."""
    station = started.names[started.watch.public["view"]["turn"]]
    ack = started.gesture(station, lambda c: c.turn(1))
    assert ack is not None and ack.ok
    before = snapshot(started)
    assert refused(started, station, lambda c: c.press()) == "You need 2 gems to accuse"
    assert snapshot(started) == before
    screen = started.stations[station].screen
    assert screen is not None and screen.lines[3] == "> Accuse a player"


def test_hub_killed_mid_menu_keeps_the_picked_gem(make_table: TableFactory) -> None:
    """SIGKILL the hub after a first gem is picked: after the restart one press completes it."""
    sim = make_table(3, hub_mode="process")
    players = bots(sim, seed=2)
    players.start_game(3)
    view = sim.watch.public["view"]
    seat, market = view["turn"], view["market"]
    station = sim.names[seat]
    for act in (lambda c: c.press(), lambda c: c.turn(2), lambda c: c.press()):
        ack = sim.gesture(station, act)
        assert ack is not None and ack.ok
    sim.kill_hub()
    sim.start_hub()
    ack = sim.gesture(station, lambda c: c.turn(1))
    assert ack is not None and ack.ok
    ack = sim.gesture(station, lambda c: c.press())
    assert ack is not None and ack.ok
    pub = sim.watch.wait(lambda p: p["version"] == 1)
    assert pub["view"]["loot"][seat] == {"size": 2, "top": market[3]}
    players.piles[seat] += [market[2], market[3]]
    final = players.play()
    assert final["over"] is True
    check_against_piles(players, final)
