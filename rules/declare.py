"""A game declares itself once: :class:`GameInfo`, with its options as data.

Each engine module holds one ``INFO = GameInfo(...)``: its id, names, player range, tie-break,
phase labels, result bands, how its ends and sides read, and options. ``setup()`` parses its
options through :meth:`GameInfo.parse`; the host menu, ``coffre play -o``, ``coffre host -o`` and
``coffre sim -o`` all build from the same declaration, so an option is spelled in one place.

Texts here are message ids (English, marked with :func:`N_` so the catalogue tool finds
them); the table says them in its own language. The rules never translate anything.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rules.errors import BadOptions, check_options


def N_(msgid: str, /) -> str:
    """Mark a text for the catalogue; the table translates it when it says it."""
    return msgid


def stem(game_id: str) -> str:
    """The file-name stem of every piece of a game: its engine ``rules/<stem>.py``, binding,
    bots, board and test helpers (``secret-identity`` -> ``secret_identity``)."""
    return game_id.replace("-", "_")


def piece_module(package: str, game_id: str) -> str:
    """The module holding a game's piece in ``package`` (``rules``,
    ``firmware.hub.bindings``...): ``<package>.<stem>``."""
    return f"{package}.{stem(game_id)}"


@dataclass(frozen=True)
class Option:
    """One game option: its name, default, what it may be and how the host reads it.

    ``kind`` says what values it takes:
    - ``choice``: one of ``choices`` (strings);
    - ``number``: an integer in ``[lo, hi]``;
    - ``seconds``: a number of seconds in ``[lo, hi]`` (0 reads "off"; may be a float);
    - ``flag``: true or false;
    - ``seat``: a seat of the game (0 to players - 1);
    - ``cards``: a card set, by name or as data (the engine reads it; see ``pin_options``).

    ``menu`` lists the values the host panel offers, first the default (a ``seat`` or
    ``cards`` option gets its values from the table); ``panel=False`` keeps an option off
    the panel (set from the command line or a script only).
    ``from_players``: the option exists only from this many players (the panel hides
    it below, and a true flag is refused below).
    ``table_language``: a ``choice`` of languages whose default is the one the table
    speaks (a host's explicit choice still wins); ``default`` serves where no table speaks.
    """

    name: str
    kind: str
    default: Any
    label: str
    choices: tuple[str, ...] = ()
    values: Mapping[str, str] = field(default_factory=dict)
    lo: float = 0
    hi: float = math.inf
    menu: tuple[Any, ...] = ()
    from_players: int = 0
    #: The refusal when a flag is set below ``from_players`` (English; names the rule).
    too_few: str = ""
    #: A ``seconds`` option that takes whole seconds only.
    whole: bool = False
    panel: bool = True
    table_language: bool = False

    def parse(self, value: Any, players: int) -> Any:
        """``value`` checked against the option (BadOptions says what it must be)."""
        check = _CHECKS[self.kind]
        return check(self, value, players)

    def on_panel(self, players: int) -> bool:
        """Whether the host panel shows this option for a table of ``players``."""
        return self.panel and players >= self.from_players

    def from_text(self, raw: str) -> Any:
        """A command-line value (``-o name=raw``) as the option's type, before checking:
        JSON where it parses (numbers, ``true``, a card set as an object), a flag's words
        (``yes``/``on``, ``no``/``off``), else the text as typed."""
        try:
            return json.loads(raw)
        except ValueError:
            pass
        words = {"yes": True, "on": True, "no": False, "off": False}
        if self.kind == "flag" and raw.strip().lower() in words:
            return words[raw.strip().lower()]
        return raw


def _choice(opt: Option, value: Any, players: int) -> Any:
    if value not in opt.choices:
        raise BadOptions(f"{opt.name} must be {' or '.join(opt.choices)}")
    return value


def _number(opt: Option, value: Any, players: int) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or not opt.lo <= value <= opt.hi:
        raise BadOptions(f"{opt.name} must be {_span(opt)}")
    return value


def _seconds(opt: Option, value: Any, players: int) -> Any:
    kinds = int if opt.whole else int | float
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not opt.lo <= value <= opt.hi:
        raise BadOptions(f"{opt.name} must be {_span(opt)} seconds")
    return value


def _flag(opt: Option, value: Any, players: int) -> Any:
    if not isinstance(value, bool):
        raise BadOptions(f"{opt.name} must be true or false")
    if value and players < opt.from_players:
        raise BadOptions(opt.too_few or f"{opt.name} is for {opt.from_players}+ players")
    return value


def _seat(opt: Option, value: Any, players: int) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < players:
        raise BadOptions(f"{opt.name} must be a seat from 0 to {players - 1}")
    return value


def _cards(opt: Option, value: Any, players: int) -> Any:
    if not isinstance(value, str | Mapping):
        raise BadOptions(f"{opt.name} is a card set name or a card set")
    return value


def _span(opt: Option) -> str:
    lo = int(opt.lo) if float(opt.lo).is_integer() else opt.lo
    if math.isinf(opt.hi):
        return f">= {lo}"
    hi = int(opt.hi) if float(opt.hi).is_integer() else opt.hi
    return f"{lo}-{hi}"


_CHECKS: dict[str, Callable[[Option, Any, int], Any]] = {
    "choice": _choice,
    "number": _number,
    "seconds": _seconds,
    "flag": _flag,
    "seat": _seat,
    "cards": _cards,
}


@dataclass(frozen=True)
class Phase:
    """A phase's label: ``long`` where there is room (the table display), ``short`` on a
    128x64 glass (station and hub screens)."""

    long: str
    short: str


@dataclass(frozen=True)
class Band:
    """A result band (co-op games): scores ``lo``..``hi`` read ``text`` (``short`` on a glass)."""

    lo: int
    hi: int
    text: str
    short: str


@dataclass(frozen=True)
class Outcome:
    """How one way a game ends reads: ``long`` where there is room (the table display),
    ``short`` on a 128x64 glass (at most 21 characters)."""

    long: str
    short: str


@dataclass(frozen=True)
class Side:
    """One side of a team game, in every form a screen needs: ``name`` ("Humans", on the
    table display), ``wins`` (its victory on a glass), ``word`` (a card's or a seat's side
    after its name, "(human)") and ``letter`` (one letter before a card's name: "(H)")."""

    name: str
    wins: str
    word: str = ""
    letter: str = ""


@dataclass(frozen=True)
class GameInfo:
    """What a game is, said once (see the module docstring)."""

    id: str
    name: str
    min_players: int
    max_players: int
    tie_break: str
    phases: Mapping[str, Phase]
    options: tuple[Option, ...] = ()
    bands: tuple[Band, ...] = ()
    #: The winners are a side, together (no ranking of every seat at the end).
    sides: bool = False
    #: How each end of the game reads (``outcome`` in the public view).
    outcomes: Mapping[str, Outcome] = field(default_factory=dict)
    #: Each side's words (a winning side, a card's or a seat's side), by side id.
    side_words: Mapping[str, Side] = field(default_factory=dict)

    # --- what the table display says between games -------------------------------------
    #: The game's rules on one card (a message id, a few plain sentences): the idle table
    #: display shows it for the game the host has picked. Said here once, translated in
    #: the catalogue; tests/layout/test_games_complete.py names a game without one.
    summary: str = ""

    def __post_init__(self) -> None:
        names = [o.name for o in self.options]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: an option is declared twice")
        for opt in self.options:
            if opt.kind not in _CHECKS:
                raise ValueError(f"{self.id}: option {opt.name} has an unknown kind {opt.kind}")
            if opt.panel and not opt.menu and opt.kind not in ("seat", "cards"):
                raise ValueError(f"{self.id}: option {opt.name} is on the panel with no values")

    @property
    def stem(self) -> str:
        """The file-name stem of every piece of the game (see :func:`stem`)."""
        return stem(self.id)

    def option(self, name: str) -> Option:
        for opt in self.options:
            if opt.name == name:
                return opt
        raise BadOptions(f"Unknown option: {name}")

    def check_players(self, players: int) -> None:
        """Refuse a player count outside the game's range."""
        if not self.min_players <= players <= self.max_players:
            raise BadOptions(f"{self.name} is for {self.min_players}-{self.max_players} players")

    def parse(self, options: Mapping[str, Any], players: int) -> dict[str, Any]:
        """Every option, checked, with defaults filled in; an unknown one is refused."""
        check_options(options, (o.name for o in self.options))
        return {
            opt.name: opt.parse(options.get(opt.name, opt.default), players) for opt in self.options
        }

    def table_defaults(self, language: str) -> dict[str, Any]:
        """The defaults a table speaking ``language`` gives (options that follow its
        language); a start's options go over them."""
        return {
            opt.name: language
            for opt in self.options
            if opt.table_language and language in opt.choices
        }

    def from_text(self, pairs: Mapping[str, str]) -> dict[str, Any]:
        """Command-line ``name=value`` pairs as typed option values (not yet checked)."""
        return {name: self.option(name).from_text(raw) for name, raw in pairs.items()}

    def phase(self, phase: str) -> Phase | None:
        return self.phases.get(phase)

    def outcome(self, outcome: str) -> Outcome | None:
        return self.outcomes.get(outcome)

    def side(self, side: str) -> Side | None:
        return self.side_words.get(side)

    def band(self, score: int) -> Band | None:
        for band in self.bands:
            if band.lo <= score <= band.hi:
                return band
        return None
