"""Every screen of whole games, in both languages, at the largest table fits the glass."""

from __future__ import annotations

import pytest

from firmware.link.render import BODY_LINES, CHARS, glass
from tests.screens.harness import GAMES, Shown, play


def misfits(shown: Shown) -> list[str]:
    """What on one glass would be cut: a line past 21 characters, a station's fifth line."""
    bad = [
        f"{shown.where}: {text!r}"
        for text in (shown.title, *shown.lines)
        if len(glass(text)) > CHARS
    ]
    # The hub display pages a longer screen by itself (its title says "1/3"); a station
    # must page its own lists.
    if len(shown.lines) > BODY_LINES and shown.where != "hub":
        bad.append(f"{shown.where}: {len(shown.lines)} lines {shown.lines}")
    if len(shown.big) > 5:
        bad.append(f"{shown.where}: big {shown.big!r}")
    return bad


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_screen_of_a_whole_game_fits(game: str, language: str) -> None:
    """At the most players, every title and line of every screen fits 21 columns and 4 rows
    (a list longer than the glass pages with a marker instead of being cut)."""
    players = GAMES[game][1]
    problems: set[str] = set()
    steps = 0
    for glasses in play(game, players, language, seed=3):
        steps += 1
        for shown in glasses:
            problems.update(misfits(shown))
    assert steps > 10
    assert not problems, sorted(problems)[:40]
