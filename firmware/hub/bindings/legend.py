"""A game's key pages: the short forms its station screens use, each in words.

A station's glass holds 21 characters a line, so some screens say a seat, a card or a
square in a few letters ("Blc", "P9", "(M)", "H3"). Every such short form a game draws
is spelt out on a key page the player reaches with the knob from the screen that uses
it (the pages under the flap), one "short: words" a row.
"""

from __future__ import annotations

from firmware.hub.table import Table
from firmware.link.lang import N_, _, colour, seat_number
from firmware.link.render import BODY_LINES, CHARS, glass

KEY_TITLE = N_("Key|legend page")


def seat_rows(table: Table) -> list[str]:
    """The table's seats whose short form is not their name ("Blc: Blanc", "Yel: Yellow"),
    packed a few a row, and the numbered seats' short form ("P9-P16: Place 9-16")."""
    colours = table.seating.colours
    named = [i for i, c in enumerate(colours) if not c.startswith("seat")]
    cells = [
        short_form(table.seating.short(i), colour(colours[i]))
        for i in named
        if table.seating.short(i) != colour(colours[i])
    ]
    rows = spaced(cells)
    numbered = [i for i in range(len(colours)) if i not in named]
    if numbered:
        first, last = numbered[0] + 1, numbered[-1] + 1
        short = f"{seat_number(first, short=True)}-{seat_number(last, short=True)}"
        rows.append(short_form(short, f"{seat_number(first)}-{last}"))
    return rows


def short_form(short: str, words: str) -> str:
    """One key entry: "Blc : Blanc" (French puts a space before the colon)."""
    return _("{short}: {words}", short=short, words=words)


def spaced(cells: list[str]) -> list[str]:
    """Cells a few a row, two spaces apart, none split ("s: suitcase  l: locker")."""
    rows: list[str] = []
    for cell in cells:
        if rows and len(glass(f"{rows[-1]}  {cell}")) <= CHARS:
            rows[-1] = f"{rows[-1]}  {cell}"
        else:
            rows.append(cell)
    return rows


def key_pages(rows: list[str]) -> list[tuple[str, list[str]]]:
    """Key rows as knob pages of the glass's four lines, each titled "Key"."""
    return [(_(KEY_TITLE), rows[i : i + BODY_LINES]) for i in range(0, len(rows), BODY_LINES)]
