"""Card data for Identités cryptées 2.0: schema, loading and checks.

A card set is one JSON file: shipped ones under ``rules/data/identites-cryptees/``,
an owner's own in any directory (:func:`card_sets_in`, :func:`read_card_set`); its
schema is documented in ``SCHEMA.md`` beside the shipped ones. The engine only ever
sees :class:`Cards`, whose card lists are expanded to one entry per physical card so
that a state can name a card by its index.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from rules.declare import N_, Side

Faction = Literal["human", "machine", "outlaw", "legion", "fallen"]
FACTIONS: tuple[str, ...] = ("human", "machine", "outlaw", "legion", "fallen")
#: Each side in words (declared in the game's ``INFO``); "nobody" wins when nobody lives.
SIDES: Mapping[str, Side] = {
    "human": Side(N_("Humans"), N_("Humans win"), N_("human"), N_("H|side")),
    "machine": Side(N_("Machines"), N_("Machines win"), N_("machine"), N_("M|side")),
    "outlaw": Side(N_("Outlaws"), N_("An Outlaw wins"), N_("outlaw"), N_("O|side")),
    "legion": Side(N_("the Legion"), N_("The Legion wins"), N_("Legion"), N_("L|side")),
    "fallen": Side(N_("the Fallen"), N_("The Fallen win"), N_("Fallen"), N_("F|side")),
    "nobody": Side(N_("nobody"), N_("Nobody wins")),
}
PILES: tuple[str, ...] = ("human", "machine", "outlaw")
MIN_PLAYERS = 4
MAX_PLAYERS = 16
SHARED_FROM = 9  # from this many players, neighbours share one loyalty card

EffectKind = Literal[
    "peek",
    "reveal",
    "hit",
    "damage",
    "heal",
    "draw",
    "steal",
    "swap",
    "unlock",
    "change_faction",
    "skip_turn",
    "disarm",
    "armor",
    "revive",
    "hand_limit",
]
#: Effects that act on another player, so the card needs a ``target``.
TARGETED: frozenset[str] = frozenset(
    {"peek", "reveal", "hit", "damage", "steal", "swap", "skip_turn", "disarm"}
)
#: Effects that may act on oneself or on a chosen player.
EITHER: frozenset[str] = frozenset({"heal", "change_faction"})
#: Effects about the player who owns the card and nobody else.
SELF_ONLY: frozenset[str] = frozenset({"draw", "unlock", "armor", "hand_limit"})
#: Passive effects: they last while their card is face up (an ID) or in play (a
#: permanent program), instead of happening once.
PASSIVE: frozenset[str] = frozenset({"armor", "hand_limit"})
#: Effects that may be aimed at an eliminated player (``who: eliminated``).
AT_ELIMINATED: frozenset[str] = frozenset({"revive", "change_faction"})


# Bounds on a card set, far above any printed box (the shipped set: 24 IDs, 6 loyalty
# and 18 program entries, counts up to 6, names of 19 characters, texts of 175), so that
# a mistaken or hostile file is refused when it is read instead of stalling the hub
# (a count of millions) or making views the broker refuses (texts of thousands of
# characters). Documented in rules/docs/identites-cryptees.md, "Card data".
MAX_FILE_BYTES = 256 * 1024
MAX_SETS = 100  # files listed from an owner's directory
MAX_KEY = 32  # characters of a card's key
MAX_NAME = 40  # characters of a card's name, per language
MAX_TEXT = 300  # characters of a card's text, per language
MAX_LABEL = 120  # the set's label
MAX_NOTICE = 2000  # the set's notice
MAX_CARDS = 64  # entries in each card list (IDs, loyalty, programs, weapons)
MAX_COUNT = 32  # copies of one card
MAX_DECK = 256  # loyalty (and program) cards once copies are counted
MAX_EFFECTS = 8  # effects of one card
MAX_NUMBER = 99  # amount, weight, damage, heal, unlock count, players

Key = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_KEY)]
Name = Annotated[str, msgspec.Meta(max_length=MAX_NAME)]
Words = Annotated[str, msgspec.Meta(max_length=MAX_TEXT)]
Number = Annotated[int, msgspec.Meta(ge=0, le=MAX_NUMBER)]
Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
Effects = Annotated[tuple["Effect", ...], msgspec.Meta(max_length=MAX_EFFECTS)]


class DataError(ValueError):
    """A card-set file that breaks the schema or cannot set up a game."""


#: The languages a card's words may be written in (a table speaks one of them).
LANGUAGES: tuple[str, ...] = ("en", "fr")


class Texts(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A card's text per language (``{"en": "...", "fr": "..."}``)."""

    en: Words = ""
    fr: Words = ""


class Names(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A card's name per language (``{"en": "Pistol", "fr": "Pistolet"}``)."""

    en: Name = ""
    fr: Name = ""


#: A card's words: one string (a set written in one language: the same at every table)
#: or the words per language. The engine never picks: the table speaks its language.
Text = Words | Texts
#: A card's name, the same way (shorter: it goes on a 128x64 screen).
CardName = Name | Names


def words(text: Text | CardName) -> str | dict[str, str]:
    """A card's words as the views carry them: the string, or ``{language: words}``."""
    if isinstance(text, str):
        return text
    return {code: getattr(text, code) for code in LANGUAGES if getattr(text, code)}


def written(text: Text | CardName) -> bool:
    """Whether ``text`` has words in at least one language."""
    return bool(words(text))


class Effect(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One step of a card ability (see SCHEMA.md for each ``do``)."""

    do: EffectKind
    who: Literal["self", "other", "any", "eliminated"] = "self"
    card: Literal["loyalty", "id"] = "loyalty"
    amount: Number = 1
    weapon: Key | None = None
    to: Faction | None = None


class IdCard(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An ID card: its pile, the colour it counts as, an optional "always"."""

    key: Key
    name: CardName
    pile: Literal["human", "machine", "outlaw"]
    colour: Faction | None = None
    always: Faction | None = None
    boss: bool = False
    extension: Literal["legion"] | None = None
    text: Text = ""
    effects: Effects = ()

    @property
    def counts_as(self) -> str:
        """The colour this card adds to the faction count."""
        return self.colour or self.pile


class LoyaltyCard(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A loyalty card: a colour and a weight (2 for the "x2" cards)."""

    key: Key
    name: CardName
    colour: Faction
    weight: Number = 1
    count: Count = 1
    extension: Literal["legion"] | None = None
    always: Faction | None = None


class Instead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A program's other effects from ``players_from`` players, when ``weapon`` (if
    named) is on the table (« ... de la même manière que le Programme Pourriel »)."""

    effects: Effects
    players_from: Number = SHARED_FROM
    weapon: Key | None = None


class ProgramCard(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A program card; ``loyalty`` set makes it a hidden-loyalty card."""

    key: Key
    name: CardName
    timing: Literal["anytime", "turn", "permanent"]
    text: Text = ""
    count: Count = 1
    red_dot: bool = False
    loyalty: Faction | None = None
    weight: Number = 1
    effects: Effects = ()
    instead: Instead | None = None


class Unlock(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """When a locked weapon may be taken (see SCHEMA.md)."""

    kind: Literal["open", "own_revealed", "eliminated", "hp_at_most", "program"] = "open"
    count: Number = 0


class WeaponCard(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A weapon: how it aims, what a hit asks of its target, what follows."""

    key: Key
    name: CardName
    min_players: Number = MIN_PLAYERS
    aim: Literal["equip", "fire"] = "equip"
    targets: Literal[1, 2] = 1
    reveal: Literal["loyalty", "id"] = "loyalty"
    damage: Number = 1
    heal: Number = 0
    draw: bool = False
    unlock: Unlock = Unlock()
    text: Text = ""


class Piles(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How many cards of each colour pile a setup row takes."""

    human: Number
    machine: Number
    outlaw: Number

    def get(self, pile: str) -> int:
        """The count for ``pile``."""
        value: int = getattr(self, pile)
        return value

    def total(self) -> int:
        """Cards taken over the three piles."""
        return self.human + self.machine + self.outlaw


class SetupRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The setup table row for one player count."""

    players: Number
    ids: Piles
    loyalty: Piles
    weapons: Annotated[tuple[Key, ...], msgspec.Meta(max_length=MAX_CARDS)] | None = (
        None  # the weapons on the table (default: min_players)
    )


class CardSet(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A whole card set as stored in its JSON file."""

    name: Key
    label: Annotated[str, msgspec.Meta(max_length=MAX_LABEL)]
    generic: bool
    setup: Annotated[tuple[SetupRow, ...], msgspec.Meta(max_length=MAX_PLAYERS + 1)]
    ids: Annotated[tuple[IdCard, ...], msgspec.Meta(max_length=MAX_CARDS)]
    loyalty: Annotated[tuple[LoyaltyCard, ...], msgspec.Meta(max_length=MAX_CARDS)]
    programs: Annotated[tuple[ProgramCard, ...], msgspec.Meta(max_length=MAX_CARDS)]
    weapons: Annotated[tuple[WeaponCard, ...], msgspec.Meta(max_length=MAX_CARDS)]
    notice: Annotated[str, msgspec.Meta(max_length=MAX_NOTICE)] = ""


class Cards(msgspec.Struct, frozen=True):
    """A checked card set with one entry per physical card (index = card id)."""

    name: str
    label: str
    generic: bool
    setup: tuple[SetupRow, ...]
    ids: tuple[IdCard, ...]
    loyalty: tuple[LoyaltyCard, ...]
    programs: tuple[ProgramCard, ...]
    weapons: tuple[WeaponCard, ...]

    @property
    def rows(self) -> dict[int, SetupRow]:
        """The setup table by player count (a state carries ``setup``: plain JSON)."""
        return {row.players: row for row in self.setup}

    def weapon(self, key: str) -> WeaponCard:
        """The weapon card called ``key``."""
        for card in self.weapons:
            if card.key == key:
                return card
        raise KeyError(key)


def card_sets() -> tuple[str, ...]:
    """Names of the card sets shipped as package data."""
    folder = resources.files("rules") / "data" / "identites-cryptees"
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json")))


def package_set_json(name: str) -> dict[str, Any]:
    """The JSON object of the shipped card set ``name``."""
    if name not in card_sets():
        raise DataError(f"Unknown card set: {name}")
    path = resources.files("rules") / "data" / "identites-cryptees" / f"{name}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@functools.cache
def load(name: str) -> Cards:
    """Load, check and expand the card set ``name`` (read-only package data)."""
    return from_json(package_set_json(name), f"{name}.json")


def from_json(data: Mapping[str, Any], where: str = "card set") -> Cards:
    """Check and expand a card set given as its JSON object (a file's content).

    Any mistake is one line naming ``where`` and the field: ``big.json: loyalty[0].count:
    expected `int` <= 32``.
    """
    try:
        return check(msgspec.convert(data, type=CardSet))
    except msgspec.ValidationError as exc:
        what, _, field = str(exc).partition(" - at `$")
        place = field.rstrip("`").lstrip(".")
        what = what[:1].lower() + what[1:]
        raise DataError(f"{where}: {place}: {what}" if place else f"{where}: {what}") from None
    except DataError as exc:
        raise DataError(f"{where}: {exc}") from None


def card_sets_in(directory: str | os.PathLike[str]) -> dict[str, Path]:
    """The card-set files (``<name>.json``) in an owner's directory, by name.

    A missing directory has none; past :data:`MAX_SETS` files, or with a name longer
    than :data:`MAX_KEY`, a file is not listed. Files are not read here: :func:`read_card_set`
    reads and checks the one a host picks.
    """
    folder = Path(directory)
    if not folder.is_dir():
        return {}
    # A name goes on the host's menu: at most MAX_KEY characters, and MAX_SETS of them.
    files = (p for p in sorted(folder.glob("*.json")) if len(p.stem) <= MAX_KEY and p.is_file())
    return {p.stem: p for p in itertools.islice(files, MAX_SETS)}


def read_card_set(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read one card-set file and check it against the schema and the rules.

    Returns its JSON object, which is what the engine's ``cards`` option takes, so a
    game's record holds the cards themselves and replays without the file.
    """
    file = Path(path)
    try:
        with file.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_FILE_BYTES else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise DataError(f"{file.name}: {str(exc)[:200] or type(exc).__name__}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise DataError(f"{file.name}: more than {MAX_FILE_BYTES // 1024} KiB, not a card set")
    if not isinstance(data, dict):
        raise DataError(f"{file.name}: a card set is a JSON object")
    from_json(data, file.name)
    return data


def check(raw: CardSet) -> Cards:
    """Check a decoded card set against the rules; expand card counts."""
    weapons = {w.key for w in raw.weapons}
    if len(weapons) != len(raw.weapons):
        raise DataError("weapon keys must be unique")
    for kind, cards in (
        ("ID", raw.ids),
        ("loyalty card", raw.loyalty),
        ("program", raw.programs),
        ("weapon", raw.weapons),
    ):
        for card in cards:
            if not written(card.name):
                raise DataError(f"{kind} {card.key}: its name has no words in any language")
    for card in raw.ids:
        for eff in card.effects:
            _check_effect(eff, weapons, f"ID {card.key}")
        if sum(1 for e in card.effects if _uses_slot(e)) > 1:
            raise DataError(f"ID {card.key}: at most one effect may pick a card")
    for prog in raw.programs:
        alternatives = [prog.effects]
        if prog.instead is not None:
            alternatives.append(prog.instead.effects)
            if prog.instead.weapon is not None and prog.instead.weapon not in weapons:
                raise DataError(f"program {prog.key}: instead names no weapon of the set")
        for effects in alternatives:
            for eff in effects:
                _check_effect(eff, weapons, f"program {prog.key}")
            if sum(1 for e in effects if _uses_slot(e)) > 1:
                raise DataError(f"program {prog.key}: at most one effect may pick a card")
        if prog.loyalty is not None and (
            prog.effects or prog.instead or prog.timing != "permanent"
        ):
            raise DataError(f"program {prog.key}: hidden loyalty is permanent, no effects")
    for kind, entries in (("loyalty", raw.loyalty), ("programs", raw.programs)):
        copies = sum(card.count for card in entries)
        if copies > MAX_DECK:
            raise DataError(f"{kind}: {copies} cards once counted, more than {MAX_DECK}")
    loyalty = tuple(card for card in raw.loyalty for _ in range(card.count))
    programs = tuple(card for card in raw.programs for _ in range(card.count))
    rows = {row.players: row for row in raw.setup}
    for players in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        row = rows.get(players)
        if row is None:
            raise DataError(f"setup table has no row for {players} players")
        for key in row.weapons or ():
            if key not in weapons:
                raise DataError(f"{players} players: no weapon {key} in the set")
        _check_row(row, raw.ids, loyalty, programs)
    return Cards(
        name=raw.name,
        label=raw.label,
        generic=raw.generic,
        setup=tuple(rows[n] for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)),
        ids=raw.ids,
        loyalty=loyalty,
        programs=programs,
        weapons=raw.weapons,
    )


def _uses_slot(eff: Effect) -> bool:
    return eff.do in ("peek", "reveal", "swap")


def _check_effect(eff: Effect, weapons: set[str], where: str) -> None:
    if eff.do == "revive" and eff.who != "eliminated":
        raise DataError(f"{where}: revive aims at the eliminated (who=eliminated)")
    if eff.who == "eliminated" and eff.do not in AT_ELIMINATED:
        raise DataError(f"{where}: {eff.do} cannot aim at an eliminated player")
    if eff.do in TARGETED and eff.who == "self":
        raise DataError(f"{where}: {eff.do} needs who=other or any")
    if eff.do in SELF_ONLY and eff.who != "self":
        raise DataError(f"{where}: {eff.do} acts on its owner (who=self)")
    if eff.do == "unlock" and eff.weapon not in weapons:
        raise DataError(f"{where}: unlock names no weapon of the set")
    if eff.do == "change_faction" and eff.to is None:
        raise DataError(f"{where}: change_faction needs 'to'")
    if eff.amount < 0:
        raise DataError(f"{where}: amount must not be negative")


def _check_row(
    row: SetupRow,
    ids: tuple[IdCard, ...],
    loyalty: tuple[LoyaltyCard, ...],
    programs: tuple[ProgramCard, ...],
) -> None:
    n = row.players
    if row.ids.total() != n + 1:
        raise DataError(f"{n} players: the table must take {n + 1} ID cards")
    want = n if n >= SHARED_FROM else 2 * n
    if row.loyalty.total() != want:
        raise DataError(f"{n} players: the table must take {want} loyalty cards")
    for pile in PILES:
        have = sum(1 for c in ids if c.pile == pile and not c.boss and c.extension is None)
        if have < row.ids.get(pile):
            raise DataError(f"{n} players: too few {pile} ID cards")
        have = sum(1 for c in loyalty if c.colour == pile and c.extension is None)
        if have < row.loyalty.get(pile):
            raise DataError(f"{n} players: too few {pile} loyalty cards")
    usable = sum(1 for p in programs if not (p.red_dot and n >= SHARED_FROM))
    if usable < n:
        raise DataError(f"{n} players: too few program cards")
