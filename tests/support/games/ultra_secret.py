"""Ultra Secret helpers: a purposeful bot, full sheets, the true formula's place, re-deals."""

from __future__ import annotations

import random
from typing import Any

from msgspec.structs import replace

from rules._ultra_secret_board import (
    COLOURS,
    DIAL_CODES,
    FLIGHT_SQUARES,
    HOTELS,
    INFORMANT_SQUARES,
    MOLE_SQUARES,
    PSEUDONYMS,
    SECRET_PLACES,
    TOOTHBRUSH,
    Seen,
    knowledge,
)
from rules.core import (
    Action,
)
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


def know_all(state: UltraState, seat: int) -> UltraState:
    """Fill a seat's sheet with every enemy identity and the five fakes."""
    lines = [
        Seen(
            1, f"H{COLOURS.index(c) + 1}", c, "suitcase", state.stashes[i].identity, "search", seat
        )
        for i, c in enumerate(COLOURS)
        if i != seat
    ]
    lines += [
        Seen(1, g, "", "fake", f, "search", seat)
        for g, f in zip(SECRET_PLACES, state.fakes, strict=False)
    ]
    sheets = list(state.sheets)
    sheets[seat] = tuple(lines)
    return replace(state, sheets=tuple(sheets))


def true_place(state: UltraState) -> tuple[str, str]:
    """(square, container) of the real formula card whose code is the true formula."""
    for c, st in zip(COLOURS, state.stashes, strict=True):
        for slot in ("suitcase", "briefcase"):
            if st.card(slot) == state.formula:
                return f"H{COLOURS.index(c) + 1}", slot
        if st.locker == state.formula:
            return st.at, c
    raise AssertionError("the true formula card lies nowhere")


def redeal(state: UltraState, keep: int | None, rng: random.Random) -> UltraState:
    """Re-deal every secret that ``keep`` does not own (``None``: every secret).

    Other colours' identities, formulas and layouts (and, while hiding, their locker
    station), the fakes and the true formula, other seats' mole cards and the deck
    order, their pending dials and choices, their sheets, a filing not theirs, the RNG.
    """
    n = state.players
    others = [c for c in range(6) if c != keep]
    idents = rng.sample([state.stashes[c].identity for c in others], len(others))
    formulas = rng.sample([state.stashes[c].formula for c in others], len(others))
    stashes = list(state.stashes)
    for c, ident, formula in zip(others, idents, formulas, strict=False):
        st = replace(stashes[c], identity=ident, formula=formula)
        if st.suitcase:
            layout = rng.sample([ident, formula, TOOTHBRUSH], 3)
            at = rng.choice(["F1", "B1"]) if state.phase == "hide" and c < n else st.at
            st = replace(st, suitcase=layout[0], briefcase=layout[1], locker=layout[2], at=at)
        stashes[c] = st
    pool = [m for s in range(n) if s != keep for m in state.hands[s]]
    pool += [*state.deck, *state.discard]
    rng.shuffle(pool)
    hands = []
    for s in range(n):
        if s == keep:
            hands.append(state.hands[s])
        else:
            size = len(state.hands[s])
            hands.append(tuple(sorted(pool[:size])))
            pool = pool[size:]
    deck, discard = tuple(pool[: len(state.deck)]), tuple(pool[len(state.deck) :])
    squares = ["H1", "H2", "G1", "G5", "V1", "B1", "F1", "VM2", "B2"]
    choices = {
        "dial": squares,
        "flight": squares,
        "bug": ["pass", "declare", "G2", "H4"],
        "informant": ["pass", "F1", "H6"],
    }

    def other(value: str, s: int) -> str:
        if s == keep or value in ("", "-", "done") or state.phase not in choices:
            return value
        return rng.choice(choices[state.phase])

    pending = tuple(other(p, s) for s, p in enumerate(state.pending))
    dials = state.dials
    if state.phase == "informant":
        dials = tuple(d if s == keep else rng.choice(squares) for s, d in enumerate(dials))
    six = rng.sample([*state.fakes, state.formula], 6)
    sheets = tuple(
        sheet if s == keep else sheet[: rng.randrange(len(sheet) + 1)]
        for s, sheet in enumerate(state.sheets)
    )
    filing = state.filing
    if filing is not None and keep != state.fugitive:
        # The place the formula card was taken from is public (§6.1); the names are not.
        names = tuple((c, rng.choice(PSEUDONYMS)) for c, _ in filing.pseudonyms)
        filing = replace(filing, pseudonyms=names)
    return replace(
        state,
        stashes=tuple(stashes),
        hands=tuple(hands),
        deck=deck,
        discard=discard,
        pending=pending,
        dials=dials,
        fakes=tuple(six[:5]),
        formula=six[5],
        sheets=sheets,
        filing=filing,
        rng=replace(state.rng, seed=state.rng.seed + 1),
    )


def _sample_states() -> list[UltraState]:
    """States from every phase of bot games, at 3-6 players."""
    out = []
    for seed in range(12):
        players = 3 + seed % 4
        rng = random.Random(seed)
        bot = Bot(rng)
        state = GAME.setup(players, {"dial": "free" if seed % 2 else "strict"}, seed)
        while not GAME.is_over(state):
            if rng.random() < 0.15:
                out.append(state)
            seat = rng.choice([s for s in range(players) if state.pending[s] == ""])
            state, _ = GAME.apply(state, bot.act(state, seat))
    return out


SAMPLES = _sample_states()


def redeal_for_seat(state: UltraState, seat: int, k: int) -> UltraState | None:
    """The screens no-leak re-deal: what ``seat`` may not know, dealt again (seed ``k``)."""
    return redeal(state, seat, random.Random(k))


def redeal_public(st: Any, r: random.Random) -> Any:
    """What the public may not know, dealt again."""
    return redeal(st, None, r)


PUBLIC_PLAYERS = 4
FOLLOW: tuple[int, int, int, dict[str, Any]] = (3, 7, 3, {"max_turns": 4})


#: The display no-leak tests walk these states rather than a random game (see
#: ``tests/support/playouts.py``): random play rarely reaches the filing.
PLAYOUT_SAMPLES = SAMPLES
