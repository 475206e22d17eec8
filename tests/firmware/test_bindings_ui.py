"""A ``ui`` event (a knob turn, a press that opens a menu) changes its own seat's screen
only, never another seat's nor the host's: the hub repaints just that station after one
(firmware.hub.publish ``all(seat=)``), so every game's binding is held to it here, over
random games and random knob work."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.table import Seating, Table
from firmware.link import protocol as proto
from firmware.link.lang import speaking
from hardware.keys import COLOURS, load_keyset
from rules import GAMES, get_game
from rules.core import IllegalAction
from tests.support.hub import T, deliver, host, make_hub
from tests.support.playouts import playout

KEYS = load_keyset()
STATES = 40  # sampled per game
UI_EVENTS = 6  # per sampled state


def _screens(table: Table) -> list[bytes]:
    return [proto.encode(table.binding.station_screen(table, s)) for s in range(table.players)]


def _ui_body(table: Table, seat: int, rng: random.Random) -> dict[str, Any] | None:
    """What a random knob turn or press of ``seat`` asks, if it is a ``ui`` event."""
    kind = rng.choice(["knob", "knob", "knob", "press"])
    inp = proto.Input(id="b:1", kind=kind, step=rng.choice([-1, 1, 2]) if kind == "knob" else None)
    try:
        body = table.binding.translate(table, seat, inp)
    except (IllegalAction, KeyError, ValueError):
        return None
    return body if isinstance(body, dict) and "ui" in body else None


def _table(game: str, st: Any) -> Table:
    stations = [f"p{i + 1}" for i in range(st.players)]
    seating = Seating(stations, (list(COLOURS) * 2)[: st.players])
    table = Table(game, st.players, {}, 1, seating, KEYS, binding_for(game))
    table.state = st
    return table


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_ui_event_changes_only_its_own_seats_screen(game: str) -> None:
    """Over random states of a random game, every ui event a seat's knob or press makes
    leaves every other seat's station screen exactly as it was."""
    rng = random.Random(27)
    checked = 0
    info = get_game(game).info
    for players in sorted({info.min_players, info.max_players}):
        states = list(playout(game, players, seed=players))
        for st in rng.sample(states, min(STATES, len(states))):
            table = _table(game, st)  # a game's sample states may have their own sizes
            with speaking(rng.choice(["en", "fr"])):
                for _ in range(UI_EVENTS):
                    seat = rng.randrange(table.players)
                    body = _ui_body(table, seat, rng)
                    if body is None:
                        continue
                    before = _screens(table)
                    host = table.binding.host_screen(table)
                    table.binding.apply_ui(table, body["ui"])
                    after = _screens(table)
                    others = [s for s in range(table.players) if s != seat]
                    assert [after[s] for s in others] == [before[s] for s in others], body
                    assert table.binding.host_screen(table) == host, body
                    checked += 1
    assert checked > 0  # the game has knob work to check


def test_a_knob_turn_repaints_its_own_station_and_leaves_nothing_stale(tmp_path: Path) -> None:
    """On the hub: a knob turn builds one station screen, sends that station's only, and a
    full repaint right after finds nothing to send to any station (a turn that ends the
    host's note repaints all)."""
    hub, sent = make_hub(tmp_path)
    host(hub, {"cmd": "start", "game": "secret-identity", "players": 3, "seed": 5})
    actor = hub.actors["t"]
    assert actor.table is not None
    built: list[int] = []
    binding = actor.table.binding
    real = binding.station_screen

    def counted(table: Table, seat: int) -> proto.Screen:
        built.append(seat)
        return real(table, seat)

    binding.station_screen = counted  # type: ignore[method-assign]
    assert actor.message  # "Game started": the first move ends the note, a full repaint
    deliver(hub, T.station("p3", "input"), {"id": "k:1", "kind": "knob", "step": 1})
    assert built == [0, 1, 2] and not actor.message
    built.clear()
    before = len(sent)
    deliver(hub, T.station("p2", "input"), {"id": "k:2", "kind": "knob", "step": 1})
    assert built == [1]
    screens = [t for t, _p in sent[before:] if t.endswith("/screen") and "/station/" in t]
    assert screens == [T.station("p2", "screen")]
    after = len(sent)
    hub.out.all(actor)
    assert not [t for t, _p in sent[after:] if "/station/" in t]
    hub.store.close()
