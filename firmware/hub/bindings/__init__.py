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
from rules import GAMES, stem
from rules.core import BadOptions


def module_name(game_id: str) -> str:
    """Where a game's binding lives."""
    return f"{__name__}.{stem(game_id)}"


def bound_games() -> list[str]:
    """Games that have a table binding (the host menu offers these)."""
    return [g for g in GAMES if importlib.util.find_spec(module_name(g)) is not None]


def binding_for(game_id: str, **settings: Any) -> Binding:
    """The binding for a game, configured with table settings (e.g. ``reveal_delay``)."""
    if game_id not in bound_games():
        raise BadOptions(f"No table binding for {game_id}")
    binding: Binding = importlib.import_module(module_name(game_id)).make_binding(**settings)
    return binding
