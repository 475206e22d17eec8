"""Secret Identity views: what each seat and the table see, and that nothing leaks."""

from __future__ import annotations

import json
import random

import pytest

from rules.core import Action, IllegalAction, encode
from rules.secret_identity import GAME, Advance, Answer, Mystery, Open, Pictos, Vote
from tests.support.games.secret_identity import (
    State,
    everyone_right,
    full_votes,
    prepared,
    random_game,
    redeal,
    run,
)

SEAT_KEYS = {
    "seat",
    "my_mystery",
    "my_votes",
    "free_keys",
    "pictos_left",
    "pictos_placed",
    "ready",
    "active",
    "answer",
    "table",
}
PUBLIC_KEYS = {
    "game",
    "mode",
    "mystery",
    "round",
    "rounds",
    "phase",
    "version",
    "active",
    "seats",
    "team",
    "answered",
    "answered_by",
    "revealed",
    "next_safe",
    "history",
    "is_over",
    "ranking",
    "result",
}
SEAT_ENTRY_KEYS = {
    "seat",
    "score",
    "position",
    "markers",
    "pictos_placed",
    "pictos_left",
    "ready",
    "mystery_locked",
    "voters",
    "votes_in",
    "votes_cast",
}


# --- re-dealing the secrets a seat must not see -----------------------------------


def sample_states() -> list[State]:
    """States from random games in every mode and phase (every 7th step)."""
    rnd = random.Random(2024)
    out: list[State] = []
    for k, (mode, mystery) in enumerate(
        [(m, x) for m in ("competitive", "coop") for x in ("keys", "dealt")] * 3
    ):
        states, _ = random_game(3 + (k * 5) % 6, {"mode": mode, "mystery": mystery}, k, rnd)
        out += [*states[::7], states[-1]]
    return out


STATES = sample_states()


@pytest.mark.parametrize("index", range(0, len(STATES), max(1, len(STATES) // 40)))
def test_no_leak_when_other_seats_secrets_are_redealt(index: int) -> None:
    """Re-dealing every secret a seat may not know leaves its view unchanged."""
    state = STATES[index]
    rnd = random.Random(index)
    for seat in [None, *range(state.players)]:
        view = GAME.view(state, seat)
        for _ in range(4):
            other = redeal(state, seat, rnd)
            assert GAME.view(other, seat) == view


def test_redeal_really_changes_hidden_secrets() -> None:
    """The no-leak test is not vacuous: the re-dealt states do differ."""
    state = prepared([1, 2, 3, 4])
    state = run(state, [Vote(1, 0, 5), Vote(2, 0, 6), Vote(3, 1, 2)])
    rnd = random.Random(1)
    assert any(
        redeal(state, 0, rnd).mystery[1:] != state.mystery[1:]
        and redeal(state, 0, rnd).votes != state.votes
        for _ in range(20)
    )


def test_view_keys_are_the_documented_api() -> None:
    """Seat views, the public view and each seat entry have exactly these keys."""
    for mode in ("competitive", "coop"):
        state = GAME.setup(4, {"mode": mode}, 0)
        public = GAME.view(state, None)
        assert set(public) == PUBLIC_KEYS
        assert all(set(entry) == SEAT_ENTRY_KEYS for entry in public["seats"])
        seat_view = GAME.view(state, 2)
        assert set(seat_view) == SEAT_KEYS
        assert seat_view["table"] == public


def test_seat_view_shows_its_own_mystery_votes_and_hand() -> None:
    """A seat sees its mystery number, where each of its keys is, its pictos."""
    state = prepared([5, 2, 7], [3, 1, 2])
    state = run(state, [Vote(0, 1, 2), Vote(0, 2, 8)])
    view = GAME.view(state, 0)
    assert view["my_mystery"] == 5
    assert view["my_votes"] == [{"safe": 1, "number": 2}, {"safe": 2, "number": 8}]
    assert view["free_keys"] == [1, 3, 4, 5, 6, 7]
    assert (view["pictos_left"], view["pictos_placed"], view["ready"]) == (7, 3, True)
    assert GAME.view(state, 1)["my_mystery"] == 2
    assert GAME.view(state, 1)["my_votes"] == []


def test_public_view_shows_who_voted_where_not_the_numbers() -> None:
    """The table sees voters per safe and counts, never a number or a mystery."""
    state = prepared([5, 2, 7])
    state = run(state, [Vote(1, 0, 5), Vote(2, 0, 3), Vote(0, 1, 2)])
    public = GAME.view(state, None)
    seats = public["seats"]
    assert [s["voters"] for s in seats] == [[1, 2], [0], []]
    assert [s["votes_in"] for s in seats] == [2, 1, 0]
    assert [s["votes_cast"] for s in seats] == [1, 1, 1]
    assert all(s["mystery_locked"] for s in seats)
    assert public["revealed"] == [] and public["next_safe"] is None
    # the seat whose safe holds votes does not see their numbers either
    assert GAME.view(state, 0)["my_votes"] == [{"safe": 1, "number": 2}]
    assert "5" not in json.dumps(public["seats"])


def test_public_view_before_votes_shows_readiness() -> None:
    """In "prepare" the table sees who locked a key and who confirmed pictos."""
    state = run(GAME.setup(3, {}, 0), [Mystery(0, 4), Pictos(1, 2)])
    seats = GAME.view(state, None)["seats"]
    assert [s["mystery_locked"] for s in seats] == [True, False, False]
    assert [(s["ready"], s["pictos_placed"]) for s in seats] == [(False, 0), (True, 2), (False, 0)]
    assert GAME.view(state, 1)["my_mystery"] is None


def test_revealed_safes_show_mystery_every_vote_and_points() -> None:
    """An opened safe shows its number, each vote with right/wrong, and the points."""
    state = prepared([1, 2, 3])
    guesses = everyone_right(state, [1, 2, 3])
    guesses[2][0] = 4
    state = full_votes(state, guesses)
    state = run(state, [Advance()])
    public = GAME.view(state, None)
    assert public["revealed"] == [
        {
            "safe": 0,
            "mystery": 1,
            "votes": [
                {"voter": 1, "number": 1, "right": True},
                {"voter": 2, "number": 4, "right": False},
            ],
            "right": [1],
            "points": 1,
        }
    ]
    assert public["next_safe"] == 1


def test_history_keeps_every_finished_round() -> None:
    """After a round ends, its safes stay readable in "history"."""
    state = prepared([1, 2, 3], [2, 1, 3])
    state = full_votes(state, everyone_right(state, [1, 2, 3]))
    state = run(state, [Advance()] * 4)
    public = GAME.view(state, None)
    assert public["round"] == 2 and public["revealed"] == []
    (past,) = public["history"]
    assert past["round"] == 1 and past["pictos"] == [2, 1, 3]
    assert [s["mystery"] for s in past["safes"]] == [1, 2, 3]
    assert [s["points"] for s in past["safes"]] == [2, 2, 2]


def opens_a_safe(state: State, action: Action) -> bool:
    """Whether the action reveals a safe (its events show secrets by design)."""
    if isinstance(action, Open):
        return True
    if not isinstance(action, Advance):
        return False
    return state.phase == "answer" or (state.phase == "reveal" and state.opened < state.players)


def same_key(state: State, other: State, action: Action) -> Action:
    """The action tapping, in ``other``, the physical key ``action`` taps in ``state``.

    A re-deal renumbers a voter's keys; a key is known by where it lies (which
    safe, or which free key in order), so a vote maps to the key in the same place.
    """
    if not isinstance(action, Vote):
        return action
    mine, theirs = state.votes[action.seat], other.votes[action.seat]
    placed = {a: b for a, b in zip(mine, theirs, strict=True) if a}
    free_a = [k for k in range(1, 9) if k not in mine]
    free_b = [k for k in range(1, 9) if k not in theirs]
    placed.update(zip(free_a, free_b, strict=True))
    return Vote(action.seat, action.safe, placed[action.number])


@pytest.mark.parametrize("index", range(0, len(STATES), max(1, len(STATES) // 40)))
def test_events_a_seat_sees_do_not_depend_on_hidden_secrets(index: int) -> None:
    """The same action on a re-dealt state gives the same events to that seat."""
    state = STATES[index]
    rnd = random.Random(index)
    actions = [a for s in [None, *range(state.players)] for a in GAME.legal_actions(state, s)]
    for action in rnd.sample(actions, min(12, len(actions))):
        if opens_a_safe(state, action):
            continue
        for seat in [None, *range(state.players)]:
            if getattr(action, "seat", None) == seat and seat is not None:
                continue
            other = redeal(state, seat, rnd, rng=False)
            try:
                _, theirs = GAME.apply(other, same_key(state, other, action))
            except IllegalAction:
                continue  # e.g. a mystery number now held by the re-dealt seat
            _, ours = GAME.apply(state, action)
            assert [encode(e) for e in ours if e.visible_to(seat)] == [
                encode(e) for e in theirs if e.visible_to(seat)
            ]


def test_vote_events_hide_the_numbers_from_everyone_but_the_voter() -> None:
    """Tapped, moved and returned key numbers reach only the voter."""
    base = prepared([1, 2, 3, 4])
    runs = [
        run(base, [Vote(0, 1, 5), Vote(0, 2, 6), Vote(0, 1, 7)]),
        run(base, [Vote(0, 1, 8), Vote(0, 2, 2), Vote(0, 1, 7)]),
    ]
    seen: list[list[list[bytes]]] = []
    for state in runs:
        _, moved = GAME.apply(state, Vote(0, 3, 6 if state is runs[0] else 2))
        _, replaced = GAME.apply(state, Vote(0, 1, 4))
        seen.append(
            [
                [encode(e) for e in ev if e.visible_to(seat)]
                for ev in (moved, replaced)
                for seat in (None, 1, 2, 3)
            ]
        )
        public = [e for e in moved if e.to is None]
        assert public[0].data == {"voter": 0, "safe": 3, "from": 2, "replaced": False}
    assert seen[0] == seen[1]


def test_mystery_events_are_private_to_their_seat() -> None:
    """Locking or being dealt a number tells only that seat the number."""
    state = GAME.setup(3, {}, 0)
    _, ev_a = GAME.apply(state, Mystery(1, 4))
    _, ev_b = GAME.apply(state, Mystery(1, 6))
    for seat in (None, 0, 2):
        assert [encode(e) for e in ev_a if e.visible_to(seat)] == [
            encode(e) for e in ev_b if e.visible_to(seat)
        ]
    assert any(e.data.get("number") == 4 for e in ev_a if e.visible_to(1))
    dealt = run(GAME.setup(3, {"mystery": "dealt"}, 0), [Pictos(s, 1) for s in range(3)])
    dealt = run(dealt, [Advance()] * 4)
    _, events = GAME.apply(dealt, Advance())
    for e in events:
        if "number" in e.data:
            assert e.to == (e.data["seat"],)


def test_coop_views_hide_the_answer_from_the_active_seat() -> None:
    """Co-op: guessers see the team answer, the active seat and the table do not."""
    state = run(GAME.setup(4, {"mode": "coop"}, 0), [Mystery(0, 3), Pictos(0, 2)])
    state, events = GAME.apply(state, Answer(2, 6))
    assert GAME.view(state, 1)["answer"] == 6
    assert GAME.view(state, 0)["answer"] is None
    assert GAME.view(state, 0)["my_mystery"] == 3 and GAME.view(state, 0)["active"]
    assert GAME.view(state, 1)["my_mystery"] is None
    public = GAME.view(state, None)
    assert (public["active"], public["answered"], public["answered_by"]) == (0, True, 2)
    assert all(e.data.get("number") is None for e in events if e.visible_to(0))
    _, other = GAME.apply(state, Answer(2, 7))
    for seat in (None, 0):
        assert [encode(e) for e in events if e.visible_to(seat)] == [
            encode(e) for e in other if e.visible_to(seat)
        ]
    assert any(e.data.get("number") == 6 for e in events if e.visible_to(3))
    state = run(state, [Advance()])
    assert GAME.view(state, None)["history"] == [
        {"turn": 1, "active": 0, "mystery": 3, "answer": 6, "right": False, "pictos": 2}
    ]
    assert GAME.view(state, None)["active"] == 1


def test_views_are_plain_json() -> None:
    """Every view serialises with the standard json module."""
    for state in STATES[::5]:
        for seat in [None, *range(state.players)]:
            json.dumps(GAME.view(state, seat))


def test_final_views_show_ranking_and_result() -> None:
    """When over, the table shows the ranking (and the band in co-op)."""
    for state in STATES:
        public = GAME.view(state, None)
        if not public["is_over"]:
            assert public["ranking"] is None and public["result"] is None
            continue
        assert public["ranking"] == GAME.ranking(state)
        assert (public["result"] is not None) == (state.mode == "coop")


def test_docs_list_every_action_and_view_key() -> None:
    """rules/docs/secret-identity.md documents each action type and view key."""
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "rules" / "docs" / "secret-identity.md").read_text()
    for kind in ("mystery", "pictos", "vote", "answer", "open", "advance"):
        assert f'{{"type":"{kind}"' in docs
    for key in SEAT_KEYS | PUBLIC_KEYS | SEAT_ENTRY_KEYS:
        assert f"`{key}`" in docs, key
