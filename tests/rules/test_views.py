"""Every registered game's seat views made from an already-built public view (``seat_view``,
what the hub does so a repaint builds the public part once) are the views ``view`` gives."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from rules import GAMES, get_game, get_info
from rules.core import Action

STEPS = 300

CASES = [(g, n) for g in GAMES for n in sorted({get_info(g).min_players, get_info(g).max_players})]


def _moves(game: Any, state: Any, players: int) -> list[Action]:
    moves: list[Action] = list(game.legal_actions(state, None))
    for seat in range(players):
        moves += game.legal_actions(state, seat)
    return moves


def _json(view: dict[str, Any]) -> str:
    return json.dumps(view, ensure_ascii=False)


@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_seat_views_from_one_public_view_are_the_views(game_id: str, players: int) -> None:
    """Random play: at every step each seat's ``seat_view`` over the one public view is,
    as JSON, its ``view``; it leaves that public view as it was; a copy of it does as well."""
    game = get_game(game_id)
    rnd = random.Random(f"views:{game_id}:{players}")
    state = game.setup(players, {}, 3)
    for _step in range(STEPS):
        public = game.view(state, None)
        assert _json(public) == _json(game.public_view(state))
        before = _json(public)
        for seat in range(players):
            alone = _json(game.view(state, seat))
            assert _json(game.seat_view(state, seat, public)) == alone, (game_id, seat)
            assert _json(game.seat_view(state, seat, copy.deepcopy(public))) == alone
        assert _json(public) == before, f"{game_id}: a seat view changed the public view"
        if game.is_over(state):
            break
        state, _events = game.apply(state, rnd.choice(_moves(game, state, players)))
