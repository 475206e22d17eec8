"""The shared core every game engine stands on.

An engine is pure: no I/O, no clock, no threads, no global random state. Its
state is a frozen ``msgspec.Struct`` (tuples, not lists) that carries its own
version counter and its own random-number state, so ``setup(seed)`` followed by
the same actions gives byte-identical serialised states.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import msgspec

from rules.errors import MESSAGE_MAX as MESSAGE_MAX
from rules.errors import SCREEN_LINE as SCREEN_LINE
from rules.errors import BadOptions as BadOptions
from rules.errors import IllegalAction as IllegalAction
from rules.errors import RulesError as RulesError
from rules.errors import check_options as check_options

if TYPE_CHECKING:
    from rules.declare import GameInfo

JSON = dict[str, Any]
T = TypeVar("T")


class Rng(msgspec.Struct, frozen=True):
    """A seeded random stream whose whole state is two integers.

    Each draw builds a ``random.Random`` from ``(seed, n)`` and bumps ``n``: the
    state stays tiny, serialisable and independent of Python's global RNG.
    """

    seed: int
    n: int = 0

    def _next(self) -> tuple[random.Random, Rng]:
        return random.Random(f"{self.seed}:{self.n}"), Rng(self.seed, self.n + 1)

    def shuffle(self, items: Iterable[T]) -> tuple[tuple[T, ...], Rng]:
        """Return the items in a random order and the advanced stream."""
        r, nxt = self._next()
        out = list(items)
        r.shuffle(out)
        return tuple(out), nxt

    def randrange(self, stop: int) -> tuple[int, Rng]:
        """Return an integer in ``[0, stop)`` and the advanced stream."""
        if stop <= 0:
            raise ValueError("randrange needs a positive bound")
        r, nxt = self._next()
        return r.randrange(stop), nxt

    def choice(self, items: Sequence[T]) -> tuple[T, Rng]:
        """Return one item picked at random and the advanced stream."""
        i, nxt = self.randrange(len(items))
        return items[i], nxt

    def sample(self, items: Sequence[T], k: int) -> tuple[tuple[T, ...], Rng]:
        """Return ``k`` distinct items picked at random and the advanced stream."""
        r, nxt = self._next()
        return tuple(r.sample(list(items), k)), nxt


class Event(msgspec.Struct, frozen=True):
    """Something that happened, and who may learn of it.

    ``to`` is ``None`` for a public event, or the seats that may see it.
    """

    kind: str
    data: JSON = msgspec.field(default_factory=dict)
    to: tuple[int, ...] | None = None

    def visible_to(self, seat: int | None) -> bool:
        """Whether ``seat`` (``None``: the public table) may see this event."""
        return self.to is None or (seat is not None and seat in self.to)


class Action(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True):
    """Base of every action; subclasses set ``tag=`` to their JSON ``type``."""


S = TypeVar("S", bound="GameState")


class GameState(msgspec.Struct, frozen=True):
    """Fields every game state has; games subclass it and add their own."""

    players: int
    seed: int
    rng: Rng
    version: int = 0


class Game(Protocol, Generic[S]):
    """The interface of a game engine (one module per game exposes ``GAME``)."""

    info: GameInfo

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def min_players(self) -> int: ...

    @property
    def max_players(self) -> int: ...

    state_type: type[S]
    action_type: Any  # a Union of Action subclasses, for decoding

    def setup(self, players: int, options: Mapping[str, Any], seed: int) -> S: ...

    def legal_actions(self, state: S, seat: int | None) -> list[Action]: ...

    def apply(self, state: S, action: Action) -> tuple[S, list[Event]]: ...

    def view(self, state: S, seat: int | None) -> JSON: ...

    def public_view(self, state: S) -> JSON: ...

    def seat_view(self, state: S, seat: int, public: JSON) -> JSON: ...

    def is_over(self, state: S) -> bool: ...

    def scores(self, state: S) -> list[int]: ...

    def ranking(self, state: S) -> list[list[int]]: ...

    def pin_options(self, options: Mapping[str, Any]) -> dict[str, Any]: ...

    def context(self, public: JSON) -> JSON: ...


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class BaseGame(Generic[S]):
    """Convenience base: JSON helpers shared by every engine.

    Subclasses set ``info`` (the game's declaration, :class:`rules.declare.GameInfo`),
    ``state_type``, ``action_type`` and the game methods; id, name and player range come
    from ``info``.
    """

    info: ClassVar[GameInfo]
    state_type: type[S]
    action_type: Any

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def min_players(self) -> int:
        return self.info.min_players

    @property
    def max_players(self) -> int:
        return self.info.max_players

    def pin_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options with every data file they name read in (a deck, a card set).

        A game's record stores these, so replaying it never reads the file again: an
        owner may edit or delete their file after the game. Engines that read no
        data file return the options unchanged.
        """
        return dict(options)

    def view(self, state: S, seat: int | None) -> JSON:
        """What ``seat`` may know (its own part and the public table); ``None``: the
        public table. Engines write the two halves, :meth:`public_view` and
        :meth:`seat_view`, so a caller that needs every seat's view (the hub repainting
        its stations) builds the public part once and hands it to each seat's."""
        public = self.public_view(state)
        return public if seat is None else self.seat_view(state, seat, public)

    def public_view(self, state: S) -> JSON:
        """The public table: what every seat and the table display may see."""
        raise NotImplementedError

    def seat_view(self, state: S, seat: int, public: JSON) -> JSON:
        """``seat``'s view, given ``public``, this state's :meth:`public_view`: the seat
        view may hold that very object (views are read-only JSON: no caller changes one
        in place), so it must be this state's."""
        raise NotImplementedError

    def check_players(self, players: int) -> None:
        """Refuse a player count outside the game's range."""
        self.info.check_players(players)

    def context(self, public: JSON) -> JSON:
        """What every game's ``public`` says under the same keys, read from the public view
        (so it can never carry a secret): ``phase``, ``round`` and ``rounds`` (or None),
        ``to_play`` (the seat the table waits for, or None) and ``colours`` (the game's
        own seat colours, or None: the stations' colours)."""
        return {
            "phase": public.get("phase"),
            "round": _whole(public.get("round")),
            "rounds": _whole(public.get("rounds")),
            "to_play": _whole(public.get("to_play")),
            "colours": None,
        }


def encode(obj: Any) -> bytes:
    """Serialise a state, action or event to canonical JSON bytes."""
    return msgspec.json.encode(obj, order="deterministic")


def decode_state(game: Game[S], data: bytes | str) -> S:
    """Rebuild a state from :func:`encode` output."""
    return msgspec.json.decode(data, type=game.state_type)


def decode_action(game: Game[Any], data: bytes | str | JSON) -> Action:
    """Parse one action in the game's JSON notation, or raise IllegalAction."""
    try:
        if isinstance(data, dict):
            action: Action = msgspec.convert(data, type=game.action_type)
        else:
            action = msgspec.json.decode(data, type=game.action_type)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise IllegalAction("Bad action: {why}", why=_short(str(exc))) from exc
    return action


def action_to_json(action: Action) -> JSON:
    """The JSON notation of an action, as a dict."""
    out: JSON = msgspec.to_builtins(action)
    return out


def playthrough(
    game: Game[S],
    players: int,
    options: Mapping[str, Any],
    seed: int,
    actions: Iterable[Action],
) -> Iterator[tuple[S, list[Event]]]:
    """Each state of a game from its setup through its accepted actions, with the events
    the action that led to it made (none for the setup)."""
    state = game.setup(players, options, seed)
    yield state, []
    for action in actions:
        state, events = game.apply(state, action)
        yield state, events


def replay(
    game: Game[S],
    players: int,
    options: Mapping[str, Any],
    seed: int,
    actions: Iterable[Action],
) -> S:
    """Rebuild a game from its setup and its accepted actions."""
    *_, (state, _events) = playthrough(game, players, options, seed, actions)
    return state


def shared_ranking(scores: Sequence[int], tiebreak: Sequence[int] | None = None) -> list[list[int]]:
    """Group seats by (score, tiebreak), best first; equal groups share a place."""
    keys = [(scores[s], tiebreak[s] if tiebreak is not None else 0) for s in range(len(scores))]
    groups: dict[tuple[int, int], list[int]] = {}
    for seat, key in enumerate(keys):
        groups.setdefault(key, []).append(seat)
    return [groups[k] for k in sorted(groups, reverse=True)]


def _short(text: str) -> str:
    room = MESSAGE_MAX - len("Bad action: ")
    return text if len(text) <= room else text[: room - 1] + "…"
