"""Timers everyone sees: a running countdown on the table display is a clock read from the
sofa (at least a tenth of the screen's height, on a TV and on a tablet), and its last five
seconds are seen (red, beating) as well as heard (tests/platform/test_display_sound_queue.py)."""

from __future__ import annotations

import itertools

import pytest

from firmware.display.render import page as whole_page
from firmware.display.render import table_fragment
from firmware.display.spectator import Snapshot
from firmware.tools.simtable import TABLE
from tests.support.browser import StaticPage, chromium
from tests.support.playouts import playout, public_of


def timed_page(game: str, players: int, seconds: int) -> str:
    """A mid-game page of ``game`` with a countdown of ``seconds`` running."""
    state = next(itertools.islice(playout(game, players, 3), 6, None))
    public = {**public_of(game, state), "timer": seconds}
    snap = Snapshot(TABLE, public, {"state": "ready"}, broker=True)
    return whole_page("t", table_fragment(snap), language="en")


@pytest.mark.parametrize(
    "viewport", [{"width": 1920, "height": 1080}, {"width": 1024, "height": 768}]
)
@pytest.mark.parametrize("game", ["identites-cryptees", "incognito", "secret-identity"])
def test_a_running_countdown_is_a_clock_read_from_the_sofa(
    game: str, viewport: dict[str, int]
) -> None:
    """The clock is at least 10 % of the screen's height, its seconds in type at least 5 %;
    at 5 seconds left it turns red and beats, before that it does not."""
    with chromium() as browser:
        static = StaticPage(browser, viewport)
        static.show(timed_page(game, 4, 9))
        tab = static.page
        clock = tab.locator(".countdown")
        box = clock.bounding_box()
        assert box is not None and box["height"] >= 0.1 * viewport["height"], box
        size = float(clock.locator("b").evaluate("b => getComputedStyle(b).fontSize")[:-2])
        assert size >= 0.05 * viewport["height"], size
        assert clock.evaluate("c => c.classList.contains('last')") is False
        calm = clock.evaluate("c => getComputedStyle(c).color")
        clock.evaluate("c => { c.dataset.left = '5'; }")
        tab.wait_for_function("document.querySelector('.countdown').classList.contains('last')")
        assert clock.evaluate("c => getComputedStyle(c).color") != calm
        beat = clock.locator("b").evaluate("b => getComputedStyle(b).animationName")
        assert beat == "last-seconds"
        clock.evaluate("c => { c.dataset.left = '0'; }")
        tab.wait_for_function("!document.querySelector('.countdown').classList.contains('last')")
