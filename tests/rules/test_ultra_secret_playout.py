"""Ultra Secret: random playouts with purposeful bots, invariants checked at every step.

Tests map to the rulebook as a whole ("the game ends"; "An agent must move every
turn"; "Whatever card is seen is also shown to the owner of every bug and
informant on that square"; the three outcomes) and to the core contract (version
bump, serialise round-trip, replay equality, illegal actions refused unchanged).

- test_playouts_keep_invariants_and_reach_the_flight: 1,000+ games at 3-6
  players in both dial modes; every step checks the invariants; most games reach
  the flight and every outcome occurs.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from rules._ultra_secret_board import (
    DIAL_CODES,
    SECRET_PLACES,
)
from rules.core import Action, Event, IllegalAction, decode_state, encode, replay
from rules.ultra_secret import (
    GAME,
    Dial,
    Pass,
    Read,
    UltraState,
    open_squares,
    search_kind,
)
from tests.support.games.ultra_secret import (
    Bot,
)

GAMES = 1000
MAX_ACTIONS = 6000


def _illegal_probe(state: UltraState, rng: random.Random) -> Action:
    """An action that must be refused now: a seat that owes nothing, or a closed square."""
    idle = [s for s in range(state.players) if state.pending[s] != ""]
    if idle:
        return Pass(rng.choice(idle))
    seat = rng.randrange(state.players)
    if state.phase in ("dial", "flight") and state.options.dial == "strict":
        closed = [c for c in DIAL_CODES if c not in open_squares(state, seat)]
        return Dial(seat, rng.choice(closed))
    return Read(seat, ("G1", "G1", "G1"))


def _check_step(before: UltraState, after: UltraState, events: list[Event]) -> None:
    """Invariants of one accepted action."""
    assert after.version == before.version + 1
    assert after.phase == "over" or GAME.scores(after) == [0] * after.players
    moles = Counter(after.deck) + Counter(after.discard)
    for hand in after.hands:
        moles += Counter(hand)
    assert moles == Counter({g: 6 for g in SECRET_PLACES})
    for s in range(after.players):
        # perfect recall: a sheet only ever grows
        assert after.sheets[s][: len(before.sheets[s])] == before.sheets[s]
        if after.phase == "search" and after.pending[s] == "":
            assert search_kind(after, s) and after.agents.count(after.agents[s]) == 1
    if after.phase == "search" and before.phase == "informant":
        for s in range(after.players):
            # an agent must move every turn: a new square, or off the board
            assert not after.agents[s] or after.agents[s] != before.agents[s]
    for ev in events:
        if ev.kind in ("seen", "mole"):
            assert ev.to is not None and len(ev.to) == 1
        if ev.kind == "seen" and ev.data["how"] != "search":
            (seat,) = ev.to
            where = after.bugs[seat] if ev.data["how"] == "bug" else after.informants[seat]
            assert where == ev.data["square"] == after.agents[ev.data["by"]]


def play_one(seed: int, players: int, options: dict[str, str], check: bool = True):
    """Play one bot game; return the final state and the accepted actions."""
    rng = random.Random(seed)
    bot = Bot(rng)
    state = GAME.setup(players, options, seed)
    actions: list[Action] = []
    while not GAME.is_over(state):
        assert len(actions) < MAX_ACTIONS, "game did not end"
        seats = [s for s in range(players) if state.pending[s] == ""]
        seat = rng.choice(seats)
        action = bot.act(state, seat)
        if check:
            assert action in GAME.legal_actions(state, seat)
            if len(actions) % 3 == 1:
                # every listed legal action is accepted
                other = rng.choice(seats)
                GAME.apply(state, rng.choice(GAME.legal_actions(state, other)))
            if len(actions) % 3 == 0:
                probe = _illegal_probe(state, rng)
                frozen = encode(state)
                with pytest.raises(IllegalAction):
                    GAME.apply(state, probe)
                assert encode(state) == frozen
        new, events = GAME.apply(state, action)
        if check:
            _check_step(state, new, events)
            assert decode_state(GAME, encode(new)) == new
        state = new
        actions.append(action)
    return state, actions


@pytest.mark.slow
def test_playouts_keep_invariants_and_reach_the_flight() -> None:
    """1,000 bot games at 3-6 players end, keep invariants, reach the flight, see all outcomes."""
    outcomes: Counter[str] = Counter()
    flights = turns = 0
    for game in range(GAMES):
        players = 3 + game % 4
        options = {
            "dial": "free" if game % 5 == 4 else "strict",
            "declare": "any" if game % 3 == 2 else "known",
        }
        state, actions = play_one(game, players, options)
        assert replay(GAME, players, options, game, actions) == state
        flights += state.fugitive >= 0
        turns += state.turn
        outcomes[state.outcome] += 1
        assert GAME.scores(state) in (
            [1 if s == state.fugitive else 0 for s in range(players)],
            [0 if s == state.fugitive else 1 for s in range(players)],
            [0] * players,
        )
    assert flights == GAMES
    assert set(outcomes) == {"escaped", "escaped-wrong", "caught"}
    print(f"flights {flights}/{GAMES}, outcomes {dict(outcomes)}, turns {turns / GAMES:.1f}")
