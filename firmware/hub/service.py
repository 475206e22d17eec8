"""The hub: the authority of every table it runs.

One thread processes everything in order (MQTT messages, panel presses, timers), so each
table behaves as an actor with a single mailbox. What lands there is an MQTT message or
one of the typed events of :mod:`firmware.hub.events`; :meth:`Hub.feed` is the public
door to it for tests and tools that drive a hub without its thread.

The mailbox is worked in batches: whatever is waiting in it (up to MAX_BATCH) is
handled in one store transaction, so one fsync pays for all of it. Only after that
commit is durable are the screens published, the answers sent, and the messages
acknowledged to the broker (paho's manual acks), so a crash loses nothing that was
answered and the broker delivers again what was not. If the store fails, the batch is
rolled back, the tables it touched are rebuilt from the store, and every input that
would have been acked ok is answered "not saved" instead.

The fsync is the writer thread's (:mod:`~firmware.hub.store_writer`): the hub's thread
commits a batch, keeps what it would send aside (in order, with whatever the hub sends
after it, a countdown's redraw included) and goes on with the next batch; when the
writer reports a sync (a :class:`~firmware.hub.events.Synced` in the mailbox), what the
synced batches held goes out. A stalled SD card delays answers, not the work on other
tables; a disk that refuses an fsync stops the hub (nothing after it is trusted; the
broker delivers again what was not acked). ``feed`` (tests, tools) syncs on the caller's
thread and sends before it returns, as before.

Here: the life cycle, the loop, batching and dispatch. The handlers, by concern: station
inputs in :mod:`~firmware.hub.inputs`, host commands in :mod:`~firmware.hub.hostcmd`,
table ownership in :mod:`~firmware.hub.ownership`, the panel in :mod:`~firmware.hub.panel`,
a game's store-then-apply path in :mod:`~firmware.hub.play`; a table's runtime and timers
in :mod:`~firmware.hub.actor`, what goes out in :mod:`~firmware.hub.publish`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from device.panel import Panel
from firmware.hub import hostcmd, inputs, ownership, pairing, play
from firmware.hub import panel as host_panel
from firmware.hub.actor import NOTE_SECONDS, TableActor, next_wake, page_turn
from firmware.hub.bindings import bound_games
from firmware.hub.cardsets import card_set_names
from firmware.hub.claim import HUB_KEEPALIVE, ClaimProbe, new_claim
from firmware.hub.config import TableConfig
from firmware.hub.events import (
    Batch,
    ClaimDecided,
    Item,
    LinkChanged,
    PanelPress,
    Synced,
    Tick,
    TimersDue,
)
from firmware.hub.hostmenu import HostMenu
from firmware.hub.inbox import FairInbox
from firmware.hub.links import HubLinks, TableLink
from firmware.hub.pairing import BrokerDoor
from firmware.hub.play import NOT_SAVED, STORE_ERRORS
from firmware.hub.publish import Held, Publisher
from firmware.hub.store import Store, StoreError, commit_delay_from_env
from firmware.hub.store_writer import StoreWriter
from firmware.hub.throttle import Throttle, line
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, Message, Will
from firmware.link.pairing import all_enrol_requests as enrol_requests
from firmware.link.pairing import parse_enrol_topic
from hardware.keys import KeySet, load_keyset

log = logging.getLogger(__name__)

#: How often, at least, the hub's loop asks every table when it is next due (seconds): a
#: net under :meth:`Hub._touched`, not the schedule (a batch of messages asks their own
#: tables at once).
WAKE_RECHECK = 1.0

#: Most messages handled in one store transaction.
MAX_BATCH = 100
#: A transaction takes no more messages once its handling took this long (seconds): after
#: a disk stall, the oldest waiting inputs are answered first, not after the whole backlog.
BATCH_SECONDS = 0.01


@dataclass
class Unsynced:
    """What the hub sends once the store is durable up to ``commit``, in order: the held
    screens and answers, then the broker's acks of the messages handled."""

    commit: int
    held: list[Held]
    messages: list[Message]


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


class DiskRefused(StoreError):
    """The disk refused to make the store durable (an fsync failed): the hub stops."""


class HubRefused(ValueError):
    """The hub cannot start (a second hub on the store, a bad table); one line says why."""


class Hub:
    """Runs tables on one broker connection; call ``start()`` then ``stop()``."""

    def __init__(
        self,
        broker: BrokerConfig,
        tables: list[TableConfig],
        store_path: str | Path,
        *,
        keys: KeySet | None = None,
        panel: Panel | None = None,
        client_id: str = "coffre-hub",
        clock: Callable[[], float] = time.monotonic,
        take_over: Collection[str] = (),
        door: BrokerDoor | None = None,
    ) -> None:
        """``door``: the broker's users, for stations that pair (None: this hub cannot
        pair; a station that asks is told so)."""
        self.pairing = door
        unknown = sorted(set(take_over) - {t.name for t in tables})
        if unknown:
            raise HubRefused(f"hub: --take-over {unknown[0]}: this hub has no such table")
        self.take_over = set(take_over)
        try:
            self._setup(broker, tables, store_path, keys, panel, client_id, clock)
        except (StoreError, ValueError, sqlite3.Error, OSError) as exc:
            raise HubRefused(f"hub: cannot start: {exc}") from None

    def _setup(
        self,
        broker: BrokerConfig,
        tables: list[TableConfig],
        store_path: str | Path,
        keys: KeySet | None,
        panel: Panel | None,
        client_id: str,
        clock: Callable[[], float],
    ) -> None:
        self.keys = keys or load_keyset()
        self.clock = clock
        self.throttle = Throttle()
        self.panel = panel
        # Through self.clock, so a test that swaps the hub's clock swaps the publisher's too.
        self.out = Publisher(lambda: self.clock(), panel)
        self.actors: dict[str, TableActor] = {}
        games = bound_games()
        for cfg in tables:
            lacking = [c for c in cfg.colours or () if c not in self.keys.colours]
            if lacking:
                raise ValueError(f"table {cfg.name}: the key set has no {lacking[0]} keys")
            menu = HostMenu(
                games,
                max_players=len(cfg.stations),
                card_sets=card_set_names(cfg),
                language=cfg.language,
                tables=[t.name for t in tables],
                table=cfg.name,
            )
            self.actors[cfg.name] = TableActor(cfg, proto.Topics(cfg.name), menu)
        self.store = Store(
            store_path, exclusive=True, commit_delay=commit_delay_from_env(), deferred_sync=True
        )
        #: Committed batches whose sending waits for a sync, oldest first.
        self._unsynced: deque[Unsynced] = deque()
        #: The writer thread, from ``start()`` (without it, batches sync on the caller's thread).
        self.writer: StoreWriter | None = None
        # The hub's session is persistent, so its client id is fixed; it is also secret (a
        # random token kept in the store), so no other user can take the id over and kick
        # the hub off the broker. A copied store makes itself a new one (see Store.identity).
        identity = self.store.identity()
        if identity.copied_from is not None:
            log.warning(
                "hub: the store %s was %s: this hub takes a new broker identity (hub %s), "
                "so it never shares one with the hub it was copied from",
                store_path,
                identity.moved(Path(store_path)),
                identity.hub,
            )
        # A short keepalive: a hub that vanished has its will out within seconds, so a hub
        # waiting for its tables (claim.py) does not wait long.
        self.broker = dataclasses.replace(broker, keepalive=min(broker.keepalive, HUB_KEEPALIVE))
        #: This process's claim on its tables (in every hub status it publishes, and its will).
        self.claim = new_claim(identity.hub, self.broker.keepalive)
        self.out.claim = self.claim
        self.out.tables = len(self.actors)
        #: The ownership probe, from ``start()`` until ``stop()``.
        self.probe: ClaimProbe | None = None
        #: Why the hub has no table left to run (then ``on_give_up`` is called with it).
        self.gave_up: str | None = None
        self.on_give_up: Callable[[str], None] | None = None
        #: Why the hub's thread stopped on its own (a disk that refused an fsync); then
        #: ``on_failed`` is called with it, so the process ends instead of idling hubless.
        self.failed: str | None = None
        self.on_failed: Callable[[str], None] | None = None
        self.inbox = FairInbox()  # bounded, a share per sender
        # One connection for every table, and one will connection per table, so each
        # table's hub/status has its own will ("lost"); see firmware.hub.links.
        self.links = HubLinks(
            self.broker,
            f"{client_id}-{identity.token}",
            self.inbox,
            will_id=lambda name: f"{client_id}-{name}-{identity.token}",
            label=client_id,
        )
        self.inbox.on_flood = self.links.mute  # one sender must not hold up every table
        for actor in self.actors.values():
            actor.client = self.links.table(
                actor.config.name,
                table_subscriptions(actor.config.name),
                Will(
                    actor.topics.hub_status,
                    proto.encode(proto.HubStatus("lost", claim=self.claim)),
                ),
                actor.config.stations,  # a flooding station is cut out of them alone
            )
        # One panel per hub: it drives one table at a time, the host switches (hostmenu).
        self.out.panel_actor = next(iter(self.actors.values()), None)
        if panel is not None:
            panel.on_button = lambda name: self.inbox.put(PanelPress(name))
        self._thread: threading.Thread | None = None
        self._clearing: set[str] = set()
        for actor in self.actors.values():
            play.resume(self, actor)

    # --- life cycle ----------------------------------------------------------------

    @property
    def client(self) -> TableLink:
        """The first table's link (the only one on a one-table hub)."""
        client = next(iter(self.actors.values())).client
        assert client is not None
        return client

    def clients(self) -> list[Client]:
        """The hub's connections: the shared one and the will connections open."""
        return self.links.clients()

    def live(self) -> list[TableActor]:
        return [a for a in self.actors.values() if a.state == "live"]

    def start(self) -> None:
        """Start the hub's thread; each table connects once the probe finds it free."""
        self.writer = StoreWriter(self.store, lambda error: self.inbox.put(Synced(error)))
        self.writer.start()
        self._thread = threading.Thread(target=self.run, name="hub", daemon=True)
        self._thread.start()
        self.probe = ClaimProbe(
            self.broker,
            list(self.actors),
            self.claim,
            lambda verdict: self.inbox.put(ClaimDecided(verdict)),  # to the hub's thread
            on_state=lambda _state: self.inbox.put(LinkChanged(None)),
            take_over=self.take_over,
        )
        self.probe.start()

    def stop(self) -> None:
        if self.probe is not None:
            self.probe.stop()
        ownership.goodbye(self)
        self.links.stop()
        self.inbox.put(None)  # also when no table was left to run
        if self._thread:
            self._thread.join(5)
        if self.writer is not None:
            self.writer.stop()
        self.out.close()
        self.store.close()

    def alive(self) -> bool:
        """Whether the hub's thread still runs (for systemd's watchdog)."""
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> None:
        """Process messages and timers until the client stops."""
        due_at: float | None = None
        looked = -math.inf
        while True:
            now = self.clock()
            # When the next timer is due walks every table (~0.2 ms at 100 tables), more
            # than an input costs: every table is asked only after a batch that may have
            # touched any (see _touched) or at most WAKE_RECHECK later; a batch of
            # messages asks only their own tables, below.
            timeout: float | None
            if now - looked >= WAKE_RECHECK:
                timeout, looked = next_wake(self.live(), now), now
                due_at = None if timeout is None else now + timeout
            else:
                left = looked + WAKE_RECHECK - now
                timeout = left if due_at is None else min(max(0.0, due_at - now), left)
            # Timers and the tick run only when something is due: both walk every table too.
            batch: list[Item] = []
            stop = False
            first: Item | None
            try:
                first = self.inbox.get(timeout=timeout)
            except queue.Empty:
                first = TimersDue()
            while first is not None:
                batch.append(first)
                if len(batch) >= MAX_BATCH:
                    break
                try:
                    first = self.inbox.get_nowait()
                except queue.Empty:
                    break
            else:
                stop = True
            due = TimersDue() in batch or (due_at is not None and self.clock() >= due_at)
            if due and TimersDue() not in batch:
                batch.append(TimersDue())
            try:
                self._feed([*batch, Tick()] if due else batch, wait=False)
                touched = None if due else self._touched(batch)
                if touched is None:
                    looked = -math.inf  # ask every table
                elif touched:
                    after = self.clock()
                    wake = next_wake(touched, after)
                    if wake is not None and (due_at is None or after + wake < due_at):
                        due_at = after + wake  # an earlier due stays: at worst, a wake for nothing
            except DiskRefused as exc:
                # As PostgreSQL does since "fsyncgate" (2018): after a failed fsync the
                # page cache is not to be trusted. Stop unanswered: systemd's watchdog sees
                # the hub's thread gone and restarts it; it replays what the disk holds, and
                # the broker delivers again what was never acked.
                self.failed = f"hub: {exc}; stopping"
                log.critical("%s", self.failed)
                if self.on_failed is not None:
                    self.on_failed(self.failed)
                return
            if stop:
                return

    def _touched(self, batch: list[Item]) -> list[TableActor] | None:
        """The live tables whose timers a batch may have moved: a message moves its own
        table's only; anything else (a timer, the panel, a verdict, a link) may move any
        (None). What the writer's Synced sends moves none."""
        tables: dict[str, TableActor] = {}
        for item in batch:
            if isinstance(item, Synced):
                continue
            if not isinstance(item, Message):
                return None
            actor = self.actors.get(table_of(item.topic) or "")
            if actor is None:
                return None
            if actor.state == "live":
                tables[actor.config.name] = actor
        return list(tables.values())

    def feed(self, *items: Item) -> None:
        """Handle messages and events as the hub's thread handles what its mailbox holds.

        Everything but a :class:`~firmware.hub.events.Tick` is one batch: one store
        transaction, then what it publishes and answers, then the broker's acks. A Tick
        runs after it (it stores nothing). The hub's own loop feeds itself through here;
        so do tests and tools that run a hub without starting it. Only on the thread that
        runs the hub (the caller's when it is not started); other threads put their items
        in ``inbox``, as the connections and the panel do. What it handled is made durable
        (on the caller's thread) and sent before it returns.
        """
        self._feed(list(items), wait=True)

    def _feed(self, items: list[Item], *, wait: bool) -> None:
        """``wait``: sync and send before returning; else the writer's Synced sends."""
        synced = [item for item in items if isinstance(item, Synced)]
        # What is durable now goes out before this batch's work (the store's count of
        # synced commits says what; a failed sync never raised it).
        self._send_synced()
        batch: list[Item] = [item for item in items if not isinstance(item, Tick | Synced)]
        while batch:  # what one transaction had no time for (or came after it broke): the next
            batch = self._run_batch(batch)
        released: list[Item] = []
        if any(isinstance(item, Tick) for item in items):
            released = self._ticked()
        for item in synced:
            if item.error is not None:
                raise DiskRefused(f"the disk refused to keep the store: {line(item.error)}")
        if wait or self.writer is None:
            self.store.sync()
        self._send_synced()
        if self._unsynced and self.writer is not None:
            self.writer.wake()  # after sending: what is left needs a sync not yet made
        if released:
            self._feed(released, wait=wait)  # what a table taken over held, answered now

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        """Run one step; a bug or a failing disk must not take the tables down."""
        try:
            step(*args)
        except Exception as exc:
            name = getattr(step, "__name__", "a step")
            held = self.throttle.allow((name, type(exc)))
            if held == 0:
                log.exception("hub: %s failed", name)
            elif held is not None:
                log.error("hub: %s failed: %s (+%d more)", name, line(exc), held)

    # --- batches ---------------------------------------------------------------------

    def _run_batch(self, items: list[Item]) -> list[Item]:
        """Handle items in one transaction; returns those left when the store broke."""
        batch = Batch()
        self.out.hold()
        try:
            self.store.begin()
        except STORE_ERRORS as exc:
            # Not even a transaction: each write tries (and fails, and answers) on its own.
            self._store_trouble(exc)
            for item in items:
                self._guarded(self._handle, batch, item)
            self._finish(items)
            return []
        done = 0
        deadline = time.perf_counter() + BATCH_SECONDS
        try:
            for item in items:
                done += 1
                self._guarded(self._handle, batch, item)
                if batch.broken is not None:
                    raise batch.broken
                if time.perf_counter() > deadline:
                    break
                # What the writer made durable meanwhile goes out now, not after this batch
                # (after a stall, a batch may take its whole BATCH_SECONDS).
                self._send_synced()
            self.store.commit()
        except STORE_ERRORS as exc:
            self.store.rollback()
            self._store_trouble(exc)
            self._undo_batch(batch)
        except BaseException:
            self.store.rollback()
            self.out.release(paint=False)
            raise
        self._finish(items[:done])
        return items[done:]

    def _undo_batch(self, batch: Batch) -> None:
        """The batch was rolled back: rebuild its tables from the store, take back its oks."""
        kept = []
        for item in self.out.release(paint=False):
            if isinstance(item.payload, proto.Ack):
                if item.payload.ok:
                    message = inputs.say(item.actor, NOT_SAVED)
                    item.payload = proto.Ack(item.payload.id, False, message)
                kept.append(item)
            elif item.actor.config.name not in batch.touched:
                kept.append(item)
        self.out.held = kept
        for actor in batch.touched.values():
            actor.table, actor.record, actor.timer_due = None, None, None
            actor.published.clear()  # what was held for it is dropped: send all again
            self._guarded(play.resume, self, actor)
            self.out.note(actor, NOT_SAVED)
            self._guarded(self.out.all, actor)

    def _finish(self, handled: list[Item]) -> None:
        """After the commit: what was held (screens, then answers, in order), then broker
        acks, once the store is durable up to this commit (see :meth:`_send_synced`)."""
        held = self.out.release()
        waiting = {id(m) for a in self.actors.values() for m in a.held_inputs}
        messages = [  # not what a table being taken over holds (ownership.hold)
            item for item in handled if isinstance(item, Message) and id(item) not in waiting
        ]
        self._unsynced.append(Unsynced(self.store.written, held, messages))
        self._send_synced()  # at once if the batch wrote nothing and nothing waits before it

    def _send_synced(self) -> None:
        """Send, in order, what every batch the store has made durable held (in one burst:
        see :meth:`Client.burst <firmware.link.mqtt.Client.burst>`)."""
        if not self._unsynced or self._unsynced[0].commit > self.store.synced:
            return
        with self.links.data.burst():
            while self._unsynced and self._unsynced[0].commit <= self.store.synced:
                done = self._unsynced.popleft()
                for held in done.held:
                    self._guarded(self._send_held, held)
                for message in done.messages:
                    self._guarded(message.done)

    def _ticked(self) -> list[Item]:
        """Run the tick; what it sends waits behind the batches not yet durable (a screen
        it redraws may show what they did). Returns what a table taken over held."""
        if not self._unsynced:
            return self._guarded_tick()
        self.out.hold()
        try:
            released = self._guarded_tick()
        finally:
            held = self.out.release()
        self._unsynced[-1].held += held
        return released

    def _guarded_tick(self) -> list[Item]:
        released: list[Item] = []

        def tick() -> None:
            released.extend(self._tick())

        self._guarded(tick)
        return released

    def _send_held(self, item: Held) -> None:
        client = item.actor.client
        if client is None or item.actor.state != "live":
            return  # the table was refused in this batch: nothing more goes out on it
        client.publish(item.topic, item.encoded(), retain=item.retain, qos=item.qos)

    def _store_trouble(self, exc: BaseException) -> None:
        self.throttle.warning(("store", type(exc)), f"hub: store failed: {line(exc)}")

    # --- dispatch ----------------------------------------------------------------------

    def _handle(self, batch: Batch, item: Item) -> None:
        if isinstance(item, Message):
            self._message(batch, item)
        elif isinstance(item, TimersDue):
            play.fire_timers(self, batch)
        elif isinstance(item, PanelPress):
            host_panel.pressed(self, batch, item.button)
        elif isinstance(item, ClaimDecided):
            ownership.claimed(self, item.verdict)
        elif isinstance(item, Tick):
            self._feed(self._tick(), wait=False)
        elif isinstance(item, Synced):
            pass  # worked by _feed, outside the batch
        else:
            ownership.link_event(self, item)

    def _message(self, batch: Batch, msg: Message) -> None:
        # One dictionary look-up per message, whatever the number of tables.
        name = table_of(msg.topic)
        found = self.actors.get(name) if name is not None else None
        if found is None and name is not None and proto.NAME_RE.match(name):
            self.links.forget(name, table_subscriptions(name))
        if found is None or found.state != "live":
            return
        actor = found
        if msg.topic == actor.topics.hub_status:
            ownership.hub_status(self, actor, msg.payload, retained=msg.retain)
            return
        parsed = actor.topics.parse_station_topic(msg.topic)
        is_input = parsed is not None and parsed[1] == "input"
        is_event = msg.topic == actor.topics.host_command or is_input
        if is_event and msg.retain:
            # An event is never retained: one would replay at every (re)subscription.
            # Clear it (an empty retained message deletes it) and act on nothing.
            if msg.payload:
                self._clearing.add(msg.topic)
                self.out.send(actor, msg.topic, b"", retain=True)
            return
        if is_event and not msg.payload and msg.topic in self._clearing:
            self._clearing.discard(msg.topic)  # the echo of our own clearing
            return
        if is_event and ownership.hold(actor, msg):
            return  # a table being taken over: answered once its old owner is known gone
        if msg.topic == actor.topics.host_command:
            hostcmd.host_payload(self, batch, actor, msg.payload)
            return
        enrol = parse_enrol_topic(msg.topic)
        if enrol is not None:
            if enrol[2] == "request" and not msg.retain:
                pairing.request(self, actor, enrol[1], msg.payload)
            return
        if parsed is None:
            return
        station, leaf = parsed
        if leaf == "input":
            inputs.station_input(self, batch, actor, station, msg.payload)
        elif leaf == "status":
            inputs.station_status(self, actor, station, msg.payload)

    # --- time --------------------------------------------------------------------------

    def _tick(self) -> list[Item]:
        """While a countdown runs, screens that show it are refreshed as seconds pass; a
        finished note or a long host screen's next page redraws the hub display. Returns
        what a table taken over held, now to be answered."""
        now = self.clock()
        released: list[Item] = []
        for actor in self.live():
            if not ownership.tick(self, actor, now):
                continue  # refused: the broker never showed this hub its claim
            released += ownership.release_due(actor, now)
            inputs.redraw_due(self, actor, now)  # what flapping station statuses changed
            pairing.tick(self, actor, now)
            if actor.timer_due is not None and actor.table is not None:
                # Only when the shown second changes: every input wakes this loop too.
                if math.ceil(max(0.0, actor.timer_due - now)) != actor.shown_left:
                    self.out.all(actor)
            elif (actor.message and now - actor.message_at > NOTE_SECONDS) or (
                actor.host_pages > 1 and now >= page_turn(actor.host_page_at)
            ):
                self.out.host(actor)  # a note ends, or the next page of a long screen
        return released
