"""Identités cryptées 2.0: hidden factions, two hit points and weapons.

Each player holds an ID and loyalty cards (shared between neighbours from 9
players) whose majority colour is their faction; programs add tricks and hidden
loyalty. On their turn a player investigates, takes a weapon or draws when
unarmed, and drops, re-aims or fires when armed. After an action is declared an
interrupt window lets the others play anytime programs. At every elimination
the hub checks victory privately and says only "the game goes on" or who won.

The JSON notation, options and view keys are in ``rules/docs/identites-cryptees.md``;
card data and its schema in ``rules/data/identites-cryptees/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from rules._identites_cryptees_cards import (
    PILES,
    SIDES,
    Cards,
    DataError,
    Effect,
    WeaponCard,
    card_sets,
    card_sets_in,
    from_json,
    load,
    package_set_json,
    read_card_set,
    words,
)
from rules._identites_cryptees_state import (
    ABILITY,
    DECLARATIONS,
    DISCARD,
    MAX_HP,
    OVER,
    REAIM,
    RESPOND,
    TURN,
    WINDOW,
    Ability,
    Aim,
    Announce,
    Declaration,
    Discard,
    Draw,
    Drop,
    Equip,
    Fire,
    Heal,
    Hit,
    ICAction,
    ICState,
    Investigate,
    Pass,
    Program,
    Reveal,
    SeatState,
    Seen,
    Take,
    Timeout,
    WeaponState,
    alive,
    cards_of,
    faction,
    hand_limit,
    hand_size,
    hit_damage,
    holding,
    next_alive,
    own_positions,
    own_revealed,
    program_effects,
    shared,
    slot_pos,
    weapon_state,
)
from rules._identites_cryptees_view import public_view as _public_view
from rules._identites_cryptees_view import seat_view as _seat_view
from rules.core import (
    JSON,
    Action,
    BadOptions,
    BaseGame,
    Event,
    IllegalAction,
    Rng,
    action_to_json,
    shared_ranking,
)
from rules.declare import N_, GameInfo, Option, Phase

#: Phases in which something waits for one player's answer; only anytime programs
#: may be played then, and they resolve before it.
_WAITING = (RESPOND, REAIM, ABILITY, DISCARD)
_LEGION_FROM = 6
LOYALTY_SLOTS = ("left", "right")


INFO = GameInfo(
    id="identites-cryptees",
    name=N_("Identités cryptées"),
    min_players=4,
    max_players=16,
    tie_break=N_("the winning side wins together"),
    sides=True,
    side_words=SIDES,
    phases={
        "turn": Phase(N_("Turn"), N_("Turn")),
        "window": Phase(N_("Interrupt window"), N_("Interrupt window")),
        "respond": Phase(N_("Hit"), N_("Hit")),
        "reaim": Phase(N_("Re-aim"), N_("Re-aim")),
        "discard": Phase(N_("Discard"), N_("Discard")),
        "ability": Phase(N_("ID ability"), N_("ID ability")),
        "over": Phase(N_("Over"), N_("Over")),
    },
    options=(
        Option(
            "interrupt_window",
            "seconds",
            5,
            N_("Window"),
            menu=(5, 10, 0),
        ),
        # Chosen by the host (rules/docs/identites-cryptees.md, "Setup").
        Option("first", "seat", 0, N_("Starts")),
        Option("cards", "cards", "generic", N_("Cards")),
        Option(
            "legion_loyalty",
            "flag",
            False,
            N_("Legion"),
            menu=(False, True),
            from_players=_LEGION_FROM,
            too_few="The Legion loyalty card is for 6+ players",
        ),
    ),
    # --- the table display between games
    summary=N_(
        "Hidden sides fight it out: your ID and loyalty cards make you Human, Machine or "
        "Outlaw. On your turn investigate, take a weapon, draw a program, aim or fire; "
        "the others may answer with programs in the window. Everyone has 2 HP: at 0 you "
        "are out. The last side standing wins together."
    ),
)


class IdentitesCryptees(BaseGame[ICState]):
    """The engine; see the module docstring."""

    info = INFO

    def __init__(self) -> None:
        self.state_type = ICState
        self.action_type = ICAction

    def setup(self, players: int, options: Mapping[str, Any], seed: int) -> ICState:
        """Deal IDs, loyalty and one program each; lay out the weapons."""
        self.check_players(players)
        return _setup(players, options, seed)

    def context(self, public: JSON) -> JSON:
        """The shared keys, from the public table part; the active player is awaited."""
        table = public.get("table") or {}
        return {**super().context(table), "to_play": table.get("active")}

    def pin_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options with the card set read in (see :func:`pin_options`)."""
        return pin_options(options)

    def legal_actions(self, state: ICState, seat: int | None) -> list[Action]:
        """Every action ``seat`` may take now (``None``: the table's timeout)."""
        return _legal(state, seat)

    def apply(self, state: ICState, action: Action) -> tuple[ICState, list[Event]]:
        """Check then apply one action; bump the version."""
        if state.phase == OVER:
            raise IllegalAction("The game is over")
        handler = _HANDLERS.get(type(action))
        if handler is None:
            raise IllegalAction("Not an action of this game")
        events: list[Event] = []
        new = handler(state, action, events)
        return replace(new, version=state.version + 1), events

    def public_view(self, state: ICState) -> JSON:
        """The public table: face-up cards, counts, weapons, the last victory check."""
        return _public_view(state)

    def seat_view(self, state: ICState, seat: int, public: JSON) -> JSON:
        """What ``seat`` may know: ``public``'s table and its own cards (``you``)."""
        return _seat_view(state, seat, public)

    def is_over(self, state: ICState) -> bool:
        """Whether a victory check named winners."""
        return state.phase == OVER

    def scores(self, state: ICState) -> list[int]:
        """1 for each winner, 0 otherwise (all 0 while the game goes on)."""
        return [1 if i in state.winners else 0 for i in range(state.players)]

    def ranking(self, state: ICState) -> list[list[int]]:
        """Winners first, together; everyone else shares the next place."""
        return shared_ranking(self.scores(state))


# --- setup -----------------------------------------------------------------


def _setup(players: int, options: Mapping[str, Any], seed: int) -> ICState:
    parsed = INFO.parse(options, players)
    first, window = parsed["first"], parsed["interrupt_window"]
    legion = parsed["legion_loyalty"]
    cards, card_set = _cards_option(parsed["cards"])
    row = cards.rows[players]
    rng = Rng(seed)

    chosen: list[int] = []
    for pile in PILES:
        # Extension IDs (the Legion's and the Fallen's founders) only with the option.
        pool = [
            i
            for i, c in enumerate(cards.ids)
            if c.pile == pile and not c.boss and (c.extension is None or legion)
        ]
        mixed, rng = rng.shuffle(pool)
        chosen += mixed[: row.ids.get(pile)]
    ids, rng = rng.shuffle(chosen)

    picked: list[int] = []
    for pile in PILES:
        want = row.loyalty.get(pile)
        if pile == "outlaw" and legion:
            extra = [i for i, c in enumerate(cards.loyalty) if c.extension == "legion"]
            if not extra or want == 0:
                raise BadOptions("This card set has no Legion loyalty card")
            picked.append(extra[0])
            want -= 1
        pool = [i for i, c in enumerate(cards.loyalty) if c.colour == pile and c.extension is None]
        mixed, rng = rng.shuffle(pool)
        picked += mixed[:want]
    loyalty, rng = rng.shuffle(picked)

    big = players >= 9
    deck_pool = [i for i, p in enumerate(cards.programs) if not (p.red_dot and big)]
    deck, rng = rng.shuffle(deck_pool)
    seats = tuple(SeatState(id_card=ids[i], programs=(deck[i],)) for i in range(players))
    weapons = tuple(
        WeaponState(key=w.key, unlocked=w.unlock.kind == "open")
        for w in cards.weapons
        if (w.key in row.weapons if row.weapons is not None else players >= w.min_players)
    )
    state = ICState(
        players=players,
        seed=seed,
        rng=rng,
        cards=cards.name,
        card_set=card_set,
        window=float(window),
        first=first,
        legion_loyalty=legion,
        seats=seats,
        loyalty=loyalty,
        loyalty_up=(False,) * len(loyalty),
        spare_ids=ids[players:],
        deck=deck[players:],
        weapons=weapons,
        active=first,
    )
    humans = any(faction(state, i) == "human" for i in range(players))
    return replace(state, humans_at_start=humans)


def _cards_option(value: Any) -> tuple[Cards, Cards | None]:
    """The ``cards`` option: a shipped set's name, or a card set's JSON object.

    Returns the cards and what the state must carry (None for a shipped set, found
    again by name).
    """
    try:
        if isinstance(value, str):
            if value not in card_sets():
                raise BadOptions(f"Unknown card set: {value}")
            return load(value), None
        if isinstance(value, Mapping):
            cards = from_json(value)
            return cards, cards
    except DataError as exc:
        raise BadOptions(str(exc)) from exc
    raise BadOptions("cards is a card set name or a card set")


def pin_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options with a shipped set's name replaced by the set's JSON object."""
    pinned = dict(options)
    name = pinned.get("cards", "generic")
    if isinstance(name, str) and name in card_sets():
        pinned["cards"] = package_set_json(name)
    return pinned


# --- validation helpers ----------------------------------------------------


def _other_alive(state: ICState, seat: int, target: int | None) -> int:
    if target is None or not 0 <= target < state.players:
        raise IllegalAction("Pick another living player")
    if target == seat or not state.seats[target].alive:
        raise IllegalAction("Pick another living player")
    return target


def _seat_ok(state: ICState, seat: int) -> None:
    if not 0 <= seat < state.players:
        raise IllegalAction("No such seat")
    if not state.seats[seat].alive:
        raise IllegalAction("You are out of the game")


def _my_turn(state: ICState, seat: int) -> None:
    _seat_ok(state, seat)
    if seat != state.active:
        raise IllegalAction("Not your turn")
    if state.phase == WINDOW:
        raise IllegalAction("Your action is declared: wait")
    if state.phase != TURN:
        raise IllegalAction("Wait: something is resolving")


def _pairs(state: ICState, seat: int) -> list[tuple[int, int]]:
    """Two neighbouring living players other than ``seat``, clockwise."""
    out = []
    for a in alive(state):
        b = next_alive(state, a)
        if seat not in (a, b) and a != b:
            out.append((a, b))
    return out


def _target_sets(state: ICState, seat: int, card: WeaponCard) -> list[tuple[int, ...]]:
    if card.aim == "fire":
        return [()]
    if card.targets == 2:
        return list(_pairs(state, seat))
    return [(t,) for t in alive(state) if t != seat]


def _check_targets(state: ICState, seat: int, card: WeaponCard, targets: tuple[int, ...]) -> None:
    if card.aim == "fire":
        if targets:
            raise IllegalAction("This weapon aims when it fires")
        return
    if card.targets == 2:
        if len(targets) != 2 or tuple(targets) not in _pairs(state, seat):
            raise IllegalAction("Pick two living neighbours, clockwise")
        return
    if len(targets) != 1:
        raise IllegalAction("Pick one target")
    _other_alive(state, seat, targets[0])


def _unlock_met(state: ICState, seat: int, card: WeaponCard) -> bool:
    rule = card.unlock
    if rule.kind == "open":
        return True
    if rule.kind == "own_revealed":
        return own_revealed(state, seat) >= rule.count
    if rule.kind == "eliminated":
        return state.players - len(alive(state)) >= rule.count
    if rule.kind == "hp_at_most":
        return state.seats[seat].hp <= rule.count
    return False


def _check_declaration(state: ICState, a: Declaration) -> None:
    _my_turn(state, a.seat)
    held = holding(state, a.seat)
    if isinstance(a, Investigate | Equip | Draw):
        if held is not None:
            raise IllegalAction("You are armed: drop, aim or fire")
    elif held is None:
        raise IllegalAction("You hold no weapon")
    if isinstance(a, Investigate):
        _check_investigate(state, a)
    elif isinstance(a, Equip):
        ws = weapon_state(state, a.weapon)
        if ws is None:
            raise IllegalAction("No such weapon at this table")
        if ws.holder is not None:
            raise IllegalAction("That weapon is taken")
        card = cards_of(state).weapon(a.weapon)
        if not ws.unlocked and not _unlock_met(state, a.seat, card):
            raise IllegalAction("That weapon is still locked")
        _check_targets(state, a.seat, card, a.targets)
    elif held is not None:
        card = cards_of(state).weapon(held.key)
        if isinstance(a, Aim):
            if card.aim == "fire":
                raise IllegalAction("This weapon aims when it fires")
            _check_targets(state, a.seat, card, a.targets)
            if tuple(a.targets) == held.targets:
                raise IllegalAction("You already aim there")
        elif isinstance(a, Fire):
            if card.aim == "fire":
                _other_alive(state, a.seat, a.target)
            elif a.target is not None:
                raise IllegalAction("Your weapon is already aimed")
        elif isinstance(a, Heal) and card.heal <= 0:
            raise IllegalAction("This weapon cannot heal")


def _check_investigate(state: ICState, a: Investigate) -> None:
    target = _other_alive(state, a.seat, a.target)
    up = [state.loyalty_up[p] for p in own_positions(state, target)]
    if a.card == "id":
        if not all(up):
            raise IllegalAction("Look at a loyalty card first")
        if state.seats[target].id_up:
            raise IllegalAction("That ID is already face up")
        return
    pos = slot_pos(state, target, a.card)
    if state.loyalty_up[pos]:
        raise IllegalAction("That card is already face up")


def _program_target_rule(effects: tuple[Effect, ...]) -> str | None:
    whos = {e.who for e in effects}
    if "eliminated" in whos:
        return "eliminated"
    if "other" in whos:
        return "other"
    return "any" if "any" in whos else None


def _slot_rule(effects: tuple[Effect, ...]) -> str | None:
    for e in effects:
        if e.do == "swap":
            return "swap"
        if e.do in ("peek", "reveal"):
            return e.card
    return None


def _check_program(state: ICState, a: Program) -> None:
    _seat_ok(state, a.seat)
    if a.card not in state.seats[a.seat].programs:
        raise IllegalAction("You do not hold that program")
    card = cards_of(state).programs[a.card]
    if card.loyalty is not None:
        raise IllegalAction("Hidden loyalty: it is never played")
    if card.timing == "anytime":
        # Decision (docs: Turn flow): at any moment, the actor in its own window included.
        if state.phase == WINDOW and a.seat in state.passed:
            raise IllegalAction("You passed this window")
    else:
        if state.phase not in (TURN, WINDOW):
            raise IllegalAction("Wait: something is resolving")
        if a.seat != state.active:
            raise IllegalAction("Only on your turn")
        if state.phase == WINDOW:
            raise IllegalAction("Your action is declared: wait")
    _check_choice(state, a, program_effects(state, a.card))


def _check_choice(state: ICState, a: Program | Ability, effects: tuple[Effect, ...]) -> None:
    """Check the target and cards a program or an ID ability was given."""
    rule = _program_target_rule(effects)
    if rule is None:
        if a.target is not None:
            raise IllegalAction("This card takes no target")
    elif rule == "other":
        _other_alive(state, a.seat, a.target)
    elif rule == "eliminated":
        if a.target is None or not 0 <= a.target < state.players or state.seats[a.target].alive:
            raise IllegalAction("Pick an eliminated player")
    elif a.target is None or not 0 <= a.target < state.players or not state.seats[a.target].alive:
        raise IllegalAction("Pick a living player")
    _check_slots(state, a, _slot_rule(effects))


def _check_slots(state: ICState, a: Program | Ability, rule: str | None) -> None:
    if rule != "swap" and a.own_slot is not None:
        raise IllegalAction("This card swaps nothing")
    if rule is None:
        if a.slot is not None:
            raise IllegalAction("This card picks no card")
        return
    assert a.target is not None
    if rule == "id":
        if a.slot not in (None, "id"):
            raise IllegalAction("This card is about an ID")
        if state.seats[a.target].id_up:
            raise IllegalAction("That ID is already face up")
        return
    if a.slot not in LOYALTY_SLOTS:
        raise IllegalAction("Pick a loyalty card: left or right")
    if rule == "loyalty":
        if state.loyalty_up[slot_pos(state, a.target, a.slot)]:
            raise IllegalAction("That card is already face up")
        return
    if a.own_slot not in LOYALTY_SLOTS:
        raise IllegalAction("Pick one of your loyalty cards")
    mine, theirs = slot_pos(state, a.seat, a.own_slot), slot_pos(state, a.target, a.slot)
    if mine == theirs:
        raise IllegalAction("Pick two different cards")
    if state.loyalty_up[mine] or state.loyalty_up[theirs]:
        raise IllegalAction("Only face-down cards are swapped")


# --- moves -----------------------------------------------------------------


def _declare(state: ICState, a: Action, ev: list[Event]) -> ICState:
    assert isinstance(a, DECLARATIONS)
    if isinstance(a, Aim) and state.phase == REAIM:
        return _reaim(state, a, ev)
    _check_declaration(state, a)
    ev.append(Event("declare", {"seat": a.seat, "action": action_to_json(a)}))
    others = [s for s in alive(state) if s != a.seat]
    if state.window > 0 and others:
        ev.append(Event("window", {"seconds": state.window, "waiting": others}))
        return replace(state, phase=WINDOW, declared=a, passed=(), may_change=False)
    return _resolve(replace(state, may_change=False), a, ev)


def _resolve(state: ICState, a: Declaration, ev: list[Event]) -> ICState:
    st = replace(state, phase=TURN, declared=None, passed=(), resume="end")
    seat = a.seat
    if isinstance(a, Investigate):
        st = _investigate(st, a, ev)
    elif isinstance(a, Equip):
        ws = weapon_state(st, a.weapon)
        assert ws is not None
        st = _set_weapon(st, replace(ws, holder=seat, targets=tuple(a.targets), unlocked=True))
        ev.append(Event("equip", {"seat": seat, "weapon": a.weapon, "targets": list(a.targets)}))
    elif isinstance(a, Draw):
        st = _draw(st, seat, 1, ev)
    elif isinstance(a, Drop):
        st = _drop(st, seat, ev)
    elif isinstance(a, Aim):
        held = holding(st, seat)
        assert held is not None
        st = _set_weapon(st, replace(held, targets=tuple(a.targets)))
        ev.append(Event("aim", {"seat": seat, "weapon": held.key, "targets": list(a.targets)}))
    elif isinstance(a, Fire):
        st = _fire(st, a, ev)
    else:
        st = _heal_shot(st, seat, ev)
    return _settle(st, ev)


def _investigate(st: ICState, a: Investigate, ev: list[Event]) -> ICState:
    t = a.target
    if a.card == "id":
        seen = Seen("id", t, st.seats[t].id_card)
    else:
        pos = slot_pos(st, t, a.card)
        seen = Seen("loyalty", pos, st.loyalty[pos])
    st = _remember(st, a.seat, seen)
    ev.append(Event("investigate", {"seat": a.seat, "target": t, "card": a.card}))
    ev.append(_seen_event(st, a.seat, t, a.card, seen))
    return st


def _seen_event(st: ICState, seat: int, target: int, slot: str, seen: Seen) -> Event:
    cards = cards_of(st)
    card = cards.ids[seen.card] if seen.kind == "id" else cards.loyalty[seen.card]
    name = words(card.name)
    data = {"target": target, "card": slot, "sees": name, "id": seen.card}
    return Event("peek", data, to=(seat,))


def _remember(st: ICState, seat: int, seen: Seen) -> ICState:
    s = st.seats[seat]
    if seen in s.seen:
        return st
    return _set_seat(st, seat, replace(s, seen=(*s.seen, seen)))


def _fire(st: ICState, a: Fire, ev: list[Event]) -> ICState:
    held = holding(st, a.seat)
    assert held is not None
    card = cards_of(st).weapon(held.key)
    targets = held.targets if card.aim == "equip" else (a.target,)
    ev.append(Event("fire", {"seat": a.seat, "weapon": held.key, "targets": list(targets)}))
    hits = [
        Hit(t, card.reveal, card.damage, card.key, weapon=True) for t in targets if t is not None
    ]
    if card.draw and hits:  # after the last hit is answered and checked
        hits[-1] = replace(hits[-1], then_draws=a.seat)
    st = replace(st, hits=st.hits + tuple(hits))
    return _drop(st, a.seat, None)


def _heal_shot(st: ICState, seat: int, ev: list[Event]) -> ICState:
    held = holding(st, seat)
    assert held is not None
    card = cards_of(st).weapon(held.key)
    target = held.targets[0]
    st = _heal(st, target, card.heal, ev, held.key)
    st = _drop(st, seat, None)
    return _draw(st, seat, 1, ev) if card.draw else st


def _pass(state: ICState, a: Action, ev: list[Event]) -> ICState:
    assert isinstance(a, Pass)
    _seat_ok(state, a.seat)
    if state.phase != WINDOW:
        raise IllegalAction("No window is open")
    if a.seat == state.active:
        raise IllegalAction("Your action is declared: wait")
    if a.seat in state.passed:
        raise IllegalAction("You already passed")
    st = replace(state, passed=(*state.passed, a.seat))
    ev.append(Event("pass", {"seat": a.seat}))
    waiting = [s for s in alive(st) if s != st.active and s not in st.passed]
    if waiting:
        return st
    ev.append(Event("window_closed", {"by": "passes"}))
    assert st.declared is not None
    return _resolve(st, st.declared, ev)


def _timeout(state: ICState, a: Action, ev: list[Event]) -> ICState:
    if state.phase != WINDOW:
        raise IllegalAction("No window is open")
    ev.append(Event("window_closed", {"by": "timeout"}))
    assert state.declared is not None
    return _resolve(state, state.declared, ev)


def _program(state: ICState, a: Action, ev: list[Event]) -> ICState:
    assert isinstance(a, Program)
    _check_program(state, a)
    cards = cards_of(state)
    card = cards.programs[a.card]
    s = state.seats[a.seat]
    hand = tuple(c for c in s.programs if c != a.card)
    if card.timing == "permanent":
        st = _set_seat(state, a.seat, replace(s, programs=hand, permanents=(*s.permanents, a.card)))
    else:
        st = _set_seat(state, a.seat, replace(s, programs=hand))
        st = replace(st, deck=(*st.deck, a.card))
    data = {"seat": a.seat, "card": a.card, "key": card.key, "name": words(card.name)}
    data.update({"target": a.target, "slot": a.slot, "own_slot": a.own_slot})
    ev.append(Event("program", data))
    if state.phase == WINDOW:
        # An interrupt: the declared action is off and the actor declares again.
        ev.append(Event("interrupted", {"seat": state.active}))
        st = replace(st, phase=TURN, declared=None, passed=(), may_change=True)
    if state.phase not in _WAITING:
        st = replace(st, resume="turn")  # after it resolves, the turn goes on
        return _settle(_play_effects(st, a, ev), ev)
    # Played while a hit, re-aim, ability or discard waits (Decision, identites-cryptees.md): it
    # resolves at once, and what it starts goes before what was already waiting.
    waiting = (st.hits, st.reaim, st.abilities)
    st = _play_effects(replace(st, hits=(), reaim=(), abilities=()), a, ev)
    if st.phase != OVER:
        hits, reaim, abilities = waiting
        st = replace(
            st,
            hits=st.hits + hits,
            reaim=st.reaim + tuple(r for r in reaim if r not in st.reaim),
            abilities=st.abilities + abilities,
        )
    return _settle(st, ev)


def _play_effects(st: ICState, a: Program, ev: list[Event]) -> ICState:
    card = cards_of(st).programs[a.card]
    for eff in program_effects(st, a.card):
        if st.phase == OVER:
            break
        st = _effect(st, eff, a, card.key, ev)
    return st


def _effect(
    st: ICState, eff: Effect, a: Program | Ability, source: str, ev: list[Event]
) -> ICState:
    seat = a.seat
    target = a.target if eff.who != "self" and a.target is not None else seat
    if st.seats[target].alive == (eff.who == "eliminated") or not st.seats[seat].alive:
        return st
    do = eff.do
    if do == "revive":
        return _revive(st, target, eff.amount, ev, source)
    if do == "peek":
        slot = "id" if eff.card == "id" else a.slot
        assert slot is not None
        if slot == "id":
            seen = Seen("id", target, st.seats[target].id_card)
        else:
            pos = slot_pos(st, target, slot)
            seen = Seen("loyalty", pos, st.loyalty[pos])
        ev.append(_seen_event(st, seat, target, slot, seen))
        return _remember(st, seat, seen)
    if do == "reveal":
        return _reveal(st, target, "id" if eff.card == "id" else str(a.slot), ev)
    if do == "hit":
        return replace(st, hits=(*st.hits, Hit(target, eff.card, eff.amount, source)))
    if do == "damage":
        return _lose(st, target, eff.amount, ev, source)
    if do == "heal":
        return _heal(st, target, eff.amount, ev, source)
    if do == "draw":
        return _draw(st, seat, eff.amount, ev)
    if do == "steal":
        return _steal(st, seat, target, ev)
    if do == "swap":
        assert a.slot is not None and a.own_slot is not None
        return _swap(st, slot_pos(st, seat, a.own_slot), slot_pos(st, target, a.slot), ev)
    return _simple_effect(st, eff, seat, target, ev)


def _simple_effect(st: ICState, eff: Effect, seat: int, target: int, ev: list[Event]) -> ICState:
    if eff.do == "unlock":
        ws = weapon_state(st, str(eff.weapon))
        if ws is None:
            return st
        ev.append(Event("unlock", {"weapon": ws.key}))
        return _set_weapon(st, replace(ws, unlocked=True))
    if eff.do == "change_faction":
        ev.append(Event("change_faction", {"seat": target, "to": eff.to}))
        s = st.seats[target]
        final = s.final if s.alive else eff.to  # an eliminated player's side is frozen
        return _set_seat(st, target, replace(s, override=eff.to, final=final))
    if eff.do == "skip_turn":
        s = st.seats[target]
        ev.append(Event("skip_next", {"seat": target}))
        return _set_seat(st, target, replace(s, skips=s.skips + eff.amount))
    if eff.do == "disarm":
        return _drop(st, target, ev) if holding(st, target) is not None else st
    return st  # armor is passive


def _respond(state: ICState, a: Action, ev: list[Event]) -> ICState:
    assert isinstance(a, Reveal | Take)
    _seat_ok(state, a.seat)
    if state.phase != RESPOND or state.hits[0].target != a.seat:
        raise IllegalAction("Nothing asks you to answer")
    hit = state.hits[0]
    if isinstance(a, Reveal) and a.card not in _reveal_options(state, hit):
        raise IllegalAction("Reveal a face-down card it asks for")
    st = replace(state, hits=state.hits[1:])
    st = _reveal(st, a.seat, a.card, ev) if isinstance(a, Reveal) else _take(st, hit, ev)
    return _settle(_hit_done(st, hit, ev), ev)


def _hit_done(st: ICState, hit: Hit, ev: list[Event]) -> ICState:
    """After a hit (and the check its elimination ran): the shooter draws, if it still can."""
    seat = hit.then_draws
    if seat is None or st.phase == OVER or not st.seats[seat].alive:
        return st
    return _draw(st, seat, 1, ev)


def _reaim(state: ICState, a: Aim, ev: list[Event]) -> ICState:
    _seat_ok(state, a.seat)
    if state.reaim[0] != a.seat:
        raise IllegalAction("Wait: someone else re-aims")
    held = holding(state, a.seat)
    assert held is not None
    _check_targets(state, a.seat, cards_of(state).weapon(held.key), a.targets)
    st = _set_weapon(state, replace(held, targets=tuple(a.targets)))
    ev.append(Event("aim", {"seat": a.seat, "weapon": held.key, "targets": list(a.targets)}))
    return _settle(replace(st, reaim=st.reaim[1:]), ev)


def _ability(state: ICState, a: Action, ev: list[Event]) -> ICState:
    assert isinstance(a, Ability)
    _seat_ok(state, a.seat)
    if state.phase != ABILITY or state.abilities[0] != a.seat:
        raise IllegalAction("No ability of yours waits")
    card = cards_of(state).ids[state.seats[a.seat].id_card]
    _check_choice(state, a, card.effects)
    st = replace(state, abilities=state.abilities[1:])
    data = {"seat": a.seat, "id": card.key, "target": a.target, "slot": a.slot}
    ev.append(Event("ability", {**data, "own_slot": a.own_slot}))
    for eff in card.effects:
        if st.phase == OVER:
            break
        st = _effect(st, eff, a, card.key, ev)
    return _settle(st, ev)


def _discard(state: ICState, a: Action, ev: list[Event]) -> ICState:
    assert isinstance(a, Discard)
    _seat_ok(state, a.seat)
    if state.phase != DISCARD or a.seat != state.active:
        raise IllegalAction("No discard is due")
    s = state.seats[a.seat]
    if a.card in s.programs:
        s = replace(s, programs=tuple(c for c in s.programs if c != a.card))
        ev.append(Event("discard", {"seat": a.seat}))
        ev.append(Event("discarded", {"card": a.card}, to=(a.seat,)))
    elif a.card in s.permanents:
        s = replace(s, permanents=tuple(c for c in s.permanents if c != a.card))
        ev.append(Event("discard", {"seat": a.seat, "card": a.card}))
    else:
        raise IllegalAction("You do not hold that program")
    st = _set_seat(state, a.seat, s)
    return _settle(replace(st, deck=(*st.deck, a.card)), ev)


# --- effects on the table --------------------------------------------------


def _set_seat(st: ICState, seat: int, new: SeatState) -> ICState:
    seats = list(st.seats)
    seats[seat] = new
    return replace(st, seats=tuple(seats))


def _set_weapon(st: ICState, new: WeaponState) -> ICState:
    return replace(st, weapons=tuple(new if w.key == new.key else w for w in st.weapons))


def _drop(st: ICState, seat: int, ev: list[Event] | None) -> ICState:
    held = holding(st, seat)
    if held is None:
        return st
    if ev is not None:
        ev.append(Event("drop", {"seat": seat, "weapon": held.key}))
    return _set_weapon(st, replace(held, holder=None, targets=()))


def _draw(st: ICState, seat: int, count: int, ev: list[Event]) -> ICState:
    got = st.deck[:count]
    s = st.seats[seat]
    st = _set_seat(st, seat, replace(s, programs=s.programs + got))
    ev.append(Event("draw", {"seat": seat, "count": len(got)}))
    if got:
        ev.append(Event("drew", {"cards": list(got)}, to=(seat,)))
    return replace(st, deck=st.deck[count:])


def _steal(st: ICState, seat: int, target: int, ev: list[Event]) -> ICState:
    victim = st.seats[target]
    if not victim.programs:
        ev.append(Event("steal", {"seat": seat, "target": target, "count": 0}))
        return st
    card, rng = st.rng.choice(victim.programs)
    st = replace(st, rng=rng)
    rest = tuple(c for c in victim.programs if c != card)
    st = _set_seat(st, target, replace(victim, programs=rest))
    me = st.seats[seat]
    st = _set_seat(st, seat, replace(me, programs=(*me.programs, card)))
    ev.append(Event("steal", {"seat": seat, "target": target, "count": 1}))
    ev.append(Event("stolen", {"seat": seat, "target": target, "card": card}, to=(seat, target)))
    return st


def _swap(st: ICState, p: int, q: int, ev: list[Event]) -> ICState:
    cards = list(st.loyalty)
    cards[p], cards[q] = cards[q], cards[p]
    ev.append(Event("swap", {"positions": [p, q]}))
    return replace(st, loyalty=tuple(cards))


def _revive(st: ICState, seat: int, amount: int, ev: list[Event], source: str) -> ICState:
    """An eliminated player comes back with ``amount`` HP (at least 1); its cards stay
    face up and its revealed ID's one-time ability does not fire again (rulebook)."""
    hp = min(MAX_HP, max(1, amount))
    ev.append(Event("revive", {"seat": seat, "hp": hp, "source": source}))
    return _set_seat(st, seat, replace(st.seats[seat], alive=True, hp=hp, final=None))


def _heal(st: ICState, seat: int, amount: int, ev: list[Event], source: str) -> ICState:
    s = st.seats[seat]
    hp = min(MAX_HP, s.hp + amount)
    ev.append(Event("heal", {"seat": seat, "hp": hp, "source": source}))
    return _set_seat(st, seat, replace(s, hp=hp))


def _reveal_options(st: ICState, hit: Hit) -> list[str]:
    if hit.reveal == "id":
        return [] if st.seats[hit.target].id_up else ["id"]
    return [slot for slot in LOYALTY_SLOTS if not st.loyalty_up[slot_pos(st, hit.target, slot)]]


def _reveal(st: ICState, seat: int, slot: str, ev: list[Event]) -> ICState:
    cards = cards_of(st)
    s = st.seats[seat]
    if slot == "id":
        ev.append(Event("reveal", {"seat": seat, "card": "id", "id": s.id_card}))
        st = _set_seat(st, seat, replace(s, id_up=True))
        effects = cards.ids[s.id_card].effects
        if _program_target_rule(effects) is not None:
            return replace(st, abilities=(*st.abilities, seat))
        for eff in effects:
            st = _id_ability(st, seat, eff, ev)
        return st
    pos = slot_pos(st, seat, slot)
    ev.append(Event("reveal", {"seat": seat, "card": slot, "id": st.loyalty[pos]}))
    up = list(st.loyalty_up)
    up[pos] = True
    return replace(st, loyalty_up=tuple(up))


def _id_ability(st: ICState, seat: int, eff: Effect, ev: list[Event]) -> ICState:
    key = cards_of(st).ids[st.seats[seat].id_card].key
    if eff.do == "draw":
        return _draw(st, seat, eff.amount, ev)
    if eff.do == "heal":
        return _heal(st, seat, eff.amount, ev, key)
    return _simple_effect(st, eff, seat, seat, ev)


def _take(st: ICState, hit: Hit, ev: list[Event]) -> ICState:
    return _lose(st, hit.target, hit_damage(st, hit), ev, hit.source)


def _lose(st: ICState, seat: int, amount: int, ev: list[Event], source: str) -> ICState:
    s = st.seats[seat]
    hp = max(0, s.hp - amount)
    ev.append(Event("damage", {"seat": seat, "amount": amount, "hp": hp, "source": source}))
    st = _set_seat(st, seat, replace(s, hp=hp))
    return _eliminate(st, seat, ev) if hp == 0 else st


def _eliminate(st: ICState, seat: int, ev: list[Event]) -> ICState:
    before = [faction(st, i) for i in range(st.players)]
    s = st.seats[seat]
    up = list(st.loyalty_up)
    for pos in own_positions(st, seat):
        up[pos] = True
    st = _drop(st, seat, None)
    # Only the ID and loyalty cards are revealed; the programs stay with the player
    # (uncounted while eliminated, back with a revival): only used programs go under.
    st = replace(st, loyalty_up=tuple(up))
    dead = replace(s, hp=0, alive=False, id_up=True, skips=0, final=before[seat])
    st = _set_seat(st, seat, dead)
    cards = [st.seats[seat].id_card, *(st.loyalty[p] for p in own_positions(st, seat))]
    ev.append(Event("eliminated", {"seat": seat, "cards": cards}))
    chasing = tuple(
        w.holder
        for w in st.weapons
        if w.holder is not None and seat in w.targets and w.holder not in st.reaim
    )
    st = replace(st, reaim=st.reaim + chasing)
    ffa = st.free_for_all
    if ffa is None:
        ffa = not st.humans_at_start or "human" not in before
        st = replace(st, free_for_all=ffa)
    result = victory(st, ffa)
    if result is None:
        ev.append(Event("check", {"eliminated": seat, "result": "continues"}))
        return replace(st, announce=Announce(seat))
    winners, side = result
    ev.append(Event("check", {"eliminated": seat, "result": "won", "winners": list(winners)}))
    return replace(
        st,
        announce=Announce(seat, winners, side),
        phase=OVER,
        winners=winners,
        winner_faction=side,
        hits=(),
        reaim=(),
        abilities=(),
        declared=None,
    )


def victory(st: ICState, free_for_all: bool) -> tuple[tuple[int, ...], str] | None:
    """The winners and their side, or None when the game goes on (docs: Victory check)."""
    sides = [faction(st, i) for i in range(st.players)]
    living = alive(st)
    left = {sides[i] for i in living}

    def team(side: str) -> tuple[tuple[int, ...], str]:
        return tuple(i for i, f in enumerate(sides) if f == side), side

    if not living:
        return (), "nobody"
    if left == {"legion"}:
        return team("legion")
    if free_for_all:
        return ((living[0],), sides[living[0]]) if len(living) == 1 else None
    if left == {"fallen"}:
        return team("fallen")
    if left == {"human"}:
        return team("human")
    if "human" not in left and "machine" in left:
        return team("machine")
    if len(living) == 1:
        return (living[0],), sides[living[0]]
    return None


# --- flow ------------------------------------------------------------------


def _unlock_for_all(st: ICState, ev: list[Event]) -> ICState:
    """A locked weapon whose condition now holds for every living player is unlocked
    for the table (e.g. the laser once a player is out): its public face turns over."""
    cards = cards_of(st)
    for ws in st.weapons:
        if ws.unlocked or ws.holder is not None:
            continue
        card = cards.weapon(ws.key)
        if card.unlock.kind == "program":
            continue
        if all(_unlock_met(st, seat, card) for seat in alive(st)):
            ev.append(Event("unlock", {"weapon": ws.key}))
            st = _set_weapon(st, replace(ws, unlocked=True))
    return st


def _settle(st: ICState, ev: list[Event]) -> ICState:
    """Run the automatic steps until a player must act."""
    return _unlock_for_all(_run(st, ev), ev)


def _run(st: ICState, ev: list[Event]) -> ICState:
    while st.phase != OVER:
        if st.reaim:
            holder = st.reaim[0]
            held = holding(st, holder)
            if held is None or not st.seats[holder].alive:
                st = replace(st, reaim=st.reaim[1:])
                continue
            if not _target_sets(st, holder, cards_of(st).weapon(held.key)):
                st = replace(_drop(st, holder, ev), reaim=st.reaim[1:])
                continue
            return replace(st, phase=REAIM)
        if st.abilities:
            seat = st.abilities[0]
            if not st.seats[seat].alive or not _ability_choices(st, seat):
                st = replace(st, abilities=st.abilities[1:])
                continue
            return replace(st, phase=ABILITY)
        if st.hits:
            hit = st.hits[0]
            if not st.seats[hit.target].alive:
                st = _hit_done(replace(st, hits=st.hits[1:]), hit, ev)
                continue
            if not _reveal_options(st, hit):
                st = _hit_done(_take(replace(st, hits=st.hits[1:]), hit, ev), hit, ev)
                continue
            return replace(st, phase=RESPOND)
        me = st.active
        if st.seats[me].alive and st.resume == "turn":
            return replace(st, phase=TURN)
        if st.seats[me].alive and hand_size(st, me) > hand_limit(st, me):
            return replace(st, phase=DISCARD, resume="end")
        return _next_turn(st, ev)
    return st


def _next_turn(st: ICState, ev: list[Event]) -> ICState:
    seat = st.active
    while True:
        seat = next_alive(st, seat)
        s = st.seats[seat]
        if s.skips <= 0:
            break
        st = _set_seat(st, seat, replace(s, skips=s.skips - 1))
        ev.append(Event("skip", {"seat": seat}))
    ev.append(Event("turn", {"seat": seat}))
    return replace(
        st, phase=TURN, active=seat, resume="turn", declared=None, passed=(), may_change=False
    )


# --- legal actions ---------------------------------------------------------


def _legal(state: ICState, seat: int | None) -> list[Action]:
    if state.phase == OVER:
        return []
    if seat is None:
        return [Timeout()] if state.phase == WINDOW else []
    if not 0 <= seat < state.players or not state.seats[seat].alive:
        return []
    phase = state.phase
    programs = _legal_programs(state, seat)
    if phase == TURN:
        if seat == state.active:
            return _legal_declarations(state, seat) + programs
        return programs
    if phase == WINDOW:
        if seat in state.passed:
            return []
        return programs if seat == state.active else [Pass(seat), *programs]
    return _legal_answers(state, seat) + programs


def _legal_answers(state: ICState, seat: int) -> list[Action]:
    """What the one seat a hit, re-aim, ability or discard waits for may answer."""
    phase = state.phase
    if phase == RESPOND:
        hit = state.hits[0]
        if hit.target != seat:
            return []
        reveals: list[Action] = [Reveal(seat, c) for c in _reveal_options(state, hit)]  # type: ignore[arg-type]
        return [*reveals, Take(seat)]
    if phase == REAIM:
        held = holding(state, seat)
        if state.reaim[0] != seat or held is None:
            return []
        card = cards_of(state).weapon(held.key)
        return [Aim(seat, t) for t in _target_sets(state, seat, card)]
    if phase == ABILITY:
        if state.abilities[0] != seat:
            return []
        return [Ability(seat, *choice) for choice in _ability_choices(state, seat)]
    if phase == DISCARD and seat == state.active:
        s = state.seats[seat]
        return [Discard(seat, c) for c in (*s.programs, *s.permanents)]
    return []


def _legal_declarations(state: ICState, seat: int) -> list[Action]:
    cards = cards_of(state)
    held = holding(state, seat)
    others = [t for t in alive(state) if t != seat]
    out: list[Action] = []
    if held is None:
        for t in others:
            up = [state.loyalty_up[p] for p in own_positions(state, t)]
            # From 9 players the card between two neighbours is each one's: either may
            # investigate it as the other's (a Decision, docs' 9-16 players).
            for slot, is_up in zip(LOYALTY_SLOTS, up, strict=True):
                if not is_up:
                    out.append(Investigate(seat, t, slot))  # type: ignore[arg-type]
            if all(up) and not state.seats[t].id_up:
                out.append(Investigate(seat, t, "id"))
        for ws in state.weapons:
            card = cards.weapon(ws.key)
            if ws.holder is None and (ws.unlocked or _unlock_met(state, seat, card)):
                out += [Equip(seat, ws.key, ts) for ts in _target_sets(state, seat, card)]
        out.append(Draw(seat))
        return out
    card = cards.weapon(held.key)
    out.append(Drop(seat))
    if card.aim == "equip":
        out += [Aim(seat, ts) for ts in _target_sets(state, seat, card) if ts != held.targets]
        out.append(Fire(seat))
    else:
        out += [Fire(seat, t) for t in others]
    if card.heal > 0:
        out.append(Heal(seat))
    return out


def _legal_programs(state: ICState, seat: int) -> list[Action]:
    cards = cards_of(state)
    out: list[Action] = []
    mine = state.phase == TURN and seat == state.active
    if state.phase == WINDOW and seat in state.passed:
        return out
    for c in state.seats[seat].programs:
        card = cards.programs[c]
        if card.loyalty is not None or (card.timing != "anytime" and not mine):
            continue
        effects = program_effects(state, c)
        out += [Program(seat, c, *choice) for choice in _choices(state, seat, effects)]
    return out


def _ability_choices(state: ICState, seat: int) -> list[tuple[Any, ...]]:
    card = cards_of(state).ids[state.seats[seat].id_card]
    return _choices(state, seat, card.effects)


def _choices(state: ICState, seat: int, effects: tuple[Effect, ...]) -> list[tuple[Any, ...]]:
    """Every (target, slot, own_slot) a card with these effects may be given."""
    rule = _program_target_rule(effects)
    if rule is None:
        return [()]
    slot_rule = _slot_rule(effects)
    out: list[tuple[Any, ...]] = []
    if rule == "eliminated":
        return [(t,) for t in range(state.players) if not state.seats[t].alive]
    for t in alive(state):
        if rule == "any" or t != seat:
            out += [(t, *slots) for slots in _slot_choices(state, seat, t, slot_rule)]
    return out


def _slot_choices(
    state: ICState, seat: int, target: int, rule: str | None
) -> list[tuple[Any, ...]]:
    if rule is None:
        return [()]
    if rule == "id":
        return [] if state.seats[target].id_up else [("id",)]
    if rule == "loyalty":
        return [(s,) for s in LOYALTY_SLOTS if not state.loyalty_up[slot_pos(state, target, s)]]
    out = []
    for s in LOYALTY_SLOTS:
        for o in LOYALTY_SLOTS:
            theirs, mine = slot_pos(state, target, s), slot_pos(state, seat, o)
            if theirs != mine and not state.loyalty_up[theirs] and not state.loyalty_up[mine]:
                out.append((s, o))
    return out


_HANDLERS: dict[type, Any] = {
    **dict.fromkeys(DECLARATIONS, _declare),
    Pass: _pass,
    Timeout: _timeout,
    Program: _program,
    Reveal: _respond,
    Take: _respond,
    Ability: _ability,
    Discard: _discard,
}

GAME = IdentitesCryptees()

__all__ = [
    "GAME",
    "DataError",
    "IdentitesCryptees",
    "card_sets",
    "card_sets_in",
    "pin_options",
    "read_card_set",
    "shared",
    "victory",
]
