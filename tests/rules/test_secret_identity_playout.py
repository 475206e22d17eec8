"""Secret Identity random playouts: invariants checked at every step of 1,200 games."""

from __future__ import annotations

import json
import random

import pytest

from rules.core import Action, IllegalAction, decode_action, decode_state, encode, replay
from rules.secret_identity import GAME, Advance, Answer, Mystery, Open, Pictos, Vote
from tests.support.games.secret_identity import State, random_action

GAMES_PER_CASE = 300  # x 4 cases = 1,200 complete games, every count 3-8 equally
MAX_STEPS = 5_000


def junk_action(state: State, rnd: random.Random) -> Action:
    """Any well-typed action with fields near (and past) the valid ranges."""
    n = state.players
    seat = rnd.randrange(-1, n + 1)
    kind = rnd.randrange(6)
    if kind == 0:
        return Mystery(seat, rnd.randrange(0, 10))
    if kind == 1:
        return Pictos(seat, rnd.randrange(-1, 5))
    if kind == 2:
        return Vote(seat, rnd.randrange(-1, n + 1), rnd.randrange(0, 10))
    if kind == 3:
        return Answer(seat, rnd.randrange(0, 10))
    if kind == 4:
        return Open(seat)
    return Advance()


def check_junk(state: State, rnd: random.Random) -> None:
    """A random action is accepted exactly when legal_actions lists it."""
    action = junk_action(state, rnd)
    actor = None if isinstance(action, Advance) else action.seat  # type: ignore[attr-defined]
    legal = action in GAME.legal_actions(state, actor)
    before = encode(state)
    try:
        new, _ = GAME.apply(state, action)
    except IllegalAction as exc:
        assert not legal, f"legal {action} refused: {exc.message}"
        assert len(exc.message) <= 63
        assert encode(state) == before
    else:
        assert legal, f"illegal {action} accepted in {state.phase}"
        assert new.version == state.version + 1


def play_checked(players: int, options: dict[str, str], seed: int, rnd: random.Random) -> int:
    """One random game with every invariant checked; returns its length."""
    state = GAME.setup(players, options, seed)
    actions: list[Action] = []
    spot = rnd.randrange(60)
    while not GAME.is_over(state):
        assert len(actions) < MAX_STEPS, "the game does not end"
        check_junk(state, rnd)
        action = random_action(state, rnd)
        new, events = GAME.apply(state, action)
        assert new.version == state.version + 1
        if options.get("mode") == "coop":
            assert len(set(new.scores)) == 1
        assert all(b >= a for a, b in zip(state.scores, new.scores, strict=True))
        for event in events:
            assert event.to is None or all(0 <= s < players for s in event.to)
        data = encode(new)
        assert decode_state(GAME, data) == new
        assert encode(decode_state(GAME, data)) == data
        text = encode(action)
        assert decode_action(GAME, text) == action
        actions.append(action)
        state = new
        if len(actions) % 60 == spot:
            assert encode(replay(GAME, players, options, seed, actions)) == data
        viewer = rnd.randrange(-1, players)
        json.dumps(GAME.view(new, None if viewer < 0 else viewer))
    assert encode(replay(GAME, players, options, seed, actions)) == encode(state)
    assert GAME.legal_actions(state, None) == []
    ranking = GAME.ranking(state)
    assert sorted(s for group in ranking for s in group) == list(range(players))
    json.dumps(GAME.view(state, None))
    return len(actions)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["competitive", "coop"])
@pytest.mark.parametrize("mystery", ["keys", "dealt"])
def test_random_playouts_keep_every_invariant(mode: str, mystery: str) -> None:
    """300 games per mode x mystery option, 3-8 players: invariants hold and games end."""
    rnd = random.Random(f"{mode}-{mystery}")
    options = {"mode": mode, "mystery": mystery}
    steps = 0
    for game in range(GAMES_PER_CASE):
        steps += play_checked(3 + game % 6, options, game, rnd)
    assert steps > GAMES_PER_CASE * 10
