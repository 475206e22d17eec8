"""The hub's feed carries public events to the table display: an event the engine marks
public must say nothing the public view after it does not. Re-deal the hidden cards, play
the same move: wherever the public tables after it are equal, so are the public events."""

from __future__ import annotations

import random

import pytest

from rules import get_game
from rules.core import IllegalAction
from tests.support.display_samples import _move
from tests.support.playouts import REDEALS


@pytest.mark.parametrize("game", list(REDEALS))
def test_public_events_say_no_more_than_the_public_view(game: str) -> None:
    """Same move on a re-dealt table: equal public views after it mean equal public events."""
    players, redeal = REDEALS[game]
    engine = get_game(game)
    compared = 0
    for seed in range(3):
        state, r, deal = engine.setup(players, {}, seed), random.Random(seed), random.Random(7)
        for step in range(600):
            if engine.is_over(state):
                break
            action = _move(game, state, r)
            if action is None:
                break
            other = redeal(state, deal)
            new, events = engine.apply(state, action)
            if other is not state and other != state:
                try:
                    new_other, other_events = engine.apply(other, action)
                except (IllegalAction, ValueError):
                    # A re-deal may give a table the rules never reach (Ultra Secret's
                    # sheets then contradict its deal): such a pair is not compared.
                    new_other, other_events = None, []
                if new_other is not None and engine.view(new, None) == engine.view(new_other, None):
                    mine = [(e.kind, e.data) for e in events if e.to is None]
                    theirs = [(e.kind, e.data) for e in other_events if e.to is None]
                    assert mine == theirs, (game, seed, step, action)
                    compared += 1
            state = new
    assert compared > 20, compared
