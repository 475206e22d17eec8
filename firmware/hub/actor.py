"""A table's runtime on the hub, and its timers.

Each table is an actor: its topics, its game, what was last published, its one
pending timer (a countdown, a reveal delay) and the host's note. The hub's single
thread owns every actor; nothing here talks to the broker.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from firmware.hub.claim import Verdict
from firmware.hub.config import TableConfig
from firmware.hub.console_state import ConsoleRequests
from firmware.hub.hostmenu import HostMenu
from firmware.hub.pair_state import Guard, Pending
from firmware.hub.store import GameRecord
from firmware.hub.table import Table
from firmware.link import protocol as proto
from firmware.link.mqtt import Message

if TYPE_CHECKING:
    from firmware.hub.links import TableLink

#: A station whose status flaps redraws the screens at most this often (seconds; see
#: hub.inputs.redraw_due), after a first burst of STATUS_BURST.
STATUS_REDRAW = 1.0
STATUS_BURST = 3.0
#: How long a host note ("Game started", a refusal) stays on the hub display.
NOTE_SECONDS = 5.0


@dataclass
class TableActor:
    """A table's runtime: its topics, its game, what was last published."""

    config: TableConfig
    topics: proto.Topics
    menu: HostMenu
    table: Table | None = None
    record: GameRecord | None = None
    published: dict[str, bytes] = field(default_factory=dict)
    timer_due: float | None = None
    #: Pages of the host screen (a long final ranking) and when one was last shown.
    host_pages: int = 1
    host_page_at: float = 0.0
    timer_body: dict[str, Any] | None = None
    message: str = ""
    message_params: dict[str, Any] = field(default_factory=dict)
    message_at: float = 0.0
    #: Its link to the broker (firmware.hub.links), from the hub.
    client: TableLink | None = None
    offline: set[str] = field(default_factory=set)
    #: Each station's last announced state (online, lost...), to log changes only.
    station_states: dict[str, str] = field(default_factory=dict)
    #: Stations back online whose screens are sent again at the next status redraw.
    reborn: set[str] = field(default_factory=set)
    #: Station statuses not drawn yet: (station, "state") for a change, (station, "again").
    status_pending: set[tuple[str, str]] = field(default_factory=set)
    #: Per such key, the redraws it has left and when (a token bucket, see STATUS_REDRAW).
    status_tokens: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    #: The highest input sequence seen per station boot (``<table>/<station>/<boot>``).
    last_seq: dict[str, int] = field(default_factory=dict)
    #: Pairings in progress, by station (see firmware.hub.pairing).
    pairing: dict[str, Pending] = field(default_factory=dict)
    #: How often its seats may be asked for (cooldowns, a token bucket; firmware.hub.pairing).
    pair_guard: Guard | None = None
    #: A phone's request for the host's console, while it waits (firmware.hub.console_state).
    console: ConsoleRequests = field(default_factory=ConsoleRequests)
    #: A station's own one-line reason when its status says ``error`` (firmware.hub.health).
    reasons: dict[str, str] = field(default_factory=dict)
    #: When the host was asked to confirm a start with seats not online (health.may_start).
    start_asked: float | None = None
    #: The countdown second the screens were last drawn with.
    shown_left: int | None = None
    #: probing: not known to be this hub's yet (nothing goes out); live: this hub runs
    #: it; refused: another hub does, or the broker will not have this hub there.
    state: Literal["probing", "live", "refused"] = "probing"
    refused: Verdict | None = None
    #: The claim this hub took the table over from (``coffre hub --take-over``): its
    #: retained copy, left behind by a hub that is gone, no longer counts.
    taken_from: proto.Claim | None = None
    #: Taking the table over: until when this hub holds the table's inputs and commands
    #: unanswered (None: not yet connected), in case the old owner is alive after all; and
    #: what it holds (see ownership.hold).
    holding: bool = False
    hold_until: float | None = None
    held_inputs: list[Message] = field(default_factory=list)
    #: When the hub gives up waiting to see its own claim come back (see ownership.tick).
    echo_due: float | None = None
    #: When to send the whole table again after another hub claimed it and left: what it
    #: published before it saw this hub's claim may have landed after this hub's repaint.
    repaint_due: float | None = None
    #: When to look again for the sealed backup this table's host asked (firmware.hub.backup_ask).
    backup_due: float | None = None

    @property
    def language(self) -> str:
        """What this table speaks now (hub.toml's, or what the host chose and the hub kept)."""
        return self.menu.language

    @property
    def playing(self) -> bool:
        return self.table is not None and not self.table.over

    def take_status_token(self, key: tuple[str, str], now: float) -> bool:
        """Whether a station's status may be drawn now (STATUS_BURST at once, then one
        every STATUS_REDRAW seconds)."""
        tokens, at = self.status_tokens.get(key, (STATUS_BURST, now))
        tokens = min(STATUS_BURST, tokens + (now - at) / STATUS_REDRAW)
        ok = tokens >= 1
        self.status_tokens[key] = (tokens - 1 if ok else tokens, now)
        return ok

    def status_due(self) -> float | None:
        """When the first station status held back may be drawn."""
        dues = []
        for key in self.status_pending:
            tokens, at = self.status_tokens.get(key, (STATUS_BURST, 0.0))
            dues.append(at + max(0.0, 1 - tokens) * STATUS_REDRAW)
        return min(dues) if dues else None

    def arm_timer(self, now: float) -> None:
        """Ask the binding for its timer; one already running for the same event keeps going."""
        table = self.table
        nxt = table.binding.timer(table) if table is not None and not table.over else None
        if nxt is None:
            self.timer_due, self.timer_body = None, None
        elif self.timer_due is None or self.timer_body != nxt[1]:
            self.timer_due, self.timer_body = now + nxt[0], nxt[1]


#: Seconds a page of a paged host screen stays up (see firmware.hub.publish).
PAGE_SECONDS = 4.0


def page_turn(shown_at: float) -> float:
    """When the page shown at ``shown_at`` gives way to the next."""
    return (shown_at // PAGE_SECONDS + 1) * PAGE_SECONDS + 0.001


def next_wake(actors: Iterable[TableActor], now: float) -> float | None:
    """Seconds until the next timer, the next second of a countdown on screen, or a note's end."""
    dues = []
    for a in actors:
        if a.message:
            dues.append(a.message_at + NOTE_SECONDS + 0.001)
        if a.timer_due is not None:
            dues.append(a.timer_due)
            left = a.timer_due - now
            dues.append(now + (left - int(left)) + 0.001)  # the shown seconds change
        if a.host_pages > 1:
            dues.append(page_turn(a.host_page_at))
        if a.echo_due is not None:
            dues.append(a.echo_due)
        if a.repaint_due is not None:
            dues.append(a.repaint_due)
        if a.backup_due is not None:
            dues.append(a.backup_due)
        if a.holding and a.hold_until is not None:
            dues.append(a.hold_until)
        status = a.status_due()
        if status is not None:
            dues.append(status)
        dues.extend(p.expires for p in a.pairing.values())
    return max(0.0, min(dues) - now) if dues else None
