"""Every screen of whole games, in both languages, at the largest table fits the glass."""

from __future__ import annotations

import itertools

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.bindings.menus import KnobMenus
from firmware.hub.table import Table
from firmware.link.lang import speaking
from firmware.link.protocol import Input
from firmware.link.render import BODY_LINES, CHARS, LINE_ROOM, MENU_INDENT, drawn_width, glass
from rules import all_info, get_info
from rules.core import IllegalAction
from tests.support.screens import GAMES, Shown, play, tables

#: Games whose knob menus are drawn by :func:`firmware.link.render.menu_rows`.
MENU_GAMES = sorted(g for g in GAMES if isinstance(binding_for(g), KnobMenus))
#: Games that end on a ranking of every seat (not a side winning together).
RANKED = sorted(g for g in GAMES if not get_info(g).sides)


def misfits(shown: Shown) -> list[str]:
    """What on one glass would be cut: a line past 21 characters or cut short ("~", the
    renderer's mark), a station's fifth line."""
    bad = [
        f"{shown.where}: {text!r}"
        for text in (shown.title, *shown.lines)
        if len(glass(text)) > CHARS or "~" in text
    ]
    # The hub display pages a longer screen by itself (its title says "1/3"); a station
    # must page its own lists.
    if len(shown.lines) > BODY_LINES and shown.where != "hub":
        bad.append(f"{shown.where}: {len(shown.lines)} lines {shown.lines}")
    if len(shown.lines) > BODY_LINES and shown.where == "hub":
        # The hub pages it: its title must leave room for the page count ("Window 5s 1/3").
        pages = -(-len(shown.lines) // BODY_LINES)
        if len(glass(shown.title)) + len(f" {pages}/{pages}") > CHARS:
            bad.append(f"hub: title {shown.title!r} leaves no room for its page count")
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


def too_wide(shown: Shown) -> list[str]:
    """Each line of one glass wider than the glass, in the pixels the renderer draws (the
    hub's title with the page count it adds when it pages the lines)."""
    texts = [shown.title, *shown.lines]
    if shown.where == "hub" and len(shown.lines) > BODY_LINES:
        pages = -(-len(shown.lines) // BODY_LINES)
        texts[0] = f"{shown.title} {pages}/{pages}"
    return [
        f"{shown.where}: {text!r} is {drawn_width(text)} px"
        for text in texts
        if drawn_width(text) > LINE_ROOM
    ]


#: Every registered game at its smallest and its largest table.
TABLE_SIZES = [
    (info.id, players)
    for info in all_info()
    for players in sorted({info.min_players, info.max_players})
]


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize(("game", "players"), TABLE_SIZES)
def test_no_line_is_wider_than_the_glass(game: str, players: int, language: str) -> None:
    """Every game of the registry, at its smallest and largest table, in both languages:
    no title or line a station (flap down or up) or the hub draws is wider than the
    128-pixel glass, measured as the renderer draws it (a line the renderer would cut)."""
    problems: set[str] = set()
    steps = 0
    for glasses in play(game, players, language, seed=7):
        steps += 1
        for shown in glasses:
            problems.update(too_wide(shown))
    assert steps > 10
    assert not problems, sorted(problems)[:40]


def cursor_label_misses(table: Table, seat: int) -> str:
    """Whether the glass under the flap shows the whole label of the option under the
    cursor ("" if it does): a player reads what a press will choose, never a cut one."""
    binding = table.binding
    assert isinstance(binding, KnobMenus)
    if binding.paging(table, seat):
        return ""
    label = glass(binding.menu(table, seat)[binding.cursor(table, seat)].label)
    secret = binding.station_screen(table, seat).secret
    assert secret is not None
    lines = list(secret.lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("> "))
    block = [lines[start][2:]]
    # Its own continuation rows only: the next option's start a new block.
    rest = itertools.takewhile(lambda ln: ln.startswith(MENU_INDENT), lines[start + 1 :])
    block += [ln.removeprefix(MENU_INDENT) for ln in rest]
    shown = " ".join(block)
    return "" if shown == label else f"p{seat + 1}: {label!r} shown as {shown!r}"


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", MENU_GAMES)
def test_the_cursor_option_is_read_whole(game: str, language: str) -> None:
    """At the most players, whatever the cursor is on, its whole label is on the glass
    (a long one wraps onto the next row) at every step of a whole game."""
    players = GAMES[game][1]
    problems: set[str] = set()
    for table in tables(game, players, seed=5):
        with speaking(language):
            for seat in range(players):
                problems.add(cursor_label_misses(table, seat))
    problems.discard("")
    assert not problems, sorted(problems)[:20]


def scroll_through(table: Table, seat: int) -> list[str]:
    """Every line the seat's glass shows while its knob turns one step at a time to the
    end of what it scrolls (the events committed as the hub would)."""
    seen: list[str] = []
    binding = table.binding
    for _turn in range(4 * table.players):
        screen = binding.station_screen(table, seat)
        seen += [screen.title, *screen.lines]
        try:
            body = binding.translate(table, seat, Input(id="b:1", kind="knob", step=1))
        except IllegalAction:
            break
        if "ui" not in body or table.ui_noop(body):
            break
        table.commit(body, table.check(body))
    return seen


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", sorted(RANKED))
def test_the_final_ranking_reaches_every_seat(game: str, language: str) -> None:
    """At the most players, turning the knob on any station once the game is over brings
    every seat's line of the ranking into view, and the title says where the list is."""
    players = GAMES[game][1]
    *_, table = tables(game, players, seed=4)
    assert table.over
    with speaking(language):
        names = [table.seating.name(s) for s in range(players)]
        for seat in range(players):
            seen = scroll_through(table, seat)
            missing = [n for n in names if not any(f". {n}" in line for line in seen)]
            assert not missing, (seat, missing, seen)
            assert any("▼" in line for line in seen) and any("▲" in line for line in seen)
