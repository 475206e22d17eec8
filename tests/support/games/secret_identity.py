"""Secret Identity helpers: prepared rounds, votes, random games, re-deals of hidden secrets."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from msgspec.structs import replace

from rules.core import Action, IllegalAction, Rng, encode
from rules.secret_identity import (
    GAME,
    Mystery,
    Pictos,
    SecretIdentityState,
    Vote,
)

State = SecretIdentityState


def run(state: State, actions: Sequence[Action]) -> State:
    """Apply actions in order; every one must be accepted."""
    for action in actions:
        state, _ = GAME.apply(state, action)
    return state


def refused(state: State, action: Action, message: str | None = None) -> str:
    """Assert the action is refused and changes nothing; return the message."""
    before = encode(state)
    with pytest.raises(IllegalAction) as info:
        GAME.apply(state, action)
    assert encode(state) == before
    if message is not None:
        assert info.value.message == message
    return info.value.message


def prepared(
    mysteries: Sequence[int], pictos: Sequence[int] | None = None, seed: int = 1, **opts: Any
) -> State:
    """A competitive game whose seats locked these keys and pictos: now in "vote"."""
    state = GAME.setup(len(mysteries), opts, seed)
    counts = pictos or [1] * len(mysteries)
    for s, n in enumerate(mysteries):
        state = run(state, [Mystery(s, n), Pictos(s, counts[s])])
    assert state.phase == "vote"
    return state


def full_votes(state: State, guesses: dict[int, dict[int, int]]) -> State:
    """Cast ``guesses[voter][safe] = number`` votes."""
    for voter, row in guesses.items():
        for safe, number in row.items():
            state, _ = GAME.apply(state, Vote(voter, safe, number))
    return state


def everyone_right(state: State, mysteries: Sequence[int]) -> dict[int, dict[int, int]]:
    """Votes where each voter guesses every safe right (numbers stay distinct)."""
    n = len(mysteries)
    return {v: {t: mysteries[t] for t in range(n) if t != v} for v in range(n)}


def random_action(state: State, rnd: random.Random) -> Action:
    """A random legal action, biased so games move on (votes fill empty slots)."""
    n = state.players
    if state.phase == "vote" and rnd.random() < 0.9:
        empty = [(s, t) for s in range(n) for t in range(n) if s != t and not state.votes[s][t]]
        if empty:
            s, t = rnd.choice(empty)
            free = [k for k in range(1, 9) if k not in state.votes[s]]
            return Vote(s, t, rnd.choice(free))
    actors: list[int | None] = list(range(n))
    rnd.shuffle(actors)
    if rnd.random() < 0.1:
        actors.insert(0, None)
    else:
        actors.append(None)
    for actor in actors:
        actions = GAME.legal_actions(state, actor)
        if actions:
            return rnd.choice(actions)
    raise AssertionError(f"nobody can act in phase {state.phase}")


def random_game(
    players: int, options: dict[str, str], seed: int, rnd: random.Random
) -> tuple[list[State], list[Action]]:
    """Play a whole random game; return every state (setup first) and the actions."""
    state = GAME.setup(players, options, seed)
    states, actions = [state], []
    while not GAME.is_over(state):
        action = random_action(state, rnd)
        state, _ = GAME.apply(state, action)
        states.append(state)
        actions.append(action)
    return states, actions


def redeal(state: State, seat: int | None, rnd: random.Random, rng: bool = True) -> State:
    """The same state with every secret hidden from ``seat`` dealt anew.

    Competitive: other seats' mystery numbers and every vote of another seat in an
    unopened safe (the seat's own safe included). Co-op: the active seat's number
    (for a guesser) or the team's answer (for the active seat). And the RNG, whose
    future deals nobody may know, unless ``rng`` is false.
    """
    n = state.players
    if rng:
        state = replace(state, rng=Rng(rnd.randrange(10**9), rnd.randrange(100)))
    if state.mode == "coop":
        a = state.active
        if a < 0 or state.phase == "over":
            return state
        if seat != a and state.mystery[a]:
            state = replace(state, mystery=_put(state.mystery, a, rnd.randrange(1, 9)))
        if seat in (a, None) and state.answer:
            state = replace(state, answer=rnd.randrange(1, 9))
        return state
    opened = set(range(state.opened))
    hidden = [o for o in range(n) if o not in opened and o != seat and state.mystery[o]]
    used = {state.mystery[o] for o in range(n) if o not in hidden and state.mystery[o]}
    pool = rnd.sample([k for k in range(1, 9) if k not in used], len(hidden))
    mystery = list(state.mystery)
    for o, k in zip(hidden, pool, strict=True):
        mystery[o] = k
    votes = [list(row) for row in state.votes]
    for v in range(n):
        if v == seat:
            continue
        slots = [t for t in range(n) if t not in opened and votes[v][t]]
        keep = {votes[v][t] for t in range(n) if t in opened and votes[v][t]}
        fresh = rnd.sample([k for k in range(1, 9) if k not in keep], len(slots))
        for t, k in zip(slots, fresh, strict=True):
            votes[v][t] = k
    return replace(state, mystery=tuple(mystery), votes=tuple(tuple(r) for r in votes))


def _put(items: tuple[int, ...], i: int, value: int) -> tuple[int, ...]:
    return (*items[:i], value, *items[i + 1 :])


def redeal_for_seat(state: State, seat: int, k: int) -> State | None:
    """The screens no-leak re-deal: what ``seat`` may not know, dealt again (seed ``k``)."""
    return redeal(state, seat, random.Random(k))


def redeal_public(st: Any, r: random.Random) -> Any:
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


#: The table display's no-leak test plays at this many seats.
PUBLIC_PLAYERS = 5
#: The table display follow test: players, table seed, bot seed, bot options.
FOLLOW: tuple[int, int, int, dict[str, Any]] = (5, 7, 3, {})
