"""Where each item of the hub's mailbox goes, and what passing time redraws.

A message goes to its table's handler by topic (station inputs and statuses to
:mod:`~firmware.hub.inputs`, host commands to :mod:`~firmware.hub.hostcmd`, pairing to
:mod:`~firmware.hub.pairing`, the table's hub status to :mod:`~firmware.hub.ownership`);
a typed event (:mod:`~firmware.hub.events`) to the handler of its concern. Every one of
them runs inside a batch (see :mod:`firmware.hub.batches`); the tick runs after it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from firmware.hub import backup_ask, console, hostcmd, inputs, moves, ownership, pairing
from firmware.hub import panel as host_panel
from firmware.hub.actor import NOTE_SECONDS, page_turn
from firmware.hub.context import Batch, HubContext
from firmware.hub.events import ClaimDecided, Item, PanelPress, Synced, Tick, TimersDue
from firmware.link import protocol as proto
from firmware.link.mqtt import Message
from firmware.link.pairing import all_enrol_requests as enrol_requests
from firmware.link.pairing import parse_enrol_topic


def table_of(topic: str) -> str | None:
    """The table a topic belongs to (its second level: ``coffre/<table>/...``), if any."""
    root, _, rest = topic.partition("/")
    return rest.partition("/")[0] if root == proto.ROOT else None


def table_subscriptions(name: str) -> list[str]:
    """What the hub hears of a table it runs, on its shared connection."""
    t = proto.Topics(name)
    return [
        t.all_station_inputs,
        t.all_station_status,
        t.host_command,
        t.hub_status,
        enrol_requests(name),
    ]


class Dispatcher:
    """Hands the mailbox's items to the handlers. ``forget``: stop hearing a table this hub
    does not run (its name and subscriptions; see HubLinks.forget)."""

    def __init__(self, ctx: HubContext, forget: Callable[[str, list[str]], None]) -> None:
        self.ctx = ctx
        self.forget = forget
        #: Topics whose retained event this hub is clearing (their echo is no event).
        self.clearing: set[str] = set()

    def handle(self, batch: Batch, item: Item) -> None:
        """One item of a batch (a Tick or a Synced is the service's, outside the batch)."""
        ctx = self.ctx
        if isinstance(item, Message):
            self.message(batch, item)
        elif isinstance(item, TimersDue):
            moves.fire_timers(ctx, batch)
        elif isinstance(item, PanelPress):
            host_panel.pressed(ctx, batch, item.button)
        elif isinstance(item, ClaimDecided):
            ownership.claimed(ctx, item.verdict)
        elif isinstance(item, Tick | Synced):
            pass
        else:
            ownership.link_event(ctx, item)

    def message(self, batch: Batch, msg: Message) -> None:
        ctx = self.ctx
        # One dictionary look-up per message, whatever the number of tables.
        name = table_of(msg.topic)
        found = ctx.actors.get(name) if name is not None else None
        if found is None and name is not None and proto.NAME_RE.match(name):
            self.forget(name, table_subscriptions(name))
        if found is None or found.state != "live":
            return
        actor = found
        if msg.topic == actor.topics.hub_status:
            ownership.hub_status(ctx, actor, msg.payload, retained=msg.retain)
            return
        parsed = actor.topics.parse_station_topic(msg.topic)
        is_input = parsed is not None and parsed[1] == "input"
        is_event = msg.topic == actor.topics.host_command or is_input
        if is_event and msg.retain:
            # An event is never retained: one would replay at every (re)subscription.
            # Clear it (an empty retained message deletes it) and act on nothing.
            if msg.payload:
                self.clearing.add(msg.topic)
                ctx.out.send(actor, msg.topic, b"", retain=True)
            return
        if is_event and not msg.payload and msg.topic in self.clearing:
            self.clearing.discard(msg.topic)  # the echo of our own clearing
            return
        if is_event and ownership.hold(actor, msg):
            return  # a table being taken over: answered once its old owner is known gone
        if msg.topic == actor.topics.host_command:
            hostcmd.host_payload(ctx, batch, actor, msg.payload)
            return
        enrol = parse_enrol_topic(msg.topic)
        if enrol is not None:
            if enrol[2] == "request" and not msg.retain:
                pairing.request(ctx, actor, enrol[1], msg.payload)
            return
        if parsed is None:
            return
        station, leaf = parsed
        if leaf == "input":
            inputs.station_input(ctx, batch, actor, station, msg.payload)
        elif leaf == "status":
            inputs.station_status(ctx, actor, station, msg.payload)

    def tick(self) -> list[Item]:
        """While a countdown runs, screens that show it are refreshed as seconds pass; a
        finished note or a long host screen's next page redraws the hub display. Returns
        what a table taken over held, now to be answered."""
        ctx = self.ctx
        now = ctx.clock()
        released: list[Item] = []
        ctx.out.look_backup()
        backup_ask.tick(ctx, now)  # the host's backup made: its key on the glass
        for actor in ctx.live():
            if ctx.out.behind_backup(actor):  # a backup was made: every status says so
                ctx.out.all(actor)
        for actor in ctx.live():
            if not ownership.tick(ctx, actor, now):
                continue  # refused: the broker never showed this hub its claim
            released += ownership.release_due(actor, now)
            inputs.redraw_due(ctx, actor, now)  # what flapping station statuses changed
            pairing.tick(ctx, actor, now)
            console.tick(ctx, actor, now)
            if actor.timer_due is not None and actor.table is not None:
                # Only when the shown second changes: every input wakes this loop too.
                if math.ceil(max(0.0, actor.timer_due - now)) != actor.shown_left:
                    ctx.out.all(actor)
            elif (actor.message and now - actor.message_at > NOTE_SECONDS) or (
                actor.host_pages > 1 and now >= page_turn(actor.host_page_at)
            ):
                ctx.out.host(actor)  # a note ends, or the next page of a long screen
        return released
