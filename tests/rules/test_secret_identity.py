"""Secret Identity: every rule and Decision (rules/docs/secret-identity.md), competitive mode."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rules import BadOptions, get_game
from rules.core import Action, encode, replay
from rules.secret_identity import (
    GAME,
    Advance,
    Answer,
    Mystery,
    Open,
    Pictos,
    Vote,
)
from tests.support.games.secret_identity import (
    State,
    everyone_right,
    full_votes,
    prepared,
    refused,
    run,
)

# --- helpers ------------------------------------------------------------------


def open_all(state: State) -> State:
    """Close voting if needed and open every safe (the round is not ended)."""
    if state.phase == "vote":
        state, _ = GAME.apply(state, Advance())
    while state.opened < state.players:
        state, _ = GAME.apply(state, Advance())
    return state


# --- setup and options ------------------------------------------------------


def test_registry_finds_the_engine() -> None:
    """get_game("secret-identity") is this module's GAME, 3-8 players."""
    game = get_game("secret-identity")
    assert game is GAME
    assert (game.min_players, game.max_players) == (3, 8)


@pytest.mark.parametrize("players", [2, 9])
def test_player_count_outside_3_to_8_is_refused(players: int) -> None:
    """Setup refuses fewer than 3 or more than 8 players."""
    with pytest.raises(BadOptions):
        GAME.setup(players, {}, 0)


@pytest.mark.parametrize("options", [{"mode": "solo"}, {"mystery": "magic"}, {"colour": "red"}])
def test_bad_options_are_refused(options: dict[str, str]) -> None:
    """Unknown option names or values raise BadOptions."""
    with pytest.raises(BadOptions):
        GAME.setup(4, options, 0)


def test_defaults_are_competitive_with_keys() -> None:
    """No options: competitive, physical mystery keys, round 1 in "prepare"."""
    state = GAME.setup(5, {}, 3)
    assert (state.mode, state.mystery_mode, state.round, state.phase) == (
        "competitive",
        "keys",
        1,
        "prepare",
    )
    assert state.hand == (10,) * 5
    assert state.mystery == (0,) * 5


def test_setup_and_actions_replay_byte_identical() -> None:
    """The same seed and actions give byte-identical serialised states."""
    actions: list[Action] = []
    for s, n in enumerate([3, 1, 2]):
        actions += [Mystery(s, n), Pictos(s, 2)]
    actions += [Vote(0, 1, 1), Vote(1, 0, 3), Advance(), Advance()]
    for opts in ({}, {"mystery": "dealt"}):
        acts = actions if not opts else [a for a in actions if not isinstance(a, Mystery)]
        a = replay(GAME, 3, opts, 42, acts)
        b = replay(GAME, 3, opts, 42, acts)
        assert encode(a) == encode(b)
        assert a.version == len(acts)


# --- prepare: mystery keys ----------------------------------------------------


def test_mystery_numbers_are_distinct() -> None:
    """A key number held by another seat is refused: no two safes share a number."""
    state = run(GAME.setup(4, {}, 0), [Mystery(0, 3)])
    refused(state, Mystery(1, 3), "That key is in another safe")
    state = run(state, [Mystery(1, 4)])
    assert state.mystery == (3, 4, 0, 0)


def test_mystery_key_cannot_be_replaced() -> None:
    """Once locked, a seat's mystery key stays for the round."""
    state = run(GAME.setup(4, {}, 0), [Mystery(0, 3)])
    refused(state, Mystery(0, 5), "Your mystery key is locked")


def test_mystery_number_must_be_1_to_8() -> None:
    """Mystery keys are numbered 1..8."""
    state = GAME.setup(4, {}, 0)
    refused(state, Mystery(0, 0), "Keys are 1 to 8")
    refused(state, Mystery(0, 9), "Keys are 1 to 8")
    refused(state, Mystery(4, 1), "No such seat")


def test_dealt_numbers_are_distinct_and_the_key_action_refused() -> None:
    """mystery=dealt deals distinct numbers at each round start and refuses keys."""
    for seed in range(30):
        state = GAME.setup(8, {"mystery": "dealt"}, seed)
        assert sorted(state.mystery) == list(range(1, 9))
        state = GAME.setup(3, {"mystery": "dealt"}, seed)
        assert len(set(state.mystery)) == 3 and set(state.mystery) <= set(range(1, 9))
    refused(state, Mystery(0, 1), "Numbers are dealt")
    state = run(state, [Pictos(s, 1) for s in range(3)])
    assert state.phase == "vote"


def test_dealt_numbers_change_between_rounds_and_stay_distinct() -> None:
    """Each round deals new distinct numbers from the state's RNG."""
    state = GAME.setup(5, {"mystery": "dealt"}, 9)
    seen = []
    for _ in range(4):
        seen.append(state.mystery)
        assert len(set(state.mystery)) == 5
        state = run(state, [Pictos(s, 1) for s in range(5)])
        state = open_all(state)
        state, _ = GAME.apply(state, Advance())
    assert len(set(seen)) > 1


# --- prepare: pictos ------------------------------------------------------------


def test_picto_count_is_1_to_min_3_left() -> None:
    """Pictos: 1..3 normally; the message names the range."""
    state = GAME.setup(3, {}, 0)
    refused(state, Pictos(0, 0), "Place 1 to 3 pictos")
    refused(state, Pictos(0, 4), "Place 1 to 3 pictos")
    state = run(state, [Pictos(0, 3)])
    assert state.hand[0] == 7 and state.placed[0] == 3 and state.ready[0]
    refused(state, Pictos(0, 1), "Pictos already confirmed")


def test_picto_count_is_capped_by_cards_left() -> None:
    """With 2 then 1 then 0 cards left the range shrinks; 0 is allowed only when empty."""
    state = replace_hand(GAME.setup(3, {}, 0), (2, 1, 0))
    refused(state, Pictos(0, 3), "Place 1 to 2 pictos")
    refused(state, Pictos(1, 2), "Place 1 picto")
    refused(state, Pictos(2, 1), "No picto left: confirm 0")
    state = run(state, [Pictos(0, 2), Pictos(1, 1), Pictos(2, 0)])
    assert state.hand == (0, 0, 0)
    assert state.placed == (2, 1, 0)


def replace_hand(state: State, hand: tuple[int, ...]) -> State:
    """The same state with other hands (to reach the end of the deck fast)."""
    from msgspec.structs import replace

    return replace(state, hand=hand)


def test_picto_cards_are_never_refilled() -> None:
    """Cards placed leave the hand for good: 10 cards over 4 rounds."""
    state = GAME.setup(3, {}, 0)
    for round_no in range(4):
        for s in range(3):
            state = run(state, [Mystery(s, s + 1), Pictos(s, 3 if state.hand[s] >= 3 else 1)])
        state = open_all(state)
        state, _ = GAME.apply(state, Advance())
        assert state.hand == ((7,), (4,), (1,), (0,))[round_no] * 3


def test_vote_phase_starts_when_every_seat_is_ready() -> None:
    """ "vote" starts only once every seat has a key locked AND pictos confirmed."""
    state = GAME.setup(3, {}, 0)
    state = run(state, [Mystery(0, 1), Pictos(0, 1), Mystery(1, 2), Pictos(1, 1), Pictos(2, 1)])
    assert state.phase == "prepare"
    refused(state, Advance(), "Not everyone is ready")
    refused(state, Vote(0, 1, 2), "Voting has not started")
    state, events = GAME.apply(state, Mystery(2, 3))
    assert state.phase == "vote"
    assert events[-1].kind == "phase" and events[-1].data == {"phase": "vote"}
    refused(state, Mystery(0, 5), "Mystery keys go in before the vote")
    refused(state, Pictos(0, 1), "Pictos go in before the vote")


# --- vote ---------------------------------------------------------------------


def test_vote_on_your_own_safe_is_refused() -> None:
    """A seat may not put a key in its own safe."""
    state = prepared([1, 2, 3])
    refused(state, Vote(0, 0, 1), "That's your own safe")
    refused(state, Vote(0, 3, 1), "No such safe")
    refused(state, Vote(0, 1, 9), "Keys are 1 to 8")


def test_one_key_per_number_per_voter_moves_between_safes() -> None:
    """Tapping a key already in another safe moves it there; one safe holds it."""
    state = prepared([1, 2, 3, 4])
    state, events = GAME.apply(state, Vote(0, 1, 5))
    assert state.votes[0] == (0, 5, 0, 0)
    state, events = GAME.apply(state, Vote(0, 2, 5))
    assert state.votes[0] == (0, 0, 5, 0)
    public = [e for e in events if e.to is None]
    private = [e for e in events if e.to is not None]
    assert public[0].data == {"voter": 0, "safe": 2, "from": 1, "replaced": False}
    assert "number" not in public[0].data
    assert private[0].to == (0,)
    assert private[0].data["number"] == 5 and private[0].data["from"] == 1


def test_a_second_key_on_the_same_safe_replaces_the_first() -> None:
    """A new key in a safe where the voter has one sends the old one back to hand."""
    state = prepared([1, 2, 3, 4])
    state = run(state, [Vote(0, 1, 5)])
    state, events = GAME.apply(state, Vote(0, 1, 6))
    assert state.votes[0] == (0, 6, 0, 0)
    assert events[0].data["replaced"] is True
    assert events[1].data["returned"] == 5
    refused(state, Vote(0, 1, 6), "That key is already there")
    # the returned key 5 is free again: it can go anywhere
    state = run(state, [Vote(0, 2, 5)])
    assert state.votes[0] == (0, 6, 5, 0)


def test_a_voters_keys_are_always_distinct_numbers() -> None:
    """Whatever the taps, one voter never has the same number in two safes."""
    state = prepared([1, 2, 3, 4, 5])
    taps = [(1, 2), (2, 2), (3, 2), (3, 4), (1, 4), (4, 2), (2, 4), (4, 4)]
    for safe, number in taps:
        state = run(state, [Vote(0, safe, number)])
        used = [n for n in state.votes[0] if n]
        assert len(used) == len(set(used))
    assert state.votes[0] == (0, 0, 0, 0, 4)


def test_reveal_starts_automatically_when_every_vote_is_in() -> None:
    """Every seat with one key in every opponent's safe: phase "reveal"."""
    state = prepared([1, 2, 3])
    guesses = everyone_right(state, [1, 2, 3])
    last = guesses[2].pop(1)
    state = full_votes(state, guesses)
    assert state.phase == "vote"
    state = run(state, [Vote(2, 1, last)])
    assert state.phase == "reveal" and state.opened == 0
    refused(state, Vote(0, 1, 4), "Voting is closed")


def test_advance_closes_voting_early_and_missing_votes_are_wrong() -> None:
    """ "advance" in "vote" starts the reveal; a missing vote scores nothing."""
    state = prepared([1, 2, 3])
    state = run(state, [Vote(1, 0, 1), Vote(2, 0, 1)])
    state, events = GAME.apply(state, Advance())
    assert state.phase == "reveal"
    assert events[0].data == {"phase": "reveal", "missing": 4}
    state = open_all(state)
    assert state.scores == (2, 1, 1)


# --- reveal and scoring ---------------------------------------------------------


def test_rulebook_example_clelia() -> None:
    """Clélia (5 players) guessed by 3 of 4: +3 for her, +1 per right guesser."""
    # Clélia is seat 0 with Harry Potter on slot 2; seats 1-3 vote 2, seat 4 votes 5.
    state = prepared([2, 1, 3, 4, 6])
    guesses = {1: {0: 2}, 2: {0: 2}, 3: {0: 2}, 4: {0: 5}}
    state = full_votes(state, guesses)
    state = run(state, [Advance()])  # close the vote: only Clélia's safe has keys
    state, events = GAME.apply(state, Advance())  # open safe 0
    assert state.scores == (3, 1, 1, 1, 0)
    opened = events[0].data
    assert opened["safe"] == 0 and opened["mystery"] == 2
    assert opened["points"] == 3 and opened["right"] == [1, 2, 3]


def test_owner_scores_per_right_guesser_and_guessers_score_one() -> None:
    """Each safe: +1 to the owner per right opponent, +1 to each right guesser."""
    mysteries = [4, 7, 1, 8]
    state = prepared(mysteries)
    guesses = everyone_right(state, mysteries)
    guesses[0][1] = 2  # seat 0 misses seat 1
    guesses[3][1] = 3  # seat 3 misses seat 1
    guesses[2][3] = 5  # seat 2 misses seat 3
    state = full_votes(state, guesses)
    assert state.phase == "reveal"
    state = open_all(state)
    # owner points: 3, 1, 3, 2 ; guesser points: 2, 3, 2, 2
    assert state.scores == (5, 4, 5, 4)


def test_safes_open_one_by_one_in_seat_order_scoring_at_once() -> None:
    """Each advance opens the next safe (0, 1, 2...) and its points land at once."""
    mysteries = [1, 2, 3]
    state = prepared(mysteries)
    state = full_votes(state, everyone_right(state, mysteries))
    expected = [(0, (2, 1, 1)), (1, (3, 3, 2)), (2, (4, 4, 4))]
    for safe, scores in expected:
        assert GAME.view(state, None)["next_safe"] == safe
        state, events = GAME.apply(state, Advance())
        assert events[0].kind == "safe_opened" and events[0].data["safe"] == safe
        assert state.scores == scores
    assert GAME.view(state, None)["next_safe"] is None
    assert state.phase == "reveal"


def test_round_ends_on_the_advance_after_the_last_safe() -> None:
    """After the last safe, advance starts a new round with fresh keys and votes."""
    state = prepared([1, 2, 3], [3, 2, 1])
    state = open_all(state)
    state, events = GAME.apply(state, Advance())
    assert state.round == 2 and state.phase == "prepare"
    assert state.mystery == (0, 0, 0) and state.ready == (False,) * 3
    assert state.votes == ((0, 0, 0),) * 3
    assert state.hand == (7, 8, 9)
    assert [e.kind for e in events] == ["round_over", "round_started"]
    assert len(state.rounds_done) == 1 and state.rounds_done[0].mystery == (1, 2, 3)


def play_round(state: State, mysteries: Sequence[int], pictos: int = 1) -> State:
    """Play one full competitive round where everyone guesses everything right."""
    for s, n in enumerate(mysteries):
        left = state.hand[s]
        state = run(state, [Mystery(s, n), Pictos(s, min(pictos, left) if left else 0)])
    state = full_votes(state, everyone_right(state, mysteries))
    state = open_all(state)
    state, _ = GAME.apply(state, Advance())
    return state


def test_game_lasts_exactly_4_rounds() -> None:
    """After round 4's last advance the game is over and refuses everything."""
    state = GAME.setup(3, {}, 0)
    for round_no in range(1, 5):
        assert state.round == round_no and not GAME.is_over(state)
        state = play_round(state, [1, 2, 3])
    assert GAME.is_over(state) and state.phase == "over"
    assert state.round == 4
    refused(state, Advance(), "The game is over")
    refused(state, Mystery(0, 1), "The game is over")
    assert GAME.legal_actions(state, None) == []
    assert all(GAME.legal_actions(state, s) == [] for s in range(3))


def test_track_wraps_at_30_with_markers() -> None:
    """Track position = score mod 30; "30" markers = score div 30."""
    from msgspec.structs import replace

    state = replace(GAME.setup(3, {}, 0), scores=(29, 30, 61))
    seats = GAME.view(state, None)["seats"]
    assert [(x["position"], x["markers"]) for x in seats] == [(29, 0), (0, 1), (1, 2)]
    state = replace(prepared([1, 2, 3]), scores=(28, 0, 0))
    state = full_votes(state, everyone_right(state, [1, 2, 3]))
    state = open_all(state)
    assert state.scores[0] == 32
    seat0 = GAME.view(state, None)["seats"][0]
    assert (seat0["score"], seat0["position"], seat0["markers"]) == (32, 2, 1)


def test_ranking_most_points_then_pictos_left_then_shared() -> None:
    """Tie on points: most picto cards left wins; still tied: shared place."""
    from msgspec.structs import replace

    state = replace(GAME.setup(4, {}, 0), scores=(5, 7, 5, 5), hand=(2, 0, 3, 2))
    assert GAME.ranking(state) == [[1], [2], [0, 3]]


def test_ranking_in_a_played_game_uses_pictos_left() -> None:
    """Equal points after 4 rounds: the seat that kept more pictos ranks first."""
    state = GAME.setup(3, {}, 0)
    for _ in range(4):
        mysteries = [1, 2, 3]
        for s, n in enumerate(mysteries):
            count = 1 if s == 0 else min(2, state.hand[s])
            state = run(state, [Mystery(s, n), Pictos(s, count)])
        state = full_votes(state, everyone_right(state, mysteries))
        state = open_all(state)
        state, _ = GAME.apply(state, Advance())
    assert GAME.is_over(state)
    assert state.scores == (16, 16, 16)
    assert state.hand == (6, 2, 2)
    assert GAME.ranking(state) == [[0], [1, 2]]
    assert GAME.view(state, None)["ranking"] == [[0], [1, 2]]


def test_coop_actions_are_refused_in_competitive() -> None:
    """answer and open belong to co-op."""
    state = prepared([1, 2, 3])
    refused(state, Answer(0, 1), "Answers are for co-op")
    refused(state, Open(0), "Safes open on the host's next")


def test_legal_actions_are_all_accepted() -> None:
    """Every action legal_actions offers is accepted, in every phase."""
    state = GAME.setup(4, {}, 5)
    for _ in range(3):
        for seat in [None, 0, 1, 2, 3]:
            for action in GAME.legal_actions(state, seat):
                GAME.apply(state, action)
        for s in range(4):
            state = run(state, [GAME.legal_actions(state, s)[0]])
    state = prepared([1, 2, 3, 4])
    for seat in [None, 0, 1, 2, 3]:
        for action in GAME.legal_actions(state, seat):
            GAME.apply(state, action)


# --- random play (shared with the playout, view and golden tests) ----------------
