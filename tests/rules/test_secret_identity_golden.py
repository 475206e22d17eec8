"""Secret Identity golden playthroughs: every action, event and view, step by step.

The files under ``golden/`` hold one JSON object a line: the setup first, then each
action with the events it produced and every seat's view plus the public view.
``COFFRE_REGEN_GOLDEN=1`` rewrites them from a seeded random game and FAILS, so a
new baseline is always a reviewed decision.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rules.core import action_to_json, decode_action
from rules.secret_identity import GAME
from tests.support.games.secret_identity import State, random_action
from tests.support.golden import regenerating

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "secret-identity-competitive": (4, {"mode": "competitive", "mystery": "keys"}, 7),
    "secret-identity-coop": (3, {"mode": "coop", "mystery": "dealt"}, 11),
}


def snapshot(state: State) -> dict[str, Any]:
    """Every seat's view (its ``table`` part checked apart) and the public view."""
    public = GAME.view(state, None)
    views: dict[str, Any] = {"public": public}
    for seat in range(state.players):
        view = GAME.view(state, seat)
        assert view.pop("table") == public
        views[str(seat)] = view
    legal = {
        "table" if s is None else str(s): len(GAME.legal_actions(state, s))
        for s in [None, *range(state.players)]
    }
    return {"views": views, "legal": legal}


def lines_for(players: int, options: dict[str, str], seed: int, actions: list[Any]) -> list[str]:
    """The golden lines of the game played with these actions."""
    state = GAME.setup(players, options, seed)
    out = [{"setup": {"players": players, "options": options, "seed": seed}, **snapshot(state)}]
    for step, action in enumerate(actions, start=1):
        state, events = GAME.apply(state, action)
        out.append(
            {
                "step": step,
                "action": action_to_json(action),
                "events": [{"kind": e.kind, "data": e.data, "to": e.to} for e in events],
                **snapshot(state),
            }
        )
    assert GAME.is_over(state)
    return [json.dumps(line, sort_keys=True, ensure_ascii=False) for line in out]


def fresh_actions(players: int, options: dict[str, str], seed: int) -> list[Any]:
    """A seeded random game's actions (only used to regenerate a golden file)."""
    rnd = random.Random(seed)
    state = GAME.setup(players, options, seed)
    actions = []
    while not GAME.is_over(state):
        action = random_action(state, rnd)
        state, _ = GAME.apply(state, action)
        actions.append(action)
    return actions


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name: str) -> None:
    """Replaying the recorded actions gives exactly the recorded events and views."""
    players, options, seed = CASES[name]
    path = GOLDEN / f"{name}.jsonl"
    if regenerating():
        GOLDEN.mkdir(exist_ok=True)
        lines = lines_for(players, options, seed, fresh_actions(players, options, seed))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        pytest.fail(f"regenerated {path.name}: review the diff, then rerun without the flag")
    recorded = path.read_text(encoding="utf-8").splitlines()
    actions = [decode_action(GAME, json.loads(line)["action"]) for line in recorded[1:]]
    produced = lines_for(players, options, seed, actions)
    assert len(produced) == len(recorded)
    for step, (got, want) in enumerate(zip(produced, recorded, strict=True)):
        assert json.loads(got) == json.loads(want), f"step {step} differs"
        assert got == want, f"step {step} serialises differently"
