"""The host at a simulated table: start a game on the hub's panel, as a host would.

Every game's bots start their game here. With the hub in this process the host walks
the panel menu (game, players, each option the panel offers, Start); options the
panel does not offer (a deck, a card set), or a hub in another process, go as a host
command, as a host's laptop would send it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from firmware.hub.hostmenu import HostMenu
from firmware.tools.simtable import TABLE, PublicWatcher, SimTable
from rules import get_info


def host_starts(
    sim: SimTable,
    watcher: PublicWatcher,
    game: str,
    players: int,
    options: dict[str, Any],
) -> None:
    """The host starts ``game`` with ``options``: on the panel when it can, else by command."""
    hub = sim.hub
    if hub is None or not on_the_panel(game, players, options):
        sim.host({"cmd": "start", "game": game, "players": players, "options": options})
    else:
        menu = hub.actors[TABLE].menu
        _walk_menu(sim, menu, game, players, options)
    watcher.wait(lambda p: p.get("game") == game and p.get("version") == 0)


def on_the_panel(game: str, players: int, options: dict[str, Any]) -> bool:
    """Whether the panel's menu can set every one of these options (those with fixed
    values in the game's declaration; a seat or card set goes by command)."""
    declared = {o.name: o for o in get_info(game).options}
    return all(
        name in declared and declared[name].on_panel(players) and value in declared[name].menu
        for name, value in options.items()
    )


def _walk_menu(
    sim: SimTable, menu: HostMenu, game: str, players: int, options: dict[str, Any]
) -> None:
    panel = sim.panel

    def press_until(button: str, done: Callable[[], bool], watch: Callable[[], object]) -> None:
        while not done():
            moved = differs(watch)
            panel.press(button)
            until(moved)

    # A finished game's ranking stays up until the host's ok gives the menu back.
    ended = sim.hub.actors[TABLE].table if sim.hub is not None else None
    if ended is not None and ended.over and menu.dismissed is not ended:
        panel.press("ok")
        until(lambda: menu.dismissed is ended)
    press_until("next", lambda: menu.row == 0, lambda: menu.row)
    press_until("ok", lambda: menu.game_id == game, lambda: menu.game)
    press_until("next", lambda: menu.row == 1, lambda: menu.row)
    press_until("ok", lambda: menu.players == players, lambda: menu.players)
    for row, (option, values) in enumerate(menu.option_rows, start=2):
        press_until("next", functools.partial(_at_row, menu, row), lambda: menu.row)
        # An option the host is not given goes to its default (the first value; the
        # table's language for Incognito's words), whatever an earlier game chose.
        follows = option.table_language and menu.language in values
        want = options.get(option.name, menu.language if follows else values[0])
        press_until("ok", functools.partial(_chosen, menu, option.name, want), menu.options)
    press_until("next", lambda: menu.row == menu.start_row, lambda: menu.row)
    panel.press("ok")


def _at_row(menu: HostMenu, row: int) -> bool:
    return menu.row == row


def _chosen(menu: HostMenu, name: str, value: Any) -> bool:
    return bool(menu.options()[name] == value)


def differs(get: Callable[[], object]) -> Callable[[], bool]:
    """A predicate: ``get()`` no longer returns what it returns now."""
    old = get()
    return lambda: get() != old


def until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait (briefly polling) until ``predicate`` holds; TimeoutError otherwise."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the table did not answer")
        time.sleep(0.01)
