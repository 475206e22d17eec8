"""Identiquest engine: rules, decisions, views and the command line."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from msgspec.structs import replace

from firmware.tools.scenario import run_scenario
from rules import BadOptions, IllegalAction, get_game
from rules.core import MESSAGE_MAX, Action, action_to_json, decode_action
from rules.identiquest import (
    DEFAULT_DECK,
    GAME,
    Accuse,
    Give,
    IdentiquestState,
    Steal,
    load_deck,
)
from tests.support.games.identiquest import (
    redeal,
)

RED, ORANGE, YELLOW, GREEN, BLUE, PURPLE, PINK = range(7)


def table(
    players: int = 4,
    *,
    identity: tuple[int, ...] | None = None,
    loot: tuple[tuple[int, ...], ...] | None = None,
    give: str = "top",
    turn: int = 0,
) -> IdentiquestState:
    """A fresh game with chosen identities (seat s is colour s), loots and turn."""
    state = GAME.setup(players, {"give": give}, 1)
    return replace(
        state,
        identity=identity or tuple(range(players)),
        loot=loot or ((),) * players,
        turn=turn,
        first=turn,
    )


def refused(state: IdentiquestState, action: Action, match: str) -> None:
    """The action is refused with a screen-sized message."""
    with pytest.raises(IllegalAction, match=match) as info:
        GAME.apply(state, action)
    assert len(info.value.message) <= MESSAGE_MAX


# -- setup, options and data ---------------------------------------------------


def test_registry_and_player_range() -> None:
    """The registry finds the engine; 3-6 players only."""
    assert get_game("identiquest") is GAME
    for bad in (2, 7):
        with pytest.raises(BadOptions):
            GAME.setup(bad, {}, 0)


def test_default_deck_is_data_seven_colours_of_eight() -> None:
    """The shipped default deck: 7 colours x 8 gems, read from the data file."""
    colours, counts = load_deck("default")
    assert (colours, counts) == DEFAULT_DECK
    assert len(colours) == 7 == len(set(colours)) and counts == (8,) * 7
    state = GAME.setup(5, {}, 0)
    assert state.colours == colours and state.counts == counts
    assert len(state.market) == 5 and len(state.deck) == 51


@pytest.mark.parametrize(
    "options",
    [
        {"give": "random"},
        {"colour": "red"},
        {"deck": "nope"},
        {"deck": "../default"},
        {"deck": 3},
        {"deck": {"red": 3, "blue": 1}},  # fewer than 5 gems
        {"deck": {"red": 8, "blue": 8}},  # fewer colours than players
        {"deck": {"red": -1, "blue": 8, "green": 8, "pink": 8}},
        {"deck": {"Red Gem": 8, "blue": 8, "green": 8, "pink": 8}},
    ],
)
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    """Unknown options, give modes, decks and broken compositions are refused."""
    with pytest.raises(BadOptions):
        GAME.setup(4, options, 0)


def test_custom_deck_composition_is_stored_in_the_state() -> None:
    """An owner's deck given as colour -> count is kept, in order, for replay."""
    deck = {"ruby": 4, "jade": 3, "opal": 5, "onyx": 2}
    state = GAME.setup(3, {"deck": deck}, 2)
    assert state.colours == ("ruby", "jade", "opal", "onyx") and state.counts == (4, 3, 5, 2)
    everything = sorted(state.deck + state.market)
    assert everything == sorted(c for c, k in enumerate(state.counts) for _ in range(k))


def test_a_game_replays_from_its_record_without_the_deck_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The record keeps the deck it was set up with (pinned options): no file re-read."""
    from rules.core import replay

    options = GAME.pin_options({"deck": "default", "give": "choose"})
    assert options == {"deck": dict(zip(DEFAULT_DECK[0], DEFAULT_DECK[1], strict=True)),
                       "give": "choose"}  # fmt: skip
    state = GAME.setup(4, {"deck": "default", "give": "choose"}, 9)
    actions = []
    for _ in range(12):
        action = GAME.legal_actions(state, state.turn)[0]
        state, _ = GAME.apply(state, action)
        actions.append(action)

    def no_file(name: str) -> None:
        raise AssertionError(f"the deck file {name} was read again")

    monkeypatch.setattr("rules.identiquest.load_deck", no_file)
    assert replay(GAME, 4, options, 9, actions) == state


def test_setup_deals_distinct_identities_and_a_random_first_player() -> None:
    """Identities differ; the first player varies with the seed and starts."""
    firsts = set()
    for seed in range(30):
        state = GAME.setup(6, {}, seed)
        assert len(set(state.identity)) == 6
        assert state.turn == state.first
        firsts.add(state.first)
    assert len(firsts) > 3


# -- steal ---------------------------------------------------------------------


def test_steal_two_of_five_onto_the_loot_and_refill_from_the_deck() -> None:
    """The two gems go on top of the loot in order; the deck's top refills the slots."""
    state = replace(table(), market=(RED, BLUE, GREEN, PINK, YELLOW), deck=(PURPLE, ORANGE, RED))
    state = replace(state, loot=((ORANGE,), (), (), ()))
    new, events = GAME.apply(state, Steal(0, (3, 1)))
    assert new.loot[0] == (ORANGE, PINK, BLUE)
    assert new.market == (RED, PURPLE, GREEN, ORANGE, YELLOW)
    assert new.deck == (RED,)
    assert events[0].data == {
        "seat": 0,
        "slots": [3, 1],
        "gems": ["pink", "blue"],
        "refill": ["purple", "orange"],
    }
    assert new.turn == 1 and events[-1].data == {"seat": 1}


def test_steal_needs_your_turn_and_two_real_slots() -> None:
    """Out of turn, the same slot twice, or a missing slot is refused."""
    state = table(turn=2)
    refused(state, Steal(1, (0, 1)), "Not your turn")
    refused(state, Steal(2, (3, 3)), "2 different")
    refused(state, Steal(2, (0, 5)), "No such gem")
    refused(state, Steal(9, (0, 1)), "No such seat")
    assert len([a for a in GAME.legal_actions(state, 2) if isinstance(a, Steal)]) == 10
    assert GAME.legal_actions(state, 1) == [] and GAME.legal_actions(state, None) == []


def test_turns_go_clockwise_and_everyone_keeps_playing() -> None:
    """Turns pass seat by seat, also to unmasked and escaped players."""
    state = replace(table(3, turn=2), unmasked=(True, False, False), escaped=(False, True, False))
    seen = []
    for _ in range(4):
        seen.append(state.turn)
        state, _ = GAME.apply(state, Steal(state.turn, (0, 1)))
    assert seen == [2, 0, 1, 2]


# -- accuse --------------------------------------------------------------------


def test_accusing_needs_two_gems() -> None:
    """With fewer than 2 gems in the loot there is no accusation."""
    state = table(loot=((RED,), (), (), ()))
    refused(state, Accuse(0, 1, "orange"), "need 2 gems")
    assert not any(isinstance(a, Accuse) for a in GAME.legal_actions(state, 0))
    state = table(loot=((RED, RED), (), (), ()))
    assert any(isinstance(a, Accuse) for a in GAME.legal_actions(state, 0))


def test_wrong_accusation_crosses_the_card_and_costs_two_from_the_top() -> None:
    """The accused's card of that colour flips; the accuser's top 2 gems go to them."""
    state = table(loot=((RED, BLUE, GREEN, PINK), (YELLOW,), (), ()))
    new, events = GAME.apply(state, Accuse(0, 1, "green"))
    assert new.crossed[1][GREEN] and sum(map(sum, new.crossed)) == 1
    assert new.loot[0] == (RED, BLUE)
    assert new.loot[1] == (YELLOW, PINK, GREEN)
    assert not new.unmasked[1]
    assert [e.kind for e in events] == ["accuse", "give", "turn"]
    assert events[0].data == {"seat": 0, "target": 1, "colour": "green", "right": False}
    assert events[1].data == {"from": 0, "to": 1, "gems": ["pink", "green"]}


def test_right_accusation_unmasks_crosses_everyone_else_and_costs_four() -> None:
    """The identity is revealed, that colour flips before every other player, 4 gems go."""
    loot = ((RED, RED), (GREEN, ORANGE, ORANGE, BLUE, PINK, YELLOW), (), ())
    new, events = GAME.apply(table(loot=loot), Accuse(0, 1, "orange"))
    assert new.unmasked == (False, True, False, False)
    assert [row[ORANGE] for row in new.crossed] == [True, False, True, True]
    assert new.loot[1] == (GREEN, ORANGE)
    assert new.loot[0] == (RED, RED, YELLOW, PINK, BLUE, ORANGE)
    assert GAME.view(new, None)["unmasked"] == [None, "orange", None, None]
    assert [e.kind for e in events] == ["accuse", "unmasked", "give", "turn"]


def test_right_accusation_on_a_poor_player_takes_what_they_have() -> None:
    """An unmasked player with fewer than 4 gems gives them all."""
    loot = ((RED, RED), (BLUE,), (), ())
    new, _ = GAME.apply(table(loot=loot), Accuse(0, 1, "orange"))
    assert new.loot == ((RED, RED, BLUE), (), (), ())
    new, events = GAME.apply(table(loot=((RED, RED), (), (), ())), Accuse(0, 1, "orange"))
    assert new.unmasked[1] and [e.kind for e in events] == ["accuse", "unmasked", "turn"]


def test_no_accusing_the_unmasked_the_escaped_a_crossed_colour_or_yourself() -> None:
    """Each of these accusations is refused and absent from the legal actions."""
    crossed = list(table().crossed)
    crossed[3] = (False, True, False, False, False, False, False)
    state = replace(
        table(loot=((RED, RED), (), (), ())),
        unmasked=(False, True, False, False),
        escaped=(False, False, True, False),
        crossed=tuple(crossed),
    )
    refused(state, Accuse(0, 1, "orange"), "Already unmasked")
    refused(state, Accuse(0, 2, "yellow"), "escaped")
    refused(state, Accuse(0, 3, "orange"), "crossed out")
    refused(state, Accuse(0, 0, "red"), "yourself")
    refused(state, Accuse(0, 7, "red"), "No such player")
    refused(state, Accuse(0, 3, "gold"), "Unknown colour")
    legal = [a for a in GAME.legal_actions(state, 0) if isinstance(a, Accuse)]
    assert {a.target for a in legal} == {3}
    assert "orange" not in {a.colour for a in legal} and len(legal) == 6


def test_a_player_with_one_question_mark_left_has_escaped() -> None:
    """Crossing the second-to-last "?" lets that player escape."""
    crossed = list(table().crossed)
    crossed[1] = (True, False, True, True, True, True, False)  # orange and pink left
    state = replace(table(loot=((RED,) * 8, (), (), ())), crossed=tuple(crossed))
    new, events = GAME.apply(state, Accuse(0, 1, "pink"))
    assert new.escaped == (False, True, False, False)
    assert "escaped" in [e.kind for e in events]
    assert GAME.view(new, None)["suspects"][1] == ["x", "?", "x", "x", "x", "x", "x"]
    assert not any(
        isinstance(a, Accuse) and a.target == 1 for a in GAME.legal_actions(replace(new, turn=0), 0)
    )


def test_an_unmasking_can_make_others_escape() -> None:
    """Crossing the unmasked colour before everyone may leave someone one "?"."""
    crossed = list(table().crossed)
    crossed[2] = (True, False, False, True, True, True, True)  # orange and yellow left
    state = replace(table(loot=((RED, RED), (), (), ())), crossed=tuple(crossed))
    new, _ = GAME.apply(state, Accuse(0, 1, "orange"))  # seat 1 is orange
    assert new.escaped == (False, False, True, False) and new.unmasked[1]


# -- end and score -------------------------------------------------------------


def test_game_ends_when_the_deck_cannot_refill_after_a_steal() -> None:
    """With one gem left to refill two slots the game ends that turn."""
    state = replace(table(), market=(RED, RED, RED, RED, RED), deck=(BLUE,))
    new, events = GAME.apply(state, Steal(0, (0, 4)))
    assert GAME.is_over(new) and new.end == "deck"
    assert new.market == (BLUE, RED, RED, RED) and new.deck == ()
    assert events[-1].kind == "over"
    assert all(GAME.legal_actions(new, s) == [] for s in range(4))
    refused(new, Steal(1, (0, 1)), "over")


def test_an_exactly_emptied_deck_lets_the_game_go_on() -> None:
    """Refilling with the last two gems is still a full refill."""
    state = replace(table(), deck=(BLUE, BLUE))
    new, _ = GAME.apply(state, Steal(0, (0, 1)))
    assert not GAME.is_over(new) and new.deck == () and len(new.market) == 5
    new, _ = GAME.apply(new, Steal(1, (0, 1)))
    assert GAME.is_over(new) and len(new.market) == 3


def test_game_ends_when_everyone_is_unmasked_or_escaped() -> None:
    """The last accusable player unmasked ends the game at once."""
    state = replace(
        table(loot=((RED, RED), (), (), ())),
        unmasked=(True, False, False, False),
        escaped=(False, False, True, True),
    )
    new, events = GAME.apply(state, Accuse(0, 1, "orange"))
    assert GAME.is_over(new) and new.end == "all-out"
    assert events[-1].kind == "over"
    assert events[-1].data["identities"] == ["red", "orange", "yellow", "green"]


def test_score_is_gems_of_your_own_colour_and_ties_are_shared() -> None:
    """Only one's own colour counts; equal scores share a place."""
    loot = ((RED, RED, BLUE), (ORANGE, RED), (RED,), (GREEN, GREEN, GREEN))
    state = table(loot=loot)
    assert GAME.scores(state) == [2, 1, 0, 3]
    state = table(loot=((RED,), (ORANGE,), (YELLOW, YELLOW), ()))
    assert GAME.ranking(state) == [[2], [0, 1], [3]]


# -- option give: choose ---------------------------------------------------------


def test_giver_chooses_the_gems_with_option_choose() -> None:
    """With give=choose the giver picks each gem; nothing else moves meanwhile."""
    loot = ((RED, BLUE, RED, GREEN), (), (), ())
    state, events = GAME.apply(table(loot=loot, give="choose"), Accuse(0, 2, "red"))
    assert state.pending is not None and state.pending.left == 2 and state.turn == 0
    assert GAME.view(state, None)["phase"] == "give"
    assert GAME.view(state, None)["pending"] == {"giver": 0, "receiver": 2, "left": 2}
    assert [e.kind for e in events] == ["accuse"]
    assert GAME.legal_actions(state, 0) == [Give(0, "red"), Give(0, "green"), Give(0, "blue")]
    refused(state, Steal(0, (0, 1)), "Waiting for gems")
    refused(state, Give(1, "red"), "Not your gems")
    refused(state, Give(0, "pink"), "no pink gem")
    state, _ = GAME.apply(state, Give(0, "red"))
    assert state.loot[0] == (RED, BLUE, GREEN) and state.loot[2] == (RED,)
    state, events = GAME.apply(state, Give(0, "blue"))
    assert state.loot[0] == (RED, GREEN) and state.loot[2] == (RED, BLUE)
    assert state.pending is None and state.turn == 1 and events[-1].kind == "turn"
    refused(state, Give(0, "red"), "No gems to give")


def test_choose_is_automatic_when_the_giver_has_no_choice() -> None:
    """A giver with no more gems than owed gives them all at once."""
    loot = ((RED, RED), (), (), ())
    state, _ = GAME.apply(table(loot=loot, give="choose"), Accuse(0, 2, "red"))
    assert state.pending is None and state.loot[2] == (RED, RED) and state.turn == 1


def test_default_give_is_top_of_pile() -> None:
    """Without the option the top gems move with no question asked."""
    assert GAME.setup(3, {}, 0).give == "top"


# -- views ---------------------------------------------------------------------


def test_seat_view_has_own_identity_loot_and_score_and_the_table() -> None:
    """A seat sees its colour, whole loot and score; the table under "table"."""
    state = table(loot=((RED, BLUE, RED), (ORANGE,), (), ()))
    view = GAME.view(state, 0)
    assert view["identity"] == "red" and view["loot"] == ["red", "blue", "red"]
    assert view["score"] == 2 and view["table"] == GAME.view(state, None)
    with pytest.raises(IllegalAction):
        GAME.view(state, 4)


def test_public_view_shows_market_suspects_and_loot_sizes_but_no_identity() -> None:
    """Market, deck size, loot sizes and tops, suspect rows; identities only at the end."""
    state = replace(table(loot=((RED, BLUE), (), (), ())), market=(RED, BLUE, RED, PINK, GREEN))
    public = GAME.view(state, None)
    assert public["market"] == ["red", "blue", "red", "pink", "green"]
    assert public["deck"] == len(state.deck)
    assert public["loot"][0] == {"size": 2, "top": "blue"}
    assert public["loot"][1] == {"size": 0, "top": None}
    assert public["suspects"] == [["?"] * 7] * 4
    assert public["identities"] is None and public["scores"] is None
    assert "identity" not in public


@pytest.mark.parametrize("players", [3, 4, 6])
def test_no_leak_of_other_identities_or_the_deck(players: int) -> None:
    """Re-dealing the other seats' identities and the deck changes no view."""
    r = random.Random(players)
    state = GAME.setup(players, {}, players)
    changed = 0
    for _ in range(40):
        if GAME.is_over(state):
            break
        for seat in range(players):
            for k in range(3):
                other = redeal(state, seat, k)
                changed += other.identity != state.identity
                assert GAME.view(other, seat) == GAME.view(state, seat)
                assert GAME.view(other, None) == GAME.view(state, None)
        actor = state.pending.giver if state.pending else state.turn
        state, _ = GAME.apply(state, r.choice(GAME.legal_actions(state, actor)))
    assert changed > 0


def test_everything_is_public_at_the_end() -> None:
    """Once over, identities, scores and ranking are on the table."""
    state = replace(table(), market=(RED, RED, RED, RED, RED), deck=())
    state = replace(state, loot=((RED,), (), (), ()))
    state, _ = GAME.apply(state, Steal(0, (0, 1)))
    public = GAME.view(state, None)
    assert public["over"] and public["end"] == "deck" and public["phase"] == "over"
    assert public["identities"] == ["red", "orange", "yellow", "green"]
    assert public["scores"] == [3, 0, 0, 0] and public["ranking"] == [[0], [1, 2, 3]]


# -- notation and command line --------------------------------------------------


def test_json_notation_round_trips() -> None:
    """Each action has the documented JSON form."""
    for text, action in [
        ('{"type":"steal","seat":1,"slots":[0,3]}', Steal(1, (0, 3))),
        ('{"type":"accuse","seat":0,"target":2,"colour":"blue"}', Accuse(0, 2, "blue")),
        ('{"type":"give","seat":2,"colour":"red"}', Give(2, "red")),
    ]:
        assert decode_action(GAME, text) == action
        assert json.loads(json.dumps(action_to_json(action))) == json.loads(text)
    with pytest.raises(IllegalAction):
        decode_action(GAME, '{"type":"steal","seat":1,"slots":[0]}')


def scripted_game(players: int, seed: int, options: dict[str, object]) -> list[str]:
    """A whole game (first legal action each time) as JSON lines."""
    state = GAME.setup(players, options, seed)
    lines = []
    while not GAME.is_over(state):
        actor = state.pending.giver if state.pending else state.turn
        action = GAME.legal_actions(state, actor)[-1]
        lines.append(json.dumps(action_to_json(action)))
        state, _ = GAME.apply(state, action)
    return lines


def test_coffre_play_runs_a_whole_game() -> None:
    """run_scenario plays a scripted game to the end and prints the final table."""
    options: dict[str, object] = {"give": "choose"}
    out = io.StringIO()
    assert run_scenario("identiquest", 5, 3, options, scripted_game(5, 3, options), out) == 0
    result = json.loads(out.getvalue())
    assert result["over"] is True and result["public"]["identities"] is not None
    assert result["scores"] == result["public"]["scores"]


def test_coffre_play_command_line(tmp_path: Path) -> None:
    """`coffre play --game identiquest` reads a scenario file and prints the table."""
    scenario = tmp_path / "game.jsonl"
    scenario.write_text("\n".join(scripted_game(3, 8, {})) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "firmware.cli", "play", "--game", "identiquest"]
    cmd += ["--players", "3", "--seed", "8", str(scenario)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["over"] is True
