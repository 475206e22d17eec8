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

from rules import GAMES, piece_module


def has_bot(game_id: str) -> bool:
    if game_id not in GAMES:
        return False
    return importlib.util.find_spec(piece_module(__name__, game_id)) is not None


def bot_class(game_id: str) -> Any:
    """The ``Bot`` class for a game (KeyError if there is none yet)."""
    if not has_bot(game_id):
        raise KeyError(game_id)
    return importlib.import_module(piece_module(__name__, game_id)).Bot
