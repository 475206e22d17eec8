"""The table display follows a simulated game of each game from start to final ranking."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from firmware.display.parts import french_spaces
from firmware.link.lang import _, colour, speaking
from firmware.tools.bots import bot_class
from firmware.tools.simtable import TABLE
from rules import GAMES as REGISTERED
from rules import get_info
from tests.support.browser import (
    chromium,
    freeze_countdowns,
    new_page,
    page_version,
    screenshot,
    settled,
    start_display,
    wait_version,
)
from tests.support.games import game_support
from tests.support.golden import picture_problems
from tests.support.tables import TableFactory

#: game -> (players, table seed, bot seed, bot options), for every registered game
#: (``FOLLOW`` in ``tests/support/games/<stem>.py``).
GAMES: dict[str, tuple[int, int, int, dict[str, Any]]] = {
    g: game_support(g).FOLLOW for g in REGISTERED
}


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", list(GAMES))
def test_the_page_follows_a_whole_game_to_the_final_ranking(
    make_table: TableFactory, game: str, language: str
) -> None:
    """Live through the game; pictures at start and end; every seat and the winners named,
    in the table's language."""
    players, seed, bot_seed, options = GAMES[game]
    sim = make_table(players, seed=seed, language=language)
    if game == "incognito":
        freeze_countdowns(sim)
    display = start_display(sim)
    with speaking(language):
        waiting = _("Waiting for the host to start a game.")
        over = _("Game over — winner: {seats}").split("{")[0].rstrip(" :")
        nobody = _("Game over — winner: {seats}").format(seats=_("nobody"))
    if language == "fr":  # the page ties French high punctuation to the word before it
        nobody = french_spaces(f">{nobody}<")[1:-1]
    with chromium() as browser:
        page = new_page(browser)
        page.goto(f"{display.url}table/{TABLE}")
        page.get_by_text(waiting).wait_for()
        bot = bot_class(game)(
            sim, sim.watch, random.Random(bot_seed), say=lambda _: None, **options
        )
        bot.start_game(players)
        wait_version(page, sim.watch.public["version"])
        time.sleep(0.3)  # nothing else is coming: the bots have not moved yet
        wait_version(page, sim.watch.public["version"])
        settled(page)
        start = screenshot(page)
        final = bot.play()
        wait_version(page, final["version"])
        page.locator(".ranking").wait_for()
        time.sleep(0.3)
        assert page_version(page) == sim.watch.public["version"]
        settled(page)
        end = screenshot(page)
        seen = {int(v) for v, _ in page.evaluate("window.__seen")}
        ranking = page.locator(".ranking").inner_text()
        text = page.locator("#live").inner_text()

    # Followed live: the page showed many states in between, not just the last.
    assert len(seen) >= min(10, final["version"]), sorted(seen)
    colours = [s["colour"] for s in final["seats"]]
    if game == "ultra-secret":
        colours = final["view"]["colours"][:players]
    with speaking(language):
        names = [colour(c) for c in colours]
    for name in names:
        assert name in ranking and name in text
    heading = ranking.splitlines()[0]
    assert heading.startswith(over)
    if len(final["ranking"]) == 1 and not any(final["scores"]):
        assert heading == nobody  # all together on no points
    else:
        assert all(names[s] in heading for s in final["ranking"][0]), heading
    name = game if language == "en" else f"{game}-{language}"
    problems = picture_problems(f"{name}-start", start) + picture_problems(f"{name}-final", end)
    assert not problems, problems


def test_the_page_follows_the_tables_language_live(make_table: TableFactory) -> None:
    """The host flips the table's language on the panel: the open page (and its ``lang``)
    follows at once, without a reload; a display with no hub yet speaks its own language."""
    sim = make_table(3, language="fr")
    display = start_display(sim, language="en")
    with chromium() as browser:
        page = new_page(browser)
        page.goto(f"{display.url}table/{TABLE}")
        page.get_by_text("On attend que l'hôte lance une partie.").wait_for()
        assert page.locator("#live > section").get_attribute("lang") == "fr"
        assert sim.hub is not None
        for button in ("prev", "prev", "prev", "ok"):  # up past Start and Sound to Language
            sim.panel.press(button)
        page.get_by_text("Waiting for the host to start a game.").wait_for()
        assert page.locator("#live > section").get_attribute("lang") == "en"
        # The overview speaks the display's own language; each table's card its table's.
        page.goto(display.url)
        assert page.locator("h1").inner_text() == "coffre tables"


def test_the_idle_page_shows_the_rules_of_the_game_the_host_picks(make_table: TableFactory) -> None:
    """Between games the page lists the hub's games and shows, on one card, the rules of
    the game picked on the panel; the host turns to the next game and the card follows live
    (the hub says the pick in hub/status, the menu in the idle public)."""
    sim = make_table(3, language="en")
    assert sim.hub is not None
    menu = sim.hub.actors[TABLE].menu
    display = start_display(sim)
    with chromium() as browser:
        page = new_page(browser)
        page.goto(f"{display.url}table/{TABLE}")
        card = page.locator(".rules-card h2")
        first, then = menu.game_id, menu.games[(menu.game + 1) % len(menu.games)]
        page.get_by_text(get_info(first).summary).wait_for()
        assert card.inner_text() == get_info(first).name
        listed = page.locator(".menu li").all_inner_texts()
        assert len(listed) == len(menu.games)
        for game, item in zip(menu.games, listed, strict=True):
            info = get_info(game)
            assert item.startswith(info.name), item
            assert f"{info.min_players}–{info.max_players} players" in item
        for _press in range(menu.row):  # up to the game row (presses are handled in order)
            sim.panel.press("prev")
        sim.panel.press("ok")  # the next game
        page.get_by_text(get_info(then).summary).wait_for()
        assert card.inner_text() == get_info(then).name
        assert page.locator(".menu li.picked").inner_text().startswith(get_info(then).name)
