"""The table display through broker restarts, hub restarts and page reloads."""

from __future__ import annotations

import time
from typing import Any

from firmware.display.server import Display
from firmware.tools.bots.secret_identity import Director
from firmware.tools.simtable import TABLE, SimTable
from tests.support.browser import chromium, new_page, page_version, start_display, wait_version
from tests.support.tables import TableFactory, director

OFFLINE = ".offline"


def mid_vote(make_table: TableFactory, **kwargs: Any) -> tuple[SimTable, Display, Director]:
    """A 3-seat table with its display, its bots stopped at round 1's vote."""
    sim = make_table(3, **kwargs)
    display = start_display(sim)
    bots = director(sim, seed=2, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    return sim, display, bots


def test_broker_restart_shows_hub_offline_then_the_game_again(make_table: TableFactory) -> None:
    """The broker goes away: the page says hub offline; it comes back: the live table returns."""
    sim, display, bots = mid_vote(make_table)
    version = sim.watch.public["version"]
    with chromium() as browser:
        page = new_page(browser)
        page.goto(f"{display.url}table/{TABLE}")
        wait_version(page, version)
        assert page.locator(OFFLINE).count() == 0
        sim.broker.process.stop()
        page.locator(OFFLINE).wait_for(timeout=10_000)
        assert "Hub offline" in page.locator(OFFLINE).inner_text()
        sim.broker.process.start()
        page.locator(OFFLINE).wait_for(state="detached", timeout=20_000)
        assert page_version(page) == version
        # And it is live again: the next move shows up.
        bots.stop_at = None
        final = bots.play()
        wait_version(page, final["version"])
        page.locator(".ranking").wait_for()


def test_hub_killed_and_restarted_the_page_says_so_and_resumes(make_table: TableFactory) -> None:
    """A killed hub's will makes the page say hub offline; the restarted hub's table returns."""
    sim, display, _bots = mid_vote(make_table, hub_mode="process")
    version = sim.watch.public["version"]
    with chromium() as browser:
        page = new_page(browser)
        page.goto(f"{display.url}table/{TABLE}")
        wait_version(page, version)
        sim.kill_hub()
        page.locator(OFFLINE).wait_for(timeout=30_000)
        assert "stopped answering" in page.locator(OFFLINE).inner_text()  # its will: lost
        sim.start_hub()
        page.locator(OFFLINE).wait_for(state="detached", timeout=20_000)
        assert page_version(page) == version


def test_a_reloaded_page_shows_the_current_state_at_once(make_table: TableFactory) -> None:
    """The first byte of a page is the current table (no waiting for a stream or a move)."""
    sim, display, _bots = mid_vote(make_table)
    time.sleep(0.3)
    version = sim.watch.public["version"]
    with chromium() as browser:
        page = new_page(browser)
        page.route("**/events", lambda route: route.abort())  # no live stream at all
        page.goto(f"{display.url}table/{TABLE}")
        assert page_version(page) == version
        page.reload()
        assert page_version(page) == version
        overview = new_page(browser)
        overview.route("**/events", lambda route: route.abort())
        overview.goto(display.url)
        card = overview.locator(f'a[href="/table/{TABLE}"]')
        assert card.get_attribute("data-version") == str(version)
