"""One table's game as the hub holds it: engine state, binding state, event log.

A table event (what the store keeps) is a small JSON object:
- ``{"rules": <action>}`` an engine action in the game's JSON notation;
- ``{"ui": {...}}`` a change of the binding's own state (a knob cursor);
- ``{"undo": true}`` take back the last engine action.
Replaying the events of a game rebuilds the table exactly; that is how a
restarted hub resumes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from firmware.link.lang import colour, current, short_colours
from firmware.link.protocol import Input, Screen
from hardware.keys import Key, KeySet
from rules import get_game
from rules.core import (
    Action,
    Event,
    Game,
    IllegalAction,
    action_to_json,
    decode_action,
    playthrough,
)

#: How many public events ``public`` carries for the table display's feed.
FEED_SIZE = 24

T = TypeVar("T")


class Binding(Protocol):
    """How one game meets the physical table: inputs to events, state to screens."""

    def translate(self, table: Table, seat: int, inp: Input) -> dict[str, Any]:
        """The table event an input means, or IllegalAction with a readable message."""
        ...

    def apply_ui(self, table: Table, ui: dict[str, Any]) -> None:
        """Apply a ``ui`` event to ``table.ui``."""
        ...

    def station_screen(self, table: Table, seat: int) -> Screen:
        """What a seat's station shows (rev is filled by the hub)."""
        ...

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        """Title and lines for the hub display during the game."""
        ...

    def advance(self, table: Table) -> dict[str, Any] | None:
        """The event the host's "next" means now, if any."""
        ...

    def timer(self, table: Table) -> tuple[float, dict[str, Any]] | None:
        """An event the table makes by itself after a delay (seconds), if any."""
        ...


@dataclass
class Seating:
    """Which station sits at which seat, and the seat's colour."""

    stations: list[str]
    colours: list[str]

    def seat_of_station(self, station: str) -> int | None:
        return self.stations.index(station) if station in self.stations else None

    def seat_of_colour(self, colour: str | None) -> int | None:
        return self.colours.index(colour) if colour in self.colours else None

    def name(self, seat: int) -> str:
        """The seat's colour in the table's language ("Red", "Rouge")."""
        return colour(self.colours[seat])

    def short(self, seat: int) -> str:
        """The seat in three letters for lists, none alike ("Blu", "Blk"; "Mae", "Mac"
        for Marie and Marc)."""
        return short_colours(self.colours)[seat]


@dataclass
class Table:
    """A game in progress at one table."""

    game_id: str
    players: int
    options: dict[str, Any]
    seed: int
    seating: Seating
    keys: KeySet
    binding: Binding
    settings: dict[str, Any] = field(default_factory=dict)
    engine: Game[Any] = field(init=False)
    state: Any = field(init=False)
    actions: list[Action] = field(default_factory=list)
    ui: dict[str, Any] = field(default_factory=dict)
    events: int = 0
    #: Seconds left on the binding's running timer (a countdown), set by the hub.
    timer_left: float | None = None
    #: The public events of the last engine action: what every station may say just
    #: happened (a safe opened, a program was played). Never a seat's private event.
    news: list[Event] = field(default_factory=list)
    #: The table display's feed: the last public events of the game (kind, data and the
    #: version they led to), oldest first. Only events the engine marks public (``to`` is
    #: None) — what every station may already say — and rebuilt by replay after an undo.
    feed: list[dict[str, Any]] = field(default_factory=list)
    _views: dict[int | None, dict[str, Any]] = field(default_factory=dict)
    _derived: dict[Hashable, Any] = field(default_factory=dict)  # see per_state
    _views_of: Any = None  # the state the cached views (and derived values) are of

    def __post_init__(self) -> None:
        self.engine = get_game(self.game_id)
        self.state = self.engine.setup(self.players, self.options, self.seed)

    # --- events ----------------------------------------------------------------

    def check(self, body: dict[str, Any]) -> tuple[Any, list[Event]]:
        """Validate an event against the current state without changing anything."""
        if "rules" in body:
            action = decode_action(self.engine, body["rules"])
            new_state, evs = self.engine.apply(self.state, action)
            return new_state, evs
        if "undo" in body:
            if not self.actions:
                raise IllegalAction("Nothing to undo")
            return None, []
        if "ui" in body:
            return None, []
        raise IllegalAction("Unknown event")

    def commit(self, body: dict[str, Any], checked: tuple[Any, list[Event]]) -> None:
        """Apply an event that :meth:`check` accepted (after the store committed it)."""
        self.events += 1
        new_state, evs = checked
        if "rules" in body:
            self.actions.append(decode_action(self.engine, body["rules"]))
            self.state = new_state
            self.news = [e for e in evs if e.to is None]
            self._tell(self.news)
        elif "undo" in body:
            self.actions.pop()
            self._replay_feed()
            self.ui.clear()
            self.news = []
        else:
            self.binding.apply_ui(self, body["ui"])

    def _tell(self, events: Sequence[Event]) -> None:
        version = self.state.version
        self.feed += [{"kind": e.kind, "data": e.data, "version": version} for e in events]
        del self.feed[:-FEED_SIZE]

    def _replay_feed(self) -> None:
        """Rebuild state and feed from the actions left (an undone move leaves the feed)."""
        self.feed = []
        steps = playthrough(self.engine, self.players, self.options, self.seed, self.actions)
        for self.state, evs in steps:
            self._tell([e for e in evs if e.to is None])

    def ui_noop(self, body: dict[str, Any]) -> bool:
        """Whether a ``ui`` event would leave the binding's state as it is."""
        before = dict(self.ui)
        self.binding.apply_ui(self, body["ui"])
        same = self.ui == before
        self.ui = before
        return same

    def replay_events(self, bodies: Sequence[dict[str, Any]]) -> None:
        """Rebuild from the store's events (skipping any the rules now refuse)."""
        for body in bodies:
            try:
                checked = self.check(body)
            except IllegalAction:
                continue
            self.commit(body, checked)

    # --- reading ---------------------------------------------------------------

    @property
    def over(self) -> bool:
        return bool(self.engine.is_over(self.state))

    def view(self, seat: int | None) -> dict[str, Any]:
        """The engine's view for a seat, computed once per state (screens ask often).

        The public view is built once per state too: each seat's view is made from it
        (``seat_view``) and holds that same object, so views are read-only here."""
        self._same_state()
        cached = self._views.get(seat)
        if cached is None:
            if seat is None:
                cached = self.engine.public_view(self.state)
            else:
                cached = self.engine.seat_view(self.state, seat, self.view(None))
            self._views[seat] = cached
        return cached

    def per_state(self, key: Hashable, build: Callable[[], T]) -> T:
        """``build()``, kept for this state and the language spoken now: for what a binding
        makes of the public view alone, the same on every station (the face-up cards'
        lines), so a repaint makes it once. ``build`` must read nothing else that changes
        (a seat's view, ``ui``, the timer); the value is shared, so keep it immutable."""
        self._same_state()
        slot = (key, current())
        if slot not in self._derived:
            self._derived[slot] = build()
        value: T = self._derived[slot]
        return value

    def _same_state(self) -> None:
        """Drop the cached views and derived values once the state moved on."""
        # Keyed on the state object (states are frozen: a move makes a new one); a knob turn
        # (a ui event) leaves the state, and so every view, as it was.
        if self._views_of is not self.state:
            self._views_of = self.state
            self._views.clear()
            self._derived.clear()

    def public(self) -> dict[str, Any]:
        """The ``public`` payload: the engine's public view plus seating, never a secret."""
        view = self.view(None)
        # Nothing leaves the hub but through a view: during the game the scores are what
        # the public view shows (Identiquest keeps them secret: null; Secret Identity shows
        # them per seat), and the engine's final scores only once the game is over.
        scores = self.engine.scores(self.state) if self.over else view.get("scores")
        # The same keys for every game (rules.core.BaseGame.context), so the table display
        # and the hub's own screens never ask which game it is.
        ctx = self.engine.context(view)
        colours = self._colours(ctx)
        info = self.engine.info
        phase = info.phase(str(ctx["phase"]))
        return {
            "game": self.game_id,
            "version": self.state.version,
            "seats": [
                {"seat": i, "station": s, "colour": colours[i]}
                for i, s in enumerate(self.seating.stations[: self.players])
            ],
            "phase": ctx["phase"],
            "round": ctx["round"],
            "rounds": ctx["rounds"],
            "to_play": None if self.over else ctx["to_play"],
            # What the table reads, as message ids (said in the table's language).
            "labels": {
                "game": info.name,
                "phase": phase.long if phase else None,
                "tie_break": info.tie_break,
                # How each of the game's ends and sides reads (its declaration's words).
                "outcomes": {key: o.long for key, o in info.outcomes.items()},
                "sides": {key: s.name for key, s in info.side_words.items()},
            },
            "scores": scores,
            "over": self.over,
            "ranking": self.engine.ranking(self.state) if self.over else None,
            "view": view,
            # What just happened, for the table display to narrate (public events only).
            "feed": list(self.feed),
            # A running countdown's whole seconds left: the table display ticks with it.
            "timer": None if self.timer_left is None else math.ceil(self.timer_left),
        }

    def _colours(self, ctx: dict[str, Any]) -> list[str]:
        """Each seat's colour: the game's own where it deals colours (Ultra Secret's
        agents, from the game's shared keys ``ctx``), else the station's."""
        own = ctx.get("colours")
        if isinstance(own, list) and len(own) >= self.players:
            return [str(c) for c in own[: self.players]]
        return self.seating.colours[: self.players]

    def key(self, uid: str | None) -> Key:
        """The key a tag is, or a readable refusal."""
        key = self.keys.lookup(uid or "")
        if key is None:
            raise IllegalAction("Unknown tag")
        return key


def rules_event(action: Action) -> dict[str, Any]:
    return {"rules": action_to_json(action)}
