"""Per-game engine helpers shared by the rules, bindings, screens and table tests.

Each registered game has a module here, ``tests/support/games/<stem>.py``, found from
its id (``tests/layout/test_games_complete.py`` checks it is there). Every one exposes
``redeal_for_seat(state, seat, k)``: the state with what ``seat`` may not know dealt
again from seed ``k`` (None when nothing is hidden now), for the no-leak tests.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from rules import stem


def game_support(game_id: str) -> ModuleType:
    """The test helpers of one game."""
    return importlib.import_module(f"{__name__}.{stem(game_id)}")
