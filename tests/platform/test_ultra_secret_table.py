"""A whole Ultra Secret game through the mock station devices and a real broker."""

from __future__ import annotations

import json
import random
import re
import time
from typing import Any

from firmware.link import protocol as proto
from firmware.link.render import render_lines
from firmware.tools.bots.ultra_secret import Bot
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

SEAT_SECRETS = {"hidden", "sheet", "dial", "choice", "filing", "secret", "moles_held"}
CARD = re.compile(r"^[PX][1-6]$")


def bots(sim: SimTable, seed: int = 1, **kwargs: Any) -> Bot:
    """Quiet Ultra Secret bots for a started table (short games: declare at turn 4)."""
    kwargs.setdefault("max_turns", 4)
    return Bot(sim, sim.watch, random.Random(seed), say=lambda _: None, **kwargs)


def test_three_player_game_through_knobs_and_flaps(make_table: TableFactory) -> None:
    """Hide, investigate, declare, file, flee: all by knob and flap; result, host, goldens."""
    sim = make_table(3)
    players = bots(sim, seed=3)
    players.start_game(3)
    final = players.play()
    time.sleep(0.3)  # let the last screens land

    view = final["view"]
    assert final["over"] is True and view["phase"] == "over"
    outcome, fugitive = view["outcome"], view["fugitive"]
    assert outcome in ("caught", "escaped", "escaped-wrong") and fugitive is not None
    winners = {
        "caught": [s for s in range(3) if s != fugitive],
        "escaped": [fugitive],
        "escaped-wrong": [],
    }[outcome]
    assert [s for s in range(3) if final["scores"][s]] == winners
    # The escape is judged on what the fugitive's own bot pressed through.
    end = view["end"]
    filing = end["filing"]
    identity = {c: next(v for v in st.values() if v[0] == "P") for c, st in end["stashes"].items()}
    right = filing["card"] == end["formula"] and all(
        code == identity[c] for c, code in filing["pseudonyms"].items()
    )
    if outcome.startswith("escaped"):
        assert (outcome == "escaped") == right
    assert players.counts["hide"] == 3 and players.counts["file"] == 1
    assert players.counts["bug"] >= 3 * 4 and players.counts["flight"] >= 3

    host = wait_host_title(sim, "Game over")  # after the "Game started" note (5 s)
    assert_hub_shows_ranking(host, final, final["view"]["colours"])
    panel_frames = getattr(sim.panel.display, "frames", [])
    assert panel_frames[-1].tobytes() == render_lines(host["title"], host["lines"]).tobytes()

    problems = [
        p
        for n in sim.names
        for p in frame_problems(f"ultra-secret-3p/{n}", recorded_frames(sim, n))
    ]
    assert not problems, problems


def test_no_card_leaves_a_station_or_the_public_table(make_table: TableFactory) -> None:
    """p1 (subscribed to '#') hears only its own topics; public holds no card until the end."""
    sim = make_table(3, seed=11)
    t = proto.Topics(TABLE)
    listener = spy(sim, "p1", ["#", t.station("p2", "screen"), f"{t.base}/station/+/ack"])
    players = bots(sim, seed=5)
    players.start_game(3)
    players.play()
    time.sleep(0.3)
    messages = drain(listener)
    listener.stop()

    allowed = {t.station("p1", s) for s in ("screen", "ack", "status")} | {t.public, t.hub_status}
    topics = {topic for topic, _ in messages}
    assert t.station("p1", "screen") in topics
    assert topics <= allowed, topics - allowed
    publics = [json.loads(p) for topic, p in messages if topic == t.public]
    assert len(publics) > 30
    for pub in publics:
        over = pub.get("over")
        assert not SEAT_SECRETS & (set(pub) | set(pub.get("view") or {}))
        for path, value in leaves(pub):
            if isinstance(value, str) and CARD.match(value) and not over:
                raise AssertionError(f"a card code in public: {path}={value}")
        assert ("end" in (pub.get("view") or {})) == bool(over)
    # p1's own screen carries its cards only in the secret part.
    screens = [json.loads(p) for topic, p in messages if topic == t.station("p1", "screen")]
    for screen in screens:
        if "Over" in screen["title"]:
            continue
        for line in screen["lines"]:
            assert not re.search(r"\b[PX][1-6]\b", line), line


def test_bad_inputs_are_refused_readably(make_table: TableFactory) -> None:
    """A tag, and a press from a seat that already chose, are refused and change nothing."""
    sim = make_table(3)
    sim.host({"cmd": "start", "game": "ultra-secret", "players": 3})
    sim.watch.wait(lambda p: p.get("game") == "ultra-secret" and bool(p.get("view")))
    before = engine_snapshot(sim)
    ack = sim.tap("p1", sim.keys.uid_for("vote", "red", 2))
    assert ack is not None and not ack.ok and ack.message == "No cards in this game: use the knob"
    assert sim.controls("p1").beeps[-1] == "error"
    assert engine_snapshot(sim) == before

    for _ in range(3):  # suitcase, briefcase, locker: red has hidden
        ack = sim.gesture("p1", lambda c: c.press())
        assert ack is not None and ack.ok
    sim.watch.wait(lambda p: p["view"]["acted"][0])
    before = engine_snapshot(sim)
    ack = sim.gesture("p1", lambda c: c.press())
    assert ack is not None and not ack.ok and ack.message == "Done: wait for the others"
    assert engine_snapshot(sim) == before
