"""A whole Identités cryptées game through the mock station devices and a real broker."""

from __future__ import annotations

import json
import random
import time
from typing import Any

from firmware.hub.store import Store
from firmware.link import protocol as proto
from firmware.link.render import render_lines
from firmware.tools.bots.host_bot import until
from firmware.tools.bots.identites_cryptees import Bot
from firmware.tools.sim import recorded_frames
from firmware.tools.simtable import TABLE, SimTable
from tests.support.golden import frame_problems
from tests.support.tables import (
    TableFactory,
    assert_hub_shows_ranking,
    drain,
    engine_snapshot,
    leaves,
    spy,
    wait_host_title,
)

GAME = "identites-cryptees"


def bots(sim: SimTable, seed: int = 1, **kwargs: Any) -> Bot:
    """Quiet bots for a started table (no interrupt window unless asked)."""
    kwargs.setdefault("options", {"interrupt_window": 0})
    return Bot(sim, sim.watch, random.Random(seed), say=lambda _: None, **kwargs)


def test_four_player_game_through_knobs_and_flaps(make_table: TableFactory) -> None:
    """Cards peeked, every action by knob menu, winners announced; host display; goldens."""
    sim = make_table(4, seed=3)
    players = bots(sim, seed=3)
    players.start_game(4)
    final = players.play()
    time.sleep(0.3)  # let the last screens land

    table = final["view"]["table"]
    assert final["over"] is True and table["phase"] == "over"
    check = table["check"]
    assert check["result"] == "won" and check["winners"] == table["winners"]
    assert [s for s in range(4) if final["scores"][s]] == sorted(table["winners"])
    # Each bot read its own cards under its flap, and they were its own.
    for seat, lines in players.cards.items():
        faction = next(s["faction"] for s in table["seats"] if s["seat"] == seat)
        assert f"You are {faction}" in lines
    assert players.counts["turn"] >= 4 and players.counts["press"] >= players.counts["turn"]

    host = wait_host_title(sim, "Game over")  # after the "Game started" note (5 s)
    assert_hub_shows_ranking(host, final, sim.table_config.seating().colours[:4])
    panel_frames = getattr(sim.panel.display, "frames", [])
    assert panel_frames[-1].tobytes() == render_lines(host["title"], host["lines"]).tobytes()

    problems = [
        p
        for n in sim.names
        for p in frame_problems(f"identites-cryptees-4p/{n}", recorded_frames(sim, n))
    ]
    assert not problems, problems


def test_window_passes_close_it_and_the_timer_closes_it_alone(make_table: TableFactory) -> None:
    """Windows close when all pass; an unanswered one closes by the hub's timer (timeout)."""
    sim = make_table(4, seed=5)
    players = bots(sim, seed=2, options={"interrupt_window": 3}, max_moves=6)
    players.start_game(4)
    players.play()  # six answers: windows passed by the other seats
    events = Store(sim.store_path).events(TABLE, 1)
    assert [e for e in events if e.get("rules", {}).get("type") == "pass"]

    table = sim.watch.wait(lambda p: p["view"]["table"]["phase"] == "turn")["view"]["table"]
    active = table["active"]
    version = sim.watch.public["version"]
    # The active seat declares "Draw a program" by knob and nobody answers.
    assert players.choose(active, "Draw") == "Draw a program"
    pub = sim.watch.wait(lambda p: p["version"] > version)
    window = pub["view"]["table"]["window"]
    assert pub["view"]["table"]["phase"] == "window" and len(window["waiting"]) == 3
    other = sim.names[window["waiting"][0]]
    # The station's own screen is another message than ``public``: wait for it to arrive.
    station = sim.stations[other]

    def shows_window() -> bool:
        return station.screen is not None and station.screen.lines[0].startswith("Window ")

    until(shows_window, 10)
    screen = station.screen
    assert screen is not None and screen.lines[0].startswith("Window ")
    assert screen.lines[0].endswith("s: pass/play")
    pub = sim.watch.wait(lambda p: p["view"]["table"]["phase"] != "window", timeout=10)
    assert Store(sim.store_path).events(TABLE, 1)[-1] == {"rules": {"type": "timeout"}}
    assert pub["view"]["table"]["seats"][active]["programs"] >= 2


def test_no_secret_leaves_a_station_or_the_public_table(make_table: TableFactory) -> None:
    """p1 (subscribed to '#') hears only its own topics; public has no faction before the end."""
    sim = make_table(4, seed=11)
    t = proto.Topics(TABLE)
    listener = spy(sim, "p1", ["#", t.station("p2", "screen"), f"{t.base}/station/+/ack"])
    players = bots(sim, seed=5)
    players.start_game(4)
    players.play()
    time.sleep(0.3)
    messages = drain(listener)
    listener.stop()

    allowed = {t.station("p1", s) for s in ("screen", "ack", "status")} | {t.public, t.hub_status}
    topics = {topic for topic, _ in messages}
    assert t.station("p1", "screen") in topics
    assert topics <= allowed, topics - allowed
    publics = [json.loads(p) for topic, p in messages if topic == t.public]
    assert len(publics) > 10
    for pub in publics:
        view = pub.get("view") or {}
        assert "you" not in view
        if pub.get("over"):
            continue
        for path, _ in leaves(pub):
            assert "faction" not in path and "programs_held" not in path, path
        for seat in view.get("table", {}).get("seats", []):
            assert isinstance(seat["programs"], int)


def test_bad_inputs_are_refused_readably(make_table: TableFactory) -> None:
    """A tag, and a press from a seat nothing waits on, are refused and change nothing."""
    sim = make_table(4)
    sim.host({"cmd": "start", "game": GAME, "players": 4})
    sim.watch.wait(lambda p: p.get("game") == GAME and bool(p.get("view")))
    before = engine_snapshot(sim)
    ack = sim.tap("p1", sim.keys.uid_for("vote", "red", 2))
    assert ack is not None and not ack.ok
    assert ack.message == "No cards to tap in this game: use the knob"
    assert sim.controls("p1").beeps[-1] == "error"
    ack = sim.gesture("p3", lambda c: c.press())
    assert ack is not None and not ack.ok and ack.message == "Nothing for you to do now"
    assert engine_snapshot(sim) == before
