"""Pure rules engines for the games coffre referees.

The registry: :data:`GAMES` names each game's engine module, one line a game. Each engine
module holds ``INFO`` (its declaration, :class:`rules.declare.GameInfo`) and ``GAME`` (its
engine, :class:`rules.core.Game`). A game's code (its table binding, its bots, its
table-display board, its test helpers) is found from the declaration's ``stem``; its rules
page (``rules/docs/<id>.md``) and its goldens are named by its id.
``tests/layout/test_games_complete.py`` fails, naming the piece and its file, when one is
missing; ``docs/adding-a-game.md`` walks through adding a game.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from rules.core import BadOptions, Game, IllegalAction, RulesError
from rules.declare import GameInfo, piece_module, stem

__all__ = [
    "GAMES",
    "BadOptions",
    "Game",
    "GameInfo",
    "IllegalAction",
    "RulesError",
    "all_info",
    "get_game",
    "get_info",
    "piece_module",
    "stem",
]

#: Every game, by id: the hub, the host menu, the tools and the tests all read this one
#: list. A game's engine and declaration live in ``rules/<stem>.py`` (the id with ``_``
#: for ``-``), and so does every other piece of it, under its own folder.
GAMES: tuple[str, ...] = (
    "secret-identity",
    "incognito",
    "identiquest",
    "ultra-secret",
    "identites-cryptees",
)


def _module(game_id: str) -> Any:
    if game_id not in GAMES:
        raise BadOptions(f"Unknown game: {game_id}")
    return importlib.import_module(piece_module("rules", game_id))


@cache
def get_info(game_id: str) -> GameInfo:
    """The declaration of ``game_id``; raises ``BadOptions`` for an unknown game."""
    info: GameInfo = _module(game_id).INFO
    if info.id != game_id:
        raise RuntimeError(f"rules/{stem(game_id)}.py declares {info.id}, not {game_id}")
    return info


def all_info() -> list[GameInfo]:
    """Every registered game's declaration, in the registry's order."""
    return [get_info(game_id) for game_id in GAMES]


def get_game(game_id: str) -> Game[Any]:
    """The engine for ``game_id``; raises ``BadOptions`` for an unknown game."""
    game: Game[Any] = _module(game_id).GAME
    return game
