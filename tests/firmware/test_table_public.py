"""The hub's ``public`` payload: the same keys for every game, seat colours resolved."""

from __future__ import annotations

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.table import Seating, Table
from rules import GAMES, get_info
from tests.support.screens import KEYS

#: Station colours no game deals as its own, so a resolved colour cannot match by chance.
STATIONS = ["white", "pink", "orange", "purple", "black", "blue"]


def table_of(game: str, players: int) -> Table:
    stations = [f"p{i + 1}" for i in range(players)]
    seating = Seating(stations, STATIONS[:players])
    return Table(game, players, {}, 1, seating, KEYS, binding_for(game, reveal_delay=0.0))


@pytest.mark.parametrize("game", GAMES)
def test_seats_go_by_the_games_own_colours_where_it_deals_them(game: str) -> None:
    """Ultra Secret's agents have colours of their own: ``public`` names its seats by them
    (the display and the printed ranking read only these); other games keep the stations'."""
    players = get_info(game).min_players
    table = table_of(game, players)
    public = table.public()
    seats = [s["colour"] for s in public["seats"]]
    own = table.engine.context(public["view"])["colours"]
    if own is None:
        assert seats == STATIONS[:players]
    else:
        assert seats == list(own[:players]) != STATIONS[:players]


@pytest.mark.parametrize("game", GAMES)
def test_every_game_publishes_the_shared_keys(game: str) -> None:
    """phase, round, rounds, to_play and the labels are there whatever the game."""
    public = table_of(game, get_info(game).min_players).public()
    assert {"phase", "round", "rounds", "to_play", "labels"} <= set(public)
    assert public["labels"]["game"] == get_info(game).name
    assert public["labels"]["phase"] == get_info(game).phases[public["phase"]].long


@pytest.mark.parametrize("game", GAMES)
def test_the_declared_ends_and_sides_are_in_the_labels(game: str) -> None:
    """How each end and side of the game reads comes from its declaration, in ``public``'s
    labels (the table display has no words of its own for them)."""
    info = get_info(game)
    labels = table_of(game, info.min_players).public()["labels"]
    assert labels["outcomes"] == {key: o.long for key, o in info.outcomes.items()}
    assert labels["sides"] == {key: s.name for key, s in info.side_words.items()}
    if game in ("ultra-secret", "identites-cryptees"):
        assert labels["outcomes"] or labels["sides"]
