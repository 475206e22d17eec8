"""Random games of every engine, the public payload the hub would send, and re-deals."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any

from firmware.hub.bindings import binding_for
from firmware.hub.table import Seating, Table
from firmware.link import protocol as proto
from hardware.keys import COLOURS, load_keyset
from rules import GAMES, get_game
from tests.support.games import game_support

KEYS = load_keyset()


Redeal = Callable[[Any, random.Random], Any]


#: Per registered game: the table size of the display no-leak tests and its public re-deal
#: (``tests/support/games/<stem>.py``: ``PUBLIC_PLAYERS``, ``redeal_public``).
REDEALS: dict[str, tuple[int, Redeal]] = {
    g: (game_support(g).PUBLIC_PLAYERS, game_support(g).redeal_public) for g in GAMES
}


def playout(game: str, players: int, seed: int) -> Iterator[Any]:
    """The states of a random game (any seat's legal actions), every one of them; a game's
    test helpers may give sample states instead (``PLAYOUT_SAMPLES``) or the move to play
    (``playout_move``)."""
    support = game_support(game)
    if hasattr(support, "PLAYOUT_SAMPLES"):
        yield from support.PLAYOUT_SAMPLES
        return
    engine = get_game(game)
    st = engine.setup(players, {}, seed)
    r = random.Random(seed)
    for _ in range(400):
        yield st
        if engine.is_over(st):
            return
        if hasattr(support, "playout_move"):
            action = support.playout_move(st, r)
        else:
            actions = [a for seat in range(st.players) for a in engine.legal_actions(st, seat)]
            if not actions:
                return
            action = r.choice(actions)
        st, _ = engine.apply(st, action)


def public_of(game: str, st: Any) -> dict[str, Any]:
    """The ``public`` payload the hub would publish for this engine state."""
    stations = [f"p{i + 1}" for i in range(st.players)]
    table = Table(
        game, st.players, {}, 1, Seating(stations, list(COLOURS) * 2), KEYS, binding_for(game)
    )
    table.state = st
    table.events = st.version + 1  # a fresh view, not the cached one of the first state
    return json.loads(proto.encode(table.public()))
