"""Per-game engine helpers shared by the rules, bindings, screens and table tests.

Each registered game has a module here, ``tests/support/games/<stem>.py``, found from
its id. Every one exposes (``tests/layout/test_games_complete.py`` names a missing one):

- ``redeal_for_seat(state, seat, k)``: the state with what ``seat`` may not know dealt
  again from seed ``k`` (None when nothing is hidden now), for the screens' no-leak test;
- ``redeal_public(state, r)``: the state with what no seat shows the table dealt again
  from ``r`` (a ``random.Random``; ``state`` itself when nothing is hidden), for the table
  display's no-leak test, which plays ``PUBLIC_PLAYERS`` seats;
- ``FOLLOW``: ``(players, table seed, bot seed, bot options)`` of the game the bots play
  while the table display follows it.

And, when a random game does not do (``tests/support/playouts.py`` and
``tests/support/display_samples.py`` read them): ``PLAYOUT_SAMPLES`` (the states to check
instead of a random game's), ``playout_move(state, r)`` (the move to play instead of a
random legal one), ``sample_actions(state, actions)`` (the moves the display samples
choose among).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from rules import piece_module


def game_support(game_id: str) -> ModuleType:
    """The test helpers of one game."""
    return importlib.import_module(piece_module(__name__, game_id))
