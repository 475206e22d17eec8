"""Table bindings: how each game meets the physical table (inputs, screens).

Each registered game's binding lives in ``firmware/hub/bindings/<stem>.py`` (its id with
``_`` for ``-``, see :mod:`rules`) and exposes ``make_binding(**settings) -> Binding``.
A registered game without one is a bug that ``tests/test_games_complete.py`` names;
``bound_games`` lists those that have one, so a game being written stays off the panel.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from firmware.hub.table import Binding
from rules import GAMES, piece_module
from rules.core import BadOptions


def bound_games() -> list[str]:
    """Games that have a table binding (the host menu offers these)."""
    return [g for g in GAMES if importlib.util.find_spec(piece_module(__name__, g)) is not None]


def binding_for(game_id: str, **settings: Any) -> Binding:
    """The binding for a game, configured with table settings (e.g. ``reveal_delay``)."""
    if game_id not in bound_games():
        raise BadOptions(f"No table binding for {game_id}")
    module = importlib.import_module(piece_module(__name__, game_id))
    binding: Binding = module.make_binding(**settings)
    return binding
