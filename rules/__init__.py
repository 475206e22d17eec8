"""Pure rules engines for the games coffre referees.

``get_game(id)`` returns the engine of one game; each game lives in its own
module which exposes a ``GAME`` object following :class:`rules.core.Game`.
"""

from __future__ import annotations

import importlib
from typing import Any

from rules.core import BadOptions, Game, IllegalAction, RulesError

__all__ = ["GAME_IDS", "BadOptions", "Game", "IllegalAction", "RulesError", "get_game"]

#: Game id -> module holding its engine. Modules import lazily so a missing or
#: broken game never stops the others from loading.
_MODULES: dict[str, str] = {
    "secret-identity": "rules.secret_identity",
    "incognito": "rules.incognito",
    "identiquest": "rules.identiquest",
    "ultra-secret": "rules.ultra_secret",
    "identites-cryptees": "rules.identites_cryptees",
}

GAME_IDS: tuple[str, ...] = tuple(_MODULES)


def get_game(game_id: str) -> Game[Any]:
    """The engine for ``game_id``; raises ``BadOptions`` for an unknown game."""
    try:
        module_name = _MODULES[game_id]
    except KeyError:
        raise BadOptions(f"Unknown game: {game_id}") from None
    game: Game[Any] = importlib.import_module(module_name).GAME
    return game
