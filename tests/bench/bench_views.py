"""Building every view of one game state, and a hub's whole repaint of it (prints numbers).

For an 8-player Secret Identity state and a 16-seat Identités cryptées one, each the median
of many runs:
- ``per seat``: ``view(state, None)`` and then ``view(state, seat)`` for each seat, each
  seat's view building the public part again (the cost the shared public view avoids);
- ``shared``: ``view(state, None)`` once, each seat's view made from it (``seat_view``);
- ``repaint``: what the hub does when a move lands: every station's screen (the game's
  binding) and the ``public`` payload, on a fresh state (no view cached).

Run: ``.venv/bin/python tests/bench/bench_views.py [seconds]`` (CPU seconds per figure). Against
another checkout (before a change): ``PYTHONPATH=<checkout> python <this file>``; where the
engines have no ``seat_view`` yet, ``shared`` prints ``-``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import msgspec

from firmware.hub.bindings import binding_for
from firmware.hub.config import TableConfig
from firmware.hub.table import Table
from firmware.link import protocol as proto
from hardware.keys import load_keyset
from rules.core import action_to_json

#: (game, seats, random moves played before the measured state).
CASES = (("secret-identity", 8, 60), ("identites-cryptees", 16, 80))


def played(game_id: str, players: int, steps: int) -> Table:
    """A hub table after ``steps`` random moves (fewer if the game ends first)."""
    seating = TableConfig("t", [f"p{i + 1}" for i in range(players)]).seating()
    table = Table(game_id, players, {}, 7, seating, load_keyset(), binding_for(game_id))
    rnd = random.Random(7)
    engine = table.engine
    for _step in range(steps):
        actions = [a for s in [None, *range(players)] for a in engine.legal_actions(table.state, s)]
        if table.over or not actions:
            break
        body = {"rules": action_to_json(rnd.choice(actions))}
        table.commit(body, table.check(body))
    return table


def median_us(work: Callable[[], Any], seconds: float) -> float:
    """The median time of one call of ``work``, in microseconds of this process's CPU time
    (other work on a shared machine counts less), over ``seconds`` of it."""
    laps: list[float] = []
    clock = time.process_time
    end = clock() + seconds
    while clock() < end or len(laps) < 5:
        t0 = clock()
        work()
        laps.append(clock() - t0)
    return statistics.median(laps) * 1e6


def measure(game_id: str, players: int, steps: int, seconds: float) -> str:
    table = played(game_id, players, steps)
    engine, state = table.engine, table.state
    seats = range(players)

    def per_seat() -> None:
        engine.view(state, None)
        for seat in seats:
            engine.view(state, seat)

    def shared() -> None:
        public = engine.view(state, None)
        for seat in seats:
            engine.seat_view(state, seat, public)

    def repaint() -> None:
        table.state = msgspec.structs.replace(state)  # a new state object: no view cached
        for seat in seats:
            table.binding.station_screen(table, seat)
        proto.encode(table.public())

    old = median_us(per_seat, seconds)
    new = median_us(shared, seconds) if hasattr(engine, "seat_view") else None
    hub = median_us(repaint, seconds)
    new_text = "-" if new is None else f"{new:8.0f} us ({old / new:.1f}x)"
    return (
        f"{game_id} {players} seats (phase {engine.context(engine.view(state, None))['phase']}, "
        f"version {state.version}): all views: per seat {old:8.0f} us, shared {new_text}; "
        f"hub repaint (screens + public) {hub:8.0f} us"
    )


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    for game_id, players, steps in CASES:
        print(measure(game_id, players, steps, seconds), flush=True)


if __name__ == "__main__":
    main()
