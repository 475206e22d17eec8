"""The table display follows a simulated game of each game from start to final ranking."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from firmware.tools.bots import bot_class
from firmware.tools.simtable import TABLE, SimTable
from tests.platform.browser import (
    chromium,
    golden_problems,
    new_page,
    page_version,
    screenshot,
    start_display,
    wait_version,
)
from tests.platform.conftest import TableFactory

#: game -> (players, table seed, bot seed, bot options): the platform tests' games.
GAMES: dict[str, tuple[int, int, int, dict[str, Any]]] = {
    "secret-identity": (5, 7, 3, {}),
    "incognito": (4, 7, 3, {}),
    "identiquest": (4, 7, 3, {}),
    "ultra-secret": (3, 7, 3, {"max_turns": 4}),
    "identites-cryptees": (4, 3, 3, {}),
}


def freeze_countdowns(sim: SimTable) -> None:
    """Slow the hub's clock 1000-fold: countdowns show but never tick (repeatable pages)."""
    assert sim.hub is not None
    start = time.monotonic()
    sim.hub.clock = lambda: start + (time.monotonic() - start) / 1000


@pytest.mark.parametrize("game", list(GAMES))
def test_the_page_follows_a_whole_game_to_the_final_ranking(
    make_table: TableFactory, game: str
) -> None:
    """Live through the game; pictures at start and end; every seat and the winners named."""
    players, seed, bot_seed, options = GAMES[game]
    sim = make_table(players, seed=seed)
    if game == "incognito":
        freeze_countdowns(sim)
    display = start_display(sim)
    with chromium() as browser:
        page = new_page(browser)
        page.goto(f"{display.url}table/{TABLE}")
        page.get_by_text("Waiting for the host").wait_for()
        bot = bot_class(game)(
            sim, sim.watch, random.Random(bot_seed), say=lambda _: None, **options
        )
        bot.start_game(players)
        wait_version(page, sim.watch.public["version"])
        time.sleep(0.3)  # nothing else is coming: the bots have not moved yet
        wait_version(page, sim.watch.public["version"])
        start = screenshot(page)
        final = bot.play()
        wait_version(page, final["version"])
        page.locator(".ranking").wait_for()
        time.sleep(0.3)
        assert page_version(page) == sim.watch.public["version"]
        end = screenshot(page)
        seen = {int(v) for v, _ in page.evaluate("window.__seen")}
        ranking = page.locator(".ranking").inner_text()
        text = page.locator("#live").inner_text()

    # Followed live: the page showed many states in between, not just the last.
    assert len(seen) >= min(10, final["version"]), sorted(seen)
    names = [s["colour"].capitalize() for s in final["seats"]]
    if game == "ultra-secret":
        names = [c.capitalize() for c in final["view"]["colours"][:players]]
    for name in names:
        assert name in ranking and name in text
    heading = ranking.splitlines()[0]
    assert heading.startswith("Game over — winner")
    if len(final["ranking"]) == 1 and not any(final["scores"]):
        assert heading == "Game over — winner: nobody"  # all together on no points
    else:
        assert all(names[s] in heading for s in final["ranking"][0]), heading
    problems = golden_problems(f"{game}-start", start) + golden_problems(f"{game}-final", end)
    assert not problems, problems
