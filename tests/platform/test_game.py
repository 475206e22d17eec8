"""A whole Secret Identity game through the mock station devices and a real broker."""

from __future__ import annotations

import time

from firmware.link.render import render_lines
from firmware.tools.sim import recorded_frames
from tests.support.golden import frame_problems
from tests.support.tables import (
    TableFactory,
    assert_hub_shows_ranking,
    director,
    expected_scores,
)


def test_five_player_game_scores_and_screens(make_table: TableFactory) -> None:
    """Every input through taps, knob and flap; right scores on public, hub display, goldens."""
    sim = make_table(5)
    bots = director(sim, seed=3)
    bots.start_game(5)
    final = bots.play()
    time.sleep(0.3)  # let the last screens land

    want = expected_scores(bots.record, 5)
    assert final["over"] is True
    assert final["scores"] == want
    assert [s["score"] for s in final["view"]["seats"]] == want
    assert len(bots.record) == 4 and all(len(r["votes"]) == 20 for r in bots.record.values())
    # The picto cards each player confirmed on the knob (the tie-break) are what was counted.
    history = final["view"]["history"]
    assert [h["pictos"] for h in history] == [
        [bots.record[r]["pictos"][s] for s in range(5)] for r in range(1, 5)
    ]
    placed = [sum(bots.record[r]["pictos"][s] for r in range(1, 5)) for s in range(5)]
    assert [s["pictos_left"] for s in final["view"]["seats"]] == [10 - p for p in placed]

    # The hub display shows the final ranking, winner first (not the track mod 30).
    host = sim.watch.host
    assert_hub_shows_ranking(host, final, sim.table_config.seating().colours[:5])
    panel_frames = getattr(sim.panel.display, "frames", [])
    assert panel_frames[-1].tobytes() == render_lines(host["title"], host["lines"]).tobytes()

    problems = [p for n in sim.names for p in frame_problems(f"si-5p/{n}", recorded_frames(sim, n))]
    assert not problems, problems
