"""Secret Identity, co-op variant: hands, turns, active player, answers, bands."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from rules.core import encode, replay
from rules.secret_identity import (
    BANDS,
    GAME,
    Advance,
    Answer,
    Mystery,
    Open,
    Pictos,
    SecretIdentityState,
    Vote,
)
from tests.support.games.secret_identity import refused, run

State = SecretIdentityState
COOP = {"mode": "coop"}


def turn(state: State, number: int, answer: int | None, pictos: int = 1) -> State:
    """Play one co-op turn: the active seat locks ``number``, one guesser answers."""
    a = state.active
    state = run(state, [Mystery(a, number), Pictos(a, pictos)])
    if answer is None:
        return run(state, [Advance()])
    guesser = (a + 1) % state.players
    return run(state, [Answer(guesser, answer), Open(a)])


@pytest.mark.parametrize(("players", "cards"), [(3, 10), (4, 10), (5, 8), (6, 8), (7, 6), (8, 6)])
def test_picto_cards_by_player_count(players: int, cards: int) -> None:
    """Co-op hands: 10 cards at 3-4 players, 8 at 5-6, 6 at 7-8."""
    state = GAME.setup(players, COOP, 0)
    assert state.hand == (cards,) * players


def test_first_active_is_seat_0_and_only_it_prepares() -> None:
    """Turn 1: seat 0 is active; other seats may not lock keys or place pictos."""
    state = GAME.setup(4, COOP, 0)
    assert (state.round, state.active, state.phase) == (1, 0, "prepare")
    refused(state, Mystery(1, 3), "Not your turn")
    refused(state, Pictos(2, 1), "Not your turn")
    refused(state, Answer(1, 3), "Wait for the pictos")
    refused(state, Advance(), "Not everyone is ready")
    refused(state, Vote(1, 0, 3), "In co-op, send one answer")
    state = run(state, [Pictos(0, 2), Mystery(0, 5)])
    assert state.phase == "answer"
    assert state.hand == (8, 10, 10, 10)


def test_active_player_rotates_in_seat_order() -> None:
    """Active seats go 0, 1, 2, 0, 1... one turn each."""
    state = GAME.setup(3, COOP, 0)
    actives = []
    for _ in range(6):
        actives.append(state.active)
        state = turn(state, 4, 4)
    assert actives == [0, 1, 2, 0, 1, 2]


def test_right_answer_scores_one_for_the_team() -> None:
    """A right answer adds 1 to the team score (every seat's score); wrong adds 0."""
    state = GAME.setup(4, COOP, 0)
    state = turn(state, 6, 6)
    assert state.scores == (1, 1, 1, 1)
    state = turn(state, 2, 3)
    assert state.scores == (1, 1, 1, 1)
    assert [t.answer == t.mystery for t in state.turns_done] == [True, False]
    assert GAME.ranking(state) == [[0, 1, 2, 3]]


def test_a_later_answer_replaces_the_earlier() -> None:
    """Guessers change the team answer by tapping another key; the last one counts."""
    state = run(GAME.setup(4, COOP, 0), [Mystery(0, 7), Pictos(0, 1)])
    state = run(state, [Answer(1, 3), Answer(2, 7)])
    assert (state.answer, state.answered_by) == (7, 2)
    refused(state, Answer(3, 7), "That key is already there")
    state = run(state, [Advance()])
    assert state.scores[0] == 1


def test_active_player_cannot_answer_and_opens_only_after_an_answer() -> None:
    """The active seat may not answer; its open needs an answer; others may not open."""
    state = run(GAME.setup(4, COOP, 0), [Mystery(0, 7), Pictos(0, 1)])
    refused(state, Answer(0, 7), "You can't answer your own safe")
    refused(state, Open(0), "No answer yet")
    state = run(state, [Answer(1, 2)])
    refused(state, Open(1), "Only the active player opens")
    state, events = GAME.apply(state, Open(0))
    assert events[0].kind == "safe_opened" and events[0].data["right"] is False
    assert state.active == 1 and state.round == 2


def test_advance_with_no_answer_is_a_wrong_answer() -> None:
    """The host's next opens the safe even with no answer: it counts as wrong."""
    state = turn(GAME.setup(5, COOP, 0), 1, None)
    assert state.scores[0] == 0 and state.round == 2


def test_ten_turns_then_the_game_is_over() -> None:
    """The game ends after turn 10 with a result band."""
    state = GAME.setup(8, COOP, 0)
    for k in range(10):
        assert state.round == k + 1 and not GAME.is_over(state)
        state = turn(state, 3, 3)
    assert GAME.is_over(state)
    assert GAME.view(state, None)["result"]["right"] == 10
    refused(state, Advance(), "The game is over")


def test_player_with_no_picto_left_is_skipped() -> None:
    """An active seat is skipped when it has no picto card left."""
    state = replace(GAME.setup(3, COOP, 0), hand=(10, 0, 10))
    state = turn(state, 1, 1)
    assert state.active == 2
    state = turn(state, 1, 1)
    assert state.active == 0


def test_game_ends_when_nobody_has_a_picto_left() -> None:
    """No seat has a card left for the next turn: the game ends early."""
    state = replace(GAME.setup(3, COOP, 0), hand=(1, 0, 0))
    state, events = GAME.apply(run(state, [Mystery(0, 2), Pictos(0, 1)]), Advance())
    assert GAME.is_over(state) and state.round == 1
    assert events[-1].data["reason"] == "no pictos left"


def test_a_seat_that_used_its_last_picto_is_skipped_next_time() -> None:
    """Seat 0 spends its last 3 cards on turn 1: turn 4 goes to seat 1."""
    state = replace(GAME.setup(3, COOP, 0), hand=(3, 10, 10))
    actives = []
    for _ in range(5):
        actives.append(state.active)
        state = turn(state, 1, 1, pictos=min(3, state.hand[state.active]))
    assert actives == [0, 1, 2, 1, 2]


@pytest.mark.parametrize(
    ("right", "band"),
    [
        (0, [0, 2]),
        (2, [0, 2]),
        (3, [3, 5]),
        (5, [3, 5]),
        (6, [6, 8]),
        (8, [6, 8]),
        (9, [9, 10]),
        (10, [9, 10]),
    ],
)
def test_result_band(right: int, band: list[int]) -> None:
    """Right answers after 10 turns fall in the bands 0-2, 3-5, 6-8, 9-10."""
    state = GAME.setup(8, COOP, 0)
    for k in range(10):
        state = turn(state, 4, 4 if k < right else 5)
    result = GAME.view(state, None)["result"]
    assert result["right"] == right and result["band"] == band
    assert result["text"] == next(t for lo, hi, t in BANDS if lo <= right <= hi)


def test_band_wording_is_our_own_and_fits_the_screen() -> None:
    """Four bands, short texts, none copied from the French rulebook."""
    assert [(lo, hi) for lo, hi, _ in BANDS] == [(0, 2), (3, 5), (6, 8), (9, 10)]
    for _, _, text in BANDS:
        assert len(text) <= 63
        assert "mentalistes" not in text and "Hum" not in text


def test_dealt_mode_deals_the_active_players_number() -> None:
    """mystery=dealt: each turn the active seat gets a number; the key action is refused."""
    state = GAME.setup(4, {"mode": "coop", "mystery": "dealt"}, 3)
    for _ in range(5):
        a = state.active
        assert 1 <= state.mystery[a] <= 8
        assert sum(1 for m in state.mystery if m) == 1
        refused(state, Mystery(a, 1), "Numbers are dealt")
        state = run(state, [Pictos(a, 1), Advance()])


def test_coop_replay_is_byte_identical() -> None:
    """Co-op replays reproduce the exact state."""
    opts = {"mode": "coop", "mystery": "dealt"}
    actions = [Pictos(0, 2), Answer(1, 4), Open(0), Pictos(1, 1), Advance()]
    assert encode(replay(GAME, 5, opts, 11, actions)) == encode(replay(GAME, 5, opts, 11, actions))


def test_every_legal_coop_action_is_accepted() -> None:
    """legal_actions in co-op lists only actions apply accepts."""
    state = GAME.setup(4, COOP, 2)
    for _ in range(3):
        for seat in [None, 0, 1, 2, 3]:
            for action in GAME.legal_actions(state, seat):
                GAME.apply(state, action)
        a = state.active
        state = run(state, [Mystery(a, 2), Pictos(a, 1)])
        for seat in [None, 0, 1, 2, 3]:
            for action in GAME.legal_actions(state, seat):
                GAME.apply(state, action)
        state = run(state, [Answer((a + 1) % 4, 2), Open(a)])
