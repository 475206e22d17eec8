"""The language layer: every text a player or host reads, in French or English.

Texts are gettext messages: the English text is the message id, written in code as
``_("Not your turn")`` (or ``plural("{n} picto", "{n} pictos", n)``), with ``{name}``
fields filled from keyword parameters. The catalogues live in ``locale/<lang>/LC_MESSAGES/``
(``coffre.po`` written by hand, ``coffre.mo`` compiled from it by
``python -m firmware.tools.catalogue``) and are read with the standard library's
``gettext``, so a station or a table display needs nothing more than the hub does.

The language is table-wide: the hub speaks a table's language while it handles that
table (:func:`speaking`), so the code that builds a screen never passes it around.
Engines raise refusals with an English message id and parameters; :func:`refusal`
turns one into the table's language.
"""

from __future__ import annotations

import gettext
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

#: The languages a table can speak; the first is the default of a table with none set.
LANGUAGES = ("en", "fr")
DOMAIN = "coffre"
LOCALE_DIR = Path(__file__).with_name("locale")

_current: ContextVar[str] = ContextVar("coffre_language", default=LANGUAGES[0])


def check_language(code: str) -> str:
    """``code`` if it is a language a table can speak, else a readable ValueError."""
    if code not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {code!r}")
    return code


@cache
def catalogue(code: str) -> gettext.NullTranslations:
    """The compiled catalogue of a language (loaded once)."""
    return gettext.translation(DOMAIN, localedir=LOCALE_DIR, languages=[check_language(code)])


def current() -> str:
    """The language spoken now."""
    return _current.get()


@contextmanager
def speaking(code: str) -> Iterator[None]:
    """Speak ``code`` inside the block (the hub wraps each table's work in this)."""
    token = _current.set(check_language(code))
    try:
        yield
    finally:
        _current.reset(token)


def _(msgid: str, /, **params: Any) -> str:
    """``msgid`` in the language spoken now, its ``{fields}`` filled from ``params``."""
    text = _translated(_current.get(), msgid)
    return text.format(**params) if params else text


@lru_cache(maxsize=4096)
def _translated(code: str, msgid: str) -> str:
    """One text looked up once: a hub builds a screen at every input, ~15 texts each, and
    gettext's look-up (a miss tries the plural form too) costs more than this cache's."""
    return catalogue(code).gettext(msgid)


def plural(singular: str, plural_: str, n: int, /, **params: Any) -> str:
    """The singular or plural text for ``n`` (``{n}`` is filled too)."""
    text = catalogue(current()).ngettext(singular, plural_, n)
    return text.format(n=n, **params)


def N_(msgid: str, /) -> str:
    """Mark ``msgid`` for the catalogue without translating it yet (module constants)."""
    return msgid


def label(labels: Mapping[str, str], key: str) -> str:
    """``labels[key]`` (an ``N_``-marked text) in the language spoken now; an unknown key
    reads as itself."""
    return _(labels[key]) if key in labels else key


def refusal(msgid: str, params: Mapping[str, Any] | None = None) -> str:
    """A refusal (an engine's or a binding's message id and parameters) in the table's language."""
    params = dict(params or {})
    # Parameters that are words themselves (a colour, a card) are spoken too.
    spoken = {k: _word(k, v) if isinstance(v, str) else v for k, v in params.items()}
    try:
        return _(msgid, **spoken)
    except (KeyError, IndexError, ValueError):
        return msgid


def _word(key: str, value: str) -> str:
    if value in COLOUR_NAMES:  # a seat by its name, a gem's colour as an adjective
        return colour(value) if key == "seat" else colour(value).lower()
    return _(value)


# --- words every game uses ----------------------------------------------------------------

#: The seat colours of a box, as the catalogue knows them.
COLOUR_NAMES = {
    "red": N_("Red"),
    "yellow": N_("Yellow"),
    "green": N_("Green"),
    "blue": N_("Blue"),
    "black": N_("Black"),
    "purple": N_("Purple"),
    "orange": N_("Orange"),
    "white": N_("White"),
    "pink": N_("Pink"),
    "lilac": N_("Lilac"),
}
#: Short forms for lists: three letters, or the whole word where three letters would
#: look like another colour's ("Blue" beside "Blk"; French "Bleu" beside "Blc", "Rose"
#: beside "Rou"). Any two of them differ in at least two letters.
COLOUR_SHORT = {
    "red": N_("Red|short"),
    "yellow": N_("Yel|short"),
    "green": N_("Grn|short"),
    "blue": N_("Blue|short"),
    "black": N_("Blk|short"),
    "purple": N_("Pur|short"),
    "orange": N_("Org|short"),
    "white": N_("Wht|short"),
    "pink": N_("Pnk|short"),
    "lilac": N_("Lil|short"),
}
#: A seat past a box's colours goes by its number, the same words on every screen (the
#: stations, the hub display, the table display): "Seat 9" / "Place 9", in lists "S9" / "P9".
SEAT_LONG = N_("Seat {n}")
SEAT_SHORT = N_("S{n}|numbered seat")


def seat_number(n: int, *, short: bool = False) -> str:
    """A seat by its number ``n`` (from 1), long ("Seat 9", "Place 9") or in lists ("S9",
    "P9"). Every screen that names a numbered seat says it with this."""
    return _(SEAT_SHORT if short else SEAT_LONG, n=n)


def seat_label(seat: int, colours: list[str] | tuple[str, ...], *, short: bool = False) -> str:
    """Seat ``seat`` (from 0) of a table whose seats go by ``colours``: its colour ("Red",
    short "Red"; "Blue", short "Blue") or, past them, its number ("Seat 9", short "S9")."""
    if seat < len(colours):
        return short_colours(list(colours))[seat] if short else colour(colours[seat])
    return seat_number(seat + 1, short=short)


def _numbered(name: str) -> int | None:
    """The number of a seat named by number ("seat9" -> 9), else None."""
    return int(name[4:]) if name.startswith("seat") and name[4:].isdigit() else None


def colour(name: str) -> str:
    """A seat colour's name ("red" -> "Red" / "Rouge"); seats past a box's colours by number
    ("seat9" -> "Seat 9" / "Place 9")."""
    if name in COLOUR_NAMES:
        return _(COLOUR_NAMES[name])
    number = _numbered(name)
    if number is not None:
        return seat_number(number)
    return name.capitalize()


def short_colour(name: str) -> str:
    """A seat colour's short form for lists ("Red", "Blue", "Blk"; "S9" / "P9" past the box)."""
    if name in COLOUR_SHORT:
        return _(COLOUR_SHORT[name])
    number = _numbered(name)
    if number is not None:
        return seat_number(number, short=True)
    return name[:3].capitalize()


def alike(a: str, b: str) -> bool:
    """Whether two short forms could be mixed up at a glance: equal, or the same but for
    one letter ("Blu"/"Blk", "Rou"/"Ros", "Mae"/"Mac"). Seat numbers are read as numbers:
    "S10" and "S11" are two seats, not a near miss."""
    if a != b and any(c.isdigit() for c in a) and any(c.isdigit() for c in b):
        return False
    longer = max(len(a), len(b))
    differ = sum(x != y for x, y in zip(a.ljust(longer), b.ljust(longer), strict=True))
    return differ < 2


def short_colours(names: list[str]) -> list[str]:
    """Each seat's short form, no two alike at one table (:func:`alike`): where two would
    be ("Marie", "Marc" -> "Mar"), each goes by its whole word where it is short
    ("Marie", "Marc"), else by its first two letters and its last ("Bartholomew" ->
    "Baw"), then its first letter and last two, then a number ("Ba11")."""
    return list(_short_colours(tuple(names), current()))


#: A whole word stands in for a short form only up to this length (lists stay narrow).
WHOLE_WORD = 5


@cache
def _short_colours(names: tuple[str, ...], _language: str) -> tuple[str, ...]:
    out = [short_colour(n) for n in names]
    # Every form alike another changes (both "Mar"s), so neither reads as the other.
    clashing = [i for i, a in enumerate(out) if any(alike(a, b) for b in out[:i] + out[i + 1 :])]
    for i in clashing:
        name = names[i]
        others = [s for j, s in enumerate(out) if j != i]
        word = colour(name).strip()
        whole = (word,) if len(word) <= WHOLE_WORD else ()
        candidates = (*whole, word[:2] + word[-1:], word[:1] + word[-2:])
        # Numbers last, both digits different from any other's ("Ma11", "Ma22").
        numbered = (f"{word[:2]}{k}{k}" for k in range(1, 10))
        forms = (*candidates, *numbered)
        out[i] = next((c for c in forms if not any(alike(c, s) for s in others)), out[i])
    return tuple(out)


def ranks(groups: list[list[int]]) -> dict[int, int]:
    """Standard competition ranks ("1, 2, 2, 4") of seats grouped best first."""
    out: dict[int, int] = {}
    place = 1
    for group in groups:
        for seat in group:
            out[seat] = place
        place += len(group)
    return out


def in_language(text: object) -> str:
    """A text written per language (a card set's ``{"en": ..., "fr": ...}``) in the language
    spoken now; a language it lacks falls back to English, then to the first it has. A plain
    string is the same in every language (a set written in one language only)."""
    if isinstance(text, Mapping):
        for code in (current(), LANGUAGES[0], *text):
            value = text.get(code)
            if isinstance(value, str) and value:
                return value
        return ""
    return "" if text is None else str(text)
