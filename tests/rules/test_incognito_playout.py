"""Incognito: random playouts with invariants at every step, and a golden playthrough."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rules.core import Action, IllegalAction, action_to_json, decode_state, encode, replay
from rules.incognito import GAME, LIST_SIZE, Done, IncognitoState, Next, Timeout, Vote
from tests.support.golden import regenerating

GOLDEN = Path(__file__).parent / "golden" / "incognito.jsonl"
GAMES = 1000


def choose(state: IncognitoState, r: random.Random) -> Action:
    """A random actor, then a random legal action; voters mostly fill empty drawings.

    Uniform choice over every vote would wander for a long time (moving cards
    around); the bias keeps the games short while still exercising moves.
    """
    actors = [
        acts for seat in [None, *range(state.players)] if (acts := GAME.legal_actions(state, seat))
    ]
    acts = r.choice(actors)
    if isinstance(acts[0], Vote) and r.random() < 0.8:
        row = state.votes[acts[0].seat]
        fresh = [a for a in acts if isinstance(a, Vote) and not row[a.drawer]]
        fresh = [a for a in fresh if isinstance(a, Vote) and a.number not in row]
        acts = fresh or acts
    return r.choice(acts)


def probe(state: IncognitoState, r: random.Random) -> Action:
    """Any action of the game's shape, legal or not."""
    n = state.players
    kind = r.randrange(4)
    if kind == 0:
        return Done(r.randrange(-1, n + 1))
    if kind == 1:
        return Vote(r.randrange(n), r.randrange(-1, n + 1), r.randrange(0, LIST_SIZE + 2))
    return Timeout() if kind == 2 else Next()


def check_invariants(state: IncognitoState) -> None:
    """What must hold in every reachable state."""
    n = state.players
    assert 1 <= state.round <= 3
    assert len(state.words) == LIST_SIZE == len(set(state.words))
    assert len(set(state.word_at)) == n == len(state.places) == len(set(state.places))
    for voter, row in enumerate(state.votes):
        assert row[voter] == 0, "vote on own drawing"
        cards = [x for x in row if x]
        assert len(cards) == len(set(cards)), "one card in two places"
        assert all(1 <= x <= LIST_SIZE for x in cards)
    if state.phase in ("reveal", "over"):
        assert all(all(row[d] for d in range(n) if d != v) for v, row in enumerate(state.votes))
        assert len(state.history) == state.round
    else:
        assert len(state.history) == state.round - 1
    assert sum(map(sum, state.history)) == sum(state.scores)
    for points in state.history:
        # at most N-1 finds per voter, 2 per drawer
        assert all(0 <= p <= (n - 1) + 2 for p in points)


def play_one(seed: int, players: int) -> int:
    """One complete random game with checks at every step; returns its length."""
    r = random.Random(seed)
    options: dict[str, Any] = {"lang": r.choice(["fr", "en"])}
    state = GAME.setup(players, options, seed)
    actions: list[Action] = []
    while not GAME.is_over(state):
        check_invariants(state)
        legal = {a for s in [None, *range(players)] for a in GAME.legal_actions(state, s)}
        bad = probe(state, r)
        if bad not in legal:
            before = encode(state)
            with pytest.raises(IllegalAction):
                GAME.apply(state, bad)
            assert encode(state) == before
        action = choose(state, r)
        new, events = GAME.apply(state, action)
        assert new.version == state.version + 1
        assert all(a >= b for a, b in zip(new.scores, state.scores, strict=True))
        assert all(e.to is None or all(0 <= s < players for s in e.to) for e in events)
        assert decode_state(GAME, encode(new)) == new
        state = new
        actions.append(action)
        assert len(actions) < 5000, "game does not end"
    check_invariants(state)
    assert state.phase == "over" and len(state.history) == 3
    assert all(not GAME.legal_actions(state, s) for s in [None, *range(players)])
    assert replay(GAME, players, options, seed, actions) == state
    ranked = [s for group in GAME.ranking(state) for s in group]
    assert sorted(ranked) == list(range(players))
    return len(actions)


@pytest.mark.slow
def test_random_playouts_keep_every_invariant() -> None:
    """1,000 random games over 3-6 players: invariants, refusals, replay, the end."""
    lengths = [play_one(seed, 3 + seed % 4) for seed in range(GAMES)]
    assert len(lengths) == GAMES and min(lengths) > 0


def golden_records() -> list[dict[str, Any]]:
    """A seeded random game recorded with every view after every action."""
    players, seed, options = 4, 2026, {"lang": "fr", "countdown": 5}
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
        action = choose(state, r)
        state, events = GAME.apply(state, action)
        records.append(
            {
                "action": action_to_json(action),
                "events": [json.loads(encode(e)) for e in events],
                "views": views(),
            }
        )
    records.append({"scores": GAME.scores(state), "ranking": GAME.ranking(state)})
    return records


def test_golden_playthrough() -> None:
    """A recorded game replays to the same actions, events and views."""
    lines = [json.dumps(rec, ensure_ascii=False, sort_keys=True) for rec in golden_records()]
    if regenerating():
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
        pytest.fail("golden file regenerated: review it, then rerun without COFFRE_REGEN_GOLDEN")
    expected = GOLDEN.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(expected)
    for number, (got, want) in enumerate(zip(lines, expected, strict=True)):
        assert json.loads(got) == json.loads(want), f"golden line {number} differs"
