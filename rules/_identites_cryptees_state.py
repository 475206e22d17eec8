"""State, actions and read-only queries of the Identités cryptées engine.

Everything here is pure and reads a state without changing it; the moves live in
``rules.identites_cryptees``. Cards are named by their index in the expanded
card lists of :class:`rules._identites_cryptees_cards.Cards`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

import msgspec

from rules._identites_cryptees_cards import SHARED_FROM, Cards, Effect, load
from rules.core import Action, GameState

MAX_HP = 2

TURN = "turn"
WINDOW = "window"
RESPOND = "respond"
REAIM = "reaim"
DISCARD = "discard"
ABILITY = "ability"
OVER = "over"

Slot = Literal["left", "right", "id"]
LoyaltySlot = Literal["left", "right"]


# --- actions ---------------------------------------------------------------


class Investigate(Action, tag="investigate", frozen=True):
    """Unarmed: look at a loyalty card of ``target`` (its ID once both are up)."""

    seat: int
    target: int
    card: Slot


class Equip(Action, tag="equip", frozen=True):
    """Unarmed: take ``weapon`` and aim it (no targets for a weapon aimed on firing)."""

    seat: int
    weapon: str
    targets: tuple[int, ...] = ()


class Draw(Action, tag="draw", frozen=True):
    """Unarmed: draw a program."""

    seat: int


class Drop(Action, tag="drop", frozen=True):
    """Armed: put the weapon back on the table."""

    seat: int


class Aim(Action, tag="aim", frozen=True):
    """Armed: aim at other targets; also the forced re-aim after an elimination."""

    seat: int
    targets: tuple[int, ...]


class Fire(Action, tag="fire", frozen=True):
    """Armed: fire (``target`` only for a weapon that names it on firing)."""

    seat: int
    target: int | None = None


class Heal(Action, tag="heal", frozen=True):
    """Armed with a weapon that heals: heal its target instead of firing."""

    seat: int


class Pass(Action, tag="pass", frozen=True):
    """In an interrupt window: this seat plays no program."""

    seat: int


class Timeout(Action, tag="timeout", frozen=True):
    """Table: the interrupt window's time ran out."""


class Program(Action, tag="program", frozen=True):
    """Play program ``card`` (its card id); ``target``/``slot``/``own_slot`` as it needs."""

    seat: int
    card: int
    target: int | None = None
    slot: Slot | None = None
    own_slot: LoyaltySlot | None = None


class Reveal(Action, tag="reveal", frozen=True):
    """Hit: reveal this card instead of losing HP."""

    seat: int
    card: Slot


class Take(Action, tag="take", frozen=True):
    """Hit: lose HP instead of revealing a card."""

    seat: int


class Ability(Action, tag="ability", frozen=True):
    """Choose the target of your ID's ability, just revealed (fields as ``program``)."""

    seat: int
    target: int | None = None
    slot: Slot | None = None
    own_slot: LoyaltySlot | None = None


class Discard(Action, tag="discard", frozen=True):
    """End of turn over the hand limit: discard program ``card``."""

    seat: int
    card: int


Declaration = Investigate | Equip | Draw | Drop | Aim | Fire | Heal
ICAction = (
    Investigate
    | Equip
    | Draw
    | Drop
    | Aim
    | Fire
    | Heal
    | Pass
    | Timeout
    | Program
    | Reveal
    | Take
    | Ability
    | Discard
)
DECLARATIONS = (Investigate, Equip, Draw, Drop, Aim, Fire, Heal)


# --- state -----------------------------------------------------------------


class Seen(msgspec.Struct, frozen=True):
    """A hidden card this seat was shown: ``kind`` id or loyalty, at ``pos``.

    A loyalty card may move afterwards (a swap): the memory is of the card, and the
    views place it where it lies now (:func:`loyalty_pos`), not at ``pos``.
    """

    kind: Literal["id", "loyalty"]
    pos: int  # the seat for an ID, the loyalty position where a loyalty card was seen
    card: int


class SeatState(msgspec.Struct, frozen=True):
    """One player's cards and health."""

    id_card: int
    hp: int = MAX_HP
    alive: bool = True
    id_up: bool = False
    programs: tuple[int, ...] = ()  # hidden hand, hidden-loyalty cards included
    permanents: tuple[int, ...] = ()  # permanent programs played face up
    seen: tuple[Seen, ...] = ()
    override: str | None = None  # set by a change_faction effect
    skips: int = 0
    final: str | None = None  # faction frozen at elimination


class WeaponState(msgspec.Struct, frozen=True):
    """A weapon on the table or in a player's hand."""

    key: str
    holder: int | None = None
    targets: tuple[int, ...] = ()
    unlocked: bool = True


class Hit(msgspec.Struct, frozen=True):
    """A hit waiting for its target's answer: reveal a card or lose HP."""

    target: int
    reveal: Literal["loyalty", "id"]
    damage: int
    source: str
    weapon: bool = False  # a weapon's hit (armor softens those only), not a program's
    #: The shooter who draws a program once this hit is resolved and any victory check
    #: done (« ... ou bien perd 1 PV. Lâchez ensuite cette arme et piochez »): set on a
    #: drawing weapon's last hit.
    then_draws: int | None = None


class Announce(msgspec.Struct, frozen=True):
    """The public result of the last victory check."""

    eliminated: int
    winners: tuple[int, ...] = ()
    faction: str | None = None


class ICState(GameState, frozen=True):
    """The whole table of an Identités cryptées game."""

    cards: str = "generic"
    #: The cards themselves when the game was set up with a card set's JSON (an
    #: owner's file, or pinned options): the state then needs no file. ``None``:
    #: the shipped set named ``cards``.
    card_set: Cards | None = None
    window: float = 5.0
    first: int = 0
    legion_loyalty: bool = False
    seats: tuple[SeatState, ...] = ()
    loyalty: tuple[int, ...] = ()  # card at each loyalty position
    loyalty_up: tuple[bool, ...] = ()
    spare_ids: tuple[int, ...] = ()  # the ID card(s) left out, face down
    deck: tuple[int, ...] = ()  # programs, top first
    weapons: tuple[WeaponState, ...] = ()
    phase: str = TURN
    active: int = 0
    declared: Declaration | None = None
    may_change: bool = False  # an interrupt resolved: the actor declares again
    passed: tuple[int, ...] = ()
    hits: tuple[Hit, ...] = ()
    reaim: tuple[int, ...] = ()
    abilities: tuple[int, ...] = ()  # seats whose revealed ID ability needs a target
    resume: Literal["turn", "end"] = "turn"
    humans_at_start: bool = True
    free_for_all: bool | None = None  # settled at the first elimination
    announce: Announce | None = None
    winners: tuple[int, ...] = ()
    winner_faction: str | None = None


# --- queries ---------------------------------------------------------------


def cards_of(state: ICState) -> Cards:
    """The card set this game is played with."""
    return state.card_set if state.card_set is not None else load(state.cards)


def shared(state: ICState) -> bool:
    """Whether neighbours share loyalty cards (9 players or more)."""
    return state.players >= SHARED_FROM


def hand_limit(state: ICState, seat: int | None = None) -> int:
    """Programs a player may keep at the end of their turn (``seat``: with its passives)."""
    base = 1 if shared(state) else 2
    return base if seat is None else base + passive(state, seat, "hand_limit")


def passive(state: ICState, seat: int, kind: str) -> int:
    """The sum of ``seat``'s passive ``kind`` effects: permanents in play, its ID face up.

    « Les Programmes permanents ne comptent pas si le joueur qui les possède est
    éliminé »: an eliminated seat keeps them, uncounted until a revival.
    """
    cards = cards_of(state)
    s = state.seats[seat]
    total = 0
    for card in s.permanents if s.alive else ():
        total += sum(e.amount for e in program_effects(state, card) if e.do == kind)
    if s.id_up:
        total += sum(e.amount for e in cards.ids[s.id_card].effects if e.do == kind)
    return total


def program_effects(state: ICState, card: int) -> tuple[Effect, ...]:
    """What program ``card`` does at this table (its ``instead`` effects when they apply)."""
    prog = cards_of(state).programs[card]
    alt = prog.instead
    if alt is None or state.players < alt.players_from:
        return prog.effects
    if alt.weapon is not None and weapon_state(state, alt.weapon) is None:
        return prog.effects
    return alt.effects


def slot_pos(state: ICState, seat: int, slot: str) -> int:
    """The loyalty position of ``seat``'s left or right card.

    Up to 8 players each seat owns positions ``2s`` (left) and ``2s+1``
    (right). From 9, position ``p`` lies between seats ``p`` and ``p+1``: a
    seat's left card is shared with the previous seat, its right with the next.
    """
    n = state.players
    if shared(state):
        return (seat - 1) % n if slot == "left" else seat
    return 2 * seat + (0 if slot == "left" else 1)


def pos_owners(state: ICState, pos: int) -> tuple[tuple[int, str], ...]:
    """The (seat, slot) pairs that hold loyalty position ``pos``."""
    if shared(state):
        return ((pos, "right"), ((pos + 1) % state.players, "left"))
    return ((pos // 2, "left" if pos % 2 == 0 else "right"),)


def own_positions(state: ICState, seat: int) -> tuple[int, int]:
    """Both loyalty positions of ``seat``."""
    return slot_pos(state, seat, "left"), slot_pos(state, seat, "right")


def alive(state: ICState) -> list[int]:
    """Living seats in seat order."""
    return [i for i, s in enumerate(state.seats) if s.alive]


def next_alive(state: ICState, seat: int) -> int:
    """The next living seat after ``seat`` (clockwise)."""
    n = state.players
    for step in range(1, n + 1):
        cand = (seat + step) % n
        if state.seats[cand].alive:
            return cand
    return seat


def holding(state: ICState, seat: int) -> WeaponState | None:
    """The weapon ``seat`` holds, if any."""
    for weapon in state.weapons:
        if weapon.holder == seat:
            return weapon
    return None


def weapon_state(state: ICState, key: str) -> WeaponState | None:
    """The weapon called ``key`` if it is in this game."""
    for weapon in state.weapons:
        if weapon.key == key:
            return weapon
    return None


def hand_size(state: ICState, seat: int) -> int:
    """Programs counted for the hand limit: hidden ones and face-up permanents."""
    s = state.seats[seat]
    return len(s.programs) + len(s.permanents)


def loyalty_pos(state: ICState, card: int) -> int:
    """Where loyalty card ``card`` lies now (loyalty cards never leave the table)."""
    return state.loyalty.index(card)


def hit_damage(state: ICState, hit: Hit) -> int:
    """HP a hit takes if not answered by a reveal: armor softens weapon hits only."""
    return max(0, hit.damage - (armor(state, hit.target) if hit.weapon else 0))


def armor(state: ICState, seat: int) -> int:
    """Damage a weapon hit takes off for ``seat`` (permanent programs, revealed ID)."""
    return passive(state, seat, "armor")


def own_revealed(state: ICState, seat: int) -> int:
    """How many of ``seat``'s ID and loyalty cards lie face up."""
    up = sum(1 for p in own_positions(state, seat) if state.loyalty_up[p])
    return up + (1 if state.seats[seat].id_up else 0)


def decide_faction(colours: Iterable[tuple[str, int]], always: str | None) -> str:
    """Faction from weighted colours and an ID's "always" (docs: Factions).

    The colour with the strictly largest weight wins; a tie at the top means
    Outlaw. An "always X" ID overrides the count, except that a Legion majority
    ignores it, and a Fallen majority ignores it unless it says "always Legion".
    """
    counts: Counter[str] = Counter()
    for colour, weight in colours:
        counts[colour] += weight
    top = max(counts.values(), default=0)
    leaders = [c for c, w in counts.items() if w == top]
    majority = leaders[0] if len(leaders) == 1 else "outlaw"
    if always is None:
        return majority
    if always == "legion" or majority == "legion":
        return "legion"
    if majority == "fallen":
        return "fallen"
    return always


def faction(state: ICState, seat: int) -> str:
    """The faction of ``seat`` now (frozen at its elimination)."""
    s = state.seats[seat]
    if not s.alive and s.final is not None:
        return s.final
    if s.override is not None:
        return s.override
    cards = cards_of(state)
    id_card = cards.ids[s.id_card]
    colours = [(id_card.counts_as, 1)]
    always = id_card.always
    for pos in own_positions(state, seat):
        card = cards.loyalty[state.loyalty[pos]]
        colours.append((card.colour, card.weight))
        if card.always is not None and always != "legion":
            always = card.always  # an "always" loyalty card (the Legion's) beats the ID's
    for prog in s.programs:
        pcard = cards.programs[prog]
        if pcard.loyalty is not None:
            colours.append((pcard.loyalty, pcard.weight))
    return decide_faction(colours, always)
