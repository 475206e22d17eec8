"""Identiquest helpers: re-deal the identities a seat cannot know."""

from __future__ import annotations

import random
from typing import Any

from msgspec.structs import replace

from rules import get_game
from rules.identiquest import (
    IdentiquestState,
)


def redeal(state: IdentiquestState, keep: int, seed: int) -> IdentiquestState:
    """Same table, other hidden identities (consistent with the crosses), deck reshuffled."""
    r = random.Random(seed)
    hidden = [s for s in range(state.players) if s != keep and not state.unmasked[s]]
    taken = {state.identity[s] for s in range(state.players) if s not in hidden}
    free = [c for c in range(len(state.colours)) if c not in taken]
    best = state.identity
    for _ in range(200):
        pick = r.sample(free, len(hidden))
        if all(not state.crossed[s][c] for s, c in zip(hidden, pick, strict=True)):
            ident = list(state.identity)
            for s, c in zip(hidden, pick, strict=True):
                ident[s] = c
            best = tuple(ident)
            if best != state.identity:
                break
    deck = list(state.deck)
    r.shuffle(deck)
    return replace(state, identity=best, deck=tuple(deck))


def redeal_for_seat(state: IdentiquestState, seat: int, k: int) -> IdentiquestState | None:
    """The screens no-leak re-deal: what ``seat`` may not know, dealt again (seed ``k``)."""
    return redeal(state, seat, k)


def redeal_public(st: Any, r: random.Random) -> Any:
    """What the public may not know, dealt again (identities, the deck)."""
    over = get_game("identiquest").is_over(st)
    return st if over else redeal(st, 0, r.randrange(1000))


PUBLIC_PLAYERS = 5
FOLLOW: tuple[int, int, int, dict[str, Any]] = (4, 7, 3, {})
