"""The hub builds a table's public view once per game state, however many stations it
repaints: each seat's view is made from that one public view."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.link import protocol as proto
from firmware.link.mqtt import Message
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
    rig.hub.feed(*taps)  # one batch
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
