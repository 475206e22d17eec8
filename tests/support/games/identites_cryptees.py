"""Identités cryptées helpers: arranged tables, JSON moves, a weapon-loving bot, re-deals."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from rules._identites_cryptees_cards import load
from rules._identites_cryptees_state import (
    ABILITY,
    DISCARD,
    REAIM,
    RESPOND,
    TURN,
    WINDOW,
    Equip,
    Fire,
    ICState,
    Pass,
    Program,
    Timeout,
    alive,
    faction,
    own_positions,
)
from rules.core import (
    Action,
    decode_action,
)
from rules.identites_cryptees import GAME

CARDS = load("generic")


SIDES = {
    "human": ("courier", "blue", "blue"),
    "machine": ("drone", "red", "red"),
    "outlaw": ("drifter", "grey", "grey"),
    "legion": ("hive", "grey", "grey"),
    "fallen": ("gravekeeper", "grey", "grey"),
}


def _instances(pool: Sequence[Any], keys: Sequence[str], taken: set[int]) -> list[int]:
    out = []
    for key in keys:
        free = [i for i, c in enumerate(pool) if c.key == key and i not in taken]
        anyone = [i for i, c in enumerate(pool) if c.key == key]
        pick = free[0] if free else anyone[0]
        taken.add(pick)
        out.append(pick)
    return out


def arrange(
    players: int = 4,
    ids: Sequence[str] | None = None,
    loyalty: Sequence[str] | None = None,
    hands: Sequence[Sequence[str]] | None = None,
    window: float = 0,
    **options: Any,
) -> ICState:
    """A fresh game with chosen IDs, loyalty cards (by position) and hands."""
    st = GAME.setup(players, {"interrupt_window": window, **options}, 7)
    seats = list(st.seats)
    if ids is not None:
        id_cards = [next(i for i, c in enumerate(CARDS.ids) if c.key == k) for k in ids]
        seats = [replace(s, id_card=c) for s, c in zip(seats, id_cards, strict=True)]
    if loyalty is not None:
        st = replace(st, loyalty=tuple(_instances(CARDS.loyalty, loyalty, set())))
    if hands is not None:
        taken: set[int] = set()
        dealt = [_instances(CARDS.programs, h, taken) for h in hands]
        seats = [replace(s, programs=tuple(h)) for s, h in zip(seats, dealt, strict=True)]
        rest = [i for i in range(len(CARDS.programs)) if i not in taken]
        st = replace(st, deck=tuple(rest))
    st = replace(st, seats=tuple(seats))
    humans = any(faction(st, i) == "human" for i in range(players))
    return replace(st, humans_at_start=humans)


def sides(names: Sequence[str], **kw: Any) -> ICState:
    """A game where seat i belongs to side names[i] (plain cards of that colour)."""
    ids = [SIDES[n][0] for n in names]
    loyalty = [k for n in names for k in SIDES[n][1:]]
    return arrange(len(names), ids=ids, loyalty=loyalty, **kw)


def prog(key: str) -> int:
    """The first card id of program ``key``."""
    return next(i for i, c in enumerate(CARDS.programs) if c.key == key)


def act(st: ICState, *moves: dict[str, Any]) -> ICState:
    """Apply moves written in the JSON notation."""
    for move in moves:
        st, _ = GAME.apply(st, decode_action(GAME, move))
    return st


def arm(st: ICState, seat: int, weapon: str, targets: Sequence[int] = ()) -> ICState:
    """Put ``weapon`` in ``seat``'s hand, aimed at ``targets``."""
    ws = tuple(
        replace(w, holder=seat, targets=tuple(targets), unlocked=True) if w.key == weapon else w
        for w in st.weapons
    )
    return replace(st, weapons=ws)


def hurt(st: ICState, seat: int, hp: int = 1, id_up: bool = False) -> ICState:
    """Set ``seat``'s HP (and optionally turn its ID face up)."""
    seats = list(st.seats)
    seats[seat] = replace(seats[seat], hp=hp, id_up=id_up or seats[seat].id_up)
    return replace(st, seats=tuple(seats))


def kill(st: ICState, shooter: int, target: int) -> ICState:
    """``shooter`` (the active seat) eliminates ``target`` with the rifle."""
    assert st.active == shooter
    st = hurt(arm(st, shooter, "rifle", (target,)), target, 1, id_up=True)
    return act(st, {"type": "fire", "seat": shooter})


def turn_to(st: ICState, seat: int) -> ICState:
    """Make ``seat`` the active player at the start of a turn."""
    return replace(st, active=seat, phase=TURN)


def holding_key(st: ICState, seat: int) -> str | None:
    """The key of the weapon ``seat`` holds."""
    return next((w.key for w in st.weapons if w.holder == seat), None)


_WEIGHTS = {Fire: 8, Equip: 5, Program: 1}


def bot(st: ICState, r: random.Random) -> Action:
    """A random player that likes weapons, so that games end."""
    if st.phase == WINDOW:
        if r.random() < 0.3:
            return Timeout()
        waiting = [s for s in alive(st) if s != st.active and s not in st.passed]
        seat = r.choice(waiting)
        acts = GAME.legal_actions(st, seat)
        return Pass(seat) if r.random() < 0.85 else r.choice(acts)
    if st.phase in (TURN, RESPOND, REAIM, ABILITY, DISCARD) and r.random() < 0.05:
        seat = r.choice(alive(st))  # anytime programs, also while something waits
        acts = GAME.legal_actions(st, seat)
        if acts:
            return r.choice(acts)
    seat = acting_seat(st)
    acts = GAME.legal_actions(st, seat)
    weights = [_WEIGHTS.get(type(a), 1) for a in acts]
    return r.choices(acts, weights)[0]


def acting_seat(st: ICState) -> int:
    if st.phase == RESPOND:
        return st.hits[0].target
    if st.phase == REAIM:
        return st.reaim[0]
    if st.phase == ABILITY:
        return st.abilities[0]
    return st.active


def redeal(st: ICState, viewer: int | None, r: random.Random) -> ICState:
    """Re-deal every card and secret ``viewer`` cannot know; keep the rest."""
    seats = list(st.seats)
    known_ids = set()
    if viewer is not None:
        known_ids = {m.pos for m in seats[viewer].seen if m.kind == "id"}
        known_ids.add(viewer)
    slots = [i for i, s in enumerate(seats) if not s.id_up and i not in known_ids]
    pool = [seats[i].id_card for i in slots] + list(st.spare_ids)
    r.shuffle(pool)
    for i, card in zip(slots, pool, strict=False):
        seats[i] = replace(seats[i], id_card=card)
    spare = tuple(pool[len(slots) :])

    mine = set(own_positions(st, viewer)) if viewer is not None else set()
    if viewer is not None:  # a card the viewer was shown stays known wherever it moves
        remembered = {m.card for m in seats[viewer].seen if m.kind == "loyalty"}
        mine |= {p for p, card in enumerate(st.loyalty) if card in remembered}
    hidden = [p for p, up in enumerate(st.loyalty_up) if not up and p not in mine]
    loyalty = list(st.loyalty)
    contents = [loyalty[p] for p in hidden]
    r.shuffle(contents)
    for p, card in zip(hidden, contents, strict=True):
        loyalty[p] = card

    others = [i for i in range(st.players) if i != viewer]
    progs = list(st.deck) + [c for i in others for c in seats[i].programs]
    r.shuffle(progs)
    for i in others:
        k = len(seats[i].programs)
        seats[i] = replace(seats[i], programs=tuple(progs[:k]), seen=())
        progs = progs[k:]
        if not seats[i].alive:
            seats[i] = replace(seats[i], final=r.choice(["human", "machine", "outlaw"]))
    return replace(
        st,
        seats=tuple(seats),
        spare_ids=spare,
        loyalty=tuple(loyalty),
        deck=tuple(progs),
        humans_at_start=not st.humans_at_start,
        free_for_all=None if st.free_for_all is None else not st.free_for_all,
        rng=replace(st.rng, n=st.rng.n + 7),
    )


def redeal_for_seat(state: ICState, seat: int, k: int) -> ICState | None:
    """The screens no-leak re-deal: what ``seat`` may not know, dealt again (seed ``k``)."""
    return redeal(state, seat, random.Random(k))


def redeal_public(st: Any, r: random.Random) -> Any:
    """What the public may not know, dealt again."""
    return redeal(st, None, r)


PUBLIC_PLAYERS = 12
FOLLOW: tuple[int, int, int, dict[str, Any]] = (4, 3, 3, {})


def playout_move(st: ICState, r: random.Random) -> Action:
    """The move random games of this engine play (a bot that likes weapons, so that games
    end; see ``tests/support/playouts.py`` and ``display_samples.py``)."""
    return bot(st, r)
