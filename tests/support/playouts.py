"""Random games of every engine, the public payload the hub would send, and re-deals."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any

from msgspec.structs import replace

from firmware.hub.bindings import binding_for
from firmware.hub.table import Seating, Table
from firmware.link import protocol as proto
from hardware.keys import COLOURS, load_keyset
from rules import get_game
from tests.support.games import identiquest as iq_tests
from tests.support.games import identites_cryptees as ic_tests
from tests.support.games import incognito as inc_tests
from tests.support.games import ultra_secret as us_tests

KEYS = load_keyset()


Redeal = Callable[[Any, random.Random], Any]


def redeal_secret_identity(st: Any, r: random.Random) -> Any:
    """Other mystery keys and votes in every safe not opened yet (the rest is public)."""
    if st.mode != "competitive" or st.phase not in ("prepare", "vote", "reveal"):
        return st
    first = st.opened if st.phase == "reveal" else 0
    mystery = [m if t < first or not m else r.randint(1, 8) for t, m in enumerate(st.mystery)]
    votes = []
    for row in st.votes:
        shown = {n for t, n in enumerate(row) if t < first and n}
        free = r.sample([n for n in range(1, 9) if n not in shown], 8 - len(shown))
        votes.append(tuple(n if t < first or not n else free.pop() for t, n in enumerate(row)))
    return replace(st, mystery=tuple(mystery), votes=tuple(votes))


def redeal_incognito(st: Any, r: random.Random) -> Any:
    if st.phase == "draw":
        return inc_tests.redeal_draw(st, 0, r.randrange(1000))
    if st.phase == "vote":
        return inc_tests.redeal_vote(st, 0, r.randrange(1000))
    return st


def redeal_identiquest(st: Any, r: random.Random) -> Any:
    over = get_game("identiquest").is_over(st)
    return st if over else iq_tests.redeal(st, 0, r.randrange(1000))


REDEALS: dict[str, tuple[int, Redeal]] = {
    "secret-identity": (5, redeal_secret_identity),
    "incognito": (4, redeal_incognito),
    "identiquest": (5, redeal_identiquest),
    "ultra-secret": (4, lambda st, r: us_tests.redeal(st, None, r)),
    "identites-cryptees": (12, lambda st, r: ic_tests.redeal(st, None, r)),
}


def playout(game: str, players: int, seed: int) -> Iterator[Any]:
    """The states of a random game (any seat's legal actions), every one of them."""
    if game == "ultra-secret":
        yield from us_tests.SAMPLES
        return
    engine = get_game(game)
    st = engine.setup(players, {}, seed)
    r = random.Random(seed)
    for _ in range(400):
        yield st
        if engine.is_over(st):
            return
        if game == "identites-cryptees":
            action = ic_tests.bot(st, r)
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
