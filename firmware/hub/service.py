"""The hub: the authority of every table it runs; here its life cycle, its loop and its wiring.

One thread processes everything in order (MQTT messages, panel presses, timers), so each
table behaves as an actor with a single mailbox. What lands there is an MQTT message or
one of the typed events of :mod:`firmware.hub.events`; :meth:`Hub.submit` is the public
door to it for tests and tools that drive a hub without its thread.

The mailbox is worked in batches, each one store transaction whose screens, answers and
broker acks go out once the writer thread has made it durable (:mod:`firmware.hub.batches`).
A stalled SD card delays answers, not the work on other tables; a disk that refuses an
fsync stops the hub (nothing after it is trusted; the broker delivers again what was not
acked). ``submit`` (tests, tools) syncs on the caller's thread and sends before it returns.

The layers below, each importing only those under it: :mod:`~firmware.hub.dispatch` sends
each item to its handler (station inputs in :mod:`~firmware.hub.inputs`, host commands in
:mod:`~firmware.hub.hostcmd`, table ownership in :mod:`~firmware.hub.ownership`, the panel
in :mod:`~firmware.hub.panel`, pairing in :mod:`~firmware.hub.pairing`, a game's
store-then-apply path in :mod:`~firmware.hub.moves`); the handlers see the hub only through
the :class:`~firmware.hub.context.HubContext` built here; a table's runtime and timers are
:mod:`~firmware.hub.actor`'s, what goes out :mod:`~firmware.hub.publish`'s.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path

from device.panel import Panel
from firmware.hub import moves, ownership
from firmware.hub.actor import TableActor, next_wake
from firmware.hub.batches import Batches
from firmware.hub.bindings import bound_games
from firmware.hub.cardsets import card_set_names
from firmware.hub.claim import HUB_KEEPALIVE, ClaimProbe, new_claim
from firmware.hub.config import TableConfig
from firmware.hub.context import Batch, Door, HubContext
from firmware.hub.dispatch import Dispatcher, table_of, table_subscriptions
from firmware.hub.events import ClaimDecided, Item, LinkChanged, PanelPress, Synced, Tick, TimersDue
from firmware.hub.hostmenu import HostMenu
from firmware.hub.inbox import FairInbox
from firmware.hub.links import HubLinks, TableLink
from firmware.hub.publish import Publisher
from firmware.hub.store import Store, StoreError
from firmware.hub.store_writer import StoreWriter
from firmware.hub.throttle import Throttle, line
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, LinkState, Message, Will
from hardware.keys import KeySet, load_keyset

log = logging.getLogger(__name__)

#: How often, at least, the hub's loop asks every table when it is next due (seconds): a
#: net under :meth:`Hub._touched`, not the schedule (a batch of messages asks their own
#: tables at once).
WAKE_RECHECK = 1.0

#: Most messages handled in one store transaction (see firmware.hub.batches).
MAX_BATCH = 100


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
        door: Door | None = None,
        commit_delay: Callable[[], float] | None = None,
        backup_dir: Path | None = None,
    ) -> None:
        """``door``: the broker's users, for stations that pair (None: this hub cannot
        pair; a station that asks is told so). ``commit_delay``: the store's (a bench's)."""
        self.pairing = door
        unknown = sorted(set(take_over) - {t.name for t in tables})
        if unknown:
            raise HubRefused(f"hub: --take-over {unknown[0]}: this hub has no such table")
        self.take_over = set(take_over)
        try:
            self._setup(broker, tables, store_path, keys, panel, client_id, clock, commit_delay)
        except (StoreError, ValueError, sqlite3.Error, OSError) as exc:
            raise HubRefused(f"hub: cannot start: {exc}") from None
        #: Where root makes the backups the console asks for (firmware/hub/backup_ask.py).
        self.out.backups.folder = backup_dir

    def _setup(
        self,
        broker: BrokerConfig,
        tables: list[TableConfig],
        store_path: str | Path,
        keys: KeySet | None,
        panel: Panel | None,
        client_id: str,
        clock: Callable[[], float],
        commit_delay: Callable[[], float] | None,
    ) -> None:
        self.keys = keys or load_keyset()
        self.clock = clock
        self.throttle = Throttle()
        self.panel = panel
        # Through self.clock, so a test that swaps the hub's clock swaps the publisher's too.
        self.out = Publisher(lambda: self.clock(), panel)
        self.out.store = Path(store_path)  # its backup stamp is in every hub status
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
            store_path, exclusive=True, commit_delay=commit_delay, deferred_sync=True
        )
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
        #: What the handlers see of the hub (the callables read it as it is at each call).
        self.ctx = HubContext(
            self.actors,
            self.store,
            self.out,
            self.throttle,
            self.keys,
            self.broker,
            self.pairing,
            clock=lambda: self.clock(),
            claim=lambda: self.claim,
            wake=lambda: self.inbox.put(TimersDue()),
            probe_state=self._probe_state,
            give_up=self._give_up,
        )
        self.batches = Batches(self.ctx, lambda: self.links.data.burst())
        self.dispatch = Dispatcher(self.ctx, self.links.forget)
        for actor in self.actors.values():
            moves.resume(self.ctx, actor)

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
        return self.ctx.live()

    def _probe_state(self) -> LinkState | None:
        return self.probe.client.state if self.probe is not None else None

    def _give_up(self, why: str) -> None:
        self.gave_up = why
        if self.on_give_up is not None:
            self.on_give_up(why)

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
        ownership.goodbye(self.ctx)
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
                self._submit([*batch, Tick()] if due else batch, wait=False)
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

    def submit(self, *items: Item) -> None:
        """Handle messages and events as the hub's thread handles what its mailbox holds.

        Everything but a :class:`~firmware.hub.events.Tick` is one batch: one store
        transaction, then what it publishes and answers, then the broker's acks. A Tick
        runs after it (it stores nothing). The hub's own loop submits through here;
        so do tests and tools that run a hub without starting it. Only on the thread that
        runs the hub (the caller's when it is not started); other threads put their items
        in ``inbox``, as the connections and the panel do. What it handled is made durable
        (on the caller's thread) and sent before it returns.
        """
        self._submit(list(items), wait=True)

    def _submit(self, items: list[Item], *, wait: bool) -> None:
        """``wait``: sync and send before returning; else the writer's Synced sends."""
        batches = self.batches
        synced = [item for item in items if isinstance(item, Synced)]
        # What is durable now goes out before this batch's work (the store's count of
        # synced commits says what; a failed sync never raised it).
        batches.send_synced()
        batch: list[Item] = [item for item in items if not isinstance(item, Tick | Synced)]
        while batch:  # what one transaction had no time for (or came after it broke): the next
            batch = batches.run(batch, self._handle)
        released: list[Item] = []
        if any(isinstance(item, Tick) for item in items):
            released = batches.ticked(self._tick)
        for item in synced:
            if item.error is not None:
                raise DiskRefused(f"the disk refused to keep the store: {line(item.error)}")
        if wait or self.writer is None:
            self.store.sync()
        batches.send_synced()
        if batches.unsynced and self.writer is not None:
            self.writer.wake()  # after sending: what is left needs a sync not yet made
        if released:
            self._submit(released, wait=wait)  # what a table taken over held, answered now

    def _handle(self, batch: Batch, item: Item) -> None:
        """One item of a batch, as the batches run it (a Tick handed straight here runs now)."""
        if isinstance(item, Tick):
            self._submit(self._tick(), wait=False)
        else:
            self.dispatch.handle(batch, item)

    def _tick(self) -> list[Item]:
        """Time passed: what it redraws and gives up (see Dispatcher.tick)."""
        return self.dispatch.tick()
