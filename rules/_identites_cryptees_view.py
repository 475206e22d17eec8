"""Views of an Identités cryptées table: the public table and each seat's secrets.

This is the single chokepoint for what leaves the engine: the public part reads
only face-up cards, counts and the public result of the last victory check.
"""

from __future__ import annotations

from typing import Any

from rules._identites_cryptees_cards import SIDES, Cards, words
from rules._identites_cryptees_state import (
    ABILITY,
    DISCARD,
    OVER,
    REAIM,
    RESPOND,
    TURN,
    WINDOW,
    ICState,
    alive,
    cards_of,
    faction,
    hand_limit,
    hit_damage,
    holding,
    loyalty_pos,
    pos_owners,
    shared,
    slot_pos,
)
from rules.core import JSON, action_to_json

GAME_ID = "identites-cryptees"


def public_view(state: ICState) -> JSON:
    """The public table (``seat`` None)."""
    return {"game": GAME_ID, "seat": None, "table": _table(state)}


def seat_view(state: ICState, seat: int, public: JSON) -> JSON:
    """``public``'s table, plus ``you`` (that seat's own cards) for a seat of the game."""
    out: JSON = {"game": GAME_ID, "seat": seat, "table": public["table"]}
    if 0 <= seat < state.players:
        out["you"] = _you(state, seat)
    return out


def id_json(cards: Cards, card: int) -> JSON:
    """An ID card as the views show it."""
    c = cards.ids[card]
    return {
        "card": card,
        "key": c.key,
        "name": words(c.name),
        "colour": c.counts_as,
        "always": c.always,
        "text": words(c.text),
    }


def loyalty_json(cards: Cards, card: int) -> JSON:
    """A loyalty card as the views show it."""
    c = cards.loyalty[card]
    return {
        "card": card,
        "key": c.key,
        "name": words(c.name),
        "colour": c.colour,
        "weight": c.weight,
    }


def program_json(cards: Cards, card: int) -> JSON:
    """A program card as the views show it."""
    c = cards.programs[card]
    return {
        "card": card,
        "key": c.key,
        "name": words(c.name),
        "timing": c.timing,
        "text": words(c.text),
        "hidden_loyalty": c.loyalty,
    }


def _table(state: ICState) -> JSON:
    cards = cards_of(state)
    over = state.phase == OVER
    return {
        "phase": state.phase,
        "players": state.players,
        "active": state.active,
        "first": state.first,
        "version": state.version,
        "cards": {"set": cards.name, "label": cards.label, "generic": cards.generic},
        "shared_loyalty": shared(state),
        "hand_limit": hand_limit(state),
        "interrupt_window": state.window,
        "declared": action_to_json(state.declared) if state.declared is not None else None,
        "may_change": state.may_change,
        "window": _window(state),
        "pending": _pending(state),
        "deck": len(state.deck),
        "weapons": [_weapon(state, w.key) for w in state.weapons],
        "seats": [_seat(state, i, over) for i in range(state.players)],
        "check": _check(state),
        "over": over,
        "winners": list(state.winners),
        "winning_side": state.winner_faction,
    }


def _window(state: ICState) -> JSON | None:
    if state.phase != WINDOW:
        return None
    waiting = [s for s in alive(state) if s != state.active and s not in state.passed]
    return {
        "open": True,
        "seconds": state.window,
        "passed": list(state.passed),
        "waiting": waiting,
    }


def _pending(state: ICState) -> JSON:
    if state.phase == RESPOND:
        hit = state.hits[0]
        return {
            "kind": "respond",
            "seat": hit.target,
            "reveal": hit.reveal,
            "damage": hit_damage(state, hit),
            "source": hit.source,
        }
    if state.phase == REAIM:
        held = holding(state, state.reaim[0])
        return {"kind": "reaim", "seat": state.reaim[0], "weapon": held.key if held else None}
    if state.phase == ABILITY:
        seat = state.abilities[0]
        key = cards_of(state).ids[state.seats[seat].id_card].key
        return {"kind": "ability", "seat": seat, "id": key}
    if state.phase == DISCARD:
        return {"kind": "discard", "seat": state.active, "limit": hand_limit(state, state.active)}
    if state.phase == WINDOW:
        return {"kind": "window", "seat": state.active}
    if state.phase == TURN:
        return {"kind": "turn", "seat": state.active}
    return {"kind": "over", "seat": None}


def _weapon(state: ICState, key: str) -> JSON:
    card = cards_of(state).weapon(key)
    ws = next(w for w in state.weapons if w.key == key)
    return {
        "key": key,
        "name": words(card.name),
        "holder": ws.holder,
        "targets": list(ws.targets),
        "locked": not ws.unlocked,
        "aim": card.aim,
        "text": words(card.text),
    }


def _seat(state: ICState, seat: int, over: bool) -> JSON:
    cards = cards_of(state)
    s = state.seats[seat]
    loyalty: dict[str, Any] = {}
    for slot in ("left", "right"):
        pos = slot_pos(state, seat, slot)
        up = state.loyalty_up[pos] or over
        loyalty[slot] = loyalty_json(cards, state.loyalty[pos]) if up else None
    held = holding(state, seat)
    out: JSON = {
        "seat": seat,
        "alive": s.alive,
        "hp": s.hp,
        "id": id_json(cards, s.id_card) if s.id_up or over else None,
        "loyalty": loyalty,
        "programs": len(s.programs),
        "permanent": [program_json(cards, c) for c in s.permanents],
        "weapon": held.key if held else None,
        "skips": s.skips,
        "hand_limit": hand_limit(state, seat),
    }
    if over:
        out["faction"] = faction(state, seat)
    return out


def _check(state: ICState) -> JSON | None:
    ann = state.announce
    if ann is None:
        return None
    if not ann.winners and ann.faction is None:
        return {"eliminated": ann.eliminated, "result": "continues", "message": "The game goes on"}
    side = SIDES.get(ann.faction or "nobody")
    return {
        "eliminated": ann.eliminated,
        "result": "won",
        "winners": list(ann.winners),
        "side": ann.faction,
        "message": side.wins if side else "Game over",
    }


def _you(state: ICState, seat: int) -> JSON:
    cards = cards_of(state)
    s = state.seats[seat]
    seen = []
    for mem in s.seen:
        if mem.kind == "id":
            seen.append({"kind": "id", "seat": mem.pos, "card": id_json(cards, mem.card)})
        else:
            where = loyalty_pos(state, mem.card)  # the card, wherever a swap put it
            owners = [[o, slot] for o, slot in pos_owners(state, where)]
            seen.append(
                {"kind": "loyalty", "owners": owners, "card": loyalty_json(cards, mem.card)}
            )
    held = holding(state, seat)
    return {
        "seat": seat,
        "faction": faction(state, seat),
        "hp": s.hp,
        "alive": s.alive,
        "id": id_json(cards, s.id_card),
        "loyalty": {
            slot: loyalty_json(cards, state.loyalty[slot_pos(state, seat, slot)])
            for slot in ("left", "right")
        },
        "programs": [program_json(cards, c) for c in s.programs],
        "seen": seen,
        "weapon": held.key if held else None,
        "targets": list(held.targets) if held else [],
    }
