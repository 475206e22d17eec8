"""Ultra Secret (``ultra-secret``): secret agents, a coordinate dial, bugs and informants.

The rulebook's turn has five phases that every seat plays at once: ``bug``
(place your bug once per game, or declare that your investigation is done, or
pass), ``dial`` (secretly pick your next square), ``informant`` (post or move it,
or pass), then the dials are revealed and the agents move; agents alone on a
square where they can act then ``search`` (hotel), ``open`` (lockers) or ``read``
(a fake formula with mole cards), or pass. A declaration leads to ``file`` (the
fugitive's secret answers) and then ``flight`` turns of dial-and-move only.
The JSON notation is documented in ``rules/docs/ultra-secret.md``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Union

from msgspec.structs import replace

from rules._ultra_secret_board import (
    BUG_SQUARES,
    CAPTURE_ENEMIES,
    COLOURS,
    DECLARE_MODES,
    DIAL_CODES,
    DIAL_MODES,
    ESCAPE_ALONE,
    FLIGHT_SQUARES,
    FORMULAS,
    HOTELS,
    INFORMANT_SQUARES,
    KINDS,
    MOLE_SQUARES,
    MOLES_PER_PLACE,
    PLACE_NAMES,
    PSEUDONYM_NAMES,
    PSEUDONYMS,
    SECRET_PLACES,
    STATIONS,
    TOOTHBRUSH,
    Filing,
    Note,
    Options,
    Seen,
    Stash,
    UltraState,
    colours_for,
    digit,
    hotel_of,
    investigation_squares,
    knowledge,
    place_card,
    sheet_view,
)
from rules.core import (
    JSON,
    Action,
    BaseGame,
    Event,
    IllegalAction,
    Rng,
    shared_ranking,
)
from rules.declare import N_, GameInfo, Option, Outcome, Phase

__all__ = ["GAME", "UltraSecret", "UltraState"]

# Phases in which a seat owes one choice; "" in ``pending`` = still to act.
_WAIT = ""
_NOT_NEEDED = "-"
_DONE = "done"
_PASS = "pass"
_DECLARE = "declare"


# ---------------------------------------------------------------- actions


class Hide(Action, tag="hide", frozen=True):
    """Setup: which of your cards goes in suitcase, briefcase, locker; locker at F1/B1."""

    seat: int
    suitcase: str
    briefcase: str
    locker: str
    at: str


class Bug(Action, tag="bug", frozen=True):
    """Phase 1: place your one bug on a hotel or G square, for the rest of the game."""

    seat: int
    square: str


class Declare(Action, tag="declare", frozen=True):
    """Phase 1: your investigation is done; start the flight."""

    seat: int


class Pass(Action, tag="pass", frozen=True):
    """Skip an optional step: bug/declare, informant, or a search."""

    seat: int


class Dial(Action, tag="dial", frozen=True):
    """Phase 2 (and each flight turn): secretly dial your agent's next square."""

    seat: int
    square: str


class Informant(Action, tag="informant", frozen=True):
    """Phase 3: post or move your informant to a hotel, F1 or B1."""

    seat: int
    square: str


class Search(Action, tag="search", frozen=True):
    """Alone in an enemy hotel: look at both bags, or ``slot`` only (forced with an informant)."""

    seat: int
    slot: str | None = None


class Open(Action, tag="open", frozen=True):
    """Alone at F1/B1: open up to two lockers (one with an informant there), by colour."""

    seat: int
    lockers: tuple[str, ...]


class Read(Action, tag="read", frozen=True):
    """Alone on a G square: spend its matching mole card, or two useless ones, to read the fake.

    A mole card is useless to its holder once the fake of its secret place is on the
    holder's sheet (« deux cartes Taupe inutiles », rulebook §5.6).
    """

    seat: int
    moles: tuple[str, ...]


class File(Action, tag="file", frozen=True):
    """The fugitive's answers: a pseudonym code per enemy colour, and the formula card.

    The formula card is taken from the board unseen, so it is named by its place:
    ``square`` and ``container`` (``H3`` + ``suitcase``/``briefcase``, ``B1``/``F1`` +
    the colour of a full locker there, or a G square alone).
    """

    seat: int
    pseudonyms: dict[str, str]
    square: str
    container: str = ""


UltraAction = Union[Hide, Bug, Declare, Pass, Dial, Informant, Search, Open, Read, File]  # noqa: UP007


# ---------------------------------------------------------------- helpers


def _set(items: tuple[str, ...], i: int, value: str) -> tuple[str, ...]:
    return (*items[:i], value, *items[i + 1 :])


def open_squares(state: UltraState, seat: int) -> tuple[str, ...]:
    """Squares this seat's agent may be dialled to now (strict mode's menu)."""
    if state.phase == "flight":
        return FLIGHT_SQUARES[state.players]
    here = state.agents[seat]
    return tuple(sq for sq in investigation_squares(state.players) if sq != here)


def _alone(agents: tuple[str, ...], seat: int) -> bool:
    here = agents[seat]
    return bool(here) and sum(1 for a in agents if a == here) == 1


def _lockers_at(state: UltraState, station: str, seat: int) -> tuple[str, ...]:
    """Colours whose locker at ``station`` holds a card, the seat's own excepted."""
    own = COLOURS[seat]
    return tuple(
        c for c, st in zip(COLOURS, state.stashes, strict=True) if st.at == station and c != own
    )


def _informed(state: UltraState, square: str) -> bool:
    return square in state.informants


def search_kind(state: UltraState, seat: int) -> str:
    """What the seat's agent may do where it stands: hotel, lockers, read, or ""."""
    if not _alone(state.agents, seat):
        return ""
    here = state.agents[seat]
    if here in HOTELS:
        return "" if here == hotel_of(COLOURS[seat]) else "hotel"
    if here in STATIONS:
        return "lockers" if _lockers_at(state, here, seat) else ""
    if here in SECRET_PLACES:
        return "read"
    return ""


def _observers(state: UltraState, square: str, searcher: int) -> list[tuple[int, str]]:
    """Seats shown what is found on ``square``: owners of a bug or informant there."""
    out = []
    for s in range(state.players):
        if s == searcher:
            continue
        if state.bugs[s] == square:
            out.append((s, "bug"))
        elif state.informants[s] == square:
            out.append((s, "informant"))
    return out


def _show(
    state: UltraState, searcher: int, found: list[tuple[str, str, str]]
) -> tuple[UltraState, list[Event]]:
    """Record ``found`` (colour, slot, card) on the searcher's and observers' sheets."""
    square = state.agents[searcher]
    sheets = list(state.sheets)
    events = []
    for seat, how in [(searcher, "search"), *_observers(state, square, searcher)]:
        lines = tuple(
            Seen(state.turn, square, colour, slot, card, how, searcher)
            for colour, slot, card in found
        )
        sheets[seat] = sheets[seat] + lines
        cards = [{"colour": c or None, "slot": sl, "card": cd} for c, sl, cd in found]
        events.append(
            Event("seen", {"square": square, "how": how, "by": searcher, "cards": cards}, (seat,))
        )
    return replace(state, sheets=tuple(sheets)), events


def _draw_mole(state: UltraState, seat: int) -> tuple[UltraState, str]:
    """Draw one mole card; an empty deck is remade from the shuffled discards first."""
    deck, discard, rng = state.deck, state.discard, state.rng
    if not deck and discard:
        deck, rng = rng.shuffle(discard)
        discard = ()
    if not deck:
        return state, ""
    card, deck = deck[0], deck[1:]
    hands = list(state.hands)
    hands[seat] = tuple(sorted((*hands[seat], card)))
    return replace(state, deck=deck, discard=discard, rng=rng, hands=tuple(hands)), card


def _useless(state: UltraState, seat: int, moles: tuple[str, ...]) -> bool:
    """Whether every one of these mole cards is useless to ``seat``: it already knows
    the fake of its secret place (« des cartes Taupe dont vous n'avez plus besoin »)."""
    known = knowledge(state, seat).fakes
    return all(m in known for m in moles)


def _filing_right(state: UltraState) -> bool:
    filing = state.filing
    if filing is None:
        return False
    named = dict(filing.pseudonyms)
    enemies = [c for c in colours_for(state.players) if c != COLOURS[state.fugitive]]
    # A fake on a G square never counts, even though no fake bears the true code.
    real = filing.square not in SECRET_PLACES
    card = place_card(state, filing.square, filing.container)
    return (
        real
        and card == state.formula
        and all(named.get(c) == state.stashes[COLOURS.index(c)].identity for c in enemies)
    )


# ---------------------------------------------------------------- phases


def _need(state: UltraState, seat: int, phase: str | tuple[str, ...]) -> None:
    if not 0 <= seat < state.players:
        raise IllegalAction("No such seat")
    phases = (phase,) if isinstance(phase, str) else phase
    if state.phase not in phases:
        raise IllegalAction("Not the time for that")
    if state.pending[seat] == _NOT_NEEDED:
        raise IllegalAction("Nothing for you to do now")
    if state.pending[seat] != _WAIT:
        raise IllegalAction("You have already chosen")


def _all_in(pending: tuple[str, ...]) -> bool:
    return _WAIT not in pending


def _with_pending(state: UltraState, seat: int, value: str) -> UltraState:
    return replace(state, pending=_set(state.pending, seat, value))


def _acted(state: UltraState, seat: int) -> Event:
    return Event("acted", {"seat": seat, "phase": state.phase})


def _hide(state: UltraState, a: Hide) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, "hide")
    if sorted((a.suitcase, a.briefcase, a.locker)) != sorted(KINDS):
        raise IllegalAction("Hide identity, toothbrush, formula once each")
    if a.at not in STATIONS:
        raise IllegalAction("Your locker is at F1 or B1")
    st = state.stashes[a.seat]
    card = {"identity": st.identity, "toothbrush": TOOTHBRUSH, "formula": st.formula}
    st = replace(
        st, suitcase=card[a.suitcase], briefcase=card[a.briefcase], locker=card[a.locker], at=a.at
    )
    stashes = (*state.stashes[: a.seat], st, *state.stashes[a.seat + 1 :])
    state = replace(_with_pending(state, a.seat, _DONE), stashes=stashes)
    events = [_acted(state, a.seat)]
    if _all_in(state.pending):
        lockers = {c: s.at for c, s in zip(COLOURS, state.stashes, strict=True)}
        events.append(Event("lockers", {"lockers": lockers}))
        state = _next_turn(state)
    return state, events


def _next_turn(state: UltraState) -> UltraState:
    return replace(state, phase="bug", turn=state.turn + 1, pending=("",) * state.players)


def _phase1(state: UltraState, seat: int, choice: str) -> tuple[UltraState, list[Event]]:
    state = _with_pending(state, seat, choice)
    events = [_acted(state, seat)]
    if not _all_in(state.pending):
        return state, events
    bugs = tuple(
        p if p not in (_PASS, _DECLARE) else b
        for p, b in zip(state.pending, state.bugs, strict=True)
    )
    placed = {s: bugs[s] for s in range(state.players) if bugs[s] != state.bugs[s]}
    if placed:
        events.append(Event("bugs", {"placed": {str(s): sq for s, sq in placed.items()}}))
    state = replace(state, bugs=bugs)
    declared = tuple(s for s, p in enumerate(state.pending) if p == _DECLARE)
    if not declared:
        return replace(state, phase="dial", pending=("",) * state.players), events
    sums = {
        s: digit(state.agents[s]) + digit(state.informants[s]) + digit(state.bugs[s])
        for s in declared
    }
    best = max(sums.values())
    top = [s for s in declared if sums[s] == best]
    fugitive, rng = (top[0], state.rng) if len(top) == 1 else state.rng.choice(top)
    pending = tuple(_WAIT if s == fugitive else _NOT_NEEDED for s in range(state.players))
    events.append(
        Event(
            "fugitive",
            {
                "declared": list(declared),
                "sums": {str(s): v for s, v in sums.items()},
                "fugitive": fugitive,
            },
        )
    )
    state = replace(
        state,
        phase="file",
        declared=declared,
        sums=tuple(sums[d] for d in declared),
        fugitive=fugitive,
        rng=rng,
        pending=pending,
    )
    return state, events


def _must_declare(state: UltraState, seat: int) -> bool:
    """Decision (docs: Actions): a complete sheet ends the investigation (« Dès qu'un joueur
    a terminé son enquête »): that seat's phase-1 choice can only be the declaration."""
    return knowledge(state, seat).complete


def _bug(state: UltraState, a: Bug) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, "bug")
    if _must_declare(state, a.seat):
        raise IllegalAction("Your sheet is complete: declare")
    if state.bugs[a.seat]:
        raise IllegalAction("Your bug is already placed")
    if a.square not in BUG_SQUARES:
        raise IllegalAction("A bug goes on a hotel or a G square")
    return _phase1(state, a.seat, a.square)


def _declare(state: UltraState, a: Declare) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, "bug")
    if state.options.declare == "known" and not knowledge(state, a.seat).complete:
        raise IllegalAction("Your sheet is not complete yet")
    return _phase1(state, a.seat, _DECLARE)


def _dial(state: UltraState, a: Dial) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, ("dial", "flight"))
    if a.square not in DIAL_CODES:
        raise IllegalAction("That square is not on the dial")
    if state.options.dial == "strict" and a.square not in open_squares(state, a.seat):
        if a.square == state.agents[a.seat] and state.phase == "dial":
            raise IllegalAction("Your agent must move")
        raise IllegalAction("That square is closed")
    state = _with_pending(state, a.seat, a.square)
    events = [_acted(state, a.seat)]
    if not _all_in(state.pending):
        return state, events
    if state.phase == "dial":
        return replace(
            state, phase="informant", dials=state.pending, pending=("",) * state.players
        ), events
    more: list[Event]
    state, more = _flight_move(state)
    return state, events + more


def _informant(state: UltraState, a: Informant) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, "informant")
    if a.square not in INFORMANT_SQUARES:
        raise IllegalAction("Informants go on a hotel, F1 or B1")
    if state.informants[a.seat] == a.square:
        raise IllegalAction("Your informant is already there")
    return _phase3(state, a.seat, a.square)


def _phase3(state: UltraState, seat: int, choice: str) -> tuple[UltraState, list[Event]]:
    state = _with_pending(state, seat, choice)
    events = [_acted(state, seat)]
    if not _all_in(state.pending):
        return state, events
    informants = tuple(
        p if p != _PASS else i for p, i in zip(state.pending, state.informants, strict=True)
    )
    moved = {
        str(s): informants[s] for s in range(state.players) if informants[s] != state.informants[s]
    }
    if moved:
        events.append(Event("informants", {"moved": moved}))
    state = replace(state, informants=informants)
    more: list[Event]
    state, more = _reveal_and_move(state)
    return state, events + more


def _reveal_and_move(state: UltraState) -> tuple[UltraState, list[Event]]:
    """Phases 4 and 5: dials shown, agents placed (an impossible dial sits out)."""
    dials = state.dials
    agents = tuple(d if d in open_squares(state, s) else "" for s, d in enumerate(dials))
    state = replace(state, agents=agents, revealed=dials, dials=("",) * state.players, notes=())
    events = [Event("revealed", {"dials": list(dials), "agents": list(agents)})]
    notes: list[Note] = []
    for s in range(state.players):
        if not agents[s]:
            notes.append(Note(s, "", "sat-out", (dials[s],)))
        elif not _alone(agents, s):
            notes.append(Note(s, agents[s], "crowded"))
        elif agents[s] in MOLE_SQUARES:
            state, card = _draw_mole(state, s)
            notes.append(Note(s, agents[s], "drew" if card else "deck-empty"))
            if card:
                events.append(Event("mole", {"square": agents[s], "card": card}, (s,)))
                line = Seen(state.turn, agents[s], "", "mole", card, "draw", s)
                sheets = list(state.sheets)
                sheets[s] = (*sheets[s], line)
                state = replace(state, sheets=tuple(sheets))
    pending = tuple(_WAIT if search_kind(state, s) else _NOT_NEEDED for s in range(state.players))
    state = replace(state, notes=tuple(notes), pending=pending, phase="search")
    if _all_in(pending):
        state = _next_turn(state)
    return state, events


def _note(state: UltraState, note: Note) -> UltraState:
    return replace(state, notes=(*state.notes, note))


def _searched(state: UltraState, seat: int, events: list[Event]) -> tuple[UltraState, list[Event]]:
    """A lone agent has acted (or passed); the turn ends once every one has."""
    events = [_acted(state, seat), *events]
    state = _with_pending(state, seat, _DONE)
    return (_next_turn(state) if _all_in(state.pending) else state), events


def _search(state: UltraState, a: Search) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, "search")
    if search_kind(state, a.seat) != "hotel":
        raise IllegalAction("There is no luggage to search here")
    here = state.agents[a.seat]
    if a.slot is None and _informed(state, here):
        raise IllegalAction("An informant watches: pick one bag")
    if a.slot not in (None, "suitcase", "briefcase"):
        raise IllegalAction("Pick the suitcase or the briefcase")
    colour = COLOURS[HOTELS.index(here)]
    slots = ("suitcase", "briefcase") if a.slot is None else (a.slot,)
    stash = state.stashes[COLOURS.index(colour)]
    state, events = _show(state, a.seat, [(colour, sl, stash.card(sl)) for sl in slots])
    state = _note(state, Note(a.seat, here, "searched", slots))
    return _searched(state, a.seat, events)


def _open(state: UltraState, a: Open) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, "search")
    if search_kind(state, a.seat) != "lockers":
        raise IllegalAction("There are no lockers to open here")
    here = state.agents[a.seat]
    limit = 1 if _informed(state, here) else 2
    full = _lockers_at(state, here, a.seat)
    if not 1 <= len(a.lockers) <= limit or len(set(a.lockers)) != len(a.lockers):
        if limit == 1:
            raise IllegalAction("Open one locker")
        raise IllegalAction("Open one or two lockers")
    if any(c not in full for c in a.lockers):
        raise IllegalAction("Open only full enemy lockers here")
    found = [(c, "locker", state.stashes[COLOURS.index(c)].locker) for c in a.lockers]
    state, events = _show(state, a.seat, found)
    state = _note(state, Note(a.seat, here, "opened", a.lockers))
    return _searched(state, a.seat, events)


def _read(state: UltraState, a: Read) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, "search")
    if search_kind(state, a.seat) != "read":
        raise IllegalAction("There is no secret place here")
    here = state.agents[a.seat]
    if len(a.moles) not in (1, 2):
        raise IllegalAction("Use the matching mole card or two")
    if len(a.moles) == 1 and a.moles[0] != here:
        raise IllegalAction("One mole card must be the {card} card", card=here)
    hand = Counter(state.hands[a.seat])
    if any(n > hand[c] for c, n in Counter(a.moles).items()):
        raise IllegalAction("You do not hold those mole cards")
    if len(a.moles) == 2 and not _useless(state, a.seat, a.moles):
        raise IllegalAction("Two mole cards only for places you already know")
    left = hand - Counter(a.moles)
    hands = list(state.hands)
    hands[a.seat] = tuple(sorted(left.elements()))
    state = replace(state, hands=tuple(hands), discard=state.discard + tuple(a.moles))
    fake = state.fakes[SECRET_PLACES.index(here)]
    state, events = _show(state, a.seat, [("", "fake", fake)])
    state = _note(state, Note(a.seat, here, "read", (str(len(a.moles)),)))
    return _searched(state, a.seat, events)


def _pass(state: UltraState, a: Pass) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, ("bug", "informant", "search"))
    if state.phase == "bug":
        if _must_declare(state, a.seat):
            raise IllegalAction("Your sheet is complete: declare")
        return _phase1(state, a.seat, _PASS)
    if state.phase == "informant":
        return _phase3(state, a.seat, _PASS)
    state = _note(state, Note(a.seat, state.agents[a.seat], "passed"))
    return _searched(state, a.seat, [])


def _file(state: UltraState, a: File) -> tuple[UltraState, list[Event]]:
    _need(state, a.seat, "file")
    enemies = [c for c in colours_for(state.players) if c != COLOURS[a.seat]]
    if sorted(a.pseudonyms) != sorted(enemies):
        raise IllegalAction("Name a pseudonym for each enemy colour")
    if any(p not in PSEUDONYMS for p in a.pseudonyms.values()):
        raise IllegalAction("Pseudonyms are P1 to P6")
    if len(set(a.pseudonyms.values())) != len(enemies):
        raise IllegalAction("Each pseudonym only once")
    _check_place(state, a.square, a.container)
    filing = Filing(tuple(sorted(a.pseudonyms.items())), a.square, a.container)
    state = replace(
        state, filing=filing, phase="flight", turn=state.turn + 1, pending=("",) * state.players
    )
    return state, [Event("filed", {"seat": a.seat}), Event("flight", {"fugitive": a.seat})]


def _check_place(state: UltraState, square: str, container: str) -> None:
    """A filed place must be able to hold a card; what it holds is not checked (unseen)."""
    if square in HOTELS:
        if container not in ("suitcase", "briefcase"):
            raise IllegalAction("Pick the suitcase or the briefcase")
    elif square in STATIONS:
        if container not in COLOURS:
            raise IllegalAction("Name the colour of a full locker")
        if place_card(state, square, container) is None:
            raise IllegalAction("That locker is empty")
    elif square in SECRET_PLACES:
        if container:
            raise IllegalAction("A G square holds one card: name the square")
    else:
        raise IllegalAction("Name the place of a formula card")


def _flight_move(state: UltraState) -> tuple[UltraState, list[Event]]:
    """One flight turn: agents move (or stay); capture, then escape, is checked."""
    dials = state.pending
    allowed = FLIGHT_SQUARES[state.players]
    agents = tuple(d if d in allowed else "" for d in dials)
    f = state.fugitive
    here = agents[f]
    enemies = sum(1 for s, a in enumerate(agents) if s != f and here and a == here)
    alone = state.alone
    outcome = ""
    if enemies >= CAPTURE_ENEMIES:
        outcome = "caught"
    elif here and enemies == 0:
        alone += 1
        if here == "F1" or alone >= ESCAPE_ALONE:
            outcome = "escaped" if _filing_right(state) else "escaped-wrong"
    state = replace(state, agents=agents, revealed=dials, alone=alone, notes=())
    events = [Event("revealed", {"dials": list(dials), "agents": list(agents)})]
    if outcome:
        events.append(Event("over", {"outcome": outcome}))
        return replace(
            state, outcome=outcome, phase="over", pending=(_NOT_NEEDED,) * state.players
        ), events
    return replace(state, turn=state.turn + 1, pending=("",) * state.players), events


_HANDLERS: dict[type[Action], Callable[[UltraState, Any], tuple[UltraState, list[Event]]]] = {
    Hide: _hide,
    Bug: _bug,
    Declare: _declare,
    Pass: _pass,
    Dial: _dial,
    Informant: _informant,
    Search: _search,
    Open: _open,
    Read: _read,
    File: _file,
}


# ---------------------------------------------------------------- legal actions


def _legal(state: UltraState, seat: int) -> list[Action]:
    if not 0 <= seat < state.players or state.pending[seat] != _WAIT:
        return []
    phase = state.phase
    out: list[Action] = []
    if phase == "hide":
        for perm in itertools.permutations(KINDS):
            out += [Hide(seat, perm[0], perm[1], perm[2], st) for st in STATIONS]
    elif phase == "bug":
        if _must_declare(state, seat):
            return [Declare(seat)]
        out.append(Pass(seat))
        if state.options.declare == "any":
            out.append(Declare(seat))
        if not state.bugs[seat]:
            out += [Bug(seat, sq) for sq in BUG_SQUARES]
    elif phase in ("dial", "flight"):
        squares = DIAL_CODES if state.options.dial == "free" else open_squares(state, seat)
        out += [Dial(seat, sq) for sq in squares]
    elif phase == "informant":
        out.append(Pass(seat))
        out += [Informant(seat, sq) for sq in INFORMANT_SQUARES if sq != state.informants[seat]]
    elif phase == "search":
        out += [Pass(seat), *_legal_search(state, seat)]
    elif phase == "file":
        out += _legal_files(state, seat)
    return out


def _legal_search(state: UltraState, seat: int) -> list[Action]:
    kind = search_kind(state, seat)
    here = state.agents[seat]
    if kind == "hotel":
        slots: list[str | None] = ["suitcase", "briefcase"]
        if not _informed(state, here):
            slots.insert(0, None)
        return [Search(seat, sl) for sl in slots]
    if kind == "lockers":
        full = _lockers_at(state, here, seat)
        sizes = (1,) if _informed(state, here) else (1, 2)
        return [Open(seat, combo) for k in sizes for combo in itertools.combinations(full, k)]
    hand = state.hands[seat]
    out: list[Action] = [Read(seat, (here,))] if here in hand else []
    pairs = sorted(set(itertools.combinations(hand, 2)))
    out += [Read(seat, pair) for pair in pairs if _useless(state, seat, pair)]
    return out


def _legal_files(state: UltraState, seat: int) -> list[Action]:
    """Not every filing (there are thousands): the sheet's best answer and two wrong ones.

    The best place is where the sheet saw the true formula card; unknown, the seat's
    own formula card (a guess); the wrong one is a G square (a fake, always wrong).
    """
    know = knowledge(state, seat)
    enemies = [c for c in colours_for(state.players) if c != COLOURS[seat]]
    free = [p for p in PSEUDONYMS if p not in know.pseudonyms.values()]
    names = {}
    for c in enemies:
        names[c] = know.pseudonyms.get(c) or free.pop(0)
    place = know.formula_at or _own_formula_place(state, seat)
    swapped = dict(names)
    swapped[enemies[0]], swapped[enemies[1]] = names[enemies[1]], names[enemies[0]]
    return [File(seat, names, *place), File(seat, names, "G1"), File(seat, swapped, *place)]


def _own_formula_place(state: UltraState, seat: int) -> tuple[str, str]:
    own, colour = state.stashes[seat], COLOURS[seat]
    if own.locker == own.formula:
        return own.at, colour
    return hotel_of(colour), "suitcase" if own.suitcase == own.formula else "briefcase"


# ---------------------------------------------------------------- views


def _public(state: UltraState) -> JSON:
    players = state.players
    table: JSON = {
        "game": "ultra-secret",
        "players": players,
        "colours": list(colours_for(players)),
        "options": {"dial": state.options.dial, "declare": state.options.declare},
        "phase": state.phase,
        "turn": state.turn,
        "acted": [p != _WAIT for p in state.pending],
        "waiting": [s for s, p in enumerate(state.pending) if p == _WAIT],
        "agents": [a or None for a in state.agents],
        "informants": [i or None for i in state.informants],
        "bugs": [b or None for b in state.bugs],
        "lockers": (
            {c: st.at for c, st in zip(COLOURS, state.stashes, strict=True)}
            if state.phase != "hide"
            else {
                c: st.at
                for c, st in zip(COLOURS, state.stashes, strict=True)
                if c not in colours_for(players)
            }
        ),
        "moles": [len(h) for h in state.hands],
        "deck": len(state.deck),
        "discard": len(state.discard),
        "revealed": [d or None for d in state.revealed],
        "notes": [
            {"seat": n.seat, "square": n.square or None, "act": n.act, "detail": list(n.detail)}
            for n in state.notes
        ],
        "open": list(
            FLIGHT_SQUARES[players] if state.fugitive >= 0 else investigation_squares(players)
        ),
        "declared": list(state.declared),
        "sums": {str(d): v for d, v in zip(state.declared, state.sums, strict=True)},
        "fugitive": state.fugitive if state.fugitive >= 0 else None,
        # The formula card is taken off the board in view of all (§6.1): where from is
        # public at once (the card stays face down, the pseudonyms filed stay secret).
        "taken": (
            {"square": state.filing.square, "container": state.filing.container or None}
            if state.filing
            else None
        ),
        "alone": state.alone,
        "outcome": state.outcome or None,
        "pseudonyms": dict(PSEUDONYM_NAMES),
        "places": dict(PLACE_NAMES),
    }
    if state.phase == "over":
        table["end"] = {
            "stashes": {
                c: {
                    "suitcase": st.suitcase,
                    "briefcase": st.briefcase,
                    "locker": st.locker,
                    "at": st.at,
                }
                for c, st in zip(COLOURS, state.stashes, strict=True)
            },
            "fakes": dict(zip(SECRET_PLACES, state.fakes, strict=True)),
            "formula": state.formula,
            "filing": (
                {
                    "pseudonyms": dict(state.filing.pseudonyms),
                    "square": state.filing.square,
                    "container": state.filing.container,
                    "card": place_card(state, state.filing.square, state.filing.container),
                }
                if state.filing
                else None
            ),
        }
    return table


def _seat_view(state: UltraState, seat: int, public: JSON) -> JSON:
    own = state.stashes[seat]
    pending = state.pending[seat]
    dial = None
    if state.phase in ("dial", "flight") and pending:
        dial = pending
    elif state.phase == "informant":
        dial = state.dials[seat]
    choice = pending if state.phase in ("bug", "informant") and pending else None
    view: JSON = {
        "game": "ultra-secret",
        "seat": seat,
        "colour": COLOURS[seat],
        "table": public,
        "hidden": {
            "identity": own.identity,
            "formula": own.formula,
            "suitcase": own.suitcase or None,
            "briefcase": own.briefcase or None,
            "locker": own.locker or None,
            "at": own.at or None,
        },
        "moles": list(state.hands[seat]),
        "dial": dial,
        "choice": choice,
        "sheet": sheet_view(state, seat),
        "filing": None,
    }
    if seat == state.fugitive and state.filing is not None:
        view["filing"] = {
            "pseudonyms": dict(state.filing.pseudonyms),
            "square": state.filing.square,
            "container": state.filing.container,
        }
    return view


# ---------------------------------------------------------------- the game


INFO = GameInfo(
    id="ultra-secret",
    name=N_("Ultra Secret"),
    min_players=3,
    max_players=6,
    tie_break=N_("one side wins together"),
    sides=True,
    outcomes={
        "escaped": Outcome(
            N_("the fugitive escaped with everything right and wins"), N_("Escaped: he wins")
        ),
        "escaped-wrong": Outcome(
            N_("the fugitive escaped with a wrong filing: nobody wins"),
            N_("Escaped, filing wrong"),
        ),
        "caught": Outcome(
            N_("the fugitive was caught: the others win together"), N_("Caught! Pursuers win")
        ),
    },
    phases={
        "hide": Phase(N_("Hide"), N_("Hide")),
        "bug": Phase(N_("Bug"), N_("Bug")),
        "dial": Phase(N_("Dial"), N_("Dial")),
        "informant": Phase(N_("Informant"), N_("Informant")),
        "search": Phase(N_("Search"), N_("Search")),
        "file": Phase(N_("File"), N_("File")),
        "flight": Phase(N_("Flight"), N_("Flight")),
        "over": Phase(N_("Over"), N_("Over")),
    },
    options=(
        Option(
            "dial",
            "choice",
            "strict",
            N_("Dial"),
            choices=DIAL_MODES,
            values={"strict": N_("strict"), "free": N_("free")},
            menu=DIAL_MODES,
        ),
        Option("declare", "choice", "known", N_("Declare"), choices=DECLARE_MODES, panel=False),
    ),
    # --- the table display between games
    summary=N_(
        "Each agent hides an identity, a toothbrush and the formula in a suitcase, a "
        "briefcase and a locker. Turn after turn, bug, dial a square and move informants "
        "to search the others' luggage. Know every pseudonym and the formula? Declare: "
        "the fugitive files and flees. Two agents on the fugitive's square catch them."
    ),
)


class UltraSecret(BaseGame[UltraState]):
    """The Ultra Secret engine."""

    info = INFO

    def __init__(self) -> None:
        self.state_type = UltraState
        self.action_type = UltraAction

    def context(self, public: JSON) -> JSON:
        """The shared keys; the agents' colours are the game's own, not the stations'."""
        return {**super().context(public), "colours": public.get("colours")}

    def setup(self, players: int, options: Mapping[str, Any], seed: int) -> UltraState:
        """Deal identities, toothbrushes and formulas; hide the true formula; shuffle moles."""
        self.check_players(players)
        parsed = INFO.parse(options, players)
        dial, declare = parsed["dial"], parsed["declare"]
        rng = Rng(seed)
        identities, rng = rng.shuffle(PSEUDONYMS)
        formulas, rng = rng.shuffle(FORMULAS)
        fakes, rng = rng.shuffle(FORMULAS)
        deck, rng = rng.shuffle(tuple(g for g in SECRET_PLACES for _ in range(MOLES_PER_PLACE)))
        stashes = []
        for i in range(len(COLOURS)):
            st = Stash(identities[i], formulas[i])
            if i >= players:  # a missing colour: its three cards hidden at random
                layout, rng = rng.shuffle((st.identity, TOOTHBRUSH, st.formula))
                at, rng = rng.choice(STATIONS)
                st = replace(st, suitcase=layout[0], briefcase=layout[1], locker=layout[2], at=at)
            stashes.append(st)
        empty = ("",) * players
        return UltraState(
            players=players,
            seed=seed,
            rng=rng,
            options=Options(dial, declare),
            stashes=tuple(stashes),
            formula=fakes[0],
            fakes=fakes[1:],
            deck=deck,
            hands=((),) * players,
            agents=empty,
            informants=empty,
            bugs=empty,
            pending=empty,
            revealed=empty,
            dials=empty,
            sheets=((),) * players,
        )

    def legal_actions(self, state: UltraState, seat: int | None) -> list[Action]:
        """The seat's choices now (a table seat None has none: nothing is timed)."""
        if seat is None or state.phase == "over":
            return []
        return _legal(state, seat)

    def apply(self, state: UltraState, action: Action) -> tuple[UltraState, list[Event]]:
        """Check and apply one action; every check runs before any change."""
        handler = _HANDLERS.get(type(action))
        if handler is None:
            raise IllegalAction("Not an Ultra Secret action")
        if state.phase == "over":
            raise IllegalAction("The game is over")
        new, events = handler(state, action)
        return replace(new, version=state.version + 1), events

    def public_view(self, state: UltraState) -> JSON:
        """The public table: board, lockers, notes, what was declared; all at the end."""
        return _public(state)

    def seat_view(self, state: UltraState, seat: int, public: JSON) -> JSON:
        """A seat's station: sheet, own cards, moles, own dial; ``public`` as its ``table``."""
        if not 0 <= seat < state.players:
            raise IllegalAction("No such seat")
        return _seat_view(state, seat, public)

    def is_over(self, state: UltraState) -> bool:
        """Over once the flight has ended (escape or capture)."""
        return state.phase == "over"

    def scores(self, state: UltraState) -> list[int]:
        """1 to each winner: the fugitive who escaped with all right, or every pursuer."""
        n = state.players
        if state.outcome == "escaped":
            return [1 if s == state.fugitive else 0 for s in range(n)]
        if state.outcome == "caught":
            return [0 if s == state.fugitive else 1 for s in range(n)]
        return [0] * n

    def ranking(self, state: UltraState) -> list[list[int]]:
        """Winners first, everyone else shares the next place (all tied when nobody won)."""
        return shared_ranking(self.scores(state))


GAME = UltraSecret()
