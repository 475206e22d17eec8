"""Golden screens of every game in both languages, at the smallest and largest table.

Each golden is a contact sheet of one whole random game: a row per change of what
seat 1 sees (flap down, flap up) and what the hub display shows, the first rows of
the game and its last ones. A changed pixel is a decision: regenerate with
COFFRE_REGEN_GOLDEN=1, look at the sheet, commit it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from firmware.link.protocol import Screen, Secret
from firmware.link.render import HEIGHT, WIDTH, render
from tests.support.golden import frame_problems
from tests.support.screens import GAMES, Shown, play

GOLDEN = Path(__file__).parent / "golden"
FIRST, LAST = 24, 8
GAP = 2


def picture(shown: Shown) -> Image.Image:
    """The glass as a station or the hub draws it."""
    if shown.where.endswith("+flap"):
        secret = Secret(title=shown.title, big=shown.big, lines=shown.lines)
        return render(Screen(rev=0, title=shown.title, secret=secret), show_secret=True)
    return render(Screen(rev=0, title=shown.title, lines=shown.lines), show_secret=False)


def contact_sheet(game: str, players: int, language: str) -> Image.Image:
    """Seat 1 (flap down, flap up) and the hub, one row per change, first and last rows."""
    rows: list[tuple[Shown, ...]] = []
    for glasses in play(game, players, language, seed=2):
        row = tuple(g for g in glasses if g.where in ("p1", "p1+flap", "hub"))
        if not rows or rows[-1] != row:
            rows.append(row)
    kept = rows if len(rows) <= FIRST + LAST else rows[:FIRST] + rows[-LAST:]
    sheet = Image.new("1", (3 * (WIDTH + GAP), len(kept) * (HEIGHT + GAP)), 1)
    for y, row in enumerate(kept):
        for shown in row:
            column = ("p1", "p1+flap", "hub").index(shown.where)
            sheet.paste(picture(shown), (column * (WIDTH + GAP), y * (HEIGHT + GAP)))
    return sheet


CASES = [
    (game, players, language)
    for game in sorted(GAMES)
    for players in GAMES[game]
    for language in ("en", "fr")
]


@pytest.mark.parametrize(("game", "players", "language"), CASES)
def test_golden_screens(game: str, players: int, language: str) -> None:
    """A whole game's screens match the reviewed golden sheet, pixel for pixel."""
    sheet = contact_sheet(game, players, language)
    problems = frame_problems(f"{game}-{players}p-{language}", [sheet], root=GOLDEN)
    assert not problems, problems
