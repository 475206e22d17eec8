"""Identités cryptées 2.0: the rules corrections of issue 15 (audit against the rulebook).

Map (test -> the sentence of RULES.md §5 or the rulebook it checks; "D" marks a Decision):
- test_memory_follows_a_swapped_card: what a seat was shown is a card, not a position.
- test_plating_does_not_absorb_a_program_hit: "Weapon hits deal 1 less damage".
- test_laser_shows_unlocked_once_its_condition_holds_for_everyone: "rocket launcher and
  laser locked" until their condition; what is face up is public (D).
- test_shared_card_already_held_is_not_investigated: 9-16 players, « Cette carte est
  partagée par ces deux joueurs »: a seat never investigates its own card.
- test_anytime_program_*: D « N'importe quand » programs at any moment, also while a hit,
  a re-aim or a discard is pending and by the actor inside its own window; each resolves
  at once, before what is pending.
- test_special_ids_*, test_legion_option_*: « Extension de cartes de Loyauté Légion (Pour 6
  joueurs ou plus) ... Pour les joueurs accomplis uniquement ! »
"""

from __future__ import annotations

from collections import Counter

import pytest
from msgspec.structs import replace

from rules._ic_state import (
    DISCARD,
    REAIM,
    RESPOND,
    TURN,
    Investigate,
    Program,
    faction,
    slot_pos,
)
from rules.core import BadOptions, IllegalAction
from rules.identites_cryptees import GAME
from tests.rules.test_identites_cryptees import (
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


def test_shared_card_already_held_is_not_investigated() -> None:
    """At 9+ a seat is not offered (and may not pick) a neighbour's card it shares."""
    st = GAME.setup(9, {"interrupt_window": 0}, 4)
    legal = [a for a in GAME.legal_actions(st, 0) if isinstance(a, Investigate)]
    assert Investigate(0, 1, "left") not in legal and Investigate(0, 8, "right") not in legal
    assert Investigate(0, 1, "right") in legal and Investigate(0, 8, "left") in legal
    assert len(legal) == 2 * 8 - 2
    with pytest.raises(IllegalAction, match="yours"):
        act(st, {"type": "investigate", "seat": 0, "target": 1, "card": "left"})


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
