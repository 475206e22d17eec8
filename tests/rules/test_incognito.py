"""Incognito engine: rules, decisions, views and the command line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from msgspec.structs import replace

from firmware.tools.scenario import run_scenario
from rules import BadOptions, IllegalAction, get_game
from rules.core import MESSAGE_MAX, Rng, action_to_json, decode_action
from rules.incognito import (
    GAME,
    LIST_SIZE,
    PLACES,
    WORDS,
    Done,
    IncognitoState,
    Next,
    Timeout,
    Vote,
)
from tests.support.games.incognito import (
    redeal_draw,
    redeal_vote,
)

# -- helpers -------------------------------------------------------------------


def fixed(players: int, word_at: tuple[int, ...] | None = None, seed: int = 1) -> IncognitoState:
    """A fresh game whose seats hold list numbers 1..N (or ``word_at`` + 1)."""
    state = GAME.setup(players, {}, seed)
    return replace(state, word_at=word_at or tuple(range(players)))


def all_done(state: IncognitoState) -> IncognitoState:
    """Every seat presses done; the list is shown."""
    for seat in range(state.players):
        state, _ = GAME.apply(state, Done(seat))
    assert state.phase == "vote"
    return state


def cast(state: IncognitoState, votes: dict[int, dict[int, int]]) -> IncognitoState:
    """Lay ``votes[voter][drawer] = number`` in order."""
    for voter, row in votes.items():
        for drawer, number in row.items():
            state, _ = GAME.apply(state, Vote(voter, drawer, number))
    return state


def refused(state: IncognitoState, action: object, match: str) -> None:
    """The action is refused with a screen-sized message and changes nothing."""
    with pytest.raises(IllegalAction, match=match) as info:
        GAME.apply(state, action)  # type: ignore[arg-type]
    assert len(info.value.message) <= MESSAGE_MAX


def wrong(state: IncognitoState, drawer: int, avoid: set[int]) -> int:
    """A vote number that is not ``drawer``'s word and not in ``avoid``."""
    right = state.word_at[drawer] + 1
    return next(n for n in range(1, LIST_SIZE + 1) if n != right and n not in avoid)


# -- setup and data ------------------------------------------------------------


def test_registry_and_player_range() -> None:
    """The registry finds the engine; 3-6 players only."""
    assert get_game("incognito") is GAME
    for bad in (2, 7):
        with pytest.raises(BadOptions):
            GAME.setup(bad, {}, 0)


@pytest.mark.parametrize(
    "options",
    [{"lang": "de"}, {"countdown": 0}, {"countdown": True}, {"countdown": "5"}, {"colour": 1}],
)
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    """Unknown languages, silly countdowns and unknown options are refused."""
    with pytest.raises(BadOptions):
        GAME.setup(4, options, 0)


def test_options_default_and_are_stored() -> None:
    """lang defaults to fr, countdown to 5 s; both live in the state."""
    state = GAME.setup(4, {}, 0)
    assert (state.lang, state.countdown) == ("fr", 5)
    state = GAME.setup(4, {"lang": "en", "countdown": 8}, 0)
    assert (state.lang, state.countdown) == ("en", 8)
    assert GAME.view(state, None)["countdown"] == {"seconds": 8, "running": False}
    assert all(w in WORDS["en"] for w in state.words)
    assert all(p in PLACES["en"] for p in state.places)


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_word_and_place_lists_are_big_enough_and_clean(lang: str) -> None:
    """At least 150 distinct words and 60 distinct places per language."""
    assert len(WORDS[lang]) >= 150 and len(set(WORDS[lang])) == len(WORDS[lang])
    assert len(PLACES[lang]) >= 60 and len(set(PLACES[lang])) == len(PLACES[lang])
    assert all(x == x.strip() and x for x in WORDS[lang] + PLACES[lang])


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_six_word_list_is_players_words_filled_from_the_deck(players: int) -> None:
    """The list holds 6 distinct words: each seat's word plus 6-N deck words."""
    state = GAME.setup(players, {}, players)
    assert len(state.words) == LIST_SIZE == len(set(state.words))
    assert len(set(state.word_at)) == players
    fillers = [w for i, w in enumerate(state.words) if i not in state.word_at]
    assert len(fillers) == LIST_SIZE - players
    assert all(w in WORDS["fr"] for w in state.words)
    assert len(set(state.places)) == players


def test_list_order_is_shuffled() -> None:
    """Seat words do not always sit at the same numbers."""
    positions = {GAME.setup(3, {}, seed).word_at for seed in range(30)}
    assert len(positions) > 5


def test_words_and_places_are_never_dealt_twice_in_a_game() -> None:
    """Each round draws from what the decks still hold."""
    state = GAME.setup(6, {}, 3)
    words, places = list(state.words), list(state.places)
    for _ in range(2):
        state = all_done(state)
        state = cast(state, {v: {d: 1 + (d - v) % 6 for d in range(6) if d != v} for v in range(6)})
        state, _ = GAME.apply(state, Next())
        words += state.words
        places += state.places
    assert len(words) == len(set(words)) == 18
    assert len(places) == len(set(places)) == 18


def test_next_round_deals_only_words_and_places_left_in_the_decks() -> None:
    """With 6 words and 3 places left unused, the next round deals exactly those."""
    state = all_done(fixed(3))
    state = cast(state, {0: {1: 2, 2: 4}, 1: {0: 1, 2: 5}, 2: {0: 1, 1: 6}})
    words, places = WORDS["fr"], PLACES["fr"]
    state = replace(state, used_words=words[6:], used_places=places[3:])
    state, _ = GAME.apply(state, Next())
    assert sorted(state.words) == sorted(words[:6])
    assert sorted(state.places) == sorted(places[:3])


# -- drawing phase -------------------------------------------------------------


def test_done_once_per_seat_and_only_while_drawing() -> None:
    """A second done, a done from a bad seat, or a done while voting is refused."""
    state = fixed(4)
    state, events = GAME.apply(state, Done(2))
    assert state.done == (False, False, True, False) and events[0].kind == "done"
    refused(state, Done(2), "already done")
    refused(state, Done(4), "No such seat")
    refused(all_done(fixed(4)), Done(0), "Not drawing")


def test_countdown_runs_when_all_but_one_are_done_then_timeout_stops_the_last() -> None:
    """N-1 done starts the countdown; the timeout ends drawing and shows the list."""
    state = fixed(4)
    refused(state, Timeout(), "No countdown")
    for seat in (0, 1, 3):
        assert not GAME.view(state, None)["countdown"]["running"]
        state, events = GAME.apply(state, Done(seat))
    assert GAME.view(state, None)["countdown"]["running"]
    assert events[-1].kind == "countdown"
    assert GAME.legal_actions(state, None) == [Timeout()]
    state, events = GAME.apply(state, Timeout())
    assert state.phase == "vote" and all(state.done)
    assert [e.kind for e in events] == ["stop", "list"] and events[0].data == {"seat": 2}


def test_last_player_done_before_the_countdown_ends() -> None:
    """When everybody is done the list is shown at once; a late timeout is refused."""
    state = all_done(fixed(3))
    assert not GAME.view(state, None)["countdown"]["running"]
    refused(state, Timeout(), "No countdown")


# -- votes -------------------------------------------------------------------


def test_no_vote_on_your_own_drawing() -> None:
    """A player cannot lay a card on their own drawing."""
    state = all_done(fixed(4))
    refused(state, Vote(1, 1, 2), "your own drawing")
    assert all(a.drawer != 1 for a in GAME.legal_actions(state, 1))  # type: ignore[attr-defined]


def test_vote_needs_voting_time_a_real_card_and_a_real_drawing() -> None:
    """Votes while drawing, card 0 or 7, or a missing drawer are refused."""
    state = fixed(4)
    refused(state, Vote(0, 1, 1), "Not voting")
    state = all_done(state)
    refused(state, Vote(0, 1, 0), "1 to 6")
    refused(state, Vote(0, 1, 7), "1 to 6")
    refused(state, Vote(0, 4, 1), "No such drawing")
    refused(state, Vote(5, 1, 1), "No such seat")


def test_vote_numbers_stay_distinct_per_voter() -> None:
    """A card laid on another drawing moves there; it is never in two places."""
    state = all_done(fixed(4))
    state = cast(state, {0: {1: 3}})
    state, events = GAME.apply(state, Vote(0, 2, 3))
    assert state.votes[0] == (0, 0, 3, 0)
    assert events[0].data == {"seat": 0, "drawer": 2, "moved_from": 1}
    refused(state, Vote(0, 2, 3), "already there")


def test_second_card_on_a_drawing_replaces_the_first() -> None:
    """Laying card 5 where card 3 lay sends card 3 back to the hand."""
    state = all_done(fixed(4))
    state = cast(state, {0: {1: 3, 1 + 1: 4}})
    state, events = GAME.apply(state, Vote(0, 1, 5))
    assert state.votes[0] == (0, 5, 4, 0)
    assert events[1].to == (0,) and events[1].data["back_in_hand"] == 3
    assert sorted(n for n in state.votes[0] if n) == [4, 5]


def test_vote_countdown_then_random_fill_from_unused_cards() -> None:
    """N-1 complete voters start the countdown; the timeout fills the late votes."""
    state = all_done(fixed(5))
    state = cast(state, {v: {d: 1 + (d - v) % 5 for d in range(5) if d != v} for v in (0, 1, 3, 4)})
    state = cast(state, {2: {0: 6}})
    assert GAME.view(state, None)["countdown"]["running"]
    assert GAME.legal_actions(state, None) == [Timeout()]
    expected, _ = state.rng.sample([1, 2, 3, 4, 5], 3)
    after, events = GAME.apply(state, Timeout())
    assert events[0].kind == "fill" and events[0].data == {"seat": 2, "drawers": [1, 3, 4]}
    row = after.votes[2]
    assert row[2] == 0 and row[0] == 6
    assert (row[1], row[3], row[4]) == expected
    assert len({n for n in row if n}) == 4
    assert after.rng != state.rng and (after.late, after.filled) == (2, (1, 3, 4))
    assert after.phase == "reveal"


def test_fill_depends_on_the_state_rng() -> None:
    """A different random stream gives a different fill (the fill is not fixed)."""
    state = all_done(fixed(3))
    state = cast(state, {0: {1: 1, 2: 2}, 1: {0: 1, 2: 2}})
    fills = {GAME.apply(replace(state, rng=Rng(s)), Timeout())[0].votes[2] for s in range(20)}
    assert len(fills) > 1
    assert all(f[2] == 0 and f[0] != f[1] for f in fills)


def test_a_voter_changing_their_mind_stops_the_countdown() -> None:
    """Moving a card off a drawing makes that voter incomplete again."""
    state = all_done(fixed(3))
    state = cast(state, {0: {1: 1, 2: 2}, 1: {0: 1, 2: 2}})
    assert GAME.view(state, None)["countdown"]["running"]
    state, events = GAME.apply(state, Vote(0, 2, 1))
    assert not GAME.view(state, None)["countdown"]["running"]
    assert events[-1].kind == "countdown_stop"
    refused(state, Timeout(), "No countdown")


# -- scoring -----------------------------------------------------------------


def test_marjolaine_example_from_the_rulebook() -> None:
    """5 players: 3 words found (+3), hers found by 3 of the 4 others (+2): 5 points."""
    state = all_done(fixed(5))  # seat s holds list number s + 1; Marjolaine is seat 0
    votes: dict[int, dict[int, int]] = {0: {1: 2, 2: 3, 3: 4, 4: 6}}
    for voter in (1, 2, 3):
        votes[voter] = {0: 1}
    votes[4] = {0: 2}
    for voter in range(1, 5):  # everybody else misses every other drawing
        used = set(votes[voter].values())
        for drawer in range(5):
            if drawer not in (0, voter):
                number = wrong(state, drawer, used)
                votes[voter][drawer] = number
                used.add(number)
    state = cast(state, votes)
    assert state.phase == "reveal"
    assert state.history[-1][0] == 5
    assert state.scores[0] == 5


def test_drawer_scores_two_only_if_found_by_some_but_not_all() -> None:
    """Found by all: 0; found by none: 0; found by one of two: +2 and +1 to the finder."""
    state = all_done(fixed(3))  # numbers: seat0=1, seat1=2, seat2=3
    state = cast(
        state,
        {
            0: {1: 2, 2: 4},  # finds seat 1, misses seat 2
            1: {0: 1, 2: 5},  # finds seat 0, misses seat 2
            2: {0: 1, 1: 6},  # finds seat 0, misses seat 1
        },
    )
    # seat 0: found by all -> 0, +1 for finding seat 1 -> 1
    # seat 1: found by one of two -> +2, +1 for finding seat 0 -> 3
    # seat 2: found by none -> 0, +1 for finding seat 0 -> 1
    assert state.history[-1] == (1, 3, 1)
    reveal = GAME.view(state, None)["reveal"]
    assert reveal["drawings"][0]["finders"] == [1, 2]
    assert reveal["drawings"][2]["finders"] == []
    assert reveal["drawings"][1]["votes"] == [2, None, 6]


def test_three_rounds_then_over_with_shared_ties() -> None:
    """Next starts rounds 2 and 3; after round 3 the game is over; ties share a place."""
    state = fixed(3)
    refused(state, Next(), "not over")
    for rnd in (1, 2, 3):
        assert state.round == rnd
        state = all_done(state)
        # each voter lays cards 5 and 6 on the two other drawings
        lay = {v: {d: 6 if d == (v + 1) % 3 else 5 for d in range(3) if d != v} for v in range(3)}
        state = cast(state, lay)
        if rnd < 3:
            assert state.phase == "reveal" and not GAME.is_over(state)
            state, _ = GAME.apply(state, Next())
    assert GAME.is_over(state) and state.phase == "over"
    refused(state, Next(), "not over")
    assert all(GAME.legal_actions(state, s) == [] for s in (None, 0, 1, 2))
    assert len(state.history) == 3
    assert GAME.scores(state) == list(state.scores)
    forced = replace(state, scores=(4, 7, 4))
    assert GAME.ranking(forced) == [[1], [0, 2]]


def test_scores_add_up_over_rounds() -> None:
    """The running score is the sum of the rounds' points."""
    state = all_done(fixed(3))
    state = cast(state, {0: {1: 2, 2: 4}, 1: {0: 1, 2: 5}, 2: {0: 1, 1: 6}})
    state, _ = GAME.apply(state, Next())
    state = replace(state, word_at=(0, 1, 2))
    state = all_done(state)
    state = cast(state, {0: {1: 2, 2: 4}, 1: {0: 1, 2: 5}, 2: {0: 1, 1: 6}})
    assert state.scores == (2, 6, 2)
    assert GAME.view(state, None)["history"] == [[1, 3, 1], [1, 3, 1]]


# -- views -------------------------------------------------------------------


def test_views_show_own_word_and_public_places() -> None:
    """A seat sees its word (and its number once shown); the table sees places."""
    state = GAME.setup(4, {}, 5)
    view = GAME.view(state, 1)
    assert view["word"] == state.words[state.word_at[1]] and view["number"] is None
    assert view["table"] == GAME.view(state, None)
    assert view["table"]["places"] == list(state.places)
    assert view["table"]["list"] == []
    state = all_done(state)
    view = GAME.view(state, 1)
    assert view["number"] == state.word_at[1] + 1
    assert view["table"]["list"] == list(state.words)
    with pytest.raises(IllegalAction):
        GAME.view(state, 4)


def test_who_voted_on_whom_is_public_but_numbers_are_not() -> None:
    """The public view lists voted drawers; numbers stay with the voter until reveal."""
    state = all_done(fixed(4))
    state = cast(state, {0: {1: 3, 2: 5}, 1: {0: 2}})
    public = GAME.view(state, None)
    assert public["voted"] == [[1, 2], [0], [], []]
    assert public["reveal"] is None
    assert GAME.view(state, 0)["votes"] == [None, 3, 5, None]
    assert GAME.view(state, 2)["votes"] == [None, None, None, None]
    # the drawer of a drawing does not learn the number laid on it
    assert GAME.view(state, 1)["votes"] == [2, None, None, None]


@pytest.mark.parametrize("players", [3, 6])
def test_no_leak_while_drawing(players: int) -> None:
    """Re-dealing the other seats' words changes neither a seat's view nor the public one."""
    state = GAME.setup(players, {}, 11)
    state, _ = GAME.apply(state, Done(0))
    for seat in range(players):
        for k in range(5):
            other = redeal_draw(state, seat, k)
            assert GAME.view(other, seat) == GAME.view(state, seat)
            assert GAME.view(other, None) == GAME.view(state, None)


@pytest.mark.parametrize("players", [3, 5])
def test_no_leak_while_voting(players: int) -> None:
    """While voting, other seats' words and vote numbers do not reach a view."""
    state = all_done(GAME.setup(players, {}, 12))
    state = cast(state, {0: {1: 2}, 1: {0: 3, 2: 4}, 2: {1: 1}})
    changed = 0
    for seat in range(players):
        for k in range(5):
            other = redeal_vote(state, seat, k)
            changed += other != state
            assert GAME.view(other, seat) == GAME.view(state, seat)
            assert GAME.view(other, None) == GAME.view(state, None)
    assert changed > 0


def test_reveal_shows_everything() -> None:
    """After the round every word, number and vote is public."""
    state = all_done(fixed(3))
    state = cast(state, {0: {1: 2, 2: 4}, 1: {0: 1, 2: 5}, 2: {0: 1, 1: 6}})
    reveal = GAME.view(state, None)["reveal"]
    assert [d["word"] for d in reveal["drawings"]] == [state.words[i] for i in state.word_at]
    assert reveal["points"] == [1, 3, 1] and reveal["late"] is None


# -- notation and command line --------------------------------------------------


def test_json_notation_round_trips() -> None:
    """Each action has the documented JSON form."""
    for text, action in [
        ('{"type":"done","seat":1}', Done(1)),
        ('{"type":"vote","seat":0,"drawer":2,"number":5}', Vote(0, 2, 5)),
        ('{"type":"timeout"}', Timeout()),
        ('{"type":"next"}', Next()),
    ]:
        assert decode_action(GAME, text) == action
        assert action_to_json(action) == json.loads(text)
    with pytest.raises(IllegalAction):
        decode_action(GAME, '{"type":"vote","seat":0,"drawer":2}')


def scripted_game(players: int, seed: int) -> list[str]:
    """A full game's actions (everyone votes 1..6 in a rotation) as JSON lines."""
    state = GAME.setup(players, {"lang": "en"}, seed)
    lines: list[str] = []
    while not GAME.is_over(state):
        actions = [a for s in [None, *range(players)] for a in GAME.legal_actions(state, s)]
        if state.phase == "vote":
            actions = [
                a
                for a in actions
                if isinstance(a, Vote)
                and state.votes[a.seat][a.drawer] == 0
                and a.number not in state.votes[a.seat]
            ] or actions
        action = actions[0]
        lines.append(json.dumps(action_to_json(action)))
        state, _ = GAME.apply(state, action)
    return lines


def test_coffre_play_runs_a_whole_game() -> None:
    """run_scenario plays a scripted game to the end and prints the public table."""
    lines = scripted_game(4, 9)
    out = io.StringIO()
    assert run_scenario("incognito", 4, 9, {"lang": "en"}, lines, out) == 0
    result = json.loads(out.getvalue())
    assert result["over"] is True and result["public"]["phase"] == "over"
    assert len(result["ranking"]) >= 1 and sum(len(g) for g in result["ranking"]) == 4


def test_coffre_play_reports_an_illegal_line() -> None:
    """An illegal action stops the scenario with its line number."""
    out = io.StringIO()
    lines = ['{"type":"done","seat":0}', '{"type":"done","seat":0}']
    assert run_scenario("incognito", 3, 0, {}, lines, out) == 2
    assert json.loads(out.getvalue()) == {"error": "You are already done", "line": 2}


def test_coffre_play_command_line(tmp_path: Path) -> None:
    """`coffre play --game incognito` reads a scenario file and prints the table."""
    scenario = tmp_path / "game.jsonl"
    scenario.write_text("\n".join(scripted_game(3, 4)) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "firmware.cli", "play", "--game", "incognito"]
    cmd += ["--players", "3", "--seed", "4", "-o", "lang=en", str(scenario)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["over"] is True and result["public"]["lang"] == "en"
