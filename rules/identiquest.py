"""Identiquest: steal gems of your secret colour without being unmasked.

On your turn either steal two of the five face-up gems (the deck refills the
market) or accuse another player of being a colour. A wrong accusation crosses
that colour out in front of the accused and costs the accuser two gems; a right
one unmasks the accused, crosses the colour out in front of everyone else and
costs the accused four gems. A player with a single "?" left has escaped.
The game ends when the deck cannot refill the market after a steal, or when
everyone is unmasked or escaped. Score: the gems of your own colour.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any, TypeVar

import msgspec
from msgspec.structs import replace

from rules.core import (
    JSON,
    Action,
    BadOptions,
    BaseGame,
    Event,
    GameState,
    IllegalAction,
    Rng,
    shared_ranking,
)
from rules.declare import N_, GameInfo, Option, Phase

MARKET = 5
STEAL = 2
WRONG_COST = 2
RIGHT_COST = 4
MIN_GEMS_TO_ACCUSE = 2
GIVE_MODES = ("top", "choose")
COLOUR_NAME = re.compile(r"[a-z][a-z0-9-]{0,11}")
DECK_NAME = re.compile(r"[a-z0-9_-]{1,32}")
# Bounds on a deck, far above any box (the default: 7 colours of 8 gems), so that a
# mistaken deck (a file or a host's option) is refused instead of stalling the hub with
# millions of gems to shuffle. Documented in rules/docs/identiquest.md.
MAX_COLOURS = 16
MAX_GEMS = 64  # of one colour
MAX_DECK = 512  # gems in all
MAX_DECK_FILE = 64 * 1024  # bytes

PLAY, GIVE, OVER = "play", "give", "over"
T = TypeVar("T")


def load_deck(name: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Colours and gem counts of a deck file ``rules/data/identiquest/<name>.json``."""
    if not DECK_NAME.fullmatch(name):
        raise BadOptions(f"Unknown deck: {name}")
    path = resources.files("rules") / "data" / "identiquest" / f"{name}.json"
    if not path.is_file():
        raise BadOptions(f"Unknown deck: {name}")
    raw = path.read_bytes()
    if len(raw) > MAX_DECK_FILE:
        raise BadOptions(f"Deck {name}.json: more than {MAX_DECK_FILE // 1024} KiB")
    try:
        items = json.loads(raw.decode("utf-8"))["colours"]
        if not isinstance(items, list) or len(items) > MAX_COLOURS:
            raise BadOptions(f"Deck {name}.json: colours: a list of at most {MAX_COLOURS}")
        gems = {item["colour"]: item["gems"] for item in items}
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise BadOptions(f"Deck {name}.json: not a deck ({type(exc).__name__})") from None
    return check_deck(gems)


def check_deck(gems: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Validate a colour -> gem count mapping (kept in its order)."""
    if len(gems) > MAX_COLOURS:
        raise BadOptions(f"The deck has {len(gems)} colours, at most {MAX_COLOURS}")
    colours, counts = tuple(gems), tuple(gems.values())
    for colour, count in zip(colours, counts, strict=True):
        if not isinstance(colour, str) or not COLOUR_NAME.fullmatch(colour):
            raise BadOptions(f"Bad colour name: {str(colour)[:20]!r}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise BadOptions(f"Bad gem count for {colour}")
        if count > MAX_GEMS:
            raise BadOptions(f"Too many gems for {colour}: {count}, at most {MAX_GEMS}")
    if sum(counts) < MARKET:
        raise BadOptions(f"The deck needs at least {MARKET} gems")
    if sum(counts) > MAX_DECK:
        raise BadOptions(f"The deck has {sum(counts)} gems, at most {MAX_DECK}")
    return colours, counts


DEFAULT_DECK = load_deck("default")


class Gift(msgspec.Struct, frozen=True):
    """Gems the giver still owes the receiver (option ``give: choose``)."""

    giver: int
    receiver: int
    left: int


class IdentiquestState(GameState, frozen=True):
    """The whole game; ``identity`` and the deck order are secret."""

    colours: tuple[str, ...] = ()
    counts: tuple[int, ...] = ()
    give: str = "top"
    identity: tuple[int, ...] = ()
    #: Face-down gems (colour indices); the next one drawn is ``deck[0]``.
    deck: tuple[int, ...] = ()
    #: The face-up gems, by slot.
    market: tuple[int, ...] = ()
    #: Each seat's loot pile, bottom first (the top is the last item).
    loot: tuple[tuple[int, ...], ...] = ()
    #: ``crossed[seat][colour]``: that suspect card shows the red cross.
    crossed: tuple[tuple[bool, ...], ...] = ()
    unmasked: tuple[bool, ...] = ()
    escaped: tuple[bool, ...] = ()
    first: int = 0
    turn: int = 0
    pending: Gift | None = None
    over: bool = False
    #: Why the game ended: ``"deck"`` or ``"all-out"``.
    end: str | None = None


class Steal(Action, tag="steal", frozen=True):
    """Take the face-up gems in two market ``slots`` (0-4) onto your loot."""

    seat: int
    slots: tuple[int, int]


class Accuse(Action, tag="accuse", frozen=True):
    """Accuse ``target`` of being ``colour``."""

    seat: int
    target: int
    colour: str


class Give(Action, tag="give", frozen=True):
    """Hand over the topmost gem of ``colour`` you owe (option ``give: choose``)."""

    seat: int
    colour: str


IdentiquestAction = Steal | Accuse | Give


INFO = GameInfo(
    id="identiquest",
    name=N_("Identiquest"),
    min_players=3,
    max_players=6,
    tie_break=N_("ties stay ties"),
    phases={
        PLAY: Phase(N_("Play"), N_("Play")),
        GIVE: Phase(N_("Give gems"), N_("Give gems")),
        OVER: Phase(N_("Over"), N_("Over")),
    },
    options=(
        Option("deck", "cards", "default", N_("Deck"), panel=False),
        Option(
            "give",
            "choice",
            "top",
            N_("Gift"),
            choices=GIVE_MODES,
            values={"top": N_("top gem"), "choose": N_("chosen")},
            menu=GIVE_MODES,
        ),
    ),
    # --- the table display between games
    summary=N_(
        "Each of you secretly is one gem colour. On your turn, steal two gems from the "
        "market, or accuse a player of being a colour: wrong, you give them 2 gems; "
        "right, they are unmasked and give you 4. When the deck runs dry, each scores the "
        "gems of their own colour."
    ),
)


class Identiquest(BaseGame[IdentiquestState]):
    """The Identiquest engine."""

    info = INFO
    state_type = IdentiquestState
    action_type = IdentiquestAction

    # -- setup ---------------------------------------------------------------

    def setup(self, players: int, options: Mapping[str, Any], seed: int) -> IdentiquestState:
        """Shuffle the deck, lay out 5 gems, deal identities, pick the first player."""
        self.check_players(players)
        parsed = INFO.parse(options, players)
        give, deck_option = parsed["give"], parsed["deck"]
        if isinstance(deck_option, str):
            colours, counts = load_deck(deck_option)
        elif isinstance(deck_option, Mapping):
            colours, counts = check_deck(deck_option)
        else:
            raise BadOptions("deck must be a deck name or colour -> count")
        if len(colours) < players:
            raise BadOptions(f"The deck needs at least {players} colours")
        cards = [c for c, count in enumerate(counts) for _ in range(count)]
        rng = Rng(seed)
        deck, rng = rng.shuffle(cards)
        identity, rng = rng.sample(range(len(colours)), players)
        first, rng = rng.randrange(players)
        return IdentiquestState(
            players=players,
            seed=seed,
            rng=rng,
            colours=colours,
            counts=counts,
            give=give,
            identity=identity,
            deck=deck[MARKET:],
            market=deck[:MARKET],
            loot=((),) * players,
            crossed=((False,) * len(colours),) * players,
            unmasked=(False,) * players,
            escaped=(False,) * players,
            first=first,
            turn=first,
        )

    def context(self, public: JSON) -> JSON:
        """The shared keys; while playing, the seat whose turn it is is the one awaited."""
        turn = public.get("turn") if public.get("phase") == PLAY else None
        return {**super().context(public), "to_play": turn}

    def pin_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options with a deck name replaced by its colour -> count table."""
        pinned = dict(options)
        deck = pinned.get("deck", "default")
        if isinstance(deck, str):
            colours, counts = load_deck(deck)
            pinned["deck"] = dict(zip(colours, counts, strict=True))
        return pinned

    # -- moves ---------------------------------------------------------------

    def legal_actions(self, state: IdentiquestState, seat: int | None) -> list[Action]:
        """Every action ``seat`` may take now (the table has none)."""
        if seat is None or state.over:
            return []
        if state.pending is not None:
            if seat != state.pending.giver:
                return []
            pile = state.loot[seat]
            return [Give(seat, state.colours[c]) for c in sorted(set(pile))]
        if seat != state.turn:
            return []
        size = len(state.market)
        actions: list[Action] = [
            Steal(seat, (a, b)) for a in range(size) for b in range(a + 1, size)
        ]
        if len(state.loot[seat]) >= MIN_GEMS_TO_ACCUSE:
            actions += [
                Accuse(seat, target, state.colours[c])
                for target in range(state.players)
                if _accusable(state, seat, target)
                for c in range(len(state.colours))
                if not state.crossed[target][c]
            ]
        return actions

    def apply(
        self, state: IdentiquestState, action: Action
    ) -> tuple[IdentiquestState, list[Event]]:
        """Validate then play one action; bumps ``version``."""
        if state.over:
            raise IllegalAction("The game is over")
        if isinstance(action, Give):
            new, events = _give(state, action)
        elif state.pending is not None:
            raise IllegalAction("Waiting for gems to be given")
        elif isinstance(action, Steal):
            new, events = _steal(state, action)
        elif isinstance(action, Accuse):
            new, events = _accuse(state, action)
        else:
            raise IllegalAction("Not an Identiquest action")
        if new.pending is None:
            new, more = _end_turn(new)
            events += more
        return replace(new, version=state.version + 1), events

    # -- views ---------------------------------------------------------------

    def public_view(self, state: IdentiquestState) -> JSON:
        """The table: market, deck, loot piles' sizes and tops, suspects, the unmasked."""
        return _public(state)

    def seat_view(self, state: IdentiquestState, seat: int, public: JSON) -> JSON:
        """What ``seat`` may know: its identity, loot and score, and ``public`` as its
        ``table``."""
        if not 0 <= seat < state.players:
            raise IllegalAction("No such seat")
        return {
            "seat": seat,
            "identity": state.colours[state.identity[seat]],
            "loot": [state.colours[g] for g in state.loot[seat]],
            "score": _score(state, seat),
            "table": public,
        }

    # -- end -----------------------------------------------------------------

    def is_over(self, state: IdentiquestState) -> bool:
        """Deck could not refill the market, or everyone is unmasked or escaped."""
        return state.over

    def scores(self, state: IdentiquestState) -> list[int]:
        """Gems of each player's own colour (secret until the end: host use only)."""
        return [_score(state, s) for s in range(state.players)]

    def ranking(self, state: IdentiquestState) -> list[list[int]]:
        """Most gems of one's own colour first; ties are shared."""
        return shared_ranking(self.scores(state))


# -- rules helpers -------------------------------------------------------------


def _score(state: IdentiquestState, seat: int) -> int:
    own = state.identity[seat]
    return sum(1 for g in state.loot[seat] if g == own)


def _accusable(state: IdentiquestState, seat: int, target: int) -> bool:
    return target != seat and not state.unmasked[target] and not state.escaped[target]


def _colour(state: IdentiquestState, name: str) -> int:
    try:
        return state.colours.index(name)
    except ValueError:
        raise IllegalAction("Unknown colour") from None


def _check_turn(state: IdentiquestState, seat: int) -> None:
    if not 0 <= seat < state.players:
        raise IllegalAction("No such seat")
    if seat != state.turn:
        raise IllegalAction("Not your turn")


def _steal(state: IdentiquestState, action: Steal) -> tuple[IdentiquestState, list[Event]]:
    _check_turn(state, action.seat)
    a, b = action.slots
    if not (0 <= a < len(state.market) and 0 <= b < len(state.market)):
        raise IllegalAction("No such gem")
    if a == b:
        raise IllegalAction("Pick 2 different gems")
    taken = (state.market[a], state.market[b])
    refill, deck = state.deck[:STEAL], state.deck[STEAL:]
    market = list(state.market)
    for slot, gem in zip(sorted((a, b)), refill, strict=False):
        market[slot] = gem
    short = STEAL - len(refill)
    if short:  # the deck ran dry: the empty slots go; the game ends this turn
        for slot in sorted((a, b), reverse=True)[:short]:
            del market[slot]
    loot = _put(state.loot, action.seat, state.loot[action.seat] + taken)
    new = replace(state, deck=deck, market=tuple(market), loot=loot)
    names = state.colours
    events = [
        Event(
            "steal",
            {
                "seat": action.seat,
                "slots": [a, b],
                "gems": [names[g] for g in taken],
                "refill": [names[g] for g in refill],
            },
        )
    ]
    if short:
        new = replace(new, over=True, end="deck")
    return new, events


def _accuse(state: IdentiquestState, action: Accuse) -> tuple[IdentiquestState, list[Event]]:
    seat, target = action.seat, action.target
    _check_turn(state, seat)
    if len(state.loot[seat]) < MIN_GEMS_TO_ACCUSE:
        raise IllegalAction("You need {n} gems to accuse", n=MIN_GEMS_TO_ACCUSE)
    if not 0 <= target < state.players:
        raise IllegalAction("No such player")
    if target == seat:
        raise IllegalAction("You can't accuse yourself")
    if state.unmasked[target]:
        raise IllegalAction("Already unmasked")
    if state.escaped[target]:
        raise IllegalAction("That player escaped")
    colour = _colour(state, action.colour)
    if state.crossed[target][colour]:
        raise IllegalAction("That colour is crossed out")
    right = state.identity[target] == colour
    events = [
        Event(
            "accuse",
            {"seat": seat, "target": target, "colour": action.colour, "right": right},
        )
    ]
    if right:
        crossed = tuple(
            row if p == target else _put(row, colour, True) for p, row in enumerate(state.crossed)
        )
        unmasked = _put(state.unmasked, target, True)
        new = replace(state, crossed=crossed, unmasked=unmasked)
        events.append(Event("unmasked", {"seat": target, "colour": action.colour}))
        giver, receiver, owed = target, seat, RIGHT_COST
    else:
        crossed = _put(state.crossed, target, _put(state.crossed[target], colour, True))
        new = replace(state, crossed=crossed)
        giver, receiver, owed = seat, target, WRONG_COST
    new, more = _mark_escapes(new)
    events += more
    new, more = _owe(new, giver, receiver, owed)
    return new, events + more


def _mark_escapes(state: IdentiquestState) -> tuple[IdentiquestState, list[Event]]:
    """A player with one "?" left has escaped."""
    escaped = list(state.escaped)
    events = []
    for p in range(state.players):
        if not state.unmasked[p] and not escaped[p] and state.crossed[p].count(False) == 1:
            escaped[p] = True
            events.append(Event("escaped", {"seat": p}))
    return replace(state, escaped=tuple(escaped)), events


def _owe(
    state: IdentiquestState, giver: int, receiver: int, owed: int
) -> tuple[IdentiquestState, list[Event]]:
    """Give ``owed`` gems (or all): from the top, or chosen by the giver."""
    pile = state.loot[giver]
    count = min(owed, len(pile))
    if count == 0:
        return state, []
    if state.give == "choose" and len(pile) > count:
        return replace(state, pending=Gift(giver, receiver, count)), []
    given = tuple(reversed(pile[len(pile) - count :]))  # the top gem goes first
    return _transfer(state, giver, receiver, pile[: len(pile) - count], given)


def _transfer(
    state: IdentiquestState,
    giver: int,
    receiver: int,
    rest: tuple[int, ...],
    given: tuple[int, ...],
) -> tuple[IdentiquestState, list[Event]]:
    loot = _put(state.loot, giver, rest)
    loot = _put(loot, receiver, loot[receiver] + given)
    event = Event(
        "give",
        {"from": giver, "to": receiver, "gems": [state.colours[g] for g in given]},
    )
    return replace(state, loot=loot), [event]


def _give(state: IdentiquestState, action: Give) -> tuple[IdentiquestState, list[Event]]:
    gift = state.pending
    if gift is None:
        raise IllegalAction("No gems to give now")
    if action.seat != gift.giver:
        raise IllegalAction("Not your gems to give")
    colour = _colour(state, action.colour)
    pile = state.loot[gift.giver]
    if colour not in pile:
        raise IllegalAction("You have no {colour} gem", colour=action.colour)
    at = len(pile) - 1 - pile[::-1].index(colour)  # the topmost one of that colour
    rest = pile[:at] + pile[at + 1 :]
    new, events = _transfer(state, gift.giver, gift.receiver, rest, (colour,))
    left = gift.left - 1
    return replace(new, pending=Gift(gift.giver, gift.receiver, left) if left else None), events


def _end_turn(state: IdentiquestState) -> tuple[IdentiquestState, list[Event]]:
    if not state.over and all(u or e for u, e in zip(state.unmasked, state.escaped, strict=True)):
        state = replace(state, over=True, end="all-out")
    if state.over:
        scores = [_score(state, s) for s in range(state.players)]
        data = {
            "reason": state.end,
            "identities": [state.colours[c] for c in state.identity],
            "scores": scores,
            "ranking": shared_ranking(scores),
        }
        return state, [Event("over", data)]
    turn = (state.turn + 1) % state.players
    return replace(state, turn=turn), [Event("turn", {"seat": turn})]


def _put(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    """``items`` with ``items[index]`` replaced by ``value``."""
    return (*items[:index], value, *items[index + 1 :])


def _public(state: IdentiquestState) -> JSON:
    names = state.colours
    pending = state.pending
    return {
        "game": "identiquest",
        "phase": OVER if state.over else (GIVE if pending else PLAY),
        "players": state.players,
        "colours": list(names),
        "give": state.give,
        "first": state.first,
        "turn": state.turn,
        "market": [names[g] for g in state.market],
        "deck": len(state.deck),
        "loot": [
            {"size": len(pile), "top": names[pile[-1]] if pile else None} for pile in state.loot
        ],
        "suspects": [["x" if c else "?" for c in row] for row in state.crossed],
        "unmasked": [
            names[state.identity[p]] if state.unmasked[p] else None for p in range(state.players)
        ],
        "escaped": list(state.escaped),
        "pending": (
            None
            if pending is None
            else {"giver": pending.giver, "receiver": pending.receiver, "left": pending.left}
        ),
        "over": state.over,
        "end": state.end,
        "identities": [names[c] for c in state.identity] if state.over else None,
        "scores": [_score(state, s) for s in range(state.players)] if state.over else None,
        "ranking": (
            shared_ranking([_score(state, s) for s in range(state.players)]) if state.over else None
        ),
    }


GAME = Identiquest()
