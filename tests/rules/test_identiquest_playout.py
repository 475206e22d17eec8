"""Identiquest: random playouts with invariants at every step, and golden playthroughs."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rules.core import Action, IllegalAction, action_to_json, decode_state, encode, replay
from rules.identiquest import GAME, MARKET, Accuse, Give, IdentiquestState, Steal
from tests.support.golden import regenerating

GOLDEN = Path(__file__).parent / "golden"
GAMES = 1000


def actor(state: IdentiquestState) -> int:
    """Who must act: the giver while gems are owed, else the player whose turn it is."""
    return state.pending.giver if state.pending is not None else state.turn


def probe(state: IdentiquestState, r: random.Random) -> Action:
    """Any action of the game's shape, legal or not."""
    n = state.players
    seat = r.randrange(-1, n + 1)
    colour = r.choice([*state.colours, "gold"])
    kind = r.randrange(3)
    if kind == 0:
        a, b = r.randrange(-1, MARKET + 1), r.randrange(-1, MARKET + 1)
        return Steal(seat, (min(a, b), max(a, b)))
    if kind == 1:
        return Accuse(seat, r.randrange(-1, n + 1), colour)
    return Give(seat, colour)


def check_invariants(state: IdentiquestState) -> None:
    """What must hold in every reachable state."""
    n, colours = state.players, len(state.colours)
    gems = Counter(state.deck) + Counter(state.market)
    for pile in state.loot:
        gems += Counter(pile)
    assert gems == Counter({c: k for c, k in enumerate(state.counts) if k}), "gems lost"
    assert len(state.market) == MARKET or state.over
    assert len(set(state.identity)) == n and all(0 <= c < colours for c in state.identity)
    for p in range(n):
        row = state.crossed[p]
        assert not (state.unmasked[p] and state.escaped[p])
        if not state.unmasked[p]:
            assert not row[state.identity[p]], "true colour crossed"
            assert row.count(False) >= 1
        if state.escaped[p]:
            assert row.count(False) == 1
        elif not state.unmasked[p]:
            assert row.count(False) >= 2, "should have escaped"
        if state.unmasked[p]:
            assert all(state.crossed[q][state.identity[p]] for q in range(n) if q != p)
    assert 0 <= state.turn < n
    if state.pending is not None:
        assert state.give == "choose" and state.pending.left >= 1
        assert len(state.loot[state.pending.giver]) > state.pending.left - 1
    if not state.over and state.pending is None:  # owed gems are given before the end
        assert not all(u or e for u, e in zip(state.unmasked, state.escaped, strict=True))
    for seat in range(n):
        legal = GAME.legal_actions(state, seat)
        assert bool(legal) == (not state.over and seat == actor(state))
    assert GAME.legal_actions(state, None) == []


def play_one(seed: int, players: int) -> int:
    """One complete random game with checks at every step; returns its length."""
    r = random.Random(seed)
    options: dict[str, Any] = {"give": r.choice(["top", "choose"])}
    greed = r.choice([0.0, 0.7])  # half the games mostly steal, so the deck runs down
    state = GAME.setup(players, options, seed)
    actions: list[Action] = []
    while not GAME.is_over(state):
        check_invariants(state)
        legal = GAME.legal_actions(state, actor(state))
        for _ in range(2):
            bad = probe(state, r)
            if bad not in legal:
                before = encode(state)
                with pytest.raises(IllegalAction):
                    GAME.apply(state, bad)
                assert encode(state) == before
        steals = [a for a in legal if isinstance(a, Steal)]
        action = r.choice(steals if steals and r.random() < greed else legal)
        new, events = GAME.apply(state, action)
        assert new.version == state.version + 1
        assert all(e.to is None for e in events), "Identiquest events are all public"
        assert decode_state(GAME, encode(new)) == new
        state = new
        actions.append(action)
        assert len(actions) < 2000, "game does not end"
    check_invariants(state)
    assert state.end in ("deck", "all-out")
    assert replay(GAME, players, options, seed, actions) == state
    ranked = [s for group in GAME.ranking(state) for s in group]
    assert sorted(ranked) == list(range(players))
    assert GAME.view(state, None)["scores"] == GAME.scores(state)
    return len(actions)


@pytest.mark.slow
def test_random_playouts_keep_every_invariant() -> None:
    """1,000 random games over 3-6 players and both give modes: invariants, replay, end."""
    lengths = [play_one(seed, 3 + seed % 4) for seed in range(GAMES)]
    assert len(lengths) == GAMES and min(lengths) > 0


def golden_records(players: int, seed: int, options: dict[str, Any]) -> list[dict[str, Any]]:
    """A seeded random game recorded with every view after every action."""
    r = random.Random(seed)
    state = GAME.setup(players, options, seed)

    def views() -> dict[str, Any]:
        out: dict[str, Any] = {"public": GAME.view(state, None)}
        out.update({str(s): GAME.view(state, s) for s in range(players)})
        return out

    records: list[dict[str, Any]] = [
        {"setup": {"players": players, "seed": seed, "options": options}, "views": views()}
    ]
    while not GAME.is_over(state):
        legal = GAME.legal_actions(state, actor(state))
        steals = [a for a in legal if isinstance(a, Steal)]
        # mostly steal, so the recorded game runs the deck down like a real one
        action = r.choice(steals if steals and r.random() < 0.7 else legal)
        state, events = GAME.apply(state, action)
        records.append(
            {
                "action": json.loads(json.dumps(action_to_json(action))),
                "events": [json.loads(encode(e)) for e in events],
                "views": views(),
            }
        )
    records.append({"scores": GAME.scores(state), "ranking": GAME.ranking(state)})
    return records


@pytest.mark.parametrize(
    ("name", "players", "seed", "options"),
    [
        ("identiquest.jsonl", 4, 2026, {}),
        ("identiquest-choose.jsonl", 3, 7, {"give": "choose"}),
    ],
)
def test_golden_playthrough(name: str, players: int, seed: int, options: dict[str, Any]) -> None:
    """A recorded game replays to the same actions, events and views."""
    records = golden_records(players, seed, options)
    lines = [json.dumps(rec, ensure_ascii=False, sort_keys=True) for rec in records]
    path = GOLDEN / name
    if regenerating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        pytest.fail("golden file regenerated: review it, then rerun without COFFRE_REGEN_GOLDEN")
    expected = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(expected)
    for number, (got, want) in enumerate(zip(lines, expected, strict=True)):
        assert json.loads(got) == json.loads(want), f"golden line {number} differs"
