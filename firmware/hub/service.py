"""The hub: the authority of every table it runs.

One thread processes everything in order (MQTT messages, panel presses,
timers), so each table behaves as an actor with a single mailbox. For each
station input: validate, translate through the game's table binding, check
against the rules, store, apply; then publish what changed and ack.

The mailbox is worked in batches: whatever is waiting in it (up to MAX_BATCH) is
handled in one store transaction, so one fsync pays for all of it. Only after that
commit are the screens published, the answers sent, and the messages acknowledged to
the broker (paho's manual acks), so a crash loses nothing that was answered and the
broker delivers again what was not. If the store fails, the batch is rolled back, the
tables it touched are rebuilt from the store, and every input that would have been
acked ok is answered "not saved" instead.

Nothing a station or the host sends can make the hub write more than one log line
per kind of trouble every LOG_EVERY seconds.

Here: the life cycle, dispatch, station inputs and host commands. A table's runtime
and timers are in :mod:`firmware.hub.actor`, what goes out in :mod:`firmware.hub.publish`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from device.panel import Panel
from firmware.hub.actor import NOTE_SECONDS, TableActor, next_wake, page_turn
from firmware.hub.bindings import binding_for, bound_games
from firmware.hub.cardsets import card_set_names, own_card_set
from firmware.hub.claim import (
    ECHO_SECONDS,
    HUB_KEEPALIVE,
    REPAINT_SECONDS,
    ClaimProbe,
    Verdict,
    new_claim,
    read_status,
)
from firmware.hub.config import TableConfig
from firmware.hub.hostmenu import HostMenu, SwitchTable
from firmware.hub.publish import Held, Publisher, link_screen
from firmware.hub.store import GameRecord, Store, StoreError
from firmware.hub.table import Seating, Table
from firmware.link import protocol as proto
from firmware.link.lang import N_, refusal, speaking
from firmware.link.mqtt import BrokerConfig, Client, LinkState, Message, Will
from hardware.keys import KeySet, load_keyset
from rules import get_game
from rules.core import IllegalAction, RulesError

log = logging.getLogger(__name__)

PANEL_TOPIC = "!panel"
CONNECTED_TOPIC = "!connected"
LINK_TOPIC = "!link"
#: The ownership probe decided a table (the payload: its name).
CLAIM_TOPIC = "!claim"
#: The broker refused one of a table's subscriptions (SUBACK 0x80).
DENIED_TOPIC = "!denied"
#: Stands in a batch for "fire the timers that are due".
TIMERS = Message("!timers", b"")
#: Most messages handled in one store transaction.
MAX_BATCH = 100
#: A transaction takes no more messages once its handling took this long (seconds): after
#: a disk stall, the oldest waiting inputs are answered first, not after the whole backlog.
BATCH_SECONDS = 0.01
#: One log line per kind of trouble at most this often (seconds).
LOG_EVERY = 10.0
#: The answer to an input the store could not keep (the station may send it again).
NOT_SAVED = N_("Hub disk error: tell the host")

_STORE_ERRORS = (sqlite3.Error, StoreError, OSError)


class HubRefused(ValueError):
    """The hub cannot start (a second hub on the store, a bad table); one line says why."""


class Throttle:
    """One log line per key every ``every`` seconds; the next one says how many were held."""

    def __init__(self, every: float = LOG_EVERY, clock: Callable[[], float] = time.monotonic):
        self.every = every
        self.clock = clock
        self._last: dict[Any, float] = {}
        self._held: dict[Any, int] = {}

    def allow(self, key: Any) -> int | None:
        """None: stay quiet; else the number of lines held back since the last one."""
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.every:
            self._held[key] = self._held.get(key, 0) + 1
            return None
        if len(self._last) > 1000:  # keys are few; never let them pile up
            self._last.clear()
            self._held.clear()
        self._last[key] = now
        return self._held.pop(key, 0)

    def warning(self, key: Any, text: str) -> None:
        held = self.allow(key)
        if held is not None:
            log.warning("%s%s", text, f" (+{held} more like it)" if held else "")


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
    ) -> None:
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
        # The tables the batch in hand changed (rebuilt if it cannot be committed).
        self._touched: dict[str, TableActor] = {}
        self._broken: BaseException | None = None
        self.panel = panel
        # Through self.clock, so a test that swaps the hub's clock swaps the publisher's too.
        self.out = Publisher(lambda: self.clock(), panel)
        self.actors: dict[str, TableActor] = {}
        games = bound_games()
        limits = {g: (get_game(g).min_players, get_game(g).max_players) for g in games}
        for cfg in tables:
            lacking = [c for c in cfg.colours or () if c not in self.keys.colours]
            if lacking:
                raise ValueError(f"table {cfg.name}: the key set has no {lacking[0]} keys")
            menu = HostMenu(
                games,
                max_players=len(cfg.stations),
                limits=limits,
                card_sets=card_set_names(cfg),
                language=cfg.language,
                tables=[t.name for t in tables],
                table=cfg.name,
            )
            self.actors[cfg.name] = TableActor(cfg, proto.Topics(cfg.name), menu)
        self.store = Store(store_path, exclusive=True, commit_delay=commit_delay_from_env())
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
        self._verdicts: dict[str, Verdict] = {}
        self._probe: ClaimProbe | None = None
        #: Why the hub has no table left to run (then ``on_give_up`` is called with it).
        self.gave_up: str | None = None
        self.on_give_up: Callable[[str], None] | None = None
        # One connection per table, so each table's hub/status has its own will ("lost"),
        # all feeding one mailbox: the hub handles every table's messages in order.
        self.inbox: queue.Queue[Message | None] = queue.Queue()
        for actor in self.actors.values():
            t = actor.topics
            name = actor.config.name
            actor.client = Client(
                self.broker,
                f"{client_id}-{name}-{identity.token}",
                [t.all_station_inputs, t.all_station_status, t.host_command, t.hub_status],
                will=Will(t.hub_status, proto.encode(proto.HubStatus("lost", claim=self.claim))),
                # A persistent session: inputs sent while the hub is down wait in the broker.
                clean_session=False,
                on_connected=lambda name=name: self._post(CONNECTED_TOPIC, name),  # type: ignore[misc]
                inbox=self.inbox,
                on_state=lambda _state, name=name: self._post(LINK_TOPIC, name),  # type: ignore[misc]
                manual_ack=True,  # acked to the broker after the commit, not on arrival
                on_subscribed=lambda _mid, refused, name=name: (  # type: ignore[misc]
                    self._post(DENIED_TOPIC, name) if refused else None
                ),
            )
        # One panel per hub: it drives one table at a time, the host switches (hostmenu).
        self.out.panel_actor = next(iter(self.actors.values()), None)
        if panel is not None:
            panel.on_button = lambda name: self.inbox.put(Message(PANEL_TOPIC, name.encode()))
        self._thread: threading.Thread | None = None
        self._clearing: set[str] = set()
        #: (table, station) -> the station's last announced state, to log changes only.
        self._station_states: dict[tuple[str, str], str] = {}
        for actor in self.actors.values():
            self._resume(actor)

    # --- life cycle ----------------------------------------------------------------

    @property
    def client(self) -> Client:
        """The first table's connection (the only one on a one-table hub)."""
        client = next(iter(self.actors.values())).client
        assert client is not None
        return client

    def clients(self) -> list[Client]:
        """The connections of the tables this hub runs (claimed, not refused)."""
        return [a.client for a in self.live() if a.client is not None]

    def live(self) -> list[TableActor]:
        return [a for a in self.actors.values() if a.state == "live"]

    def _post(self, topic: str, table: str) -> None:
        self.inbox.put(Message(topic, table.encode()))

    def start(self) -> None:
        """Start the hub's thread; each table connects once the probe finds it free."""
        self._thread = threading.Thread(target=self.run, name="hub", daemon=True)
        self._thread.start()
        self._probe = ClaimProbe(
            self.broker,
            list(self.actors),
            self.claim,
            self._decided,
            on_state=lambda _state: self._post(LINK_TOPIC, ""),
            take_over=self.take_over,
        )
        self._probe.start()

    def _decided(self, verdict: Verdict) -> None:
        """From the probe's thread: hand the verdict to the hub's."""
        self._verdicts[verdict.table] = verdict
        self._post(CLAIM_TOPIC, verdict.table)

    def stop(self) -> None:
        if self._probe is not None:
            self._probe.stop()
        for actor in self.live():
            if actor.client is None or not actor.client.connected.is_set():
                continue  # no broker: nobody to say goodbye to (the will says "lost")
            # Straight to the client: the hub thread may be holding a batch's messages.
            info = actor.client.publish(
                actor.topics.hub_status,
                proto.encode(proto.HubStatus(state="disconnected", claim=self.claim)),
                retain=True,
            )
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(2)
        for client in self.clients():
            client.stop()
        self.inbox.put(None)  # also when no table was left to run
        if self._thread:
            self._thread.join(5)
        self.out.close()
        self.store.close()

    def alive(self) -> bool:
        """Whether the hub's thread still runs (for systemd's watchdog)."""
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> None:
        """Process messages and timers until the client stops."""
        while True:
            timeout = next_wake(self.live(), self.clock())
            batch: list[Message] = []
            stop = False
            try:
                first = self.inbox.get(timeout=timeout)
            except queue.Empty:
                first = TIMERS
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
            if TIMERS not in batch:
                batch.append(TIMERS)
            self._process(batch)
            self._guarded(self._tick)
            if stop:
                return

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
                log.error("hub: %s failed: %s (+%d more)", name, _line(exc), held)

    # --- batches ---------------------------------------------------------------------

    def _dispatch(self, msg: Message) -> None:
        """Handle one message as a batch of its own."""
        self._process([msg])

    def _process(self, batch: list[Message]) -> None:
        """Handle a batch: one transaction, then publish, answer and ack to the broker."""
        while batch:
            batch = self._run_batch(batch)

    def _run_batch(self, batch: list[Message]) -> list[Message]:
        """Handle messages in one transaction; returns those left when the store broke."""
        self._touched, self._broken = {}, None
        self.out.hold()
        try:
            self.store.begin()
        except _STORE_ERRORS as exc:
            # Not even a transaction: each write tries (and fails, and answers) on its own.
            self._store_trouble(exc)
            for msg in batch:
                self._guarded(self._handle, msg)
            self._finish(batch)
            return []
        done = 0
        deadline = time.perf_counter() + BATCH_SECONDS
        try:
            for msg in batch:
                done += 1
                self._guarded(self._handle, msg)
                if self._broken is not None:
                    raise self._broken
                if time.perf_counter() > deadline:
                    break
            self.store.commit()
        except _STORE_ERRORS as exc:
            self.store.rollback()
            self._store_trouble(exc)
            self._undo_batch()
        except BaseException:
            self.store.rollback()
            self.out.release(paint=False)
            raise
        self._finish(batch[:done])
        return batch[done:]

    def _undo_batch(self) -> None:
        """The batch was rolled back: rebuild its tables from the store, take back its oks."""
        touched = set(self._touched)
        kept = []
        for item in self.out.release(paint=False):
            if isinstance(item.payload, proto.Ack):
                if item.payload.ok:
                    message = self._say(item.actor, NOT_SAVED)
                    item.payload = proto.Ack(item.payload.id, False, message)
                kept.append(item)
            elif item.actor.config.name not in touched:
                kept.append(item)
        self.out.held = kept
        for actor in self._touched.values():
            actor.table, actor.record, actor.timer_due = None, None, None
            actor.published.clear()  # what was held for it is dropped: send all again
            self._guarded(self._resume, actor)
            self.out.note(actor, NOT_SAVED)
            self._guarded(self.out.all, actor)

    def _finish(self, handled: list[Message]) -> None:
        """After the commit: what was held (screens, then answers, in order), then broker acks."""
        for item in self.out.release():
            self._guarded(self._send_held, item)
        for msg in handled:
            self._guarded(msg.done)
        self._touched = {}

    def _send_held(self, item: Held) -> None:
        client = item.actor.client
        if client is None or item.actor.state != "live":
            return  # the table was refused in this batch: nothing more goes out on it
        client.publish(item.topic, item.encoded(), retain=item.retain)

    def _store_trouble(self, exc: BaseException) -> None:
        self.throttle.warning(("store", type(exc)), f"hub: store failed: {_line(exc)}")

    def _resume(self, actor: TableActor) -> None:
        record = self.store.current_game(actor.config.name)
        if record is None:
            # A finished game stays on the screens (its ranking) until the next start.
            record = self.store.last_game(actor.config.name)
            if record is None or record.status != "over":
                return
        try:
            actor.table = self._new_table(actor, record)
        except RulesError as exc:
            log.error("cannot resume %s: %s", actor.config.name, exc)
            return
        actor.record = record
        actor.table.replay_events(self.store.events(record.table_id, record.game_no))
        log.info(
            "resumed %s game %d at v%d",
            actor.config.name,
            record.game_no,
            actor.table.state.version,
        )
        actor.arm_timer(self.clock())

    def _new_table(self, actor: TableActor, record: GameRecord) -> Table:
        seating = actor.config.seating()
        seating = Seating(record.seating, seating.colours[: len(record.seating)])
        binding = binding_for(record.game, reveal_delay=actor.config.reveal_delay)
        return Table(
            record.game, record.players, record.options, record.seed, seating, self.keys, binding
        )

    # --- dispatch ----------------------------------------------------------------------

    def _handle(self, msg: Message) -> None:
        if msg is TIMERS:
            self._timers()
            return
        if msg.topic == PANEL_TOPIC:
            self._panel(msg.payload.decode())
            return
        if msg.topic == CLAIM_TOPIC:
            self._claimed(self._verdicts.pop(msg.payload.decode()))
            return
        if msg.topic == LINK_TOPIC and not msg.payload:  # the probe's link
            if self.out.panel_actor is not None and self.out.panel_actor.state == "probing":
                self._link_changed(self.out.panel_actor)
            return
        if msg.topic.startswith("!"):
            actor = self.actors[msg.payload.decode()]
            if msg.topic == CONNECTED_TOPIC and actor.state == "probing":
                actor.state = "live"  # a client connects only once its table is claimed
            if actor.state != "live":
                return  # refused (its client's last words), or not claimed yet
            if msg.topic == LINK_TOPIC:
                self._link_changed(actor)
            elif msg.topic == DENIED_TOPIC:
                self._refuse(actor, Verdict(actor.config.name, denied=True))
            elif msg.topic == CONNECTED_TOPIC:
                actor.published.clear()
                # Its claim must come back: a broker whose ACL drops what this hub writes
                # shows it nothing (see _tick).
                if actor.client is not None and actor.client.connected.is_set():
                    actor.echo_due = self.clock() + ECHO_SECONDS
                self.out.all(actor, hub_ready=True)
            return
        # One dictionary look-up per message, whatever the number of tables (the table is
        # the topic's second level: coffre/<table>/...).
        root, _, rest = msg.topic.partition("/")
        found = self.actors.get(rest.partition("/")[0]) if root == proto.ROOT else None
        if found is None or found.state != "live":
            return
        actor = found
        if msg.topic == actor.topics.hub_status:
            self._hub_status(actor, msg.payload, retained=msg.retain)
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
        if msg.topic == actor.topics.host_command:
            self._host_payload(actor, msg.payload)
            return
        if parsed is None:
            return
        station, leaf = parsed
        if leaf == "input":
            self._station_input(actor, station, msg.payload)
        elif leaf == "status":
            self._station_status(actor, station, msg.payload)

    # --- ownership (see firmware.hub.claim) -------------------------------------------

    def _claimed(self, verdict: Verdict) -> None:
        """The probe decided a table: connect to it, or leave it alone."""
        actor = self.actors[verdict.table]
        if not verdict.free:
            self._refuse(actor, verdict)
            return
        actor.state = "live"
        actor.taken_from = verdict.taken_from
        assert actor.client is not None
        actor.client.start()

    def _hub_status(self, actor: TableActor, payload: bytes, *, retained: bool = False) -> None:
        """The table's hub status as the broker has it: ours, or another hub's claim."""
        if payload == actor.published.get(actor.topics.hub_status):
            actor.echo_due = None  # our own: the broker lets this hub on the table
            return
        status = read_status(payload)
        claim = status.claim if status is not None else None
        if claim is not None and claim.hub == self.claim.hub:
            if claim.run == self.claim.run:
                actor.echo_due = None  # an earlier status of ours
                return
        elif claim is not None and claim.same_run(actor.taken_from):
            if not retained and status is not None and status.state == "ready":
                # The hub this one was told to take the table over from is alive: it keeps it.
                self._refuse(actor, Verdict(actor.config.name, owner=claim, taken_from=claim))
                return
            # Else the stale copy this hub took the table over from, or that hub's goodbye.
        elif status is not None and status.state == "ready" and claim is not None:
            if claim.took == self.claim.run:
                why = "was told to take it over from this hub, which is alive"
            elif self.claim.beats(claim):  # two hubs claimed it at once: both decide alike
                why = "claimed it too (this hub's identity is the lower)"
            else:
                self._refuse(actor, Verdict(actor.config.name, owner=claim))
                return
            log.warning(
                "hub: table %s: hub %s on %s %s; this hub keeps it and sends the table's "
                "screens again",
                actor.config.name,
                claim.hub,
                claim.host,
                why,
            )
            actor.published.clear()
            actor.repaint_due = self.clock() + REPAINT_SECONDS
        # Another hub's goodbye, an old will of ours, a cleared status: ours stands.
        self.out.all(actor, hub_ready=True)

    def _refuse(self, actor: TableActor, verdict: Verdict) -> None:
        """Leave a table: nothing more is published on it, said in the log and on the panel."""
        if actor.state == "refused":
            return
        log.error("hub: %s", verdict.line())
        if actor.state == "live" and actor.client is not None:
            actor.client.leave()  # a clean DISCONNECT: no will overwrites the owner's claim
        actor.state, actor.refused = "refused", verdict
        actor.timer_due = actor.echo_due = actor.repaint_due = None
        panel = self.out.panel_actor
        if panel is not None and panel is not actor:
            self.out.note(panel, N_("Table {table} refused: see log"), {"table": verdict.table})
            self.out.host(panel)
        self.out.host(actor)
        if all(a.state == "refused" for a in self.actors.values()):
            lines = "; ".join(
                a.refused.line() for a in self.actors.values() if a.refused is not None
            )
            self.gave_up = f"hub: no table left to run: {lines}"
            if self.on_give_up is not None:
                self.on_give_up(self.gave_up)

    # --- the panel ---------------------------------------------------------------------

    def _panel(self, button: str) -> None:
        """A press on the panel: for the table it drives, or a switch to another table."""
        actor = self.out.panel_actor
        if actor is None:
            return
        if actor.state == "refused":  # nothing to drive there: any button moves on
            self._switch(actor, -1 if button in ("back", "prev") else 1)
            return
        result = actor.menu.press(button, playing=actor.playing, now=self.clock())
        if isinstance(result, SwitchTable):
            self._switch(actor, result.step)
            return
        if result is not None:
            self._host_command(actor, result)
        self.out.all(actor)  # the language may have changed: the idle stations too

    def _switch(self, actor: TableActor, step: int) -> None:
        """The panel drives the next (or previous) of this hub's tables."""
        names = list(self.actors)
        shown = self.actors[names[(names.index(actor.config.name) + step) % len(names)]]
        if not shown.playing:
            shown.menu.row = shown.menu.table_row  # another ok moves on again
        self.out.panel_actor = shown
        self.out.host(shown)

    def _link_changed(self, actor: TableActor) -> None:
        """The hub's own connection changed: a problem goes on the host's display at once
        (the client logs it); a good connection redraws the host screen on connect."""
        client = self._probe.client if self._probe and actor.state == "probing" else actor.client
        state = client.state if client is not None else LinkState("idle", "")
        if not state.ok:
            actor.echo_due = None  # no broker, no echo: asked again at the next connection
        if state.ok or state.state in ("idle", "stopped"):
            return
        if self.out.painter is not None and actor is self.out.panel_actor:
            self.out.painter.paint(*link_screen(actor, state, self.broker.host))

    # --- station inputs ----------------------------------------------------------------

    def _ack(self, actor: TableActor, station: str, ack: proto.Ack) -> None:
        """Answer an input (sent once the batch is committed)."""
        self.out.answer(actor, station, ack)

    def _bad_payload(self, actor: TableActor, source: str, exc: proto.ProtocolError) -> None:
        self.throttle.warning(
            ("bad", actor.config.name, source), f"hub: {actor.config.name}/{source}: {exc}"
        )

    @staticmethod
    def _say(actor: TableActor, msgid: str, params: dict[str, Any] | None = None) -> str:
        """A refusal or notice in the table's language."""
        with speaking(actor.language):
            return refusal(msgid, params)

    def _station_input(self, actor: TableActor, station: str, payload: bytes) -> None:
        try:
            inp = proto.decode_input(payload)
        except proto.ProtocolError as exc:
            self._bad_payload(actor, station, exc)
            self._ack(actor, station, proto.Ack(exc.id, False, str(exc)))
            return
        if station not in actor.config.stations:
            self._ack(actor, station, proto.Ack(inp.id, False, self._say(actor, "Unknown station")))
            return
        source_id = f"{actor.config.name}/{station}/{inp.id}"
        prior = self.store.answer(source_id)
        if prior is not None:
            # Delivered again (QoS 1, a resend): the same answer, and nothing applied twice.
            self._ack(actor, station, proto.Ack(inp.id, *prior))
            return
        table = actor.table
        try:
            if table is None or actor.record is None:
                raise IllegalAction("No game: ask the host")
            if station not in table.seating.stations[: table.players]:
                raise IllegalAction("Not in this game")
            seat = table.seating.stations.index(station)
            body = _after_game(table, seat, inp)
            if "ui" in body and table.ui_noop(body):
                self._ack(actor, station, proto.Ack(inp.id, True, ""))
                return  # a knob against its stop: nothing to store
            self._apply(actor, body, source_id)
        except IllegalAction as exc:
            # Remembered, so a late copy of this input gets this answer, not a new one;
            # answered even when the disk cannot remember it (in the table's language).
            message = self._say(actor, exc.msgid, exc.params)
            self._remember(actor, source_id, False, message)
            self._ack(actor, station, proto.Ack(inp.id, False, message))
            return
        except _STORE_ERRORS as exc:
            self._broken = exc
            self._ack(actor, station, proto.Ack(inp.id, False, NOT_SAVED))
            return
        except Exception as exc:
            # A bug, not the player's fault: say so, keep the table as it was.
            if self.throttle.allow(("input bug", type(exc))) is not None:
                log.exception("hub: input %s from %s failed", inp.id, station)
            message = self._say(actor, "Hub error: tell the host")
            self._ack(actor, station, proto.Ack(inp.id, False, message))
            return
        self._ack(actor, station, proto.Ack(inp.id, True, ""))

    def _remember(self, actor: TableActor, source_id: str, ok: bool, message: str) -> None:
        """Keep an answer that is not an event; a failing disk breaks the batch, not the answer."""
        game_no = actor.record.game_no if actor.record is not None else 0
        try:
            self.store.remember(source_id, ok, message, table_id=actor.config.name, game_no=game_no)
        except _STORE_ERRORS as exc:
            self._broken = exc

    def _apply(self, actor: TableActor, body: dict[str, Any], source_id: str | None) -> None:
        """Check, commit, apply, publish. Raises IllegalAction and changes nothing."""
        table, record = actor.table, actor.record
        assert table is not None and record is not None
        checked = table.check(body)
        if not self.store.append(record.table_id, record.game_no, body, source_id):
            return  # a duplicate that raced past answer(): already applied
        self._touched[actor.config.name] = actor
        was_over = table.over
        table.commit(body, checked)
        actor.message = ""  # a note about the last host command is stale once the game moves
        if table.over and not was_over:
            self.store.set_status(record.table_id, record.game_no, "over")
            log.info("%s: game %d (%s) is over", actor.config.name, record.game_no, record.game)
        try:
            actor.arm_timer(self.clock())
            self.out.all(actor)
        except Exception:
            # Stored: the move counts and is acked; screens catch up on the next publish.
            log.exception("hub: publishing after %s failed", source_id or "an event")

    def _station_status(self, actor: TableActor, station: str, payload: bytes) -> None:
        try:
            status = proto.decode_status(payload)
        except proto.ProtocolError as exc:
            self._bad_payload(actor, f"{station}/status", exc)
            return
        key = (actor.config.name, station)
        if self._station_states.get(key) != status.state:
            self._station_states[key] = status.state
            level = logging.WARNING if status.state == "lost" else logging.INFO
            log.log(level, "%s: station %s is %s", actor.config.name, station, status.state)
        if status.state == "online":
            actor.offline.discard(station)
            # Rebirth: make sure the station has its screen, even if retained ones were lost.
            actor.published.pop(actor.topics.station(station, "screen"), None)
            self.out.all(actor)
        else:
            actor.offline.add(station)
            self.out.host(actor)

    # --- host ----------------------------------------------------------------------------

    def _host_payload(self, actor: TableActor, payload: bytes) -> None:
        try:
            cmd = proto.decode_host_command(payload)
        except proto.ProtocolError as exc:
            self._bad_payload(actor, "host", exc)
            self.out.note(actor, str(exc))
            if exc.id is not None:
                self.out.answer(actor, None, proto.Ack(exc.id, False, str(exc)))
            self.out.host(actor)
            return
        self._host_command(actor, cmd)
        self.out.host(actor)

    def _host_command(self, actor: TableActor, cmd: proto.HostCommand) -> None:
        # Host ids live apart from station ids (a station may be called "host").
        source_id = f"{actor.config.name}!host/{cmd.id}"

        def answer(ok: bool, message: str) -> None:
            """Every command is answered on host/ack (the command line waits)."""
            self.out.answer(actor, None, proto.Ack(cmd.id, ok, message))

        prior = self.store.answer(source_id)
        if prior is not None:
            answer(*prior)  # a resent command: the first answer again, nothing redone
            return
        try:
            if cmd.cmd == "start":
                self._start(actor, cmd)
                self._remember(actor, source_id, True, "Game started")
                self.out.note(actor, N_("Game started"))
                answer(True, "Game started")
                return
            table = actor.table
            if table is None or table.over:
                raise IllegalAction("No game running")
            if cmd.cmd == "next":
                body = table.binding.advance(table)
                if body is None:
                    raise IllegalAction("Nothing to skip now")
                self._apply(actor, body, source_id)
            elif cmd.cmd == "undo":
                self._apply(actor, {"undo": True}, source_id)
            elif cmd.cmd == "abort":
                assert actor.record is not None
                self.store.set_status(actor.record.table_id, actor.record.game_no, "aborted")
                log.info("%s: game %d aborted by the host", actor.config.name, actor.record.game_no)
                self._touched[actor.config.name] = actor
                self._remember(actor, source_id, True, "")
                actor.table = None
                actor.record = None
                actor.timer_due = None
                self.out.all(actor)
            actor.message = ""
            answer(True, "")
        except IllegalAction as exc:
            self._remember(actor, source_id, False, exc.message)
            self.out.note(actor, exc.msgid, exc.params)
            answer(False, exc.message)
        except RulesError as exc:
            self._remember(actor, source_id, False, str(exc)[:63])
            self.out.note(actor, str(exc))
            answer(False, str(exc)[:63])
        except _STORE_ERRORS as exc:
            self._broken = exc
            self.out.note(actor, NOT_SAVED)
            answer(False, NOT_SAVED)
        except Exception:
            log.exception("hub: host command %s failed", cmd.cmd)
            self.out.note(actor, N_("Hub error: see its log"))
            answer(False, "Hub error: see its log")

    def _start(self, actor: TableActor, cmd: proto.HostCommand) -> None:
        game = cmd.game or actor.menu.games[actor.menu.game]
        players = cmd.players or actor.menu.players
        if game not in bound_games():
            raise IllegalAction("No table binding for {game}", game=game)
        if players > len(actor.config.stations):
            raise IllegalAction("Only {n} stations here", n=len(actor.config.stations))
        seed = cmd.seed if cmd.seed is not None else actor.config.seed
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "big") >> 1  # 63 bits: no brute force
        stations = actor.config.stations[:players]
        # The record keeps the data files' content (a deck, a card set): a restarted hub
        # replays the game from it even if the owner's file changed or is gone.
        options = get_game(game).pin_options(own_card_set(actor.config, game, cmd.options))
        # Validate by setting up before anything is stored.
        get_game(game).setup(players, options, seed)
        record = self.store.new_game(actor.config.name, game, players, options, seed, stations)
        self._touched[actor.config.name] = actor
        actor.record = record
        actor.table = self._new_table(actor, record)
        actor.timer_due = None
        log.info(
            "%s: game %d (%s) started for %d players",
            actor.config.name,
            record.game_no,
            game,
            players,
        )
        self.out.all(actor)

    # --- timers ------------------------------------------------------------------------

    def _tick(self) -> None:
        """While a countdown runs, screens that show it are refreshed as seconds pass; a
        finished note or a long host screen's next page redraws the hub display."""
        now = self.clock()
        for actor in self.live():
            if actor.echo_due is not None and now >= actor.echo_due:
                self._refuse(actor, Verdict(actor.config.name, denied=True))
                continue
            if actor.repaint_due is not None and now >= actor.repaint_due:
                actor.repaint_due = None
                actor.published.clear()
                self.out.all(actor, hub_ready=True)
            if actor.timer_due is not None and actor.table is not None:
                # Only when the shown second changes: every input wakes this loop too.
                if math.ceil(max(0.0, actor.timer_due - now)) != actor.shown_left:
                    self.out.all(actor)
            elif (actor.message and now - actor.message_at > NOTE_SECONDS) or (
                actor.host_pages > 1 and now >= page_turn(actor.host_page_at)
            ):
                self.out.host(actor)  # a note ends, or the next page of a long screen

    def _fire_timers(self) -> None:
        """Fire the timers that are due, as a batch of their own."""
        self._process([TIMERS])

    def _timers(self) -> None:
        now = self.clock()
        for actor in self.live():
            if actor.timer_due is None or actor.timer_due > now or actor.timer_body is None:
                continue
            body = actor.timer_body
            actor.timer_due = None
            try:
                self._apply(actor, body, None)
            except _STORE_ERRORS as exc:
                self._broken = exc
                actor.arm_timer(self.clock())  # try again when it is due again
            except Exception:
                actor.arm_timer(self.clock())
                raise


def _after_game(table: Table, seat: int, inp: proto.Input) -> dict[str, Any]:
    """The event a station's input means; once the game is over, only a knob that scrolls
    the final ranking still means one (anything else: "The game is over")."""
    if not table.over:
        return table.binding.translate(table, seat, inp)
    try:
        body = table.binding.translate(table, seat, inp)
    except IllegalAction:
        body = {}
    if "ui" not in body:
        raise IllegalAction("The game is over")
    return body


def _line(exc: BaseException) -> str:
    """An exception as one short line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


def commit_delay_from_env() -> Callable[[], float] | None:
    """A simulated slow disk for benchmarks: ``COFFRE_SIMULATE_DISK=commit_ms,stall_ms,every_s``.

    Each commit waits ``commit_ms``; the first commit after every ``every_s`` seconds waits
    ``stall_ms`` more (the stalls of an SD card). Not for real tables.
    """
    spec = os.environ.get("COFFRE_SIMULATE_DISK")
    if not spec:
        return None
    parts = [float(x) for x in spec.split(",")]
    commit_ms, stall_ms, every_s = [*parts, 0.0, 0.0][:3]
    next_stall = [time.monotonic() + every_s]

    def delay() -> float:
        now = time.monotonic()
        if every_s > 0 and now >= next_stall[0]:
            next_stall[0] = now + every_s
            return (commit_ms + stall_ms) / 1000
        return commit_ms / 1000

    return delay
