"""Bots that play a game at a simulated table through the stations' mock devices.

Each game's bots live in a module exposing ``Bot``: constructed as
``Bot(sim, watcher, rng, say=print)``, with ``start_game(players)`` and
``play() -> dict`` (the final ``public`` payload). They may only act through the
stations' devices and the host's panel or host commands, and know only what a
player at the table could: the public table and their own station's screen.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from rules import GAMES, stem


def module_name(game_id: str) -> str:
    """Where a game's bots live: ``firmware/tools/bots/<stem>.py``."""
    return f"{__name__}.{stem(game_id)}"


def has_bot(game_id: str) -> bool:
    return game_id in GAMES and importlib.util.find_spec(module_name(game_id)) is not None


def bot_class(game_id: str) -> Any:
    """The ``Bot`` class for a game (KeyError if there is none yet)."""
    if not has_bot(game_id):
        raise KeyError(game_id)
    return importlib.import_module(module_name(game_id)).Bot
