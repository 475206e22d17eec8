"""Identités cryptées 2.0: a golden playthrough of a whole 5-player game.

``tests/rules/golden/identites-cryptees-5p.jsonl`` holds one JSON line for the
setup and one per action: the action in the documented notation, the events
(with their visibility), the public view and every seat's view (its ``you``
part; the test checks that its ``table`` part is the public view). The test
replays the recorded actions and diffs each line. ``COFFRE_REGEN_GOLDEN=1``
rewrites the file from a seeded bot game, and the test then fails on purpose.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rules.core import Action, Event, action_to_json, decode_action
from rules.identites_cryptees import GAME
from tests.support.games.identites_cryptees import bot
from tests.support.golden import regenerating

GOLDEN = Path(__file__).parent / "golden" / "identites-cryptees-5p.jsonl"
PLAYERS = 5
SEED = 215
OPTIONS: dict[str, Any] = {"interrupt_window": 5, "first": 2}


def _views(state: Any) -> dict[str, Any]:
    """The public view, and each seat's own part (its table part is the public one)."""
    public = GAME.view(state, None)
    out = {"public": public}
    for seat in range(PLAYERS):
        view = GAME.view(state, seat)
        assert view["table"] == public["table"] and view["seat"] == seat
        out[str(seat)] = view["you"]
    return out


def _events(events: list[Event]) -> list[dict[str, Any]]:
    return [{"kind": e.kind, "data": e.data, "to": list(e.to) if e.to else None} for e in events]


def _lines(actions: list[Action]) -> list[str]:
    state = GAME.setup(PLAYERS, OPTIONS, SEED)
    head = {"setup": {"players": PLAYERS, "seed": SEED, "options": OPTIONS}}
    lines = [_dump({**head, "views": _views(state)})]
    for step, action in enumerate(actions, start=1):
        state, events = GAME.apply(state, action)
        record = {
            "step": step,
            "action": action_to_json(action),
            "events": _events(events),
            "views": _views(state),
        }
        lines.append(_dump(record))
    assert GAME.is_over(state)
    return lines


def _dump(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _bot_game() -> list[Action]:
    r = random.Random(SEED)
    state = GAME.setup(PLAYERS, OPTIONS, SEED)
    actions = []
    while not GAME.is_over(state):
        action = bot(state, r)
        state, _ = GAME.apply(state, action)
        actions.append(action)
    return actions


def test_golden_playthrough() -> None:
    """Replaying the recorded actions gives exactly the recorded events and views."""
    if regenerating():
        GOLDEN.write_text("\n".join(_lines(_bot_game())) + "\n", encoding="utf-8")
        pytest.fail(f"regenerated {GOLDEN.name}: review it, then run without COFFRE_REGEN_GOLDEN")
    recorded = GOLDEN.read_text(encoding="utf-8").splitlines()
    actions = [decode_action(GAME, json.loads(line)["action"]) for line in recorded[1:]]
    replayed = _lines(actions)
    assert len(replayed) == len(recorded)
    for step, (want, got) in enumerate(zip(recorded, replayed, strict=True)):
        assert json.loads(got) == json.loads(want), f"step {step} differs"


def test_golden_game_covers_the_main_moves() -> None:
    """The recorded game uses windows, interrupts, weapons, abilities and eliminations."""
    records = [json.loads(line) for line in GOLDEN.read_text().splitlines()[1:]]
    actions = {r["action"]["type"] for r in records}
    assert actions >= {"pass", "timeout", "equip", "fire", "aim", "program", "ability"}
    assert actions >= {"reveal", "take", "discard", "investigate"}
    events = {e["kind"] for r in records for e in r["events"]}
    assert events >= {"interrupted", "eliminated", "check", "peek", "steal", "heal"}
    assert records[-1]["views"]["public"]["table"]["over"] is True
