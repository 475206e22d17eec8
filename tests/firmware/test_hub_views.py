"""The hub builds a table's public view once per game state, however many stations it
repaints: each seat's view is made from that one public view, and what a binding makes of
the public view alone (``Table.per_state``) is made once too."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.config import TableConfig
from firmware.hub.table import Table
from firmware.link import protocol as proto
from firmware.link.lang import speaking
from firmware.link.mqtt import Message
from rules.core import action_to_json
from tests.support.hubrig import KEYS, Rig, T

SEATS = 8


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    stations = tuple(f"p{i + 1}" for i in range(SEATS))
    rig = Rig(tmp_path, stations)
    rig.connected()
    rig.start(SEATS)
    yield rig
    rig.close()


def _count_public_views(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """From now on, how many times the table's engine built the public view, per state version."""
    engine = rig.table.engine
    built: Counter[int] = Counter()
    build = engine.public_view

    def counting(state: Any) -> Any:
        built[state.version] += 1
        return build(state)

    monkeypatch.setattr(engine, "public_view", counting)
    return built


def test_a_batch_repainting_eight_stations_builds_each_public_view_once(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight mystery keys in one batch: eight new states, each repainting all eight
    stations and ``public``, and one public view built for each state, not nine."""
    built = _count_public_views(rig, monkeypatch)
    screens = len([t for t, _p, _r in rig.sent if t.endswith("/screen")])
    taps = [
        Message(
            T.station(station, "input"),
            proto.encode({"id": f"b{seat}:1", "kind": "tag", "uid": uid}),
        )
        for seat, station in enumerate(rig.stations)
        for uid in [KEYS.uid_for("mystery", None, seat + 1)]
    ]
    rig.hub.submit(*taps)  # one batch
    assert all(rig.acks(s)[-1]["ok"] for s in rig.stations)
    assert len([t for t, _p, _r in rig.sent if t.endswith("/screen")]) > screens + SEATS
    assert all(v["mystery_locked"] for v in rig.public()["view"]["seats"])
    assert len(built) == SEATS, "each tap is a new state"
    assert set(built.values()) == {1}, f"public view built {sorted(built.values())} times"


def test_a_full_repaint_builds_no_view_again_and_serves_the_engines_views(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hub's reconnect repaint (every screen again) builds no public view for a state
    it already showed, and each seat's view is, as JSON, what the engine gives that seat."""
    built = _count_public_views(rig, monkeypatch)
    rig.connected()
    assert sum(built.values()) == 0
    table = rig.table
    engine, state = table.engine, table.state
    for seat in [None, *range(SEATS)]:
        assert json.dumps(table.view(seat)) == json.dumps(engine.view(state, seat))


def _table(game: str, players: int) -> Table:
    seating = TableConfig("t", [f"p{i + 1}" for i in range(players)]).seating()
    return Table(game, players, {}, 1, seating, KEYS, binding_for(game))


def test_a_per_state_value_is_made_once_a_state_and_language() -> None:
    """``per_state`` builds once for a state and a language, again in another language
    (its words differ) and again once a move made a new state."""
    table = _table("secret-identity", 3)
    builds: list[str] = []

    def build() -> str:
        builds.append(table.view(None)["phase"])
        return f"{table.state.version}"

    with speaking("en"):
        assert [table.per_state("k", build) for _ in range(3)] == ["0", "0", "0"]
    with speaking("fr"):
        assert table.per_state("k", build) == "0"
    assert len(builds) == 2
    move = table.engine.legal_actions(table.state, 0)[0]
    body = {"rules": action_to_json(move)}
    table.commit(body, table.check(body))
    with speaking("en"):
        assert table.per_state("k", build) == "1"
    assert len(builds) == 3


def test_a_16_seat_repaint_lists_the_face_up_cards_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Identités cryptées: every station's card pages and the hub display show the face-up
    cards; a repaint of 16 stations makes each list once, the same lines as before."""
    table = _table("identites-cryptees", 16)
    binding: Any = table.binding
    rnd = random.Random(2)
    while not binding._face_up(table, False):  # random moves until a card lies face up
        moves = [a for s in [None, *range(16)] for a in table.engine.legal_actions(table.state, s)]
        body = {"rules": action_to_json(rnd.choice(moves))}
        table.commit(body, table.check(body))
    alone = binding._face_up(table, False)
    made: Counter[bool] = Counter()
    build = binding._face_up

    def counting(table: Table, living: bool) -> Any:
        made[living] += 1
        return build(table, living)

    monkeypatch.setattr(binding, "_face_up", counting)
    screens = [binding.station_screen(table, seat) for seat in range(16)]
    binding.host_screen(table)
    assert len(screens) == 16
    paging = [seat for seat in range(16) if binding.paging(table, seat)]
    assert len(paging) > 8, "most seats have nothing to do: their knob turns the card pages"
    assert made == Counter({False: 1, True: 1})
    assert binding.face_up(table) == list(alone)
