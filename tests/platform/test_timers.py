"""Timers the table runs by itself: the reveal paced without the host."""

from __future__ import annotations

from tests.support.tables import TableFactory, director


def test_reveal_delay_opens_safes_by_itself(make_table: TableFactory) -> None:
    """With reveal_delay set, every safe opens and the next round starts with no host press."""
    sim = make_table(3, reveal_delay=0.2)
    bots = director(sim, seed=8, stop_at=(1, "reveal"))
    bots.start_game(3)
    menu = len(sim.panel.presses)  # the host's walk through the start menu
    bots.play()
    pub = sim.watch.wait(lambda p: p["view"]["round"] == 2, timeout=10)
    assert [s["safe"] for s in pub["view"]["history"][0]["safes"]] == [0, 1, 2]
    assert sim.panel.presses[menu:] == []  # nobody pressed "next" during the game
