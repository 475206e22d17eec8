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

_MODULES: dict[str, str] = {
    "secret-identity": "firmware.tools.bots.secret_identity",
    "incognito": "firmware.tools.bots.incognito",
    "identiquest": "firmware.tools.bots.identiquest",
    "ultra-secret": "firmware.tools.bots.ultra_secret",
    "identites-cryptees": "firmware.tools.bots.identites_cryptees",
}


def has_bot(game_id: str) -> bool:
    module = _MODULES.get(game_id)
    return module is not None and importlib.util.find_spec(module) is not None


def bot_class(game_id: str) -> Any:
    """The ``Bot`` class for a game (KeyError if there is none yet)."""
    if not has_bot(game_id):
        raise KeyError(game_id)
    return importlib.import_module(_MODULES[game_id]).Bot
