"""Re-dealing what a seat may not know changes nothing on its station, in either language.

The engines' no-leak tests check their views; this checks the station screens built
from them (the new "what just happened" lines included), in French and in English.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest

from firmware.hub.table import Table
from firmware.link.lang import speaking
from tests.support.games import identiquest as iq
from tests.support.games import identites_cryptees as ic
from tests.support.games import incognito as inc
from tests.support.games import secret_identity as si
from tests.support.games import ultra_secret as us
from tests.support.screens import GAMES, tables

Redeal = Callable[[Any, int, int], Any]


def _incognito(state: Any, seat: int, k: int) -> Any:
    if state.phase == "draw":
        return inc.redeal_draw(state, seat, k)
    if state.phase == "vote":
        return inc.redeal_vote(state, seat, k)
    return None


REDEAL: dict[str, Redeal] = {
    "secret-identity": lambda st, seat, k: si.redeal(st, seat, random.Random(k)),
    "incognito": _incognito,
    "identiquest": lambda st, seat, k: iq.redeal(st, seat, k),
    "ultra-secret": lambda st, seat, k: us.redeal(st, seat, random.Random(k)),
    "identites-cryptees": lambda st, seat, k: ic.redeal(st, seat, random.Random(k)),
}


def screens_of(table: Table, state: Any, seat: int) -> tuple[Any, ...]:
    """A seat's station screen (with its secret) if the engine state were ``state``."""
    other = copy.copy(table)
    other.state = state
    other._views = {}
    other._views_at = -1
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
                other = REDEAL[game](table.state, seat, rng.randrange(1000))
                if other is None:
                    continue
                assert screens_of(table, other, seat) == screens_of(table, table.state, seat), (
                    game,
                    seat,
                )
                checked += 1
    assert checked > 5
