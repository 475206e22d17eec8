"""A simulated table: hub and stations in this process, with mock hardware, on a broker.

:class:`SimTable` is what ``coffre sim``, the bots and the whole-table tests drive: it
starts a broker (:mod:`firmware.tools.brokers`), the hub (in a thread or as a
``coffre hub`` child process) and one station per seat, and offers the physical
gestures (lay a tag, turn, press, lift the flap). :class:`PublicWatcher` follows
``public``, ``hub/status`` and the host screen as anyone at the table could.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from device.panel import MockPanel
from firmware.hub.brokerconf import HOST_USER, HUB_USER
from firmware.hub.config import TableConfig
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client
from firmware.station.service import Station
from firmware.tools.brokers import TABLE, BrokerSetup, start_broker
from hardware.keys import KeySet, load_keyset

__all__ = ["TABLE", "PublicWatcher", "SimTable", "also_log", "station_names"]


def station_names(count: int) -> list[str]:
    return [f"p{i + 1}" for i in range(count)]


@dataclass
class SimTable:
    """Hub + stations (in this process) on a broker, for the simulator and tests."""

    players: int
    workdir: Path
    stations_count: int | None = None
    embedded: bool | None = None
    reveal_delay: float = 0.0
    device_backend: str = "mock"
    poll_interval: float = 0.02
    #: "thread": the hub runs in this process; "process": a ``coffre hub`` child process.
    hub_mode: str = "thread"
    seed: int | None = None
    #: What the table speaks (hub.toml's ``language``): stations, hub display, bots.
    language: str = "en"
    #: The table's directory of Identités cryptées card sets (hub.toml ``card_sets``).
    card_sets: Path | None = None
    broker: BrokerSetup = field(init=False)
    watch: PublicWatcher = field(init=False)
    hub_process: subprocess.Popen[bytes] | None = field(init=False, default=None)
    hub: Hub | None = field(init=False, default=None)
    panel: MockPanel = field(init=False)
    stations: dict[str, Station] = field(init=False, default_factory=dict)
    devices: dict[str, StationDevices] = field(init=False, default_factory=dict)
    emulated: dict[str, Any] = field(init=False, default_factory=dict)
    keys: KeySet = field(init=False)
    #: The text of every frame the mock glasses drew, in order (``coffre sim``'s screens.jsonl).
    screen_log: list[dict[str, Any]] = field(init=False, default_factory=list)
    _started: float = field(init=False, default=0.0)
    #: Called first by :meth:`stop` (e.g. a table display watching this table).
    on_stop: list[Callable[[], None]] = field(init=False, default_factory=list)
    #: Host command ids: new at every sim, so a store the sim reuses never mixes them up.
    _boot: str = field(init=False, default_factory=lambda: os.urandom(4).hex())
    _host_ids: itertools.count[int] = field(init=False, default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.names = station_names(self.stations_count or self.players)
        self.keys = load_keyset()
        self.panel = MockPanel()

    @property
    def table_config(self) -> TableConfig:
        return TableConfig(
            TABLE,
            self.names,
            reveal_delay=self.reveal_delay,
            seed=self.seed,
            card_sets=self.card_sets,
            language=self.language,
        )

    @property
    def store_path(self) -> Path:
        return self.workdir / "hub.sqlite3"

    def start(self) -> None:
        self._started = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.broker = start_broker(self.workdir, self.names, embedded=self.embedded)
        watcher_user = HOST_USER if self.broker.access else "watcher"
        self.watch = PublicWatcher(self.broker.config(watcher_user))
        self.watch.start()
        self.start_hub()
        for name in self.names:
            self.start_station(name)
        for name in self.names:
            if not self.stations[name].wait_screen(15):
                raise TimeoutError(f"station {name} got no screen from the hub")
        # A hub that watches its seats (any hub started from a config file) refuses a
        # start until it has heard every station: under load that comes after the screens.
        self.watch.wait_seats_heard(self.names)

    def start_hub(self) -> None:
        """Start the hub (in a thread or as a child process) and wait until it is ready."""
        self.watch.hub_status = {}
        if self.hub_mode == "process":
            config = self.workdir / "hub.toml"
            config.write_text(self.hub_toml())
            log_file = (self.workdir / "hub.log").open("ab")
            self.hub_process = subprocess.Popen(
                [sys.executable, "-m", "firmware.cli", "hub", "--config", str(config)],
                stdout=log_file,
                stderr=log_file,
            )
        else:
            self.hub = Hub(
                self.broker.config(HUB_USER),
                [self.table_config],
                self.store_path,
                keys=self.keys,
                panel=self.panel,
            )
            self.hub.start()
            display = self.panel.display
            if isinstance(display, MockDisplay):
                also_log(display, lambda _frame: self._log_hub())
        self.watch.wait_hub_ready()

    def hub_toml(self) -> str:
        """The hub's config file, as an installer would write it."""
        broker = self.broker.config(HUB_USER)
        lines = ["[broker]", f'host = "{broker.host}"', f"port = {broker.port}"]
        if broker.username:
            lines += [f'username = "{broker.username}"', f'password = "{broker.password}"']
        if broker.tls_ca:
            lines.append(f'ca_file = "{broker.tls_ca}"')
        lines += [
            "[store]",
            f'path = "{self.store_path}"',
            "[panel]",
            'backend = "none"',
            "[[table]]",
            f'name = "{TABLE}"',
            "stations = [" + ", ".join(f'"{n}"' for n in self.names) + "]",
            f"reveal_delay = {self.reveal_delay}",
            f'language = "{self.language}"',
        ]
        if self.seed is not None:
            lines.append(f"seed = {self.seed}")
        if self.card_sets is not None:
            lines.append(f'card_sets = "{self.card_sets}"')
        return "\n".join(lines) + "\n"

    def kill_hub(self) -> None:
        """SIGKILL the hub process: no goodbye, no flush (its will says 'lost')."""
        assert self.hub_process is not None, "kill_hub needs hub_mode='process'"
        self.hub_process.send_signal(signal.SIGKILL)
        self.hub_process.wait(10)
        self.hub_process = None

    def stop_hub(self) -> None:
        if self.hub is not None:
            self.hub.stop()
            self.hub = None
        if self.hub_process is not None:
            self.hub_process.send_signal(signal.SIGTERM)
            try:
                self.hub_process.wait(10)
            except subprocess.TimeoutExpired:
                self.hub_process.kill()
            self.hub_process = None

    def host(self, command: dict[str, Any]) -> None:
        """Send a host command over MQTT, as a host's laptop would (``coffre host`` gives
        each command an id, so a redelivery after a hub crash is answered, not re-applied)."""
        command = {"id": f"sim{self._boot}:{next(self._host_ids)}", **command}
        self.watch.client.publish(self.watch.topics.host_command, proto.encode(command))

    def next(self) -> None:
        """The host's "next": the panel button when the hub is ours, else a command."""
        if self.hub is not None:
            self.panel.press("next")
        else:
            self.host({"cmd": "next"})

    def make_devices(self, name: str) -> StationDevices:
        if self.device_backend == "emulated":
            from device.emulated import open_emulated_station

            emu = open_emulated_station()
            self.emulated[name] = emu
            devices: StationDevices = emu.devices
            return devices
        return StationDevices(MockReader(), MockDisplay(), MockControls())

    def start_station(self, name: str, *, devices: StationDevices | None = None) -> Station:
        devices = devices or self.devices.get(name) or self.make_devices(name)
        self.devices[name] = devices
        # No connection screens: the saved (and golden) screens are the game's alone.
        if isinstance(devices.display, MockDisplay):
            also_log(devices.display, lambda _frame: self._log_station(name))
        station = Station(
            self.broker.station_config(name),
            TABLE,
            name,
            devices,
            poll_interval=self.poll_interval,
            show_link=False,
        )
        station.start()
        # One at a time: amqtt (the embedded fallback) trips over simultaneous connects.
        station.client.wait_connected(10)
        self.stations[name] = station
        return station

    # --- what the glasses said --------------------------------------------------------

    def _log(self, where: str, title: str, lines: list[str], secret: list[str] | None) -> None:
        entry = {
            "t": round(time.monotonic() - self._started, 3),
            "screen": where,
            "frame": sum(1 for e in self.screen_log if e["screen"] == where),
            "title": title,
            "lines": lines,
            "secret": secret,
        }
        self.screen_log.append(entry)  # list.append is atomic: stations draw in their threads

    def _log_station(self, name: str) -> None:
        """Called in the station's own thread as its glass changes: what it drew, as text."""
        station = self.stations.get(name)
        screen = station.screen if station is not None else None
        if screen is None:
            self._log(name, "", [], None)
            return
        controls = self.devices[name].controls
        shown = screen.secret if controls.flap_open or controls.peek_held else None
        title = shown.title if shown is not None and shown.title else screen.title
        secret = None
        if shown is not None:
            secret = [shown.big] if shown.big else list(shown.lines)
        lines = list(screen.lines)
        if station is not None and station.toast:
            lines.append(f"[{station.toast[0]}]")
        self._log(name, title, lines, secret)

    def _log_hub(self) -> None:
        """Called in the hub's thread as the panel's glass changes (after it published it)."""
        hub = self.hub
        payload = hub.actors[TABLE].published.get(proto.Topics(TABLE).host_screen) if hub else None
        data = json.loads(payload) if payload else {"title": "", "lines": []}
        self._log("hub", str(data.get("title", "")), list(data.get("lines", [])), None)

    def stop(self) -> None:
        for hook in self.on_stop:
            with contextlib.suppress(Exception):
                hook()
        for station in self.stations.values():
            with contextlib.suppress(Exception):
                station.stop()
        self.stop_hub()
        with contextlib.suppress(Exception):
            self.watch.stop()
        for emu in self.emulated.values():
            with contextlib.suppress(Exception):
                emu.close()
        if hasattr(self, "broker"):  # absent when start stopped before the broker was up
            self.broker.stop()

    # --- physical gestures -------------------------------------------------------------

    def tap(self, station: str, uid: str, *, settle: bool = True) -> proto.Ack | None:
        """Lay a tag on a station's reader until the hub answers, then lift it."""
        st = self.stations[station]
        before = st.sent
        if self.device_backend == "emulated":
            self.emulated[station].field.place(uid)
        else:
            reader = self.devices[station].reader
            assert isinstance(reader, MockReader)
            reader.present_tag(uid)
        ok = st.wait_settled(before, 15) if settle else True
        if self.device_backend == "emulated":
            self.emulated[station].field.remove()
        else:
            reader = self.devices[station].reader
            assert isinstance(reader, MockReader)
            reader.remove_tag()
        self.wait_lifted(station)
        if not ok:
            raise TimeoutError(f"{station}: no answer from the hub")
        return st.last_ack

    def wait_lifted(self, station: str, timeout: float = 5.0) -> None:
        """Wait until the station's reader has noticed the tag left (so a second tap counts)."""
        reader = self.devices[station].reader
        deadline = time.monotonic() + timeout
        time.sleep(self.poll_interval)
        while reader.current is not None and time.monotonic() < deadline:
            time.sleep(self.poll_interval / 2)

    def frame_count(self, station: str) -> int:
        return len(getattr(self.devices[station].display, "frames", []))

    def wait_frames(self, station: str, count: int, timeout: float = 5.0) -> None:
        """Wait until a station has drawn ``count`` distinct frames."""
        deadline = time.monotonic() + timeout
        while self.frame_count(station) < count and time.monotonic() < deadline:
            time.sleep(0.005)

    def controls(self, station: str) -> MockControls:
        controls = self.devices[station].controls
        assert isinstance(controls, MockControls)
        return controls

    def move_flap(self, station: str, is_open: bool) -> None:
        """Lift (or lower) a station's flap and wait until its screen is redrawn."""
        controls = self.controls(station)
        before = self.frame_count(station)
        (controls.open_flap if is_open else controls.close_flap)()
        self.wait_frames(station, before + 1)

    def peek(self, station: str) -> proto.Screen:
        """Lift a station's flap, read its screen, lower the flap: what the player saw."""
        self.move_flap(station, True)
        screen = self.stations[station].screen
        self.move_flap(station, False)
        assert screen is not None
        return screen

    def gesture(self, station: str, act: Callable[[MockControls], None]) -> proto.Ack | None:
        """Turn or press on a station and wait for the hub's answer."""
        st = self.stations[station]
        before = st.sent
        act(self.controls(station))
        if not st.wait_settled(before, 15):
            raise TimeoutError(f"{station}: no answer from the hub")
        return st.last_ack

    def screen(self, station: str) -> Image.Image | None:
        """What the station's glass shows now."""
        if self.device_backend == "emulated":
            image: Image.Image = self.emulated[station].screen()
            return image
        display = self.devices[station].display
        assert isinstance(display, MockDisplay)
        return display.last


FrameHook = Callable[[Image.Image], None]


class _LoggedHook:
    """A display's own frame hook followed by the sim's screen log (see :func:`also_log`)."""

    def __init__(self, own: FrameHook | None, log: FrameHook) -> None:
        self.own = own
        self.log = log

    def __call__(self, frame: Image.Image) -> None:
        if self.own is not None:
            self.own(frame)  # first: a bench's frame clock stamps the glass, not the log
        self.log(frame)


def also_log(display: MockDisplay, log: FrameHook) -> None:
    """Add the sim's screen log to a mock display's frame hook, keeping the hook it had
    (a benchmark's frame clock, a test's gate); a station started again on the same
    display replaces its log, never stacks a second one."""
    own = display.on_frame
    if isinstance(own, _LoggedHook):
        own = own.own
    display.on_frame = _LoggedHook(own, log)


# --- watching the table ------------------------------------------------------------------


class PublicWatcher:
    """Follows ``public`` and the hub display, as anyone at the table could."""

    def __init__(self, broker: BrokerConfig, table: str = TABLE) -> None:
        self.topics = proto.Topics(table)
        self.public: dict[str, Any] = {}
        self.host: dict[str, Any] = {}
        self.hub_status: dict[str, Any] = {}
        self.messages: list[tuple[str, bytes]] = []
        self.changed = threading.Condition()
        self.client = Client(
            broker,
            f"watch-{random.getrandbits(32):x}",
            [self.topics.public, self.topics.host_screen, self.topics.hub_status],
        )
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.client.start()
        self._thread.start()
        self.client.wait_connected()

    def stop(self) -> None:
        self.client.stop()
        self._thread.join(2)

    def _run(self) -> None:
        while (msg := self.client.inbox.get()) is not None:
            data = json.loads(msg.payload)
            with self.changed:
                self.messages.append((msg.topic, msg.payload))
                if msg.topic == self.topics.public:
                    self.public = data
                elif msg.topic == self.topics.hub_status:
                    self.hub_status = data
                else:
                    self.host = data
                self.changed.notify_all()

    def wait_hub_ready(self, timeout: float = 20) -> None:
        """Wait for the hub's retained status to say ready."""
        self.wait_hub(lambda s: s.get("state") == "ready", "the hub did not come up", timeout)

    def wait_seats_heard(self, names: list[str], timeout: float = 20) -> None:
        """Wait until the hub's status has heard from every one of ``names`` (none is
        still ``never-seen``): a hub that watches its seats refuses a start before that."""

        def heard(status: dict[str, Any]) -> bool:
            seats = status.get("stations") or {}
            return all(seats.get(n, {}).get("state", "never-seen") != "never-seen" for n in names)

        self.wait_hub(heard, "the hub never heard from every station", timeout)

    def wait_hub(
        self, predicate: Callable[[dict[str, Any]], bool], what: str, timeout: float = 20
    ) -> None:
        """Wait until the hub's retained status satisfies ``predicate``; TimeoutError(what)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate(self.hub_status):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(what)
                self.changed.wait(left)

    def wait(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 15
    ) -> dict[str, Any]:
        """Wait until the public table satisfies ``predicate``; returns it."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate(self.public):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the table did not reach the expected state")
                self.changed.wait(left)
            return self.public
