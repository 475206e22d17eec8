"""Incognito helpers: re-deal other seats' words (draw) and votes (vote)."""

from __future__ import annotations

import random
from typing import Any

from msgspec.structs import replace

from rules.incognito import (
    LIST_SIZE,
    WORDS,
    IncognitoState,
)


def redeal_draw(state: IncognitoState, keep: int, seed: int) -> IncognitoState:
    """Same game, other seats given other words (and the deck other fillers)."""
    mine = state.words[state.word_at[keep]]
    pool = [w for w in WORDS[state.lang] if w != mine]
    r = random.Random(seed)
    words = r.sample(pool, LIST_SIZE - 1)
    words.insert(r.randrange(LIST_SIZE), mine)
    positions = [i for i in range(LIST_SIZE) if words[i] != mine]
    r.shuffle(positions)
    mine_at = words.index(mine)
    word_at = tuple(mine_at if s == keep else positions.pop() for s in range(state.players))
    return replace(state, words=tuple(words), word_at=word_at)


def redeal_vote(state: IncognitoState, keep: int, seed: int) -> IncognitoState:
    """Same list, other seats' words swapped among the other numbers, other votes changed."""
    r = random.Random(seed)
    others = [i for i in range(LIST_SIZE) if i != state.word_at[keep]]
    r.shuffle(others)
    word_at = tuple(state.word_at[s] if s == keep else others.pop() for s in range(state.players))
    votes = []
    for voter, row in enumerate(state.votes):
        if voter == keep:
            votes.append(row)
            continue
        numbers = r.sample(range(1, LIST_SIZE + 1), LIST_SIZE)
        votes.append(tuple(numbers[d] if n else 0 for d, n in enumerate(row)))
    return replace(state, word_at=word_at, votes=tuple(votes))


def redeal_for_seat(state: IncognitoState, seat: int, k: int) -> IncognitoState | None:
    """The screens no-leak re-deal: what ``seat`` may not know, dealt again (seed ``k``);
    None in a phase with nothing hidden to re-deal."""
    if state.phase == "draw":
        return redeal_draw(state, seat, k)
    if state.phase == "vote":
        return redeal_vote(state, seat, k)
    return None


def redeal_public(st: Any, r: random.Random) -> Any:
    """What the public may not know, dealt again (the words, the votes)."""
    if st.phase == "draw":
        return redeal_draw(st, 0, r.randrange(1000))
    if st.phase == "vote":
        return redeal_vote(st, 0, r.randrange(1000))
    return st


PUBLIC_PLAYERS = 4
FOLLOW: tuple[int, int, int, dict[str, Any]] = (4, 7, 3, {})


def sample_actions(state: IncognitoState, actions: list[Any]) -> list[Any]:
    """The display samples' choice of moves: fresh vote cards only (a card laid elsewhere
    moves, and the page would never fill up)."""
    fresh = [a for a in actions if not hasattr(a, "number") or a.number not in state.votes[a.seat]]
    return fresh or actions
