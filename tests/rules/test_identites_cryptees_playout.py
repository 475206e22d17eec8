"""Identités cryptées 2.0: random playouts with invariants, and no-leak views."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from msgspec.structs import replace

from rules._identites_cryptees_state import (
    ABILITY,
    DISCARD,
    OVER,
    REAIM,
    RESPOND,
    WINDOW,
    ICState,
    Program,
    Timeout,
    alive,
    cards_of,
    hand_limit,
    hand_size,
    own_positions,
)
from rules.core import Action, IllegalAction, decode_state, encode, replay
from rules.identites_cryptees import GAME
from tests.support.games.identites_cryptees import (
    acting_seat,
    bot,
    redeal,
)

GAMES = 1000
MAX_STEPS = 4000


def options_for(i: int) -> dict[str, Any]:
    """Vary the options over the playouts."""
    players = 4 + i % 13
    opts: dict[str, Any] = {"interrupt_window": 5 if i % 2 else 0, "first": i % players}
    if players >= 6 and i % 5 == 0:
        opts["legion_loyalty"] = True
    return opts


def check_invariants(st: ICState, total_programs: int) -> None:
    """Facts that hold after every accepted action."""
    assert decode_state(GAME, encode(st)) == st
    living = alive(st)
    assert living
    for i, s in enumerate(st.seats):
        assert 0 <= s.hp <= 2
        assert s.alive == (s.hp > 0)
        if not s.alive:
            assert s.id_up  # its programs stay with it (rules/docs/identites-cryptees.md)
            assert all(st.loyalty_up[p] for p in own_positions(st, i))
    holders = [w.holder for w in st.weapons if w.holder is not None]
    assert len(holders) == len(set(holders)) and all(st.seats[h].alive for h in holders)
    for w in st.weapons:
        if w.holder is not None and w.holder not in st.reaim and st.phase != OVER:
            assert all(st.seats[t].alive and t != w.holder for t in w.targets)
    cards = list(st.deck)
    for s in st.seats:
        cards += [*s.programs, *s.permanents]
    assert sorted(cards) == sorted(set(cards)) and len(cards) == total_programs
    scores = GAME.scores(st)
    if st.phase == OVER:
        assert sum(scores) == len(st.winners) >= 1
    else:
        assert sum(scores) == 0
    _check_who_may_act(st)


def _check_who_may_act(st: ICState) -> None:
    seats = range(st.players)
    acting = {s for s in seats if GAME.legal_actions(st, s)}
    table = GAME.legal_actions(st, None)
    if st.phase == OVER:
        assert not acting and not table
    elif st.phase == WINDOW:
        waiting = {s for s in alive(st) if s != st.active and s not in st.passed}
        assert waiting <= acting <= waiting | {st.active}
        assert all(isinstance(a, Program) for a in GAME.legal_actions(st, st.active))
        assert table == [Timeout()]
    else:
        assert not table
        if st.phase in (RESPOND, REAIM, ABILITY, DISCARD):
            assert acting_seat(st) in acting
            for seat in acting - {acting_seat(st)}:  # anytime programs only (Decision)
                assert all(_anytime(st, a) for a in GAME.legal_actions(st, seat))
        else:
            assert st.active in acting


def _anytime(st: ICState, action: Action) -> bool:
    return isinstance(action, Program) and cards_of(st).programs[action.card].timing == "anytime"


def refused(st: ICState, action: Action) -> None:
    """An action that must be refused, leaving the state as it was."""
    before = encode(st)
    with pytest.raises(IllegalAction):
        GAME.apply(st, action)
    assert encode(st) == before


def play_one(i: int) -> tuple[int, int]:
    """Play game ``i`` to its end; return (players, steps)."""
    r = random.Random(i)
    players = 4 + i % 13
    opts = options_for(i)
    st = GAME.setup(players, opts, i)
    total = len(st.deck) + sum(len(s.programs) for s in st.seats)
    actions: list[Action] = []
    turns_seen = 0
    for _ in range(MAX_STEPS):
        if GAME.is_over(st):
            break
        action = bot(st, r)
        if r.random() < 0.05:
            _try_illegal(st, r)
        before_active = st.active
        new, events = GAME.apply(st, action)
        assert new.version == st.version + 1
        for e in events:
            assert e.to is None or all(0 <= s < players for s in e.to)
        if new.phase != OVER and any(e.kind == "turn" for e in events):
            turns_seen += 1
            if st.seats[before_active].alive:
                assert hand_size(new, before_active) <= hand_limit(new, before_active)
        st = new
        actions.append(action)
        check_invariants(st, total)
    assert GAME.is_over(st), f"game {i} did not end"
    assert replay(GAME, players, opts, i, actions) == st
    ranking = GAME.ranking(st)
    assert sorted(s for g in ranking for s in g) == list(range(players))
    return players, len(actions)


def _try_illegal(st: ICState, r: random.Random) -> None:
    """Actions of seats that may not act now are refused without change."""
    for seat in range(st.players):
        if GAME.legal_actions(st, seat):
            continue
        others = [a for s in range(st.players) for a in GAME.legal_actions(st, s)]
        if others:
            action = r.choice(others)
            if hasattr(action, "seat"):
                refused(st, replace(action, seat=seat))  # type: ignore[type-var]
        return
    if st.phase != WINDOW:
        refused(st, Timeout())


@pytest.mark.slow
def test_random_playouts_keep_the_invariants() -> None:
    """1,000 random games over 4-16 players end and keep every invariant at every step."""
    per_count: Counter[int] = Counter()
    steps = []
    for i in range(GAMES):
        players, n = play_one(i)
        per_count[players] += 1
        steps.append(n)
    assert set(per_count) == set(range(4, 17))
    assert sum(per_count.values()) == GAMES


# --- no leak -------------------------------------------------------------------


@pytest.mark.parametrize("start", [0, 1000])
def test_views_do_not_leak_hidden_cards(start: int) -> None:
    """A seat's view (and the public one) is unchanged when others' secrets are re-dealt."""
    checked = 0
    for i in range(start, start + 40):
        r = random.Random(i)
        players = 4 + i % 13
        st = GAME.setup(players, options_for(i), i)
        while not GAME.is_over(st):
            if r.random() < 0.25:
                for viewer in [None, *r.sample(range(players), min(3, players))]:
                    other = redeal(st, viewer, r)
                    assert GAME.view(other, viewer) == GAME.view(st, viewer)
                    checked += 1
            st, _ = GAME.apply(st, bot(st, r))
    assert checked > 1000


def test_redeal_really_changes_the_hidden_cards() -> None:
    """The no-leak test is not vacuous: re-dealing changes what other seats see."""
    st = GAME.setup(8, {}, 3)
    other = redeal(st, 0, random.Random(1))
    assert other.loyalty != st.loyalty or other.seats != st.seats
    assert GAME.view(other, 1) != GAME.view(st, 1) or GAME.view(other, 2) != GAME.view(st, 2)
