"""Incognito at the table: whole games through mock stations on mosquitto."""

from __future__ import annotations

import json
import random
import re
import time
from typing import Any

import pytest

from firmware.hub.bindings.incognito import glass
from firmware.link import protocol as proto
from firmware.tools.bots.incognito import Bot
from firmware.tools.sim import recorded_frames
from firmware.tools.simtable import TABLE, SimTable
from tests.support.golden import frame_problems
from tests.support.tables import (
    TableFactory,
    assert_hub_shows_ranking,
    drain,
    freeze_countdowns,
    leaves,
    snapshot,
    spy,
    tap_refused,
)
from tests.support.tables import (
    incognito_scores as expected_scores,
)


def bots(sim: SimTable, seed: int = 1, **kwargs: Any) -> Bot:
    return Bot(sim, sim.watch, random.Random(seed), say=lambda _: None, **kwargs)


def test_four_player_game_scores_and_screens(make_table: TableFactory) -> None:
    """Presses, peeks and vote-card taps play 3 rounds; right scores, hub display, goldens."""
    sim = make_table(4)
    freeze_countdowns(sim)
    players = bots(sim, seed=3)
    players.start_game(4)
    final = players.play()
    time.sleep(0.3)  # let the last screens land

    assert final["over"] is True and final["game"] == "incognito"
    assert sorted(players.record) == [1, 2, 3]
    assert final["scores"] == expected_scores(players.record, 4)
    for rnd, data in players.record.items():
        words = [glass(d["word"]) for d in data["reveal"]["drawings"]]
        assert [data["word"][s] for s in range(4)] == words, rnd
    host = sim.watch.host
    assert_hub_shows_ranking(host, final, sim.table_config.seating().colours[:4])
    problems = [
        p for n in sim.names for p in frame_problems(f"incognito-4p/{n}", recorded_frames(sim, n))
    ]
    assert not problems, problems


def test_countdowns_stop_the_late_drawer_and_fill_the_late_voter(
    make_table: TableFactory,
) -> None:
    """With countdown=1, the hub's timer stops the last drawer and fills the last voter."""
    sim = make_table(3)
    players = bots(sim, seed=4, options={"countdown": 1, "lang": "en"}, late=True)
    players.start_game(3)
    final = players.play()
    assert final["over"] is True and final["view"]["lang"] == "en"
    for rnd, data in players.record.items():
        reveal = data["reveal"]
        assert reveal["late"] is not None and len(reveal["filled"]) == 1, rnd
    assert final["scores"] == expected_scores(players.record, 3)


def test_station_hears_no_other_word_before_the_reveal(make_table: TableFactory) -> None:
    """p1 (subscribed to '#') never gets another seat's word while drawing, nor a mapping."""
    sim = make_table(3)
    freeze_countdowns(sim)
    t = proto.Topics(TABLE)
    listener = spy(sim, "p1", ["#", t.station("p2", "screen")])
    players = bots(sim, seed=5)
    players.start_game(3)
    players.play()
    time.sleep(0.3)
    messages = drain(listener)
    listener.stop()

    topics = {topic for topic, _ in messages}
    own = {t.station("p1", leaf) for leaf in ("screen", "ack", "status")}
    assert topics <= {*own, t.public, t.hub_status}, topics
    words = {rnd: data["word"] for rnd, data in players.record.items()}
    raw = {
        rnd: [d["word"] for d in data["reveal"]["drawings"]] for rnd, data in players.record.items()
    }
    screens = [json.loads(p) for topic, p in messages if topic == t.station("p1", "screen")]
    drawing = [s for s in screens if " Draw" in s.get("title", "")]
    assert len(drawing) >= 6
    for screen in drawing:
        # "Red Round 1/3 Draw", or "Red R1/3 Draw" where the words do not fit
        found = re.search(r"(\d+)/\d+", screen["title"])
        assert found is not None, screen["title"]
        rnd = int(found.group(1))
        text = json.dumps(screen, ensure_ascii=False)
        assert words[rnd][0] in text
        assert all(words[rnd][s] not in text for s in (1, 2)), screen
    publics = [json.loads(p) for topic, p in messages if topic == t.public]
    assert len(publics) > 20
    for pub in publics:
        view = pub.get("view") or {}
        for path, _value in leaves(pub):
            if path[-1] in ("word", "number", "votes", "finders"):
                # Only in a reveal: the view's, or a reveal event in the display's feed.
                if path[0] == "feed":
                    assert pub["feed"][int(path[1])]["kind"] == "reveal", path
                    continue
                assert "reveal" in path, path
        if view.get("phase") == "draw":
            text = json.dumps(pub, ensure_ascii=False)
            assert view["list"] == []
            assert all(w not in text for w in raw[view["round"]])


@pytest.fixture
def voting(make_table: TableFactory) -> SimTable:
    """A 3-player table in round 1's vote phase."""
    sim = make_table(3)
    freeze_countdowns(sim)
    players = bots(sim, seed=9, stop_at=(1, "vote"))
    players.start_game(3)
    players.play()
    return sim


def uid(sim: SimTable, colour: str, number: int) -> str:
    return sim.keys.uid_for("vote", colour, number)


@pytest.mark.parametrize(
    ("station", "key", "message"),
    [
        ("p1", ("vote", "red", 2), "That's your own drawing"),
        ("p2", ("vote", "red", 7), "Vote cards go 1 to 6"),
        ("p2", ("vote", "white", 1), "Nobody plays white"),
        ("p3", ("mystery", None, 4), "That card is not for this game"),
    ],
)
def test_bad_cards_are_refused_at_the_station(
    voting: SimTable, station: str, key: tuple[str, str | None, int], message: str
) -> None:
    """Own drawing, card 7, an absent colour, a mystery key: refused, beeped, nothing changes."""
    before = snapshot(voting)
    assert tap_refused(voting, station, voting.keys.uid_for(*key)) == message
    assert snapshot(voting) == before


def test_same_card_twice_and_a_press_while_voting_are_refused(voting: SimTable) -> None:
    """The same card again on the same drawing, and a knob press while voting: refused."""
    assert voting.tap("p2", uid(voting, "red", 3)) is not None
    before = snapshot(voting)
    assert tap_refused(voting, "p2", uid(voting, "red", 3)) == "That card is already there"
    ack = voting.gesture("p1", lambda c: c.press())
    assert ack is not None and not ack.ok and ack.message == "Tap your vote cards on drawings"
    assert snapshot(voting) == before


def test_knob_scrolls_the_list_on_that_station_only(voting: SimTable) -> None:
    """Turning p1's knob shows words 4-6 on p1; p2 still shows 1-3."""
    words = voting.watch.public["view"]["list"]
    ack = voting.gesture("p1", lambda c: c.turn(3))
    assert ack is not None and ack.ok
    deadline = time.monotonic() + 5
    screen = voting.stations["p1"].screen
    while time.monotonic() < deadline and (screen is None or not screen.lines[1].startswith("4 ")):
        time.sleep(0.01)
        screen = voting.stations["p1"].screen
    assert screen is not None and screen.lines[1] == f"4 {words[3]}"
    other = voting.stations["p2"].screen
    assert other is not None and other.lines[1] == f"1 {words[0]}"


def test_hub_killed_during_a_countdown_still_ends_it(make_table: TableFactory) -> None:
    """SIGKILL the hub while the drawing countdown runs: the restarted hub's timer ends it."""
    sim = make_table(3, hub_mode="process")
    players = bots(sim, seed=6, options={"countdown": 3})
    players.start_game(3)
    for station in ("p1", "p2"):
        ack = sim.gesture(station, lambda c: c.press())
        assert ack is not None and ack.ok
    sim.watch.wait(lambda p: p["view"]["countdown"]["running"])
    sim.kill_hub()
    assert sim.watch.public["view"]["phase"] == "draw"
    sim.start_hub()
    pub = sim.watch.wait(lambda p: p["view"]["phase"] == "vote", timeout=20)
    assert pub["view"]["done"] == [True, True, True]
    final = players.play()
    assert final["over"] is True
    assert final["scores"] == expected_scores(players.record, 3)
