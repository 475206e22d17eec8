"""Ultra Secret: board constants, state structs and the investigation sheet.

Package-private helper of :mod:`rules.ultra_secret` (the engine); kept apart so
the engine module stays about the phases.
"""

from __future__ import annotations

import json
from importlib import resources

import msgspec

from rules.core import GameState

COLOURS = ("red", "yellow", "green", "black", "lilac", "blue")
HOTELS = ("H1", "H2", "H3", "H4", "H5", "H6")
STATIONS = ("F1", "B1")
MOLE_SQUARES = ("V1", "V2", "V3")
SECRET_PLACES = ("G1", "G2", "G3", "G4", "G5")
TRANSPORT = ("VM1", "VM2", "VM3", "VM4", "VM5")
SQUARES = HOTELS + STATIONS + MOLE_SQUARES + SECRET_PLACES + TRANSPORT
#: What the physical dial can show: a letter part and a digit part.
DIAL_CODES = tuple(
    f"{letter}{d}" for letter in ("H", "F", "B", "V", "G", "VM") for d in range(1, 7)
)
BUG_SQUARES = HOTELS + SECRET_PLACES
INFORMANT_SQUARES = HOTELS + STATIONS
FLIGHT_SQUARES: dict[int, tuple[str, ...]] = {
    3: ("VM1", "VM2", "VM3", "F1"),
    4: ("VM1", "VM2", "VM3", "VM4", "F1"),
    5: ("VM1", "VM2", "VM3", "VM4", "VM5", "V1", "F1"),
    6: ("VM1", "VM2", "VM3", "VM4", "VM5", "V1", "V2", "F1"),
}
FORMULAS = ("X1", "X2", "X3", "X4", "X5", "X6")
PSEUDONYMS = ("P1", "P2", "P3", "P4", "P5", "P6")
TOOTHBRUSH = "toothbrush"
KINDS = ("identity", "toothbrush", "formula")
SLOTS = ("suitcase", "briefcase", "locker")
MOLES_PER_PLACE = 6
ESCAPE_ALONE = 5
CAPTURE_ENEMIES = 2
DIAL_MODES = ("strict", "free")
DECLARE_MODES = ("known", "any")

_DATA = json.loads(
    (resources.files("rules") / "data" / "ultra-secret" / "pseudonyms.json").read_text("utf-8")
)
#: Pseudonym code -> name printed on the identity card (data file, owner-editable).
PSEUDONYM_NAMES: dict[str, str] = dict(zip(PSEUDONYMS, _DATA["pseudonyms"], strict=True))
PLACE_NAMES: dict[str, str] = dict(_DATA["places"])


def colours_for(players: int) -> tuple[str, ...]:
    """Colours in play: at 5 blue goes, at 4 lilac too, at 3 black too."""
    return COLOURS[:players]


def hotel_of(colour: str) -> str:
    """The hotel square of a colour (H1 red ... H6 blue)."""
    return HOTELS[COLOURS.index(colour)]


def investigation_squares(players: int) -> tuple[str, ...]:
    """Squares open before the flight: V3 only at 5-6 players, never a VM square."""
    moles = MOLE_SQUARES if players >= 5 else MOLE_SQUARES[:2]
    return HOTELS + STATIONS + moles + SECRET_PLACES


def digit(square: str) -> int:
    """The digit of a square's coordinates; 0 for no square."""
    return int(square[-1]) if square else 0


class Options(msgspec.Struct, frozen=True):
    """Variants chosen at setup."""

    dial: str = "strict"
    declare: str = "known"


class Stash(msgspec.Struct, frozen=True):
    """One colour's three hidden cards: suitcase, briefcase (its hotel), locker at F1 or B1."""

    identity: str
    formula: str
    suitcase: str = ""
    briefcase: str = ""
    locker: str = ""
    at: str = ""

    def card(self, slot: str) -> str:
        """The card in ``slot`` (suitcase, briefcase or locker)."""
        value: str = getattr(self, slot)
        return value


class Seen(msgspec.Struct, frozen=True):
    """One line of an investigation sheet: a card shown to the seat.

    ``colour``/``slot`` say whose container (``slot`` is ``fake`` for a G square's
    fake formula and ``mole`` for a mole card drawn on a V square, colour then
    empty); ``how`` is ``search`` (own agent), ``bug``, ``informant`` or ``draw``;
    ``by`` is the seat whose agent searched (or drew).
    """

    turn: int
    square: str
    colour: str
    slot: str
    card: str
    how: str
    by: int


class Note(msgspec.Struct, frozen=True):
    """A public notice of what an agent did on the board this turn (never a card)."""

    seat: int
    square: str
    act: str
    detail: tuple[str, ...] = ()


class Filing(msgspec.Struct, frozen=True):
    """The fugitive's secret answers: a pseudonym per enemy colour and a formula card.

    The formula is the card taken from the board « sans la regarder »: named by its
    place, ``square`` and ``container`` (see :func:`place_card`).
    """

    pseudonyms: tuple[tuple[str, str], ...]
    square: str
    container: str = ""


class UltraState(GameState, frozen=True):
    """The whole table. Per-seat tuples are indexed by seat; ``stashes`` by colour (6)."""

    options: Options = Options()
    phase: str = "hide"
    turn: int = 0
    stashes: tuple[Stash, ...] = ()
    fakes: tuple[str, ...] = ()
    formula: str = ""
    deck: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    hands: tuple[tuple[str, ...], ...] = ()
    agents: tuple[str, ...] = ()
    informants: tuple[str, ...] = ()
    bugs: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    dials: tuple[str, ...] = ()
    revealed: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()
    sheets: tuple[tuple[Seen, ...], ...] = ()
    declared: tuple[int, ...] = ()
    #: Each declarer's digit sum (agent + informant + bug squares), in ``declared`` order:
    #: the table sees it decide who flees.
    sums: tuple[int, ...] = ()
    fugitive: int = -1
    filing: Filing | None = None
    alone: int = 0
    outcome: str = ""


class Knowledge(msgspec.Struct, frozen=True):
    """What a seat's sheet establishes, seen or deduced by elimination.

    ``formula_at`` is the place (square, container) where the seat saw the real
    formula card bearing the true code (or hid it itself), once the code is known.
    """

    pseudonyms: dict[str, str]
    fakes: dict[str, str]
    formula: str
    complete: bool
    formula_at: tuple[str, str] | None = None


def place_of(square: str, colour: str, slot: str) -> tuple[str, str]:
    """The filing notation of a stash container: a hotel bag, or a colour's locker."""
    return (square, colour) if slot == "locker" else (square, slot)


def place_card(state: UltraState, square: str, container: str) -> str | None:
    """The card lying at a place, or None if the place cannot hold one.

    Places: ``H1``-``H6`` with ``suitcase``/``briefcase``; ``F1``/``B1`` with the
    colour of a locker there that is full (public); ``G1``-``G5`` alone (its fake).
    """
    if square in HOTELS and container in ("suitcase", "briefcase"):
        return state.stashes[HOTELS.index(square)].card(container)
    if square in STATIONS and container in COLOURS:
        stash = state.stashes[COLOURS.index(container)]
        return stash.locker if stash.at == square else None
    if square in SECRET_PLACES and not container:
        return state.fakes[SECRET_PLACES.index(square)]
    return None


def knowledge(state: UltraState, seat: int) -> Knowledge:
    """Read a seat's sheet: known pseudonyms per colour, fakes, the true code.

    Each colour holds exactly one identity card, so once five colours' identities
    are known the sixth follows; once the five fakes are known the sixth fake code
    (the one drawn and hidden) is the true formula.
    """
    own = COLOURS[seat]
    idents: dict[str, str] = {own: state.stashes[seat].identity}
    fakes: dict[str, str] = {}
    for seen in state.sheets[seat]:
        if seen.slot == "fake":
            fakes[seen.square] = seen.card
        elif seen.card.startswith("P"):
            idents[seen.colour] = seen.card
    if len(idents) == len(COLOURS) - 1:
        (colour,) = (c for c in COLOURS if c not in idents)
        (code,) = (p for p in PSEUDONYMS if p not in idents.values())
        idents[colour] = code
    formula = ""
    if len(fakes) == len(SECRET_PLACES):
        (formula,) = (x for x in FORMULAS if x not in fakes.values())
    enemies = colours_for(state.players)
    complete = bool(formula) and all(c in idents for c in enemies)
    return Knowledge(idents, fakes, formula, complete, _formula_at(state, seat, formula))


def _formula_at(state: UltraState, seat: int, formula: str) -> tuple[str, str] | None:
    """Where the seat knows the real card of code ``formula`` lies (own stash or sheet)."""
    if not formula:
        return None
    own = state.stashes[seat]
    colour = COLOURS[seat]
    for slot in SLOTS:
        if own.card(slot) == formula:
            return place_of(own.at if slot == "locker" else hotel_of(colour), colour, slot)
    for seen in state.sheets[seat]:
        if seen.slot in SLOTS and seen.card == formula:
            return place_of(seen.square, seen.colour, seen.slot)
    return None


def sheet_view(state: UltraState, seat: int) -> dict[str, object]:
    """The investigation sheet as shown on a seat's station."""
    know = knowledge(state, seat)
    grid: dict[str, dict[str, str | None]] = {c: dict.fromkeys(SLOTS) for c in COLOURS}
    own = state.stashes[seat]
    grid[COLOURS[seat]] = {s: (own.card(s) or None) for s in SLOTS}
    entries = []
    for seen in state.sheets[seat]:
        if seen.colour:
            grid[seen.colour][seen.slot] = seen.card
        entries.append(
            {
                "turn": seen.turn,
                "square": seen.square,
                "colour": seen.colour or None,
                "slot": seen.slot,
                "card": seen.card,
                "how": seen.how,
                "by": seen.by,
            }
        )
    return {
        "entries": entries,
        "grid": grid,
        "fakes": {g: know.fakes.get(g) for g in SECRET_PLACES},
        "formula": know.formula or None,
        "pseudonyms": {c: know.pseudonyms.get(c) for c in COLOURS},
        "complete": know.complete,
        "formula_at": (
            {"square": know.formula_at[0], "container": know.formula_at[1]}
            if know.formula_at
            else None
        ),
    }
