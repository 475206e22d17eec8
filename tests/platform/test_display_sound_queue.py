"""The page's narration never falls behind: one move spoken, at most one waiting behind it;
a newer move replaces the one waiting (dropped, never said late). Driven in Chromium with
the page's own script on hand-made cue sheets, speech held until the test ends it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from firmware.display.server import STATIC
from tests.support.browser import chromium, new_page
from tests.support.hearing import EARS, heard

WORDS = ' data-tap="Tap" data-on="On" data-off="Off" data-host="Host off"'


def sheet(moves: list[tuple[int, str, str]], *, sound: str = "narration") -> str:
    """A table fragment holding only a cue sheet of ``(version, cue, words)`` moves."""
    items = "".join(f'<li data-v="{v}" data-cue="{c}">{w}</li>' for v, c, w in moves)
    return (
        f'<section class="table"><div class="cues" hidden data-game="g" data-sound="{sound}" '
        f'data-voice="en-GB"{WORDS}><ol>{items}</ol></div></section>'
    )


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium() as browser:
        tab = new_page(browser)
        tab.set_content('<html><body><main id="live"></main></body></html>')
        tab.evaluate(EARS)
        tab.evaluate("html => { document.getElementById('live').innerHTML = html; }", sheet([]))
        tab.add_script_tag(path=str(STATIC / "sound.js"))
        yield tab


def show(page: Any, moves: list[tuple[int, str, str]], **kwargs: Any) -> None:
    page.evaluate(
        "html => { document.getElementById('live').innerHTML = html; }", sheet(moves, **kwargs)
    )
    page.evaluate("() => new Promise(r => setTimeout(r, 0))")  # the observer has run


def said(page: Any) -> list[str]:
    return [line for line in heard(page) if line.startswith("say")]


def test_one_line_waits_behind_the_one_spoken_and_newer_ones_replace_it(page: Any) -> None:
    """Four moves while the first is still being said: the first is said, then only the
    newest; the two in between are dropped. Every move's cue still plays at once."""
    page.locator("#sound").click()
    page.wait_for_function("document.getElementById('sound').className === 'on'")
    page.evaluate("window.__hold = true")
    moves = [(1, "phase", "one"), (2, "", "two"), (3, "reveal", "three"), (4, "wait", "four")]
    for n in range(1, 5):
        show(page, moves[:n])
    assert said(page) == ["say en-GB: one"]
    page.evaluate("window.__finish()")
    assert said(page) == ["say en-GB: one", "say en-GB: four"]
    page.evaluate("window.__finish()")
    assert said(page) == ["say en-GB: one", "say en-GB: four"]
    assert [line for line in heard(page) if line.startswith("cue")] == [
        "cue phase",
        "cue reveal",
        "cue wait",
    ]


def test_moves_a_slow_page_gets_together_are_each_heard_once(page: Any) -> None:
    """A fragment that carries three new moves (the server skipped two for a slow page)
    plays each move's cue and says them in order; the same fragment again plays nothing."""
    page.locator("#sound").click()
    page.wait_for_function("document.getElementById('sound').className === 'on'")
    moves = [(1, "phase", "one"), (2, "", "two"), (3, "out", "three")]
    show(page, moves)
    show(page, moves)
    assert heard(page) == [
        "cue phase",
        "say en-GB: one",
        "say en-GB: two",
        "cue out",
        "say en-GB: three",
    ]


def test_a_page_tapped_mid_game_says_nothing_of_the_past(page: Any) -> None:
    """Moves shown before the tap are never played after it: only the next one is."""
    show(page, [(1, "phase", "one"), (2, "wait", "two")])
    page.locator("#sound").click()
    page.wait_for_function("document.getElementById('sound').className === 'on'")
    show(page, [(1, "phase", "one"), (2, "wait", "two"), (3, "reveal", "three")])
    assert heard(page) == ["cue reveal", "say en-GB: three"]


def test_the_last_five_seconds_of_a_countdown_tick(page: Any) -> None:
    """A countdown at 7, 6 ... 0 ticks at 5, 4, 3, 2 and 1 only, once a second."""
    page.locator("#sound").click()
    page.wait_for_function("document.getElementById('sound').className === 'on'")
    html = sheet([]).replace(
        "</section>", '<div class="countdown" data-left="7"><b>7</b></div></section>'
    )
    page.evaluate("html => { document.getElementById('live').innerHTML = html; }", html)
    for left in (7, 6, 6, 5, 5, 4, 3, 2, 1, 0):
        page.evaluate(
            "n => { document.querySelector('.countdown').dataset.left = String(n); }", left
        )
        page.evaluate("() => new Promise(r => setTimeout(r, 0))")
    assert heard(page) == ["cue tick"] * 5
