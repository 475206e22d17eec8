"""Identités cryptées 2.0 engine: setup, factions, turns, weapons, programs, victory."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from msgspec.structs import replace

from firmware.tools.scenario import run_scenario
from rules import get_game
from rules._identites_cryptees_cards import FACTIONS
from rules._identites_cryptees_state import (
    ABILITY,
    DISCARD,
    OVER,
    REAIM,
    RESPOND,
    TURN,
    WINDOW,
    ICState,
    Program,
    WeaponState,
    decide_faction,
    faction,
    slot_pos,
)
from rules.core import BadOptions, Event, IllegalAction, decode_action, encode
from rules.identites_cryptees import GAME, INFO, victory
from tests.support.games.identites_cryptees import (
    CARDS,
    act,
    arm,
    arrange,
    holding_key,
    hurt,
    kill,
    prog,
    sides,
    turn_to,
)

# --- helpers ---------------------------------------------------------------


def act_events(st: ICState, move: dict[str, Any]) -> tuple[ICState, list[Event]]:
    """Apply one JSON move and return its events too."""
    return GAME.apply(st, decode_action(GAME, move))


def reveal_all_loyalty(st: ICState, seat: int) -> ICState:
    """Turn both loyalty cards of ``seat`` face up."""
    up = list(st.loyalty_up)
    for slot in ("left", "right"):
        up[slot_pos(st, seat, slot)] = True
    return replace(st, loyalty_up=tuple(up))


def public_text(st: ICState) -> str:
    """The public view as canonical JSON text."""
    return json.dumps(GAME.view(st, None), sort_keys=True)


# --- setup -----------------------------------------------------------------


@pytest.mark.parametrize("players", range(4, 17))
def test_setup_follows_the_table(players: int) -> None:
    """N+1 IDs by pile, the right loyalty count, one program each, weapons laid out."""
    st = GAME.setup(players, {}, players)
    row = CARDS.rows[players]
    dealt = [s.id_card for s in st.seats] + list(st.spare_ids)
    assert len(st.spare_ids) == 1
    for pile in ("human", "machine", "outlaw"):
        assert sum(CARDS.ids[c].pile == pile for c in dealt) == row.ids.get(pile)
    assert not any(CARDS.ids[c].boss for c in dealt)
    assert len(st.loyalty) == (2 * players if players <= 8 else players)
    for pile in ("human", "machine", "outlaw"):
        assert sum(CARDS.loyalty[c].colour == pile for c in st.loyalty) == row.loyalty.get(pile)
    assert all(len(s.programs) == 1 and s.hp == 2 and s.alive for s in st.seats)
    keys = {w.key: w for w in st.weapons}
    assert ("companion" in keys) == (players >= 5)
    assert keys["pistol"].unlocked and keys["rifle"].unlocked
    assert not keys["rocket"].unlocked and not keys["laser"].unlocked


def test_two_own_loyalty_cards_up_to_eight() -> None:
    """Up to 8 players each seat owns two loyalty cards nobody else holds."""
    st = GAME.setup(8, {}, 1)
    positions = [slot_pos(st, s, side) for s in range(8) for side in ("left", "right")]
    assert sorted(positions) == list(range(16))


def test_shared_loyalty_from_nine() -> None:
    """From 9 players one loyalty card lies between neighbours and both see it."""
    st = GAME.setup(9, {}, 1)
    assert len(st.loyalty) == 9
    for seat in range(9):
        assert slot_pos(st, seat, "right") == slot_pos(st, (seat + 1) % 9, "left")
    mine = GAME.view(st, 0)["you"]["loyalty"]["right"]
    theirs = GAME.view(st, 1)["you"]["loyalty"]["left"]
    assert mine == theirs
    assert GAME.view(st, None)["table"]["shared_loyalty"] is True


def test_red_dot_programs_left_out_from_nine() -> None:
    """Red-dot programs are removed at 9-16 players and kept below."""

    def red(st: ICState) -> bool:
        cards = list(st.deck) + [c for s in st.seats for c in s.programs]
        return any(CARDS.programs[c].red_dot for c in cards)

    assert red(GAME.setup(8, {}, 1))
    assert not red(GAME.setup(9, {}, 1))


def test_legion_loyalty_option() -> None:
    """The Legion loyalty card replaces an Outlaw one, from 6 players only."""
    st = GAME.setup(6, {"legion_loyalty": True}, 3)
    colours = [CARDS.loyalty[c].colour for c in st.loyalty]
    assert colours.count("legion") == 1
    assert colours.count("outlaw") == CARDS.rows[6].loyalty.outlaw - 1
    with pytest.raises(BadOptions):
        GAME.setup(5, {"legion_loyalty": True}, 3)


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (3, {}),
        (17, {}),
        (5, {"first": 5}),
        (5, {"first": True}),
        (5, {"interrupt_window": -1}),
        (5, {"cards": "nope"}),
        (5, {"colour": "red"}),
    ],
)
def test_bad_setup_is_refused(players: int, options: dict[str, Any]) -> None:
    """Bad player counts and options raise BadOptions."""
    with pytest.raises(BadOptions):
        GAME.setup(players, options, 1)


def test_first_player_and_window_are_options() -> None:
    """The host picks the first seat; the window length is stored for the binding."""
    st = GAME.setup(6, {"first": 4, "interrupt_window": 8}, 1)
    table = GAME.view(st, None)["table"]
    assert st.active == 4 and table["active"] == 4
    assert table["interrupt_window"] == 8.0
    assert GAME.setup(6, {}, 1).window == 5.0


def test_setup_is_replayable() -> None:
    """The same seed deals the same table."""
    assert encode(GAME.setup(10, {}, 42)) == encode(GAME.setup(10, {}, 42))
    assert encode(GAME.setup(10, {}, 42)) != encode(GAME.setup(10, {}, 43))


def test_registry_and_generic_label() -> None:
    """The registry finds the engine and the default set says it is generic."""
    assert get_game("identites-cryptees") is GAME
    info = GAME.view(GAME.setup(4, {}, 0), None)["table"]["cards"]
    assert info["generic"] is True and "Generic" in info["label"]


# --- factions --------------------------------------------------------------


@pytest.mark.parametrize(
    ("colours", "always", "expected"),
    [
        ([("human", 1), ("human", 1), ("machine", 1)], None, "human"),
        ([("human", 1), ("machine", 1), ("machine", 1)], None, "machine"),
        ([("outlaw", 1), ("outlaw", 1), ("human", 1)], None, "outlaw"),
        # ties at the top: no majority means Outlaw
        ([("human", 1), ("machine", 1), ("outlaw", 1)], None, "outlaw"),
        ([("human", 1), ("machine", 1)], None, "outlaw"),
        ([("human", 1), ("human", 1), ("machine", 1), ("machine", 1)], None, "outlaw"),
        # x2 cards
        ([("human", 1), ("machine", 2)], None, "machine"),
        ([("human", 1), ("human", 1), ("machine", 2)], None, "outlaw"),
        ([("machine", 1), ("human", 2), ("machine", 1), ("outlaw", 1)], None, "outlaw"),
        ([("outlaw", 1), ("human", 2), ("machine", 1)], None, "human"),
        # "always X" overrides the count
        ([("human", 1), ("machine", 1), ("machine", 2)], "human", "human"),
        ([("machine", 1), ("human", 1), ("human", 1)], "machine", "machine"),
        ([("outlaw", 1), ("human", 2), ("human", 1)], "outlaw", "outlaw"),
        ([("human", 1), ("human", 1), ("machine", 1)], "human", "human"),
        # Legion ignores "always Human/Machine/Outlaw"
        ([("human", 1), ("legion", 1), ("legion", 1)], "human", "legion"),
        ([("machine", 1), ("legion", 2)], "machine", "legion"),
        ([("legion", 1), ("machine", 1), ("machine", 1)], "legion", "legion"),
        ([("human", 1), ("legion", 1), ("machine", 1)], "outlaw", "outlaw"),
        # Fallen ignore "always H/M/O" but not "always Legion"
        ([("machine", 1), ("fallen", 1), ("fallen", 1)], "machine", "fallen"),
        ([("human", 1), ("fallen", 2)], "outlaw", "fallen"),
        ([("fallen", 1), ("fallen", 1), ("human", 1)], "legion", "legion"),
        ([("fallen", 1), ("human", 1), ("human", 1)], "fallen", "fallen"),
        ([("fallen", 1), ("legion", 1), ("legion", 1)], "fallen", "legion"),
        ([("legion", 1), ("legion", 1), ("human", 1)], None, "legion"),
    ],
)
def test_faction_table(colours: list[tuple[str, int]], always: str | None, expected: str) -> None:
    """Majority over weighted colours; ties mean Outlaw; always-cards and their exceptions."""
    assert decide_faction(colours, always) == expected


@pytest.mark.parametrize(
    ("id_key", "left", "right", "hand", "expected"),
    [
        ("courier", "grey", "red", [], "outlaw"),
        ("courier", "blue", "red", [], "human"),
        ("courier", "blue", "red2", [], "outlaw"),
        ("drifter", "blue", "red2", [], "machine"),
        ("courier", "red", "grey", ["sleeper-red"], "machine"),
        ("courier", "red", "red", ["sleeper-blue"], "outlaw"),
        ("drone", "blue2", "grey", ["sleeper-grey", "sleeper-red"], "outlaw"),
        ("overseer", "blue", "blue2", [], "machine"),
        ("veteran", "red", "red2", [], "human"),
        ("loner", "blue", "blue", ["sleeper-blue"], "outlaw"),
        ("hive", "blue", "blue2", [], "legion"),
        ("veteran", "violet", "violet", [], "legion"),
        ("gravekeeper", "red", "red2", [], "fallen"),
    ],
)
def test_faction_from_the_cards(
    id_key: str, left: str, right: str, hand: list[str], expected: str
) -> None:
    """A seat's faction reads its ID, its loyalty cards and hidden-loyalty programs."""
    st = arrange(
        6,
        ids=[id_key, "drone", "drone", "drone", "drone", "drone"],
        loyalty=[left, right] + ["red"] * 10,
        hands=[hand, [], [], [], [], []],
    )
    assert faction(st, 0) == expected
    assert GAME.view(st, 0)["you"]["faction"] == expected


def test_change_faction_program_overrides() -> None:
    """A change-of-faction program makes its player an Outlaw whatever the cards."""
    st = sides(["human", "machine", "machine", "human"], hands=[["defect"], [], [], []])
    assert faction(st, 0) == "human"
    st = act(st, {"type": "program", "seat": 0, "card": prog("defect")})
    assert faction(st, 0) == "outlaw"


# --- hits and health ---------------------------------------------------------


def test_hit_target_chooses_reveal() -> None:
    """A pistol hit lets its target reveal a loyalty card and keep its HP."""
    st = arm(sides(["human", "machine", "outlaw", "human"]), 0, "pistol", (1,))
    st = act(st, {"type": "fire", "seat": 0})
    assert st.phase == RESPOND
    assert GAME.view(st, None)["table"]["pending"]["seat"] == 1
    st = act(st, {"type": "reveal", "seat": 1, "card": "left"})
    assert st.loyalty_up[slot_pos(st, 1, "left")] and st.seats[1].hp == 2
    assert GAME.view(st, None)["table"]["seats"][1]["loyalty"]["left"]["colour"] == "machine"


def test_hit_target_chooses_damage() -> None:
    """The target may keep its cards hidden and lose HP instead."""
    st = arm(sides(["human", "machine", "outlaw", "human"]), 0, "pistol", (1,))
    st = act(st, {"type": "fire", "seat": 0}, {"type": "take", "seat": 1})
    assert st.seats[1].hp == 1 and not any(st.loyalty_up)


def test_hit_reveal_must_match_the_weapon() -> None:
    """A pistol asks for a loyalty card: showing the ID instead is refused."""
    st = arm(sides(["human", "machine", "outlaw", "human"]), 0, "pistol", (1,))
    st = act(st, {"type": "fire", "seat": 0})
    with pytest.raises(IllegalAction):
        act(st, {"type": "reveal", "seat": 1, "card": "id"})
    with pytest.raises(IllegalAction, match="Nothing asks you"):
        act(st, {"type": "take", "seat": 2})


def test_nothing_left_to_reveal_means_damage() -> None:
    """With both loyalty cards up, a pistol hit costs HP at once."""
    st = arm(sides(["human", "machine", "outlaw", "human"]), 0, "pistol", (1,))
    st = act(reveal_all_loyalty(st, 1), {"type": "fire", "seat": 0})
    assert st.seats[1].hp == 1 and st.phase != RESPOND


def test_zero_hp_eliminates_and_reveals_everything() -> None:
    """At 0 HP a player is out, its ID and loyalty face up, its programs kept face down."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], ["scan"], [], []])
    st = kill(st, 0, 1)
    seat = GAME.view(st, None)["table"]["seats"][1]
    assert seat["alive"] is False and seat["hp"] == 0
    assert seat["id"]["key"] == "drone"
    assert seat["loyalty"]["left"] and seat["loyalty"]["right"] and seat["programs"] == 1


def test_heal_caps_at_two() -> None:
    """Healing never lifts a player above 2 HP."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["patch"], [], [], []])
    st = act(st, {"type": "program", "seat": 0, "card": prog("patch"), "target": 1})
    assert st.seats[1].hp == 2
    st = hurt(st, 2, 1)
    st = replace(
        st,
        seats=tuple(
            replace(s, programs=(prog("patch"),)) if i == 0 else s for i, s in enumerate(st.seats)
        ),
    )
    st = act(st, {"type": "program", "seat": 0, "card": prog("patch"), "target": 2})
    assert st.seats[2].hp == 2


# --- unarmed turn ------------------------------------------------------------


def test_investigate_shows_one_loyalty_card_privately() -> None:
    """Investigating shows the card to the investigator only."""
    st = sides(["human", "machine", "outlaw", "human"])
    before = public_text(st)
    st, events = act_events(st, {"type": "investigate", "seat": 0, "target": 1, "card": "right"})
    seen = GAME.view(st, 0)["you"]["seen"]
    assert seen == [
        {
            "kind": "loyalty",
            "owners": [[1, "right"]],
            "card": GAME.view(st, 1)["you"]["loyalty"]["right"],
        }
    ]
    assert GAME.view(st, 2)["you"]["seen"] == []
    peek = [e for e in events if e.kind == "peek"]
    assert peek and peek[0].to == (0,)
    assert "Red Chip" not in public_text(st) and "Red Chip" not in before


def test_investigate_id_only_when_both_loyalty_cards_are_up() -> None:
    """The ID may be looked at only once both loyalty cards are face up."""
    st = sides(["human", "machine", "outlaw", "human"])
    with pytest.raises(IllegalAction, match="loyalty card first"):
        act(st, {"type": "investigate", "seat": 0, "target": 1, "card": "id"})
    st = act(
        reveal_all_loyalty(st, 1), {"type": "investigate", "seat": 0, "target": 1, "card": "id"}
    )
    assert GAME.view(st, 0)["you"]["seen"][0]["card"]["key"] == "drone"
    with pytest.raises(IllegalAction):
        act(turn_to(st, 0), {"type": "investigate", "seat": 0, "target": 1, "card": "left"})


def test_investigate_refuses_self_and_face_up_cards() -> None:
    """No investigating oneself or a face-up card."""
    st = sides(["human", "machine", "outlaw", "human"])
    with pytest.raises(IllegalAction, match="another living"):
        act(st, {"type": "investigate", "seat": 0, "target": 0, "card": "left"})
    st = reveal_all_loyalty(st, 2)
    with pytest.raises(IllegalAction, match="face up"):
        act(st, {"type": "investigate", "seat": 0, "target": 2, "card": "left"})


def test_equip_aims_at_another_player() -> None:
    """Equipping takes a free weapon and aims it; the next player's turn follows."""
    st = sides(["human", "machine", "outlaw", "human"])
    st = act(st, {"type": "equip", "seat": 0, "weapon": "pistol", "targets": [2]})
    table = GAME.view(st, None)["table"]
    assert table["weapons"][0] == {**table["weapons"][0], "holder": 0, "targets": [2]}
    assert table["seats"][0]["weapon"] == "pistol" and st.active == 1
    with pytest.raises(IllegalAction, match="taken"):
        act(st, {"type": "equip", "seat": 1, "weapon": "pistol", "targets": [2]})
    with pytest.raises(IllegalAction, match="another living"):
        act(st, {"type": "equip", "seat": 1, "weapon": "rifle", "targets": [1]})


def test_companion_only_from_five_players() -> None:
    """The companion is not at a 4-player table."""
    st = sides(["human", "machine", "outlaw", "human"])
    with pytest.raises(IllegalAction, match="No such weapon"):
        act(st, {"type": "equip", "seat": 0, "weapon": "companion", "targets": [1]})


def test_draw_takes_the_top_program() -> None:
    """Drawing adds the top program to the hand, seen only by its owner."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], [], [], []])
    top = st.deck[0]
    st, events = act_events(st, {"type": "draw", "seat": 0})
    assert st.seats[0].programs == (top,)
    assert [c["card"] for c in GAME.view(st, 0)["you"]["programs"]] == [top]
    assert GAME.view(st, None)["table"]["seats"][0]["programs"] == 1
    assert all(e.to == (0,) for e in events if e.kind == "drew")


def test_only_the_active_player_declares() -> None:
    """Another seat's declaration is refused without changing the state."""
    st = sides(["human", "machine", "outlaw", "human"])
    with pytest.raises(IllegalAction, match="Not your turn"):
        GAME.apply(st, decode_action(GAME, {"type": "draw", "seat": 1}))


def test_unarmed_cannot_fire_and_armed_cannot_draw() -> None:
    """Unarmed turns and armed turns have their own actions."""
    st = sides(["human", "machine", "outlaw", "human"])
    for move in ({"type": "fire", "seat": 0}, {"type": "drop", "seat": 0}):
        with pytest.raises(IllegalAction, match="no weapon"):
            act(st, move)
    st = arm(st, 0, "pistol", (1,))
    for move in (
        {"type": "draw", "seat": 0},
        {"type": "investigate", "seat": 0, "target": 1, "card": "left"},
        {"type": "equip", "seat": 0, "weapon": "rifle", "targets": [1]},
    ):
        with pytest.raises(IllegalAction, match="armed"):
            act(st, move)


# --- armed turn and weapons --------------------------------------------------


def test_drop_puts_the_weapon_back() -> None:
    """Dropping frees the weapon."""
    st = act(arm(sides(["human"] * 4), 0, "pistol", (1,)), {"type": "drop", "seat": 0})
    assert st.weapons[0].holder is None and st.active == 1


def test_reaim_changes_target() -> None:
    """Re-aiming points the weapon elsewhere; the same target is refused."""
    st = arm(sides(["human"] * 4), 0, "pistol", (1,))
    with pytest.raises(IllegalAction, match="already aim"):
        act(st, {"type": "aim", "seat": 0, "targets": [1]})
    st = act(st, {"type": "aim", "seat": 0, "targets": [3]})
    assert st.weapons[0].targets == (3,) and st.weapons[0].holder == 0


def test_pistol_drops_and_draws() -> None:
    """After a pistol shot the shooter drops it and draws a program."""
    st = arm(
        sides(["human", "machine", "outlaw", "human"], hands=[[], [], [], []]), 0, "pistol", (1,)
    )
    st = act(st, {"type": "fire", "seat": 0}, {"type": "take", "seat": 1})
    assert st.weapons[0].holder is None and len(st.seats[0].programs) == 1


def test_rifle_asks_for_the_id_or_two_hp_and_draws_nothing() -> None:
    """The rifle: reveal the ID or lose 2 HP; no program drawn."""
    base = arm(
        sides(["human", "machine", "outlaw", "human"], hands=[[], [], [], []]), 0, "rifle", (2,)
    )
    st = act(base, {"type": "fire", "seat": 0})
    assert GAME.view(st, None)["table"]["pending"] == {
        "kind": "respond",
        "seat": 2,
        "reveal": "id",
        "damage": 2,
        "source": "rifle",
    }
    shown = act(st, {"type": "reveal", "seat": 2, "card": "id"})
    assert shown.seats[2].id_up and shown.seats[2].hp == 2 and shown.seats[0].programs == ()
    taken = act(st, {"type": "take", "seat": 2})
    assert not taken.seats[2].alive


def test_companion_heals_instead_of_firing() -> None:
    """The companion may heal its target 1 HP, then is dropped and a program drawn."""
    st = sides(["human", "machine", "outlaw", "human", "machine"], hands=[[], [], [], [], []])
    st = hurt(arm(st, 0, "companion", (3,)), 3, 1)
    st = act(st, {"type": "heal", "seat": 0})
    assert st.seats[3].hp == 2 and holding_key(st, 0) is None and len(st.seats[0].programs) == 1
    with pytest.raises(IllegalAction, match="cannot heal"):
        act(arm(turn_to(st, 1), 1, "pistol", (2,)), {"type": "heal", "seat": 1})


def test_companion_fires_like_a_pistol() -> None:
    """Fired, the companion asks for a loyalty card or 1 HP; once answered, the shooter draws."""
    st = sides(["human", "machine", "outlaw", "human", "machine"], hands=[[], [], [], [], []])
    st = act(arm(st, 0, "companion", (4,)), {"type": "fire", "seat": 0})
    assert GAME.view(st, None)["table"]["pending"] == {
        "kind": "respond",
        "seat": 4,
        "reveal": "loyalty",
        "damage": 1,
        "source": "companion",
    }
    assert holding_key(st, 0) is None and len(st.seats[0].programs) == 0
    st = act(st, {"type": "take", "seat": 4})
    assert len(st.seats[0].programs) == 1


def test_rocket_hits_two_neighbours() -> None:
    """The rocket launcher aims at two living neighbours; each answers the hit."""
    st = sides(["human", "machine", "outlaw", "human", "machine"])
    st = replace(st, weapons=tuple(replace(w, unlocked=True) for w in st.weapons))
    with pytest.raises(IllegalAction, match="neighbours"):
        act(st, {"type": "equip", "seat": 0, "weapon": "rocket", "targets": [1, 3]})
    with pytest.raises(IllegalAction, match="neighbours"):
        act(st, {"type": "equip", "seat": 0, "weapon": "rocket", "targets": [4, 0]})
    st = act(st, {"type": "equip", "seat": 0, "weapon": "rocket", "targets": [2, 3]})
    st = act(turn_to(st, 0), {"type": "fire", "seat": 0})
    st = act(st, {"type": "take", "seat": 2})
    assert st.phase == RESPOND and st.hits[0].target == 3
    st = act(st, {"type": "reveal", "seat": 3, "card": "right"})
    assert st.seats[2].hp == 1 and st.seats[3].hp == 2 and holding_key(st, 0) is None


def test_rocket_skips_eliminated_players_for_neighbours() -> None:
    """Neighbours for the rocket are counted among living players only."""
    st = sides(["human", "machine", "outlaw", "human", "machine"])
    st = kill(st, 0, 3)
    st = replace(turn_to(st, 0), weapons=tuple(replace(w, unlocked=True) for w in st.weapons))
    st = act(st, {"type": "equip", "seat": 0, "weapon": "rocket", "targets": [2, 4]})
    assert holding_key(st, 0) == "rocket"


def test_laser_names_its_target_when_firing() -> None:
    """The laser takes no target when equipped; firing names one."""
    st = sides(["human", "machine", "outlaw", "human"])
    st = replace(st, weapons=tuple(replace(w, unlocked=True) for w in st.weapons))
    with pytest.raises(IllegalAction, match="aims when it fires"):
        act(st, {"type": "equip", "seat": 0, "weapon": "laser", "targets": [1]})
    st = act(st, {"type": "equip", "seat": 0, "weapon": "laser", "targets": []})
    st = turn_to(st, 0)
    with pytest.raises(IllegalAction, match="aims when it fires"):
        act(st, {"type": "aim", "seat": 0, "targets": [1]})
    with pytest.raises(IllegalAction, match="another living"):
        act(st, {"type": "fire", "seat": 0})
    st = act(st, {"type": "fire", "seat": 0, "target": 2})
    assert st.hits[0].target == 2 and st.hits[0].reveal == "id" and st.hits[0].damage == 2


def test_locked_weapons_need_their_condition() -> None:
    """Rocket: two of your own cards face up; laser: a player eliminated."""
    st = sides(["human", "machine", "outlaw", "human", "machine"])
    rocket = {"type": "equip", "seat": 0, "weapon": "rocket", "targets": [1, 2]}
    laser = {"type": "equip", "seat": 0, "weapon": "laser", "targets": []}
    for move in (rocket, laser):
        with pytest.raises(IllegalAction, match="locked"):
            act(st, move)
    opened = act(reveal_all_loyalty(st, 0), rocket)
    assert holding_key(opened, 0) == "rocket"
    assert GAME.view(opened, None)["table"]["weapons"][3]["locked"] is False
    st = turn_to(kill(st, 0, 4), 0)
    assert holding_key(act(st, laser), 0) == "laser"


def test_unlock_program_opens_a_weapon() -> None:
    """An unlock effect flips a locked weapon for the whole table."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["override"], [], [], []])
    st = act(st, {"type": "program", "seat": 0, "card": prog("override")})
    assert GAME.view(st, None)["table"]["weapons"][-1]["locked"] is False
    st = act(st, {"type": "equip", "seat": 0, "weapon": "laser", "targets": []})
    assert holding_key(st, 0) == "laser"


def test_weapon_must_reaim_when_its_target_is_eliminated() -> None:
    """A weapon aimed at a player eliminated by someone else re-aims at once."""
    st = arm(sides(["human", "machine", "outlaw", "human", "machine"]), 2, "pistol", (1,))
    st = kill(st, 0, 1)
    assert st.phase == REAIM
    assert GAME.view(st, None)["table"]["pending"] == {
        "kind": "reaim",
        "seat": 2,
        "weapon": "pistol",
    }
    assert [a.targets for a in GAME.legal_actions(st, 2)] == [(0,), (3,), (4,)]
    with pytest.raises(IllegalAction):
        act(st, {"type": "aim", "seat": 2, "targets": [1]})
    with pytest.raises(IllegalAction, match="Wait"):
        act(st, {"type": "draw", "seat": 0})
    st = act(st, {"type": "aim", "seat": 2, "targets": [4]})
    assert st.weapons[0].targets == (4,) and st.phase == TURN and st.active == 2


def test_rocket_reaims_a_new_pair() -> None:
    """The rocket re-aims at a new pair of living neighbours."""
    st = sides(["human", "machine", "outlaw", "human", "machine", "outlaw"])
    st = arm(st, 3, "rocket", (1, 2))
    st = kill(st, 0, 2)
    assert st.phase == REAIM and st.reaim == (3,)
    with pytest.raises(IllegalAction, match="neighbours"):
        act(st, {"type": "aim", "seat": 3, "targets": [3, 4]})
    st = act(st, {"type": "aim", "seat": 3, "targets": [4, 5]})
    assert next(w for w in st.weapons if w.key == "rocket").targets == (4, 5)


def test_revealed_id_ability_with_a_target_waits_for_its_choice() -> None:
    """A revealed ID whose ability needs a target asks its owner, then resolves."""
    st = sides(["human", "machine", "outlaw", "human"])
    seats = list(st.seats)
    seats[1] = replace(
        seats[1], id_card=next(i for i, c in enumerate(CARDS.ids) if c.key == "scout")
    )
    st = arm(replace(st, seats=tuple(seats)), 0, "rifle", (1,))
    st = act(st, {"type": "fire", "seat": 0}, {"type": "reveal", "seat": 1, "card": "id"})
    assert st.phase == ABILITY
    assert GAME.view(st, None)["table"]["pending"] == {"kind": "ability", "seat": 1, "id": "scout"}
    with pytest.raises(IllegalAction, match="resolving"):
        act(st, {"type": "draw", "seat": 0})
    with pytest.raises(IllegalAction, match="No ability"):
        act(st, {"type": "ability", "seat": 2, "target": 0, "slot": "left"})
    with pytest.raises(IllegalAction, match="another living"):
        act(st, {"type": "ability", "seat": 1, "target": 1, "slot": "left"})
    assert len(GAME.legal_actions(st, 1)) == 6
    st = act(st, {"type": "ability", "seat": 1, "target": 3, "slot": "right"})
    assert GAME.view(st, 1)["you"]["seen"][0]["owners"] == [[3, "right"]]
    assert st.phase == TURN and st.active == 1


def test_id_ability_does_not_fire_at_elimination() -> None:
    """An ID turned face up by an elimination triggers nothing."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], [], [], []])
    seats = list(st.seats)
    seats[2] = replace(
        seats[2], id_card=next(i for i, c in enumerate(CARDS.ids) if c.key == "scout")
    )
    st = kill(replace(st, seats=tuple(seats)), 0, 2)
    assert st.phase == TURN and st.abilities == ()


def test_id_ability_on_its_owner_happens_at_once() -> None:
    """A revealed Medic heals its owner at once; no choice is asked."""
    st = sides(["human", "machine", "outlaw", "human"])
    seats = list(st.seats)
    seats[1] = replace(
        seats[1], id_card=next(i for i, c in enumerate(CARDS.ids) if c.key == "medic")
    )
    st = hurt(arm(replace(st, seats=tuple(seats)), 0, "rifle", (1,)), 1, 1)
    st = act(st, {"type": "fire", "seat": 0}, {"type": "reveal", "seat": 1, "card": "id"})
    assert st.seats[1].hp == 2 and st.phase == TURN


# --- programs ----------------------------------------------------------------


def test_hand_limit_two_at_the_end_of_the_turn() -> None:
    """With 3+ programs at the end of a turn the player discards down to 2."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["scan", "patch"], [], [], []])
    st = act(st, {"type": "draw", "seat": 0})
    assert st.phase == DISCARD and st.active == 0
    assert GAME.view(st, None)["table"]["pending"] == {"kind": "discard", "seat": 0, "limit": 2}
    with pytest.raises(IllegalAction, match="Not your turn"):
        act(st, {"type": "draw", "seat": 1})
    st = act(st, {"type": "discard", "seat": 0, "card": prog("scan")})
    assert st.phase == TURN and st.active == 1 and len(st.seats[0].programs) == 2


def test_hand_limit_one_from_nine_players() -> None:
    """At 9-16 players the hand limit is 1."""
    st = arrange(9, hands=[["scan"]] + [[]] * 8)
    st = act(st, {"type": "draw", "seat": 0})
    assert st.phase == DISCARD
    assert GAME.view(st, None)["table"]["hand_limit"] == 1


def test_hand_limit_counts_face_up_permanents() -> None:
    """Face-up permanent programs count toward the hand limit."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["plating", "scan"], [], [], []])
    st = act(st, {"type": "program", "seat": 0, "card": prog("plating")})
    assert st.seats[0].permanents == (prog("plating"),)
    st = act(st, {"type": "draw", "seat": 0})
    assert st.phase == DISCARD
    st = act(st, {"type": "discard", "seat": 0, "card": prog("plating")})
    assert st.seats[0].permanents == () and st.active == 1


def test_permanent_armor_softens_hits() -> None:
    """A face-up armor program takes 1 off each hit's damage."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], ["plating"], [], []])
    st = act(turn_to(st, 1), {"type": "program", "seat": 1, "card": prog("plating")})
    st = turn_to(arm(st, 0, "rifle", (1,)), 0)
    st = act(st, {"type": "fire", "seat": 0})
    assert GAME.view(st, None)["table"]["pending"]["damage"] == 1
    st = act(st, {"type": "take", "seat": 1})
    assert st.seats[1].hp == 1


def test_turn_program_only_on_your_turn() -> None:
    """A your-turn program is refused on someone else's turn; anytime ones are fine."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], ["backdoor", "scan"], [], []])
    with pytest.raises(IllegalAction, match="Only on your turn"):
        act(st, {"type": "program", "seat": 1, "card": prog("backdoor"), "target": 0})
    st = act(st, {"type": "program", "seat": 1, "card": prog("scan"), "target": 0, "slot": "left"})
    assert GAME.view(st, 1)["you"]["seen"][0]["owners"] == [[0, "left"]]
    assert st.active == 0 and st.phase == TURN


def test_hidden_loyalty_program_is_never_played() -> None:
    """Hidden-loyalty programs stay hidden: playing one is refused."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["sleeper-red"], [], [], []])
    with pytest.raises(IllegalAction, match="never played"):
        act(st, {"type": "program", "seat": 0, "card": prog("sleeper-red")})
    assert not any(
        getattr(a, "card", None) == prog("sleeper-red") for a in GAME.legal_actions(st, 0)
    )


def test_one_program_resolves_at_a_time() -> None:
    """While a program's hit waits, a your-turn program waits too (anytime ones may not)."""
    st = sides(
        ["human", "machine", "outlaw", "human"], hands=[["shock", "overload"], [], ["patch"], []]
    )
    st = act(st, {"type": "program", "seat": 0, "card": prog("shock"), "target": 1})
    assert st.phase == RESPOND
    with pytest.raises(IllegalAction, match="resolving"):
        act(st, {"type": "program", "seat": 0, "card": prog("overload"), "target": 1})
    assert not [a for a in GAME.legal_actions(st, 0) if isinstance(a, Program)]
    st = act(st, {"type": "take", "seat": 1})
    assert st.phase == TURN and st.active == 0
    st = act(st, {"type": "program", "seat": 2, "card": prog("patch"), "target": 1})
    assert st.seats[1].hp == 2


def test_interrupt_window_opens_after_a_declaration() -> None:
    """With a window, a declared action waits; the view says the window is open."""
    st = arm(sides(["human", "machine", "outlaw", "human"], window=5), 0, "pistol", (1,))
    st = act(st, {"type": "fire", "seat": 0})
    table = GAME.view(st, None)["table"]
    assert st.phase == WINDOW and table["phase"] == "window"
    assert table["window"] == {"open": True, "seconds": 5.0, "passed": [], "waiting": [1, 2, 3]}
    assert table["declared"] == {"type": "fire", "seat": 0, "target": None}
    assert st.hits == () and GAME.legal_actions(st, None) == [
        decode_action(GAME, {"type": "timeout"})
    ]


def test_timeout_closes_the_window() -> None:
    """The table's timeout action (no seat) resolves the declared action."""
    st = arm(sides(["human", "machine", "outlaw", "human"], window=5), 0, "pistol", (1,))
    st = act(st, {"type": "fire", "seat": 0}, {"type": "timeout"})
    assert st.phase == RESPOND and st.hits[0].target == 1
    assert GAME.view(st, None)["table"]["window"] is None


def test_window_closes_early_when_everyone_passed() -> None:
    """Once every other living player passed, the action resolves."""
    st = sides(["human", "machine", "outlaw", "human"], window=5)
    st = act(
        st, {"type": "draw", "seat": 0}, {"type": "pass", "seat": 1}, {"type": "pass", "seat": 3}
    )
    assert st.phase == WINDOW and GAME.view(st, None)["table"]["window"]["waiting"] == [2]
    with pytest.raises(IllegalAction, match="already passed"):
        act(st, {"type": "pass", "seat": 1})
    with pytest.raises(IllegalAction, match="declared"):
        act(st, {"type": "pass", "seat": 0})
    st = act(st, {"type": "pass", "seat": 2})
    assert st.phase == TURN and st.active == 1


def test_no_window_resolves_at_once() -> None:
    """With interrupt_window 0 the action resolves when declared; timeout is refused."""
    st = sides(["human", "machine", "outlaw", "human"], window=0)
    with pytest.raises(IllegalAction, match="No window"):
        act(st, {"type": "timeout"})
    st = act(st, {"type": "draw", "seat": 0})
    assert st.active == 1


def test_interrupt_program_lets_the_actor_change_the_action() -> None:
    """A program played in the window resolves first; the actor may then declare again."""
    st = sides(["human", "machine", "outlaw", "human"], window=5, hands=[[], ["jammer"], [], []])
    st = arm(st, 0, "pistol", (1,))
    st = act(st, {"type": "fire", "seat": 0})
    st = act(st, {"type": "program", "seat": 1, "card": prog("jammer"), "target": 0})
    table = GAME.view(st, None)["table"]
    assert st.phase == TURN and st.active == 0 and table["may_change"] is True
    assert table["declared"] is None and holding_key(st, 0) is None and st.hits == ()
    st = act(st, {"type": "draw", "seat": 0}, {"type": "timeout"})
    assert st.active == 1 and st.seats[1].hp == 2


def test_passed_seat_cannot_interrupt() -> None:
    """After passing, a seat plays no program in that window (the actor may: Decision)."""
    st = sides(
        ["human", "machine", "outlaw", "human"], window=5, hands=[["scan"], ["jammer"], [], []]
    )
    st = act(arm(st, 0, "pistol", (1,)), {"type": "fire", "seat": 0}, {"type": "pass", "seat": 1})
    with pytest.raises(IllegalAction, match="passed"):
        act(st, {"type": "program", "seat": 1, "card": prog("jammer"), "target": 0})
    assert GAME.legal_actions(st, 1) == []
    st = act(st, {"type": "program", "seat": 0, "card": prog("scan"), "target": 1, "slot": "left"})
    assert st.phase == TURN and st.may_change is True


@pytest.mark.parametrize(
    ("key", "extra", "check"),
    [
        ("backdoor", {"target": 1}, lambda st: GAME.view(st, 0)["you"]["seen"][0]["kind"] == "id"),
        ("spotlight", {"target": 1, "slot": "left"}, lambda st: st.loyalty_up[2]),
        ("overload", {"target": 1}, lambda st: st.seats[1].hp == 1),
        ("supply", {}, lambda st: len(st.seats[0].programs) == 2),
        ("masterkey", {}, lambda st: st.weapons[2].unlocked),
        ("glitch", {"target": 1}, lambda st: st.seats[1].skips == 1),
        ("pickpocket", {"target": 2}, lambda st: st.seats[0].programs == (prog("scan"),)),
    ],
)
def test_program_effects(key: str, extra: dict[str, Any], check: Any) -> None:
    """Each effect of the vocabulary does what its card says."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[key], [], ["scan"], []])
    st = act(st, {"type": "program", "seat": 0, "card": prog(key), **extra})
    assert check(st)


def test_swap_exchanges_loyalty_cards() -> None:
    """Swap trades one of your loyalty cards with one of the target's."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["swap"], [], [], []])
    mine, theirs = st.loyalty[1], st.loyalty[2]
    st = act(
        st,
        {
            "type": "program",
            "seat": 0,
            "card": prog("swap"),
            "target": 1,
            "slot": "left",
            "own_slot": "right",
        },
    )
    assert st.loyalty[1] == theirs and st.loyalty[2] == mine
    assert GAME.view(st, 0)["you"]["loyalty"]["right"]["colour"] == "machine"


def test_swap_takes_face_down_cards_only() -> None:
    """Face-up loyalty cards are not swapped."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["swap"], [], [], []])
    st = reveal_all_loyalty(st, 1)
    move = {"type": "program", "seat": 0, "card": prog("swap"), "target": 1}
    with pytest.raises(IllegalAction, match="face-down"):
        act(st, {**move, "slot": "left", "own_slot": "right"})
    legal = GAME.legal_actions(st, 0)
    assert not [a for a in legal if isinstance(a, Program) and a.target == 1]


def test_skipped_turn_is_passed_over() -> None:
    """A player told to skip a turn is passed over once."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["glitch"], [], [], []])
    st = act(st, {"type": "program", "seat": 0, "card": prog("glitch"), "target": 1})
    st = act(st, {"type": "draw", "seat": 0})
    assert st.active == 2 and st.seats[1].skips == 0


def test_steal_tells_only_the_two_players() -> None:
    """The stolen card is named to the thief and the victim only."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["pickpocket"], ["scan"], [], []])
    st, events = act_events(
        st, {"type": "program", "seat": 0, "card": prog("pickpocket"), "target": 1}
    )
    secret = [e for e in events if e.kind == "stolen"]
    assert secret and secret[0].to == (0, 1)
    assert all("card" not in e.data for e in events if e.to is None and e.kind == "steal")


# --- elimination and victory ---------------------------------------------------


def _dead(st: ICState, seats: Sequence[int]) -> ICState:
    out = list(st.seats)
    for seat in seats:
        out[seat] = replace(out[seat], alive=False, hp=0, final=faction(st, seat))
    return replace(st, seats=tuple(out))


@pytest.mark.parametrize(
    ("names", "dead", "ffa", "expected"),
    [
        (["human", "machine", "outlaw", "human"], [1, 2], False, ([0, 3], "human")),
        (["human", "machine", "outlaw", "human"], [1], False, None),
        (["human", "machine", "outlaw", "machine"], [0], False, ([1, 3], "machine")),
        (["human", "machine", "outlaw", "machine"], [0, 1], False, ([1, 3], "machine")),
        (["human", "machine", "outlaw", "outlaw"], [0, 1], False, None),
        (["human", "machine", "outlaw", "outlaw"], [0, 1, 2], False, ([3], "outlaw")),
        (["human", "machine", "legion", "human"], [1], False, None),
        (["human", "machine", "outlaw", "legion"], [0, 1, 2], False, ([3], "legion")),
        (["legion", "machine", "legion", "human"], [1, 3], False, ([0, 2], "legion")),
        (["fallen", "machine", "fallen", "human"], [1, 3], False, ([0, 2], "fallen")),
        (["fallen", "legion", "human", "machine"], [2, 3], False, None),
        (["human", "machine", "legion", "outlaw"], [0, 3], False, ([1], "machine")),
        (["human", "machine", "outlaw", "machine"], [1, 2, 3], False, ([0], "human")),
        (["machine", "machine", "outlaw", "outlaw"], [0, 2], True, None),
        (["machine", "machine", "outlaw", "outlaw"], [0], True, None),
        (["machine", "machine", "outlaw", "outlaw"], [0, 1, 2], True, ([3], "outlaw")),
        (["human", "machine", "outlaw", "human"], [1, 2], True, None),
        (["legion", "legion", "machine", "outlaw"], [2, 3], True, ([0, 1], "legion")),
    ],
)
def test_victory_table(
    names: list[str], dead: list[int], ffa: bool, expected: tuple[list[int], str] | None
) -> None:
    """Victory conditions, including Legion, Fallen and the no-Human rule."""
    st = _dead(sides(names), dead)
    got = victory(st, ffa)
    assert (None if got is None else (list(got[0]), got[1])) == expected


def test_every_side_a_victory_names_is_declared_with_its_words() -> None:
    """Each faction (and nobody) has its declared words: a card's side reads as a word and
    a letter, a victory as its side's line."""
    for side in (*FACTIONS, "nobody"):
        said = INFO.side(side)
        assert said is not None and said.name and said.wins, side
        if side != "nobody":
            assert said.word and said.letter, side


def test_check_after_elimination_says_only_the_game_goes_on() -> None:
    """After an elimination that ends nothing the table learns only that."""
    st = sides(["human", "machine", "outlaw", "human"])
    st, events = act_events(
        hurt(arm(st, 0, "rifle", (2,)), 2, 1, id_up=True), {"type": "fire", "seat": 0}
    )
    table = GAME.view(st, None)["table"]
    assert table["check"] == {"eliminated": 2, "result": "continues", "message": "The game goes on"}
    assert not table["over"] and table["winners"] == [] and table["winning_side"] is None
    assert all("faction" not in s for s in table["seats"])
    checks = [e for e in events if e.kind == "check"]
    assert checks == [Event("check", {"eliminated": 2, "result": "continues"})]


def test_check_result_does_not_depend_on_living_factions() -> None:
    """Two tables that differ only in living players' hidden cards announce the same."""
    a = sides(["human", "machine", "outlaw", "human", "machine"])
    b = sides(["machine", "human", "outlaw", "outlaw", "human"])
    b = replace(
        b,
        seats=tuple(
            replace(s, id_card=a.seats[2].id_card) if i == 2 else s for i, s in enumerate(b.seats)
        ),
    )
    b = replace(b, loyalty=b.loyalty[:4] + a.loyalty[4:6] + b.loyalty[6:])
    ka, kb = kill(a, 0, 2), kill(b, 0, 2)
    assert public_text(ka) == public_text(kb)


def test_winners_are_named_and_scored() -> None:
    """The elimination that meets a condition ends the game and names the winners."""
    st = sides(["human", "machine", "human", "human"])
    st, events = act_events(
        hurt(arm(st, 0, "rifle", (1,)), 1, 1, id_up=True), {"type": "fire", "seat": 0}
    )
    table = GAME.view(st, None)["table"]
    assert st.phase == OVER and GAME.is_over(st)
    assert table["check"]["winners"] == [0, 2, 3] and table["check"]["message"] == "Humans win"
    assert [s["faction"] for s in table["seats"]] == ["human", "machine", "human", "human"]
    assert [e.data["result"] for e in events if e.kind == "check"] == ["won"]
    assert GAME.scores(st) == [1, 0, 1, 1] and GAME.ranking(st) == [[0, 2, 3], [1]]
    with pytest.raises(IllegalAction, match="over"):
        act(st, {"type": "draw", "seat": 2})
    assert all(GAME.legal_actions(st, s) == [] for s in [None, 0, 1, 2, 3])


def test_no_human_at_start_means_last_survivor_wins() -> None:
    """Without a Human at the start everyone plays to be the last survivor."""
    names = ["machine", "machine", "outlaw", "outlaw"]
    normal = kill(sides(["machine", "machine", "outlaw", "human"]), 0, 3)
    assert normal.winners == (0, 1)
    st = kill(sides(names), 0, 2)
    assert st.free_for_all is True and st.phase != OVER
    st = kill(turn_to(st, 0), 0, 1)
    assert st.phase != OVER
    st = kill(turn_to(st, 0), 0, 3)
    assert st.winners == (0,)


def test_no_human_at_start_stays_free_for_all_even_if_one_appears() -> None:
    """No Human at the start: free-for-all even if a Human appeared before the first elimination."""
    st = sides(["machine", "machine", "outlaw", "outlaw"])
    assert not st.humans_at_start
    seats = list(st.seats)
    seats[3] = replace(seats[3], override="human")
    st = kill(replace(st, seats=tuple(seats)), 0, 2)
    assert st.free_for_all is True


def test_last_human_changing_side_means_last_survivor_wins() -> None:
    """If the only Human changed side before the first elimination, last survivor wins."""
    st = sides(["human", "machine", "machine", "outlaw"], hands=[["defect"], [], [], []])
    assert st.humans_at_start
    st = act(st, {"type": "program", "seat": 0, "card": prog("defect")})
    st = kill(st, 0, 3)
    assert st.free_for_all is True and st.phase != OVER


def test_eliminated_player_cannot_be_targeted_or_act() -> None:
    """Eliminated players are no targets and take no actions."""
    st = kill(sides(["human", "machine", "outlaw", "human"]), 0, 2)
    assert GAME.legal_actions(st, 2) == []
    with pytest.raises(IllegalAction):
        act(st, {"type": "equip", "seat": 1, "weapon": "pistol", "targets": [2]})
    with pytest.raises(IllegalAction, match="out of the game"):
        act(st, {"type": "pass", "seat": 2})


def test_turn_order_skips_eliminated_players() -> None:
    """The turn passes over eliminated seats."""
    st = kill(sides(["human", "machine", "outlaw", "human"]), 0, 1)
    assert st.active == 2


# --- notation and coffre play -----------------------------------------------


def test_actions_round_trip_in_json() -> None:
    """Every action type decodes from its documented JSON form."""
    for move in (
        {"type": "investigate", "seat": 0, "target": 1, "card": "left"},
        {"type": "equip", "seat": 0, "weapon": "rocket", "targets": [1, 2]},
        {"type": "draw", "seat": 0},
        {"type": "drop", "seat": 0},
        {"type": "aim", "seat": 0, "targets": [3]},
        {"type": "fire", "seat": 0, "target": 2},
        {"type": "heal", "seat": 0},
        {"type": "pass", "seat": 1},
        {"type": "timeout"},
        {"type": "program", "seat": 1, "card": 4, "target": 2, "slot": "left", "own_slot": "right"},
        {"type": "reveal", "seat": 1, "card": "id"},
        {"type": "take", "seat": 1},
        {"type": "ability", "seat": 1, "target": 2, "slot": "right"},
        {"type": "discard", "seat": 0, "card": 3},
    ):
        action = decode_action(GAME, move)
        assert {k: v for k, v in json.loads(encode(action)).items() if v is not None} == move
    with pytest.raises(IllegalAction):
        decode_action(GAME, {"type": "shoot", "seat": 0})


def test_coffre_play_runs_a_scenario() -> None:
    """`coffre play --game identites-cryptees` applies a JSON scenario."""
    lines = [
        '{"type":"equip","seat":0,"weapon":"pistol","targets":[1]}',
        '{"type":"timeout"}',
        '{"type":"draw","seat":1}',
        '{"type":"pass","seat":0}',
        '{"type":"pass","seat":2}',
        '{"type":"pass","seat":3}',
    ]
    out = io.StringIO()
    code = run_scenario("identites-cryptees", 4, 5, {"first": 0}, lines, out)
    result = json.loads(out.getvalue())
    assert code == 0 and result["version"] == 6 and result["over"] is False
    assert result["public"]["table"]["weapons"][0]["holder"] == 0
    bad = io.StringIO()
    assert run_scenario("identites-cryptees", 4, 5, {}, ['{"type":"fire","seat":0}'], bad) == 2
    assert json.loads(bad.getvalue())["error"] == "You hold no weapon"


def test_coffre_play_command_line() -> None:
    """The `coffre play` command runs the engine in a subprocess, options included."""
    script = "from firmware.cli import main; raise SystemExit(main())"
    args = ["play", "--game", "identites-cryptees", "--players", "9", "--seed", "2"]
    args += ["-o", "first=3", "-o", "interrupt_window=0", "-"]
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        input='{"type":"draw","seat":3}\n',
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)["public"]["table"]
    assert table["pending"] == {"kind": "discard", "seat": 3, "limit": 1}
    assert table["shared_loyalty"] is True
    assert table["interrupt_window"] == 0.0


def test_state_round_trips_through_json() -> None:
    """A mid-game state with a declared action survives encode/decode."""
    st = arm(sides(["human", "machine", "outlaw", "human"], window=5), 0, "pistol", (1,))
    st = act(st, {"type": "fire", "seat": 0})
    from rules.core import decode_state

    assert decode_state(GAME, encode(st)) == st


def test_weapon_state_defaults() -> None:
    """A free weapon has no holder and no targets."""
    assert WeaponState("pistol") == WeaponState("pistol", None, (), True)
