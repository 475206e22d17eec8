"""Identités cryptées 2.0: the rules corrections of issue 15 (audit against the rulebook).

Map (test -> the sentence of the rulebook or identites-cryptees.md it checks; "D" marks a Decision):
- test_memory_follows_a_swapped_card: what a seat was shown is a card, not a position.
- test_plating_does_not_absorb_a_program_hit: "Weapon hits deal 1 less damage".
- test_laser_shows_unlocked_once_its_condition_holds_for_everyone: "rocket launcher and
  laser locked" until their condition; what is face up is public (D).
- test_a_shared_card_is_investigated_as_the_neighbours: 9-16 players, « Cette carte est
  partagée par ces deux joueurs » and « regarder secrètement une des cartes de Loyauté
  d'un autre joueur »: the card between two neighbours is one of each one's (D).
- test_anytime_program_*: D « N'importe quand » programs at any moment, also while a hit,
  a re-aim or a discard is pending and by the actor inside its own window; each resolves
  at once, before what is pending.
- test_special_ids_*, test_legion_option_*: « Extension de cartes de Loyauté Légion (Pour 6
  joueurs ou plus) ... Pour les joueurs accomplis uniquement ! »

Issue 26 (third audit):
- test_shooter_draws_after_the_check_seed_183, ..._seed_27, test_shooter_draws_after_the_answer:
  « Pistolet : La cible révèle une de ses cartes de Loyauté ou bien perd 1 PV. Lâchez
  ensuite cette arme et piochez un Programme. »; « Lorsqu'un joueur est éliminé, celui-ci
  vérifie si l'une de ces conditions de victoire a été atteinte. »
- test_eliminated_player_keeps_its_programs, test_revived_player_has_its_programs_again:
  « Les Programmes permanents ne comptent pas si le joueur qui les possède est éliminé. »;
  only the ID and loyalty cards are revealed, only « les cartes Programme utilisées » go
  under the deck.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from msgspec.structs import replace

from rules._identites_cryptees_state import (
    ABILITY,
    DISCARD,
    REAIM,
    RESPOND,
    TURN,
    ICState,
    Investigate,
    Program,
    armor,
    cards_of,
    faction,
    slot_pos,
)
from rules.core import BadOptions, IllegalAction
from rules.identites_cryptees import GAME
from tests.support.games.identites_cryptees import (
    CARDS,
    act,
    arm,
    holding_key,
    kill,
    prog,
    sides,
    turn_to,
)

SPECIAL = {"hive", "gravekeeper"}
DATA = Path(__file__).parents[2] / "rules" / "data" / "identites-cryptees"


# --- memory -------------------------------------------------------------------


def test_memory_follows_a_swapped_card() -> None:
    """After Swap Tags moves a card a seat has seen, its memory names the card's new place."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], [], ["swap"], []])
    st = act(st, {"type": "investigate", "seat": 0, "target": 1, "card": "left"})
    seen_card = st.loyalty[slot_pos(st, 1, "left")]
    (memory,) = GAME.view(st, 0)["you"]["seen"]
    assert memory["owners"] == [[1, "left"]] and memory["card"]["card"] == seen_card
    swap = {"type": "program", "seat": 2, "card": prog("swap"), "target": 1}
    st = act(turn_to(st, 2), {**swap, "slot": "left", "own_slot": "right"})
    assert st.loyalty[slot_pos(st, 2, "right")] == seen_card
    (memory,) = GAME.view(st, 0)["you"]["seen"]
    assert memory["owners"] == [[2, "right"]] and memory["card"]["card"] == seen_card


# --- armour -------------------------------------------------------------------


def test_plating_does_not_absorb_a_program_hit() -> None:
    """Plating softens weapon hits only: Shock (a program) still asks for 1 HP."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["shock"], ["plating"], [], []])
    st = act(turn_to(st, 1), {"type": "program", "seat": 1, "card": prog("plating")})
    st = act(turn_to(st, 0), {"type": "program", "seat": 0, "card": prog("shock"), "target": 1})
    assert st.phase == RESPOND
    assert GAME.view(st, None)["table"]["pending"]["damage"] == 1
    st = act(st, {"type": "take", "seat": 1})
    assert st.seats[1].hp == 1
    st = turn_to(arm(st, 0, "pistol", (1,)), 0)
    st = act(st, {"type": "fire", "seat": 0})
    assert GAME.view(st, None)["table"]["pending"]["damage"] == 0


# --- public weapon state --------------------------------------------------------


def test_laser_shows_unlocked_once_its_condition_holds_for_everyone() -> None:
    """Once a player is eliminated the laser is free for all: the public view says so."""
    st = sides(["human", "machine", "outlaw", "human", "machine"])
    laser = next(w for w in GAME.view(st, None)["table"]["weapons"] if w["key"] == "laser")
    assert laser["locked"] is True
    st = kill(st, 0, 1)
    laser = next(w for w in GAME.view(st, None)["table"]["weapons"] if w["key"] == "laser")
    assert laser["locked"] is False
    rocket = next(w for w in GAME.view(st, None)["table"]["weapons"] if w["key"] == "rocket")
    assert rocket["locked"] is True


# --- 9+ players ------------------------------------------------------------------


def test_a_shared_card_is_investigated_as_the_neighbours() -> None:
    """D: at 9+ a seat may investigate the card it shares with a neighbour (it is one of
    the neighbour's loyalty cards), so every face-down loyalty card of every other seat is
    offered, and the look is remembered as the card both hold."""
    st = GAME.setup(9, {"interrupt_window": 0}, 4)
    legal = [a for a in GAME.legal_actions(st, 0) if isinstance(a, Investigate)]
    assert Investigate(0, 1, "left") in legal and Investigate(0, 8, "right") in legal
    assert len(legal) == 2 * 8
    st = act(st, {"type": "investigate", "seat": 0, "target": 1, "card": "left"})
    memory = GAME.view(st, 0)["you"]["seen"][0]
    assert sorted(map(tuple, memory["owners"])) == [(0, "right"), (1, "left")]


def test_a_neighbour_whose_other_card_is_up_may_still_be_investigated() -> None:
    """D: with a neighbour's other loyalty card face up, the shared card is the one left to
    look at; the neighbour is not out of reach of an investigation."""
    st = GAME.setup(9, {"interrupt_window": 0}, 4)
    up = list(st.loyalty_up)
    up[slot_pos(st, 1, "right")] = True
    st = replace(st, loyalty_up=tuple(up))
    legal = [a for a in GAME.legal_actions(st, 0) if isinstance(a, Investigate) and a.target == 1]
    assert legal == [Investigate(0, 1, "left")]


# --- anytime programs (Decision) --------------------------------------------------


def test_anytime_program_by_the_actor_inside_its_own_window() -> None:
    """D: the actor may play an anytime program in its own window; it resolves at once."""
    st = sides(["human", "machine", "outlaw", "human"], window=5, hands=[["scan"], [], [], []])
    st = act(st, {"type": "draw", "seat": 0})
    scan = {"type": "program", "seat": 0, "card": prog("scan"), "target": 1, "slot": "left"}
    assert Program(0, prog("scan"), 1, "left") in GAME.legal_actions(st, 0)
    st = act(st, scan)
    assert GAME.view(st, 0)["you"]["seen"][0]["owners"] == [[1, "left"]]
    assert st.phase == TURN and st.active == 0 and st.may_change is True


def test_anytime_program_while_a_hit_is_pending() -> None:
    """D: with a hit waiting for its answer, an anytime program resolves first."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["shock"], [], ["patch"], []])
    st = replace(st, seats=tuple(replace(s, hp=1) if i == 1 else s for i, s in enumerate(st.seats)))
    st = act(st, {"type": "program", "seat": 0, "card": prog("shock"), "target": 1})
    assert st.phase == RESPOND
    assert Program(2, prog("patch"), 1) in GAME.legal_actions(st, 2)
    st = act(st, {"type": "program", "seat": 2, "card": prog("patch"), "target": 1})
    assert st.seats[1].hp == 2 and st.phase == RESPOND and st.hits[0].target == 1
    st = act(st, {"type": "take", "seat": 1})
    assert st.seats[1].alive and st.seats[1].hp == 1 and st.phase == TURN and st.active == 0


def test_anytime_program_while_a_reaim_is_pending() -> None:
    """D: a jammer played on a weapon that must re-aim drops it before the re-aim."""
    st = sides(
        ["human", "machine", "outlaw", "human", "machine"], hands=[[], [], [], [], ["jammer"]]
    )
    st = arm(st, 2, "pistol", (1,))
    st = kill(st, 0, 1)
    assert st.phase == REAIM and st.reaim == (2,)
    st = act(st, {"type": "program", "seat": 4, "card": prog("jammer"), "target": 2})
    assert holding_key(st, 2) is None and st.reaim == () and st.phase == TURN
    assert st.active == 2  # the rifle's turn ended; nothing else was pending


def test_anytime_program_while_a_discard_is_pending() -> None:
    """D: during a discard another seat's anytime program resolves; the discard still waits."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[["scan", "patch"], [], ["scan"], []])
    st = act(st, {"type": "draw", "seat": 0})
    assert st.phase == DISCARD
    play = {"type": "program", "seat": 2, "card": prog("scan") + 1, "target": 0, "slot": "left"}
    st = act(st, play)
    assert st.phase == DISCARD and st.active == 0 and st.resume == "end"
    own = {"type": "program", "seat": 0, "card": prog("patch"), "target": 0}
    st = act(st, own)  # playing one instead of discarding is fine too
    assert st.phase == TURN and st.active == 1


def test_anytime_program_does_not_give_the_actor_a_new_action() -> None:
    """An anytime program played after the action resolved does not reopen the turn."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], ["patch"], [], []])
    st = arm(st, 0, "pistol", (1,))
    st = act(st, {"type": "fire", "seat": 0})
    assert st.phase == RESPOND
    st = act(st, {"type": "program", "seat": 1, "card": prog("patch"), "target": 1})
    st = act(st, {"type": "take", "seat": 1})
    assert st.active == 1 and st.phase == TURN


# --- Legion and special IDs ---------------------------------------------------------


def _dealt_ids(players: int, options: dict[str, object], seeds: range) -> Counter[str]:
    count: Counter[str] = Counter()
    for seed in seeds:
        st = GAME.setup(players, options, seed)
        count.update(CARDS.ids[c].key for c in [s.id_card for s in st.seats])
    return count


@pytest.mark.parametrize("players", [4, 5, 6, 8, 9, 16])
def test_special_ids_only_with_the_legion_option(players: int) -> None:
    """Hive Mind and Gravekeeper are never dealt without the Legion option."""
    dealt = _dealt_ids(players, {}, range(300))
    assert not SPECIAL & set(dealt)


def test_special_ids_come_with_the_legion_option() -> None:
    """With the option (6+ players) the special IDs are shuffled in."""
    dealt = _dealt_ids(8, {"legion_loyalty": True}, range(300))
    assert set(dealt) >= SPECIAL


@pytest.mark.parametrize("players", [6, 7, 8, 9, 12, 16])
def test_legion_option_makes_a_legion(players: int) -> None:
    """With the Legion option every deal has a Legion member (the Legion loyalty card)."""
    for seed in range(100):
        st = GAME.setup(players, {"legion_loyalty": True}, seed)
        legion = [s for s in range(players) if faction(st, s) == "legion"]
        assert legion, seed
        holder = [
            s
            for s in range(players)
            for slot in ("left", "right")
            if CARDS.loyalty[st.loyalty[slot_pos(st, s, slot)]].extension == "legion"
        ]
        assert set(holder) <= set(legion)


def test_legion_option_is_refused_below_six() -> None:
    """The Legion extension is for 6 players or more."""
    with pytest.raises(BadOptions):
        GAME.setup(5, {"legion_loyalty": True}, 1)


# --- the card vocabulary a real box needs ---------------------------------------------


def _with(**changes: object) -> dict[str, object]:
    """The generic set as JSON, with top-level lists edited by ``changes`` callables."""
    data = json.loads((DATA / "generic.json").read_text(encoding="utf-8"))
    for key, change in changes.items():
        change(data[key])  # type: ignore[operator]
    data.update(name="box", generic=False)
    return data


def _card(items: list[dict[str, object]], key: str) -> dict[str, object]:
    return next(c for c in items if c["key"] == key)


def test_setup_row_may_list_its_weapons() -> None:
    """« Si le lance-roquettes et/ou le laser est sur la table »: a row lists its weapons."""

    def rows(setup: list[dict[str, object]]) -> None:
        _card_row(setup, 10)["weapons"] = ["pistol", "rifle", "companion"]

    data = _with(setup=rows)
    assert {w.key for w in GAME.setup(10, {"cards": data}, 1).weapons} == {
        "pistol", "rifle", "companion",
    }  # fmt: skip
    assert len(GAME.setup(11, {"cards": data}, 1).weapons) == 5
    _card_row(data["setup"], 10)["weapons"] = ["pistol", "flamethrower"]  # type: ignore[arg-type]
    with pytest.raises(BadOptions, match="flamethrower"):
        GAME.setup(10, {"cards": data}, 1)


def _card_row(setup: list[dict[str, object]], players: int) -> dict[str, object]:
    return next(r for r in setup if r["players"] == players)


def test_program_may_act_otherwise_from_nine_when_a_weapon_is_on_the_table() -> None:
    """A program's effects at 9-16 players with a given weapon on the table (« Pourriel »)."""

    def programs(items: list[dict[str, object]]) -> None:
        _card(items, "masterkey")["instead"] = {
            "players_from": 9,
            "weapon": "rocket",
            "effects": [{"do": "draw", "amount": 2}],
        }

    data = _with(programs=programs)
    for players, drawn in ((8, 0), (9, 2)):
        st = GAME.setup(players, {"cards": data, "interrupt_window": 0}, 2)
        key = next(i for i, c in enumerate(cards_of(st).programs) if c.key == "masterkey")
        seats = list(st.seats)
        seats[0] = replace(seats[0], programs=(key,))
        st = replace(st, seats=tuple(seats), deck=tuple(c for c in st.deck if c != key))
        st = act(st, {"type": "program", "seat": 0, "card": key})
        rocket = next(w for w in st.weapons if w.key == "rocket")
        assert rocket.unlocked == (drawn == 0)
        assert len(st.seats[0].programs) == drawn


def _reviver(data_ids: list[dict[str, object]]) -> None:
    _card(data_ids, "medic")["effects"] = [{"do": "revive", "who": "eliminated", "amount": 1}]
    _card(data_ids, "medic")["text"] = "When revealed: an eliminated player comes back, 1 HP."


def test_an_ability_may_revive_an_eliminated_player() -> None:
    """« Infiltré, Sauvegarde, Porte-Mort, Sauveur »: abilities aimed at the eliminated."""
    data = _with(ids=_reviver)
    st = GAME.setup(5, {"cards": data, "interrupt_window": 0}, 3)
    cards = cards_of(st)
    medic = next(i for i, c in enumerate(cards.ids) if c.key == "medic")
    seats = list(st.seats)
    seats[4] = replace(seats[4], id_card=medic)
    st = replace(st, seats=tuple(seats), humans_at_start=True)
    st = kill(st, 0, 1)
    assert not st.seats[1].alive
    st = turn_to(st, 0)
    st = hurt_target_with_rifle(st, 0, 4)
    st = act(st, {"type": "reveal", "seat": 4, "card": "id"})
    assert st.phase == ABILITY
    legal = GAME.legal_actions(st, 4)
    assert [a.target for a in legal] == [1]  # type: ignore[attr-defined]
    with pytest.raises(IllegalAction, match="eliminated"):
        act(st, {"type": "ability", "seat": 4, "target": 2})
    st = act(st, {"type": "ability", "seat": 4, "target": 1})
    assert st.seats[1].alive and st.seats[1].hp == 1 and st.seats[1].final is None
    assert GAME.view(st, None)["table"]["seats"][1]["alive"] is True


def hurt_target_with_rifle(st: ICState, shooter: int, target: int) -> ICState:
    """``shooter`` fires the rifle at ``target`` (full HP): the target must answer."""
    st = arm(st, shooter, "rifle", (target,))
    return act(st, {"type": "fire", "seat": shooter})


def test_revealed_id_may_raise_the_hand_limit() -> None:
    """A permanent ID ability beyond armour: keep one more program while face up."""

    def ids(items: list[dict[str, object]]) -> None:
        _card(items, "courier")["effects"] = [{"do": "hand_limit", "amount": 1}]

    data = _with(ids=ids)
    st = GAME.setup(4, {"cards": data, "interrupt_window": 0}, 3)
    cards = cards_of(st)
    courier = next(i for i, c in enumerate(cards.ids) if c.key == "courier")
    seats = list(st.seats)
    seats[0] = replace(seats[0], id_card=courier, id_up=True, programs=st.deck[:2])
    st = replace(st, seats=tuple(seats), deck=st.deck[2:])
    st = act(st, {"type": "draw", "seat": 0})
    assert len(st.seats[0].programs) == 3 and st.active == 1
    assert GAME.view(st, 0)["table"]["seats"][0]["hand_limit"] == 3


def test_vocabulary_checks() -> None:
    """revive aims at the eliminated only; hand_limit is its owner's; rows name weapons."""
    from rules._identites_cryptees_cards import DataError, from_json

    def bad_revive(items: list[dict[str, object]]) -> None:
        _card(items, "medic")["effects"] = [{"do": "revive", "who": "other"}]

    with pytest.raises(DataError, match="revive"):
        from_json(_with(ids=bad_revive))

    def bad_limit(items: list[dict[str, object]]) -> None:
        _card(items, "courier")["effects"] = [{"do": "hand_limit", "who": "other"}]

    with pytest.raises(DataError, match="hand_limit"):
        from_json(_with(ids=bad_limit))


# --- issue 26: the shooter draws after the hit and the check ------------------------

#: Seat 3 wounds seat 1 with the pistol (drawing the top program), then seat 0 finishes
#: seat 1 with the pistol while a hidden-loyalty program (Sleeper) lies on top.
_TWO_PISTOL_SHOTS = [
    {"type": "investigate", "seat": 0, "target": 1, "card": "left"},
    {"type": "investigate", "seat": 1, "target": 0, "card": "left"},
    {"type": "investigate", "seat": 2, "target": 1, "card": "right"},
    {"type": "equip", "seat": 3, "weapon": "pistol", "targets": [1]},
    {"type": "investigate", "seat": 0, "target": 2, "card": "left"},
    {"type": "investigate", "seat": 1, "target": 2, "card": "left"},
    {"type": "investigate", "seat": 2, "target": 3, "card": "left"},
    {"type": "fire", "seat": 3},
    {"type": "take", "seat": 1},
    {"type": "equip", "seat": 0, "weapon": "pistol", "targets": [1]},
    {"type": "investigate", "seat": 1, "target": 3, "card": "left"},
    {"type": "investigate", "seat": 2, "target": 0, "card": "left"},
    {"type": "investigate", "seat": 3, "target": 0, "card": "right"},
    {"type": "fire", "seat": 0},
]


def _finish_seat_1(seed: int) -> ICState:
    st = GAME.setup(4, {"interrupt_window": 0}, seed)
    assert cards_of(st).programs[st.deck[1]].key == "sleeper-red"  # the second shot's draw
    st = act(st, *_TWO_PISTOL_SHOTS)
    assert st.phase == RESPOND
    return act(st, {"type": "take", "seat": 1})


def test_shooter_draws_after_the_check_seed_183() -> None:
    """Seed 183: a Human kills the only Machine; the Humans win before any Sleeper is drawn."""
    st = GAME.setup(4, {"interrupt_window": 0}, 183)
    assert [faction(st, i) for i in range(4)] == ["human", "machine", "human", "human"]
    st = _finish_seat_1(183)
    assert not st.seats[1].alive
    assert GAME.is_over(st) and st.winner_faction == "human" and st.winners == (0, 2, 3)
    assert len(st.seats[0].programs) == 1  # the game ended: nothing drawn


def test_shooter_draws_after_the_check_seed_27() -> None:
    """Seed 27: an Outlaw kills the only Human; the Machines win, the Outlaw not with them."""
    st = GAME.setup(4, {"interrupt_window": 0}, 27)
    assert [faction(st, i) for i in range(4)] == ["outlaw", "human", "machine", "machine"]
    st = _finish_seat_1(27)
    assert GAME.is_over(st) and st.winner_faction == "machine" and st.winners == (2, 3)
    assert faction(st, 0) == "outlaw"


def test_shooter_draws_after_the_answer() -> None:
    """While the target answers, the shooter has not drawn; the draw follows the answer."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], [], [], []])
    deck = len(st.deck)
    st = act(arm(st, 0, "pistol", (1,)), {"type": "fire", "seat": 0})
    assert st.phase == RESPOND and st.seats[0].programs == () and len(st.deck) == deck
    assert GAME.view(st, None)["table"]["deck"] == deck
    st = act(st, {"type": "reveal", "seat": 1, "card": "left"})
    assert len(st.seats[0].programs) == 1 and len(st.deck) == deck - 1


# --- issue 26: an eliminated player's programs stay with that player -----------------


def test_eliminated_player_keeps_its_programs() -> None:
    """Eliminated: programs and permanents stay with the player, out of the deck and uncounted."""
    st = sides(["human", "machine", "outlaw", "human"], hands=[[], ["scan", "plating"], [], []])
    st = act(turn_to(st, 1), {"type": "program", "seat": 1, "card": prog("plating")})
    deck = st.deck
    st = kill(turn_to(st, 0), 0, 1)
    dead = st.seats[1]
    assert not dead.alive
    assert dead.programs == (prog("scan"),) and dead.permanents == (prog("plating"),)
    assert st.deck == deck
    public = GAME.view(st, None)["table"]
    assert public["deck"] == len(deck) and public["seats"][1]["programs"] == 1
    assert [p["key"] for p in public["seats"][1]["permanent"]] == ["plating"]
    assert armor(st, 1) == 0  # « ne comptent pas » while eliminated
    assert [p["key"] for p in GAME.view(st, 1)["you"]["programs"]] == ["scan"]


def test_revived_player_has_its_programs_again() -> None:
    """A revived player comes back with its programs; its permanents count again."""
    data = _with(ids=_reviver)
    st = GAME.setup(5, {"cards": data, "interrupt_window": 0}, 3)
    cards = cards_of(st)
    medic = next(i for i, c in enumerate(cards.ids) if c.key == "medic")
    plating = next(i for i, c in enumerate(cards.programs) if c.key == "plating")
    scan = next(i for i, c in enumerate(cards.programs) if c.key == "scan")
    seats = list(st.seats)
    seats[4] = replace(seats[4], id_card=medic)
    seats[1] = replace(seats[1], programs=(scan,), permanents=(plating,))
    st = replace(st, seats=tuple(seats), humans_at_start=True)
    st = replace(st, deck=tuple(c for c in st.deck if c not in (scan, plating)))
    st = kill(st, 0, 1)
    assert not st.seats[1].alive and armor(st, 1) == 0
    st = hurt_target_with_rifle(turn_to(st, 0), 0, 4)
    st = act(st, {"type": "reveal", "seat": 4, "card": "id"})
    st = act(st, {"type": "ability", "seat": 4, "target": 1})
    back = st.seats[1]
    assert back.alive and back.programs == (scan,) and back.permanents == (plating,)
    assert armor(st, 1) == 1
