"""Ultra Secret: random playouts with purposeful bots, invariants checked at every step.

Tests map to RULES.md §4 as a whole ("the game ends"; "An agent must move every
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
    COLOURS,
    DIAL_CODES,
    FLIGHT_SQUARES,
    HOTELS,
    INFORMANT_SQUARES,
    MOLE_SQUARES,
    SECRET_PLACES,
    knowledge,
)
from rules.core import Action, Event, IllegalAction, decode_state, encode, replay
from rules.ultra_secret import (
    GAME,
    Bug,
    Declare,
    Dial,
    Informant,
    Open,
    Pass,
    Read,
    Search,
    UltraState,
    open_squares,
    search_kind,
)

GAMES = 1000
MAX_ACTIONS = 6000


class Bot:
    """A purposeful player: goes where it has not looked yet, declares when it can.

    It reads only what its seat may know: its own sheet (``knowledge``), its mole
    cards, and the public board.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def act(self, state: UltraState, seat: int) -> Action:
        """The bot's choice for ``seat`` in the current phase (the seat must owe one)."""
        phase = state.phase
        if phase == "bug":
            return self._phase1(state, seat)
        if phase == "dial":
            return Dial(seat, self._dial(state, seat))
        if phase == "flight":
            return Dial(seat, self._flight(state, seat))
        if phase == "informant":
            if self.rng.random() < 0.25:
                choices = [sq for sq in INFORMANT_SQUARES if sq != state.informants[seat]]
                return Informant(seat, self.rng.choice(choices))
            return Pass(seat)
        if phase == "search":
            return self._search(state, seat)
        legal = GAME.legal_actions(state, seat)
        return legal[0] if phase == "file" else self.rng.choice(legal)

    def _seen(self, state: UltraState, seat: int) -> set[tuple[str, str]]:
        return {(s.colour, s.slot) for s in state.sheets[seat]}

    def _phase1(self, state: UltraState, seat: int) -> Action:
        know = knowledge(state, seat)
        if know.complete:
            return Declare(seat)
        if state.options.declare == "any" and state.turn > 8 and self.rng.random() < 0.03:
            return Declare(seat)  # a reckless guess: files what the sheet half-knows
        if not state.bugs[seat] and self.rng.random() < 0.3:
            unknown = [g for g in SECRET_PLACES if g not in know.fakes]
            return Bug(seat, self.rng.choice(unknown or list(HOTELS)))
        return Pass(seat)

    def _spare(self, state: UltraState, seat: int, fakes: dict[str, str]) -> list[str]:
        """Mole cards the seat can spend in pairs: the useless ones, of places it knows."""
        return [c for c in state.hands[seat] if c in fakes]

    def _dial(self, state: UltraState, seat: int) -> str:
        allowed = open_squares(state, seat)
        if state.options.dial == "free" and self.rng.random() < 0.03:
            return self.rng.choice(DIAL_CODES)
        know = knowledge(state, seat)
        seen = self._seen(state, seat)
        own = COLOURS[seat]
        weights: dict[str, float] = {}
        unknown = [g for g in SECRET_PLACES if g not in know.fakes]
        spare = len(self._spare(state, seat, know.fakes))
        hand = state.hands[seat]
        for g in unknown:
            if g in hand:
                weights[g] = 8
            elif spare >= 2:
                weights[g] = 5
        if unknown and len([g for g in unknown if g in hand]) < len(unknown):
            for v in MOLE_SQUARES:
                weights[v] = 3
        hidden_ids = [c for c in COLOURS if c != own and c not in know.pseudonyms]
        for c in hidden_ids:
            hotel = HOTELS[COLOURS.index(c)]
            if (c, "suitcase") not in seen or (c, "briefcase") not in seen:
                weights[hotel] = 4
            at = state.stashes[COLOURS.index(c)].at  # public: which lockers are full
            if (c, "locker") not in seen:
                weights[at] = weights.get(at, 0) + 2
        options = [(sq, w) for sq, w in weights.items() if sq in allowed]
        if not options or self.rng.random() < 0.2:  # wander: crowds on a target break up
            return self.rng.choice(allowed)
        squares, ws = zip(*options, strict=True)
        return self.rng.choices(squares, ws)[0]

    def _flight(self, state: UltraState, seat: int) -> str:
        squares = FLIGHT_SQUARES[state.players]
        if state.options.dial == "free" and self.rng.random() < 0.03:
            return self.rng.choice(DIAL_CODES)
        if self.rng.random() < 0.3:
            return "F1"
        return self.rng.choice(squares)

    def _search(self, state: UltraState, seat: int) -> Action:
        kind = search_kind(state, seat)
        here = state.agents[seat]
        seen = self._seen(state, seat)
        watched = here in state.informants
        if kind == "hotel":
            colour = COLOURS[HOTELS.index(here)]
            if not watched:
                return Search(seat)
            fresh = [s for s in ("suitcase", "briefcase") if (colour, s) not in seen]
            return Search(seat, self.rng.choice(fresh or ["suitcase", "briefcase"]))
        if kind == "lockers":
            full = [
                c
                for c, st in zip(COLOURS, state.stashes, strict=True)
                if st.at == here and c != COLOURS[seat]
            ]
            fresh = [c for c in full if (c, "locker") not in seen]
            picks = (fresh + [c for c in full if c not in fresh])[: 1 if watched else 2]
            return Open(seat, tuple(sorted(picks, key=COLOURS.index)))
        know = knowledge(state, seat)
        if here in know.fakes:
            return Pass(seat)
        if here in state.hands[seat]:
            return Read(seat, (here,))
        spare = self._spare(state, seat, know.fakes)
        if len(spare) >= 2:
            return Read(seat, tuple(sorted(spare[:2])))
        return Pass(seat)


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
