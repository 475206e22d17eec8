"""The hub: the authority of every table it runs.

One thread processes everything in order (MQTT messages, panel presses,
timers), so each table behaves as an actor with a single mailbox. For each
station input: validate, translate through the game's table binding, check
against the rules, commit to the store, publish what changed, then ack.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from device.panel import Panel
from firmware import protocol as proto
from firmware.bindings import binding_for, bound_games
from firmware.hostmenu import HostMenu
from firmware.mqtt import BrokerConfig, Client, Message, Will
from firmware.render import render_lines
from firmware.store import GameRecord, Store
from firmware.table import Seating, Table
from hardware.keys import COLOURS, KeySet, load_keyset
from rules import get_game
from rules.core import IllegalAction, RulesError

log = logging.getLogger(__name__)

PANEL_TOPIC = "!panel"
CONNECTED_TOPIC = "!connected"
#: How long a host note ("Game started", a refusal) stays on the hub display.
NOTE_SECONDS = 5.0


@dataclass
class TableConfig:
    """One physical table: its name and its stations in seat order."""

    name: str
    stations: list[str]
    colours: list[str] | None = None
    #: Seconds between safe openings once voting is over (0: the host says next).
    reveal_delay: float = 0.0
    #: Fixed seed for every game (reproducible simulations and tests); None: random.
    seed: int | None = None

    def __post_init__(self) -> None:
        """Refuse at start what would break the table mid-game (a typo in hub.toml)."""
        proto.check_name(self.name, "table")
        for station in self.stations:
            proto.check_name(station, "station")
        if len(set(self.stations)) != len(self.stations):
            raise ValueError(f"table {self.name}: a station is listed twice")
        if self.colours is not None:
            if len(self.colours) < len(self.stations):
                raise ValueError(f"table {self.name}: fewer colours than stations")
            if len(set(self.colours)) != len(self.colours):
                raise ValueError(f"table {self.name}: a colour is listed twice")
        if self.seed is not None and (
            not isinstance(self.seed, int) or isinstance(self.seed, bool)
        ):
            raise ValueError(f"table {self.name}: seed must be a whole number")
        if self.seed is not None and not 0 <= self.seed < 2**63:
            raise ValueError(f"table {self.name}: seed must be 0 to 2**63-1")

    def seating(self) -> Seating:
        # Past the 8 colours of a box (Identités cryptées seats 16), seats go by number.
        default = [*COLOURS, *(f"seat{i + 1}" for i in range(len(COLOURS), len(self.stations)))]
        colours = self.colours or default[: len(self.stations)]
        return Seating(list(self.stations), colours)


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
    timer_body: dict[str, Any] | None = None
    message: str = ""
    message_at: float = 0.0
    client: Client | None = None
    offline: set[str] = field(default_factory=set)
    #: The countdown second the screens were last drawn with.
    shown_left: int | None = None


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
    ) -> None:
        self.keys = keys or load_keyset()
        self.clock = clock
        self.panel = panel
        self.actors: dict[str, TableActor] = {}
        games = bound_games()
        limits = {g: (get_game(g).min_players, get_game(g).max_players) for g in games}
        for cfg in tables:
            lacking = [c for c in cfg.colours or () if c not in self.keys.colours]
            if lacking:
                raise ValueError(f"table {cfg.name}: the key set has no {lacking[0]} keys")
            menu = HostMenu(games, max_players=len(cfg.stations), limits=limits)
            self.actors[cfg.name] = TableActor(cfg, proto.Topics(cfg.name), menu)
        self.store = Store(store_path, exclusive=True)
        # The hub's session is persistent, so its client id is fixed; it is also secret (a
        # random token kept in the store), so no other user can take the id over and kick
        # the hub off the broker.
        token = self.store.setting("client_token", os.urandom(8).hex())
        # One connection per table, so each table's hub/status has its own will ("lost"),
        # all feeding one mailbox: the hub handles every table's messages in order.
        self.inbox: queue.Queue[Message | None] = queue.Queue()
        for actor in self.actors.values():
            t = actor.topics
            actor.client = Client(
                broker,
                f"{client_id}-{actor.config.name}-{token}",
                [t.all_station_inputs, t.all_station_status, t.host_command],
                will=Will(t.hub_status, proto.encode(proto.HubStatus(state="lost"))),
                # A persistent session: inputs sent while the hub is down wait in the broker.
                clean_session=False,
                on_connected=lambda name=actor.config.name: self.inbox.put(  # type: ignore[misc]
                    Message(CONNECTED_TOPIC, name.encode())
                ),
                inbox=self.inbox,
            )
        if panel is not None:
            panel.on_button = lambda name: self.inbox.put(Message(PANEL_TOPIC, name.encode()))
        self._thread: threading.Thread | None = None
        self._clearing: set[str] = set()
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
        return [a.client for a in self.actors.values() if a.client is not None]

    def start(self) -> None:
        for client in self.clients():
            client.start()
        self._thread = threading.Thread(target=self.run, name="hub", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        for actor in self.actors.values():
            self._publish(
                actor,
                actor.topics.hub_status,
                proto.encode(proto.HubStatus(state="disconnected")),
                retain=True,
            ).wait_for_publish(2)
        for client in self.clients():
            client.stop()
        if self._thread:
            self._thread.join(5)
        self.store.close()

    def run(self) -> None:
        """Process messages and timers until the client stops."""
        while True:
            timeout = self._next_timer()
            try:
                msg = self.inbox.get(timeout=timeout)
            except queue.Empty:
                msg = Message("", b"")
            if msg is None:
                return
            self._guarded(self._dispatch, msg)
            self._guarded(self._fire_timers)
            self._guarded(self._tick)

    @staticmethod
    def _guarded(step: Callable[..., None], *args: Any) -> None:
        """Run one step; a bug or a failing disk must not take the tables down."""
        try:
            step(*args)
        except Exception:
            log.exception("hub: %s failed", getattr(step, "__name__", "a step"))

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
        self._arm_timer(actor)

    def _new_table(self, actor: TableActor, record: GameRecord) -> Table:
        seating = actor.config.seating()
        seating = Seating(record.seating, seating.colours[: len(record.seating)])
        binding = binding_for(record.game, reveal_delay=actor.config.reveal_delay)
        return Table(
            record.game, record.players, record.options, record.seed, seating, self.keys, binding
        )

    # --- dispatch ----------------------------------------------------------------------

    def _dispatch(self, msg: Message) -> None:
        if msg.topic == CONNECTED_TOPIC:
            actor = self.actors[msg.payload.decode()]
            actor.published.clear()
            self._publish_all(actor, hub_ready=True)
            return
        if msg.topic == PANEL_TOPIC:
            # The panel drives the first table (one panel per hub).
            actor = next(iter(self.actors.values()))
            cmd = actor.menu.press(
                msg.payload.decode(), playing=self._playing(actor), now=self.clock()
            )
            if cmd is not None:
                self._host_command(actor, cmd)
            self._publish_host(actor)
            return
        for actor in self.actors.values():
            parsed = actor.topics.parse_station_topic(msg.topic)
            is_input = parsed is not None and parsed[1] == "input"
            is_event = msg.topic == actor.topics.host_command or is_input
            if is_event and msg.retain:
                # An event is never retained: one would replay at every (re)subscription.
                # Clear it (an empty retained message deletes it) and act on nothing.
                if msg.payload:
                    self._clearing.add(msg.topic)
                    self._publish(actor, msg.topic, b"", retain=True)
                return
            if is_event and not msg.payload and msg.topic in self._clearing:
                self._clearing.discard(msg.topic)  # the echo of our own clearing
                return
            if msg.topic == actor.topics.host_command:
                self._host_payload(actor, msg.payload)
                return
            if parsed is None:
                continue
            station, leaf = parsed
            if leaf == "input":
                self._station_input(actor, station, msg.payload)
            elif leaf == "status":
                self._station_status(actor, station, msg.payload)
            return

    def _playing(self, actor: TableActor) -> bool:
        return actor.table is not None and not actor.table.over

    # --- station inputs ----------------------------------------------------------------

    def _ack(self, actor: TableActor, station: str, ack: proto.Ack) -> None:
        self._publish(actor, actor.topics.station(station, "ack"), proto.encode(ack))

    def _station_input(self, actor: TableActor, station: str, payload: bytes) -> None:
        try:
            inp = proto.decode_input(payload)
        except proto.ProtocolError as exc:
            self._ack(actor, station, proto.Ack(proto.salvage_id(payload), False, str(exc)))
            return
        if station not in actor.config.stations:
            self._ack(actor, station, proto.Ack(inp.id, False, "Unknown station"))
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
            if table.over:
                raise IllegalAction("The game is over")
            seat = table.seating.stations.index(station)
            body = table.binding.translate(table, seat, inp)
            if "ui" in body and table.ui_noop(body):
                self._ack(actor, station, proto.Ack(inp.id, True, ""))
                return  # a knob against its stop: nothing to store
            self._apply(actor, body, source_id)
        except IllegalAction as exc:
            # Remembered, so a late copy of this input gets this answer, not a new one.
            self.store.remember(source_id, False, exc.message)
            self._ack(actor, station, proto.Ack(inp.id, False, exc.message))
            return
        except Exception:
            # A bug, not the player's fault: say so, keep the table as it was.
            log.exception("hub: input %s from %s failed", inp.id, station)
            self._ack(actor, station, proto.Ack(inp.id, False, "Hub error: tell the host"))
            return
        self._ack(actor, station, proto.Ack(inp.id, True, ""))

    def _apply(self, actor: TableActor, body: dict[str, Any], source_id: str | None) -> None:
        """Check, commit, apply, publish. Raises IllegalAction and changes nothing."""
        table, record = actor.table, actor.record
        assert table is not None and record is not None
        checked = table.check(body)
        if not self.store.append(record.table_id, record.game_no, body, source_id):
            return  # a duplicate that raced past answer(): already applied
        table.commit(body, checked)
        actor.message = ""  # a note about the last host command is stale once the game moves
        try:
            if table.over:
                self.store.set_status(record.table_id, record.game_no, "over")
            self._arm_timer(actor)
            self._publish_all(actor)
        except Exception:
            # Committed: the move counts and is acked; screens catch up on the next publish.
            log.exception("hub: publishing after %s failed", source_id or "an event")

    def _station_status(self, actor: TableActor, station: str, payload: bytes) -> None:
        try:
            status = msgspec.json.decode(payload, type=proto.StationStatus)
        except msgspec.MsgspecError:
            return
        if status.state == "online":
            actor.offline.discard(station)
            # Rebirth: make sure the station has its screen, even if retained ones were lost.
            actor.published.pop(actor.topics.station(station, "screen"), None)
            self._publish_all(actor)
        else:
            actor.offline.add(station)
            self._publish_host(actor)

    # --- host ----------------------------------------------------------------------------

    def _host_payload(self, actor: TableActor, payload: bytes) -> None:
        try:
            cmd = proto.decode_host_command(payload)
        except proto.ProtocolError as exc:
            self._note(actor, str(exc))
            self._publish_host(actor)
            return
        self._host_command(actor, cmd)
        self._publish_host(actor)

    def _host_command(self, actor: TableActor, cmd: proto.HostCommand) -> None:
        # Host ids live apart from station ids (a station may be called "host").
        source_id = f"{actor.config.name}!host/{cmd.id}" if cmd.id else None
        if source_id and self.store.answer(source_id) is not None:
            return
        try:
            if cmd.cmd == "start":
                self._start(actor, cmd)
                if source_id:
                    self.store.remember(source_id, True, "")
                self._note(actor, "Game started")
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
                actor.table = None
                actor.record = None
                actor.timer_due = None
                if source_id:
                    self.store.remember(source_id, True, "")
                self._publish_all(actor)
            actor.message = ""
        except (IllegalAction, RulesError) as exc:
            if source_id:
                self.store.remember(source_id, False, str(exc)[:63])
            self._note(actor, str(exc))
        except Exception:
            log.exception("hub: host command %s failed", cmd.cmd)
            self._note(actor, "Hub error: see its log")

    def _start(self, actor: TableActor, cmd: proto.HostCommand) -> None:
        game = cmd.game or actor.menu.games[actor.menu.game]
        players = cmd.players or actor.menu.players
        if game not in bound_games():
            raise IllegalAction(f"No table binding for {game}")
        if players > len(actor.config.stations):
            raise IllegalAction(f"Only {len(actor.config.stations)} stations here")
        seed = cmd.seed if cmd.seed is not None else actor.config.seed
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "big") >> 1  # 63 bits: no brute force
        stations = actor.config.stations[:players]
        # Validate by setting up before anything is stored.
        get_game(game).setup(players, cmd.options, seed)
        record = self.store.new_game(
            actor.config.name, game, players, dict(cmd.options), seed, stations
        )
        actor.record = record
        actor.table = self._new_table(actor, record)
        actor.timer_due = None
        self._publish_all(actor)

    # --- timers ------------------------------------------------------------------------

    def _arm_timer(self, actor: TableActor) -> None:
        """Ask the binding for its timer; one already running for the same event keeps going."""
        table = actor.table
        nxt = table.binding.timer(table) if table is not None and not table.over else None
        if nxt is None:
            actor.timer_due, actor.timer_body = None, None
        elif actor.timer_due is None or actor.timer_body != nxt[1]:
            actor.timer_due, actor.timer_body = self.clock() + nxt[0], nxt[1]

    def _next_timer(self) -> float | None:
        """Seconds until the next timer, or the next second of a countdown on screen."""
        now = self.clock()
        dues = []
        for a in self.actors.values():
            if a.message:
                dues.append(a.message_at + NOTE_SECONDS + 0.001)
            if a.timer_due is not None:
                dues.append(a.timer_due)
                left = a.timer_due - now
                dues.append(now + (left - int(left)) + 0.001)  # the shown seconds change
        return max(0.0, min(dues) - now) if dues else None

    def _tick(self) -> None:
        """While a countdown runs, screens that show it are refreshed as seconds pass."""
        now = self.clock()
        for actor in self.actors.values():
            if actor.timer_due is not None and actor.table is not None:
                # Only when the shown second changes: every input wakes this loop too.
                if math.ceil(max(0.0, actor.timer_due - now)) != actor.shown_left:
                    self._publish_all(actor)
            elif actor.message and now - actor.message_at > NOTE_SECONDS:
                self._publish_host(actor)

    def _fire_timers(self) -> None:
        now = self.clock()
        for actor in self.actors.values():
            if actor.timer_due is None or actor.timer_due > now or actor.timer_body is None:
                continue
            body = actor.timer_body
            actor.timer_due = None
            try:
                self._apply(actor, body, None)
            except Exception:
                self._arm_timer(actor)
                raise

    # --- publishing ----------------------------------------------------------------------

    def _publish_all(self, actor: TableActor, *, hub_ready: bool = False) -> None:
        t = actor.topics
        table = actor.table
        rev = (actor.record.game_no * 1_000_000 + table.events) if table and actor.record else 0
        if table is not None:
            due = actor.timer_due
            table.timer_left = None if due is None else max(0.0, due - self.clock())
            actor.shown_left = None if table.timer_left is None else math.ceil(table.timer_left)
        for seat, station in enumerate(actor.config.stations):
            if table is not None and seat < table.players:
                screen = table.binding.station_screen(table, seat)
            else:
                screen = idle_screen(actor, station)
            # Compare without the revision: a station is sent a screen only when it changed.
            topic = t.station(station, "screen")
            content = proto.encode(screen)
            if actor.published.get(topic) != content:
                actor.published[topic] = content
                self._publish(
                    actor,
                    topic,
                    proto.encode(msgspec.structs.replace(screen, rev=rev)),
                    retain=True,
                )
        public = table.public() if table else {"game": None, "version": 0, "over": False}
        self._publish_retained(actor, t.public, proto.encode(public))
        view = table.view(None) if table else {}
        status = proto.HubStatus(
            state="ready",
            version=table.state.version if table else 0,
            game=table.game_id if table else None,
            phase=view.get("phase"),
        )
        self._publish_retained(actor, t.hub_status, proto.encode(status), force=hub_ready)
        self._publish_host(actor)

    def _publish(
        self, actor: TableActor, topic: str, payload: bytes, *, retain: bool = False
    ) -> Any:
        assert actor.client is not None
        return actor.client.publish(topic, payload, retain=retain)

    def _publish_retained(
        self, actor: TableActor, topic: str, payload: bytes, *, force: bool = False
    ) -> None:
        if not force and actor.published.get(topic) == payload:
            return
        actor.published[topic] = payload
        self._publish(actor, topic, payload, retain=True)

    def _note(self, actor: TableActor, text: str) -> None:
        """A short note on the hub display's last line, for NOTE_SECONDS."""
        actor.message, actor.message_at = text, self.clock()

    def _publish_host(self, actor: TableActor) -> None:
        now = self.clock()
        table = actor.table
        if table is not None:
            title, lines = table.binding.host_screen(table)
            if table.over:
                title = "Game over"
        else:
            title, lines = "coffre: new game", actor.menu.lines(now)
        if actor.message and now - actor.message_at > NOTE_SECONDS:
            actor.message = ""  # a note is news, not a fixture: it gives its line back
        note = actor.menu.prompt(now) or actor.message
        if note:
            title = note  # the title, so no seat's line on the track is ever hidden
        if actor.offline:
            title = "Offline: " + " ".join(sorted(actor.offline))
        payload = proto.encode({"title": title, "lines": lines})
        self._publish_retained(actor, actor.topics.host_screen, payload)
        if self.panel is not None and actor is next(iter(self.actors.values())):
            self.panel.display.show(render_lines(title, lines))


def idle_screen(actor: TableActor, station: str) -> proto.Screen:
    """What a station shows when it has no seat in a running game."""
    return proto.Screen(
        rev=0,
        title=f"coffre {actor.config.name}",
        lines=(f"Station {station}", "Waiting for the host"),
        led=(0, 0, 0),
    )
