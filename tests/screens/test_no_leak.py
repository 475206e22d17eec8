"""Re-dealing what a seat may not know changes nothing on its station, in either language.

The engines' no-leak tests check their views; this checks the station screens built
from them (the new "what just happened" lines included), in French and in English.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from firmware.hub.table import Table
from firmware.link.lang import speaking
from tests.support.games import game_support
from tests.support.screens import GAMES, tables


def screens_of(table: Table, state: Any, seat: int) -> tuple[Any, ...]:
    """A seat's station screen (with its secret) if the engine state were ``state``."""
    other = copy.copy(table)
    other.state = state
    other._views, other._derived, other._views_of = {}, {}, None  # its own caches
    return (other.binding.station_screen(other, seat),)


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_seats_screens_do_not_change_when_the_others_are_redealt(
    game: str, language: str
) -> None:
    """At sampled steps of a whole game, each seat's screen is the same whatever the
    secrets it may not know (the others' cards, words, keys, identities)."""
    players = GAMES[game][0] + 1
    rng = random.Random(7)
    checked = 0
    with speaking(language):
        for table in tables(game, players, seed=5):
            if table.over or rng.random() > 0.15:
                continue
            for seat in range(players):
                redeal = game_support(game).redeal_for_seat
                other = redeal(table.state, seat, rng.randrange(1000))
                if other is None:
                    continue
                assert screens_of(table, other, seat) == screens_of(table, table.state, seat), (
                    game,
                    seat,
                )
                checked += 1
    assert checked > 5
