"""Every short form a station draws is spelt out on a key page that player reaches.

Random games of each game with a key, in both languages, at its largest table:
each token of a station's screen (flap down or up) that has an abbreviation's shape —
letters with digits ("H3", "P9", "2PV"), a side letter in brackets ("(M)"), or one to
three letters that are not a word of the table's language ("Blc", "Yel", "G", "prog.")
— must be written on that seat's key pages, the pages its
knob turns (``binding.pages``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from firmware.hub.table import Table
from firmware.link.lang import speaking
from firmware.link.render import LINE_ROOM, drawn_width, glass
from rules import get_info
from tests.support.screens import GAMES, new_table, tables

#: The games whose stations draw short forms, each with the pages of its key.
KEYED = ["identites-cryptees", "ultra-secret", "identiquest"]

#: Words of one to three letters a player reads as words, not as codes.
EN_WORDS = """a an and any are as at be by do for get go gem he his how i if in is it its me
my no not now of off ok on one or out own red saw see set so the to top two up us was way
who why win won yes you bug bar all end new put ago got has had per kit aim hit key s"""
FR_WORDS = """a à au aux ce ces de des du elle en est et il je la le les ma me mes mon ne ni
on ou où pas par peu qui sa se ses si son sur ta te tes toi ton tu un une va vu vue vos oui
non lui eux fin tir nul car bar ici an dé kit d l qu j n s c as n°"""
WORDS = {"en": set(EN_WORDS.split()), "fr": set(FR_WORDS.split())}

#: Steps of a game looked at (a 16-seat game is long; its screens repeat).
STEPS = 500
SIDE = re.compile(r"\(\w{1,3}\)")
CODE = re.compile(r"[+-]?\d*[^\W\d_]+\d*")


def abbreviations(text: str, language: str) -> Iterator[str]:
    """The tokens of a line shaped like an abbreviation (see the module's docstring)."""
    for raw in glass(text).replace("'", " ").replace(":", ": ").split():
        if SIDE.fullmatch(raw):
            yield raw
            continue
        token = raw.strip(',;:!?()<>"+/*').rstrip(".")
        if not any(c.isalpha() for c in token) or re.fullmatch(r"\d+s", token):
            continue  # a number, a countdown's seconds ("5s")
        if any(c.isdigit() for c in token):
            parts = re.split(r"[-/]", token)
            codes = (normal(p) for p in parts if any(c.isdigit() for c in p))
            yield from (c for c in codes if c.lower() not in WORDS[language])
        elif len(token) <= 3 and token.lower() not in WORDS[language]:
            yield token


def normal(token: str) -> str:
    """A code without its numbers: "H3", "H1" and the key's "H1-6" are one short form ("H"),
    "2PV" is "PV"."""
    return re.sub(r"\d+", "", token.lstrip("+-")) or token


def key_tokens(table: Table, seat: int) -> set[str]:
    """Every token written on the seat's key pages (codes without their numbers)."""
    rows = [row for title, lines in table.binding.pages(table, seat) for row in lines]  # type: ignore[attr-defined]
    out: set[str] = set()
    for row in rows:
        for raw in glass(row).replace("-", " ").replace("/", " ").split():
            token = raw.strip(",;:!?\"'").rstrip(":")
            out.update({token, normal(token) if any(c.isdigit() for c in token) else token})
    return out


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", KEYED)
def test_every_short_form_on_a_station_is_on_its_key(game: str, language: str) -> None:
    """At the largest table, every short form any station shows during the first
    :data:`STEPS` steps of a random game is on that seat's key pages (in the table's
    language)."""
    players = GAMES[game][1]
    options = get_info(game).table_defaults(language)
    missing: dict[str, str] = {}
    keys: dict[int, set[str]] = {}  # a key is the table's: the same at every step
    steps = 0
    for table in tables(game, players, seed=11, options=options):
        steps += 1
        if steps > STEPS:
            break
        with speaking(language):
            for seat in range(players):
                screen = table.binding.station_screen(table, seat)
                texts = [screen.title, *screen.lines]
                if screen.secret is not None:
                    texts += [screen.secret.title, *screen.secret.lines]
                found = {(t, text) for text in texts for t in abbreviations(text, language)}
                if not found:
                    continue
                if seat not in keys:
                    keys[seat] = key_tokens(table, seat)
                key = keys[seat]
                missing.update({t: text for t, text in found if t not in key})
    assert steps > 10
    assert not missing, sorted(missing.items())[:40]


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", KEYED)
def test_every_key_page_fits_the_glass(game: str, language: str) -> None:
    """The key pages themselves, at the smallest and the largest table: no row wider than
    the glass, four rows a page."""
    for players in GAMES[game]:
        table = new_table(game, players, seed=1)
        with speaking(language):
            pages = table.binding.pages(table, 0)  # type: ignore[attr-defined]
        for title, rows in pages:
            assert len(rows) <= 4, (title, rows)
            wide = [row for row in (title, *rows) if drawn_width(row) > LINE_ROOM]
            assert not wide, (players, wide)
