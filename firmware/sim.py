"""A simulated table: broker, hub and stations with mock hardware, and bots.

``coffre sim`` is the project's main job: it starts a broker (mosquitto when
installed, else an embedded one), the hub and one station per player, then bots
play a whole game by tapping keys on the stations' mock readers, turning and
pressing their knobs and lifting their flaps. Every screen is saved.

The same pieces (:class:`SimTable`, :class:`Director`) serve the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from device.panel import MockPanel
from firmware import protocol as proto
from firmware.broker import (
    HOST_USER,
    HUB_USER,
    Mosquitto,
    TableAccess,
    find_mosquitto,
    free_port,
    station_user,
    write_broker_files,
)
from firmware.hub import Hub, TableConfig
from firmware.mqtt import BrokerConfig, Client
from firmware.station import Station
from firmware.tls import CA_FILE
from hardware.keys import KeySet, load_keyset

log = logging.getLogger(__name__)
TABLE = "sim"


# --- brokers ---------------------------------------------------------------------------


class EmbeddedBroker:
    """amqtt in a background thread on 127.0.0.1 (no ACL: for the simulator only)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="amqtt", daemon=True)
        self._ready = threading.Event()
        self._broker: Any = None

    def _run(self) -> None:
        from amqtt.broker import Broker  # optional: only the simulator's fallback

        asyncio.set_event_loop(self._loop)
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{self.port}"}},
            "sys_interval": 0,
            "auth": {"allow-anonymous": True},
            "topic-check": {"enabled": False},
        }
        self._broker = Broker(config, loop=self._loop)
        self._loop.run_until_complete(self._broker.start())
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> None:
        # amqtt logs (and survives) a race of its own when clients come and go at once
        # ("dictionary changed size during iteration"); the game is unaffected.
        for name in ("amqtt", "transitions", "passlib", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("embedded broker did not start")

    def stop(self) -> None:
        if self._broker is not None:
            fut = asyncio.run_coroutine_threadsafe(self._broker.shutdown(), self._loop)
            with contextlib.suppress(Exception):
                fut.result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


@dataclass
class BrokerSetup:
    """A running broker and the credentials of everyone at the table."""

    port: int
    access: TableAccess | None
    process: Mosquitto | EmbeddedBroker
    conf_dir: Path | None = None
    #: The CA that signed mosquitto's certificate (None: the plain embedded broker).
    tls_ca: Path | None = None

    def config(self, user: str) -> BrokerConfig:
        password = self.access.passwords[user] if self.access else None
        return BrokerConfig(
            "127.0.0.1",
            self.port,
            user if self.access else None,
            password,
            tls_ca=str(self.tls_ca) if self.tls_ca else None,
        )

    def station_config(self, station: str) -> BrokerConfig:
        return self.config(station_user(TABLE, station) if self.access else station)

    def stop(self) -> None:
        self.process.stop()


def start_broker(
    workdir: Path, stations: list[str], *, embedded: bool | None = None, table: str = TABLE
) -> BrokerSetup:
    """mosquitto with the table's ACL over TLS when installed (or asked), else embedded amqtt.

    mosquitto listens on 127.0.0.1 with TLS only, its certificate (for 127.0.0.1 and
    localhost) signed by a CA made in ``workdir/broker``. The embedded amqtt fallback
    stays plain MQTT: it has no ACL either and listens on loopback only.
    """
    port = free_port()
    if embedded is None:
        embedded = find_mosquitto() is None
    if embedded:
        broker = EmbeddedBroker(port)
        broker.start()
        return BrokerSetup(port, None, broker)
    access = TableAccess(table, stations)
    conf_dir = workdir / "broker"
    conf = write_broker_files(
        conf_dir,
        port,
        [access],
        stay_root=os.geteuid() == 0,
        tls_hostnames=["127.0.0.1", "localhost"],
    )
    mosq = Mosquitto(conf, port)
    mosq.start()
    return BrokerSetup(port, access, mosq, conf_dir, tls_ca=conf_dir / CA_FILE)


# --- the table -------------------------------------------------------------------------


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
    broker: BrokerSetup = field(init=False)
    watch: PublicWatcher = field(init=False)
    hub_process: subprocess.Popen[bytes] | None = field(init=False, default=None)
    hub: Hub | None = field(init=False, default=None)
    panel: MockPanel = field(init=False)
    stations: dict[str, Station] = field(init=False, default_factory=dict)
    devices: dict[str, StationDevices] = field(init=False, default_factory=dict)
    emulated: dict[str, Any] = field(init=False, default_factory=dict)
    keys: KeySet = field(init=False)

    def __post_init__(self) -> None:
        self.names = station_names(self.stations_count or self.players)
        self.keys = load_keyset()
        self.panel = MockPanel()

    @property
    def table_config(self) -> TableConfig:
        return TableConfig(TABLE, self.names, reveal_delay=self.reveal_delay, seed=self.seed)

    @property
    def store_path(self) -> Path:
        return self.workdir / "hub.sqlite3"

    def start(self) -> None:
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
        ]
        if self.seed is not None:
            lines.append(f"seed = {self.seed}")
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
        """Send a host command over MQTT, as a host's laptop would."""
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
        station = Station(
            self.broker.station_config(name), TABLE, name, devices, poll_interval=self.poll_interval
        )
        station.start()
        # One at a time: amqtt (the embedded fallback) trips over simultaneous connects.
        station.client.wait_connected(10)
        self.stations[name] = station
        return station

    def stop(self) -> None:
        for station in self.stations.values():
            with contextlib.suppress(Exception):
                station.stop()
        self.stop_hub()
        with contextlib.suppress(Exception):
            self.watch.stop()
        for emu in self.emulated.values():
            with contextlib.suppress(Exception):
                emu.close()
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
        deadline = time.monotonic() + timeout
        with self.changed:
            while self.hub_status.get("state") != "ready":
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the hub did not come up")
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


# --- bots ----------------------------------------------------------------------------------


@dataclass
class Director:
    """Bots playing Secret Identity through the stations' devices, plus the host's panel."""

    sim: SimTable
    watcher: PublicWatcher
    rng: random.Random
    say: Callable[[str], None] = print
    reveal_pause: float = 0.0
    #: What the bots physically did, per round: the referee's work checked independently.
    record: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: Stop before this phase of this round (tests that interrupt a game mid-way).
    stop_at: tuple[int, str] | None = None

    def view(self) -> dict[str, Any]:
        return self.watcher.public.get("view") or {}

    def start_game(self, players: int) -> None:
        """Use the host panel (or a host command if the hub runs elsewhere)."""
        if self.sim.hub is None:
            self.sim.host({"cmd": "start", "game": "secret-identity", "players": players})
            self.watcher.wait(lambda p: p.get("game") == "secret-identity")
            return
        panel = self.sim.panel
        panel.press("next")  # row: players
        hub = self.sim.hub
        assert hub is not None
        menu = hub.actors[TABLE].menu
        deadline = time.monotonic() + 10
        while menu.players != players and time.monotonic() < deadline:
            panel.press("ok")
            time.sleep(0.02)
        panel.press("prev")  # row: the game
        panel.press("prev")  # the rows wrap: Start, after the game's options
        panel.press("ok")
        self.watcher.wait(
            lambda p: p.get("game") == "secret-identity" and p.get("view", {}).get("round") == 1
        )

    def play(self) -> dict[str, Any]:
        """Play until the game is over; returns the final public table."""
        last_round = 0
        while True:
            pub = self.watcher.wait(lambda p: bool(p.get("view")))
            view = pub["view"]
            if view.get("is_over"):
                return pub
            if view["round"] != last_round:
                last_round = view["round"]
                self.say(f"-- round {last_round} of {view['rounds']}")
            phase = view["phase"]
            version = pub["version"]
            if self.stop_at == (view["round"], phase):
                return pub
            if phase == "prepare":
                self._prepare(view)
            elif phase == "vote":
                self._vote(view)
            elif phase == "reveal":
                self._reveal(view)
            # Act on a fresh table only: wait until this phase is over (or, while safes
            # open one by one, until the next one is).
            rnd = view["round"]

            def moved_on(
                p: dict[str, Any], v: int = version, r: int = rnd, ph: str = phase
            ) -> bool:
                if p.get("version", 0) <= v:
                    return False
                return ph == "reveal" or (p["view"]["round"], p["view"]["phase"]) != (r, ph)

            self.watcher.wait(moved_on)

    def _station(self, seat: int) -> str:
        return self.sim.names[seat]

    def _colour(self, seat: int) -> str:
        return self.sim.table_config.seating().colours[seat]

    def _round_record(self, view: dict[str, Any]) -> dict[str, Any]:
        return self.record.setdefault(view["round"], {"mystery": {}, "votes": {}, "pictos": {}})

    def _prepare(self, view: dict[str, Any]) -> None:
        record = self._round_record(view)
        bag = [n for n in range(1, 9) if n not in record["mystery"].values()]
        self.rng.shuffle(bag)
        for entry in view["seats"]:
            seat = entry["seat"]
            station = self._station(seat)
            if view["mystery"] == "keys" and not entry["mystery_locked"]:
                while bag:
                    number = bag.pop()
                    ack = self.sim.tap(station, self.sim.keys.uid_for("mystery", None, number))
                    if ack is not None and ack.ok:
                        record["mystery"][seat] = number
                        break
                self.peek(station)
            if not entry["ready"]:
                left = entry["pictos_left"]
                count = self.rng.randint(1, min(3, left))
                for _ in range(count - 1):
                    self.sim.gesture(station, lambda c: c.turn(1))
                ack = self.sim.gesture(station, lambda c: c.press())
                if ack is not None and ack.ok:
                    record["pictos"][seat] = count
                self.say(f"{self._colour(seat)} is ready ({count} pictos)")

    def peek(self, station: str) -> None:
        """Lift the flap, look at the secret, close it (each waits for the redraw)."""
        controls = self.sim.controls(station)
        for act in (controls.open_flap, controls.close_flap):
            before = self.sim.frame_count(station)
            act()
            self.sim.wait_frames(station, before + 1)

    def _vote(self, view: dict[str, Any]) -> None:
        record = self._round_record(view)
        n = len(view["seats"])
        for voter in range(n):
            numbers = self.rng.sample(range(1, 9), n - 1)
            targets = [s for s in range(n) if s != voter]
            for safe, number in zip(targets, numbers, strict=True):
                uid = self.sim.keys.uid_for("vote", self._colour(voter), number)
                ack = self.sim.tap(self._station(safe), uid)
                if ack is not None and ack.ok:
                    record["votes"][(voter, safe)] = number
        self.say("all votes are in")

    def _reveal(self, view: dict[str, Any]) -> None:
        if self.reveal_pause:
            time.sleep(self.reveal_pause)
        before = self.watcher.public.get("version", 0)
        self.sim.next()
        pub = self.watcher.wait(lambda p: p.get("version", 0) > before)
        opened = pub["view"].get("revealed") or []
        if len(opened) > len(view.get("revealed") or []):
            safe = opened[-1]
            right = ", ".join(self._colour(v) for v in safe["right"]) or "nobody"
            self.say(f"{self._colour(safe['safe'])}'s safe: key {safe['mystery']}; right: {right}")


# --- saving screens -------------------------------------------------------------------------


def save_frames(frames: list[Image.Image], folder: Path) -> int:
    """One PNG per distinct screen, plus an animated GIF of them all."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, frame in enumerate(frames):
        frame.convert("1").save(folder / f"{i:04d}.png")
    if frames:
        big = [f.convert("L").resize((256, 128), Image.Resampling.NEAREST) for f in frames]
        big[0].save(
            folder / "screens.gif", save_all=True, append_images=big[1:], duration=400, loop=0
        )
    return len(frames)


def recorded_frames(sim: SimTable, station: str) -> list[Image.Image]:
    display = sim.devices[station].display
    frames: list[Image.Image] = getattr(display, "frames", [])
    return frames


# --- the command ------------------------------------------------------------------------------


@contextlib.contextmanager
def running_table(sim: SimTable) -> Iterator[SimTable]:
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()


def main(args: Any) -> int:
    """``coffre sim``: play a whole simulated game and save the screens."""
    logging.basicConfig(level=logging.WARNING)
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    from firmware.bindings import bound_games
    from firmware.bots import bot_class, has_bot

    if args.game not in bound_games() or not has_bot(args.game):
        print(f"coffre sim: {args.game} has no table binding or bots yet (try secret-identity)")
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="coffre-sim-"))
    sim = SimTable(
        players=args.players,
        workdir=workdir,
        embedded=True if args.embedded_broker else None,
        device_backend="emulated" if args.emulate_chips else "mock",
    )
    rng = random.Random(args.seed)
    started = time.monotonic()
    with running_table(sim):
        kind = "mosquitto with ACL over TLS" if sim.broker.access else "embedded amqtt"
        print(f"broker: {kind} on 127.0.0.1:{sim.broker.port}")
        print(f"hub and {len(sim.names)} stations ({sim.device_backend} hardware) are up")
        bot = bot_class(args.game)(sim, sim.watch, rng)
        if args.pace and hasattr(bot, "reveal_pause"):
            bot.reveal_pause = args.pace
        bot.start_game(args.players)
        print(f"host started {args.game} for {args.players} players")
        final = bot.play()
        time.sleep(0.2)
        saved = 0
        for name in sim.names:
            saved += save_frames(_frames(sim, name), out / name)
        saved += save_frames(list(getattr(sim.panel.display, "frames", [])), out / "hub")
    shutil.rmtree(workdir, ignore_errors=True)
    seats = final["seats"]
    scores = final["scores"]
    tiebreak = " (ties: most picto cards left)" if args.game == "secret-identity" else ""
    print(f"game over in {time.monotonic() - started:.1f} s; final ranking{tiebreak}:")
    for place, group in enumerate(final["ranking"], start=1):
        for seat in group:
            extra = ""
            seat_view = (final.get("view") or {}).get("seats") or []
            if seat < len(seat_view) and "pictos_left" in seat_view[seat]:
                extra = f"  ({seat_view[seat]['pictos_left']} picto cards left)"
            # A game with its own colours (Ultra Secret's agents) names seats by them.
            own = (final.get("view") or {}).get("colours")
            name = own[seat] if isinstance(own, list) and seat < len(own) else seats[seat]["colour"]
            print(f"  {place}. {name:<7} {scores[seat]:>3} points{extra}")
    view = final.get("view") or {}
    for key in ("outcome", "winners", "result"):
        if view.get(key) not in (None, [], {}):
            print(f"{key}: {json.dumps(view[key], ensure_ascii=False)}")
    print(f"saved {saved} screens under {out}/ (one folder per station, hub/ for the host)")
    return 0


def _frames(sim: SimTable, name: str) -> list[Image.Image]:
    if sim.device_backend == "emulated":
        emu = sim.emulated[name]
        frames: list[Image.Image] = list(getattr(emu, "frames", []) or [])
        return frames or [emu.screen()]
    return recorded_frames(sim, name)


#: The Secret Identity bots, as ``firmware.bots`` finds them.
Bot = Director
