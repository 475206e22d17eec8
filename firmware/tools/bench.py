"""``coffre bench``: the hub's latency and capacity through a real mosquitto on loopback.

Every figure comes with a baseline measured in the same run: an **echo** server (a
minimal MQTT client on the same broker that answers each input with a screen and an
ack, and does nothing else), so a figure reads as "coffre costs X times the bare trip".

Tap mode (the default): an 8-station table; a mystery key is laid on one station after
another and the time until that station's glass changes is measured:

- read -> screen: from the poll that saw the tag to the new frame on the glass
  (station -> broker -> hub: decode, rules, SQLite commit -> broker -> station: render);
- lay -> screen: from the tag entering the field, so it adds up to one poll interval.

Between taps the host undoes the key, so every tap is a real, committed action. The
coffre table and the echo's are up at once and tapped in alternating rounds, so a drift
in the machine's load meets both.

Load mode (``--tables N``): one hub process runs N tables of 8 stations; every station
turns its knob once a second (each turn is a committed event that changes its screen),
sent by a load generator that speaks for all stations on one connection (the broker has
no ACL or TLS here, for coffre and echo alike). Measured: input -> its answer (the hub
sends the screens first). ``--commit-delay MS`` (with ``--stall MS --stall-every S``)
*simulates* a slow SD card inside the hub's store: every commit sleeps that long, and
the first one after every S seconds sleeps the stall too; it also prints what that disk
alone allows these inputs (:func:`disk_floor`). The last line is for scripts:
``tables=N stations=M inputs_per_s=X p50_ms=Y p99_ms=Z lost=0``.

Venue mode (``--hubs H --tables N``): the same load on H ``coffre hub`` processes, the N
tables split between them, all on one mosquitto set up as ``coffre broker-config`` sets
up a venue (TLS, a broker user per hub allowed on its own tables). Also printed: p50/p99
per hub, inputs answered twice (must be 0), the messages the hubs send per input
(counted by a sniffer process subscribed to ``coffre/#``, so every message is delivered
once more than on a real venue), and each process's CPU time and memory over the load
(read from /proc).
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import queue
import random
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.hub.brokerconf import (
    HUB_USER,
    MAX_INFLIGHT,
    configure_broker,
    hash_password,
    hub_user,
    read_credentials,
)
from firmware.hub.brokerconf import Venue as VenueAccess
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, Message
from firmware.link.tls import CA_FILE
from firmware.tools.brokers import Mosquitto, free_port, serve, start_broker
from firmware.tools.simtable import SimTable
from rules.secret_identity import INFO as BENCH_INFO

STATIONS_PER_TABLE = 8
#: The game every bench plays (its bots, the Director, know it best).
BENCH_GAME = BENCH_INFO.id
#: The load generator's broker user on a venue broker (a bench's own: no install has it).
BENCH_USER = "bench"
#: How long the load generator waits for the last answers once it stops sending.
GRACE_SECONDS = 5.0


class _FrameClock:
    """Counts frames of one display and stamps the last one."""

    def __init__(self) -> None:
        self.count = 0
        self.at = 0.0
        self.cond = threading.Condition()

    def __call__(self, _image: Image.Image) -> None:
        with self.cond:
            self.count += 1
            self.at = time.perf_counter()
            self.cond.notify_all()

    def wait_beyond(self, count: int, timeout: float = 5.0) -> float:
        with self.cond:
            if not self.cond.wait_for(lambda: self.count > count, timeout):
                raise TimeoutError("no new frame")
            return self.at


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- the echo server -------------------------------------------------------------------


def echo(config: BrokerConfig, client_id: str = "coffre-echo") -> None:
    """Answer every station input with a new screen and an ack, forever (the baseline)."""
    client = Client(
        config,
        f"{client_id}-{os.getpid()}",
        ["coffre/+/station/+/input", "coffre/+/station/+/status"],
    )
    client.start()
    n = 0
    while (msg := client.inbox.get()) is not None:
        root, table, _, station, leaf = (msg.topic.split("/") + [""] * 5)[:5]
        base = f"{root}/{table}/station/{station}"
        n += 1
        screen = proto.encode(proto.Screen(rev=n, title="echo", lines=(f"input {n}",)))
        if leaf == "status":
            client.publish(f"{base}/screen", screen, retain=True, qos=proto.ANSWER_QOS)
            continue
        try:
            input_id = json.loads(msg.payload).get("id")
        except (ValueError, AttributeError):
            continue
        # At the QoS the hub answers at: the baseline sends what the hub sends.
        client.publish(f"{base}/screen", screen, retain=True, qos=proto.ANSWER_QOS)
        client.publish(
            f"{base}/ack", proto.encode(proto.Ack(input_id, True, "")), qos=proto.ANSWER_QOS
        )


def broker_args(config: BrokerConfig) -> list[str]:
    """``--host``, ``--port`` and the credentials of a bench process's broker, each
    ``--name=value`` whole (a generated password may start with "-")."""
    args = [f"--host={config.host}", f"--port={config.port}"]
    if config.username:
        args += [f"--username={config.username}", f"--password={config.password or ''}"]
    if config.tls_ca:
        args += [f"--ca={config.tls_ca}"]
    return args


def _helper_args(config: BrokerConfig) -> list[str]:
    """The command line of this module as a process of its own (echo server or sniffer)."""
    return [sys.executable, "-m", "firmware.tools.bench", *broker_args(config)]


def helper_parser() -> argparse.ArgumentParser:
    """The command line of the echo server and the sniffer (:func:`_helper_args`)."""
    parser = argparse.ArgumentParser(description="coffre bench's echo server and sniffer")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("--ca")
    parser.add_argument("--sniff", action="store_true", help="count messages instead")
    return parser


def _start_echo(config: BrokerConfig) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        _helper_args(config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def stop_process(proc: subprocess.Popen[Any] | None) -> None:
    """End a helper process: SIGTERM, then SIGKILL after 10 s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- tap mode --------------------------------------------------------------------------


def _table(stations: int, poll_interval: float) -> tuple[SimTable, dict[str, _FrameClock]]:
    sim = SimTable(
        players=stations,
        workdir=Path(tempfile.mkdtemp(prefix="coffre-bench-")),
        embedded=False,
        seed=1,
        hub_mode="process",  # the hub in its own process, as on the table (its own Pi)
        poll_interval=poll_interval,
    )
    clocks = {}
    for name in sim.names:
        clocks[name] = _FrameClock()
        sim.devices[name] = StationDevices(
            MockReader(), MockDisplay(on_frame=clocks[name]), MockControls()
        )
    return sim, clocks


def _tap(sim: SimTable, clock: _FrameClock, name: str, uid: str) -> tuple[float, float]:
    """Lay a tag, wait for the new frame, lift it: (read -> screen, lay -> screen) in ms."""
    reader = sim.devices[name].reader
    assert isinstance(reader, MockReader)
    before = clock.count
    sent = sim.stations[name].sent
    laid = time.perf_counter()
    reader.present_tag(uid)
    shown = clock.wait_beyond(before)
    read = sim.stations[name].read_at
    assert sim.stations[name].wait_settled(sent, 5)
    reader.remove_tag()
    sim.wait_lifted(name)
    return (shown - read) * 1000, (shown - laid) * 1000


class _Taps:
    """A table of stations tapped one after another, each tap's figures kept."""

    def __init__(self, stations: int, poll_interval: float) -> None:
        self.sim, self.clocks = _table(stations, poll_interval)
        self.read_ms: list[float] = []
        self.lay_ms: list[float] = []

    def measure(self, i: int, key: int) -> str:
        """Tap station ``i`` (round the table) with mystery key ``key``; its name."""
        name = self.sim.names[i % len(self.sim.names)]
        uid = self.sim.keys.uid_for("mystery", None, key)
        read, lay = _tap(self.sim, self.clocks[name], name, uid)
        self.read_ms.append(read)
        self.lay_ms.append(lay)
        return name


class _CoffreTaps(_Taps):
    """The table on the coffre hub (its own process); the host undoes each tap, so every
    tap is a real, committed action."""

    def start(self) -> None:
        self.sim.start()
        self.sim.host({"cmd": "start", "game": BENCH_GAME, "players": len(self.sim.names)})
        self.sim.watch.wait(lambda p: p.get("game") == BENCH_GAME)
        time.sleep(0.3)

    def tap(self, i: int) -> None:
        sim = self.sim
        clock = self.clocks[self.measure(i, 1 + i % len(sim.names))]
        version = sim.watch.public["version"]
        count = clock.count
        sim.host({"cmd": "undo"})
        sim.watch.wait(lambda p, v=version: bool(p["version"] != v))  # type: ignore[misc]
        clock.wait_beyond(count)

    def stop(self) -> None:
        self.sim.stop()


class _EchoTaps(_Taps):
    """The same stations, broker and ACL against the echo server."""

    def __init__(self, stations: int, poll_interval: float) -> None:
        super().__init__(stations, poll_interval)
        self.server: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        sim = self.sim
        sim.workdir.mkdir(parents=True, exist_ok=True)
        sim.broker = start_broker(sim.workdir, sim.names, embedded=False)
        self.server = _start_echo(sim.broker.config(HUB_USER))
        for name in sim.names:
            sim.start_station(name)
        for name in sim.names:
            if not sim.stations[name].wait_screen(15):
                raise TimeoutError(f"station {name} got no screen from the echo server")
        time.sleep(0.3)

    def tap(self, i: int) -> None:
        self.measure(i, 1)

    def stop(self) -> None:
        for station in self.sim.stations.values():
            station.stop()
        stop_process(self.server)
        broker = getattr(self.sim, "broker", None)  # none if the start failed first
        if broker is not None:
            broker.stop()


#: Tap mode alternates coffre and echo in this many rounds: the machine's load drifts
#: over a run, and both should meet the same drift.
ROUNDS = 5


def _rounds(taps: int) -> int:
    """The rounds of a tap run (no more than there are taps)."""
    return max(1, min(ROUNDS, taps))


def run(stations: int = 8, taps: int = 200, poll_interval: float = 0.02) -> dict[str, Any]:
    """Tap mode against the coffre hub; returns the figures in milliseconds."""
    return run_pair(stations, taps, poll_interval, echo=False)[0]


def run_pair(
    stations: int = 8, taps: int = 200, poll_interval: float = 0.02, *, echo: bool = True
) -> list[dict[str, Any]]:
    """Tap mode against the coffre hub and (``echo``) the echo server, both up at once,
    their taps alternating in ROUNDS rounds; the figures of each, in milliseconds."""
    tappers: list[_CoffreTaps | _EchoTaps] = [_CoffreTaps(stations, poll_interval)]
    if echo:
        tappers.append(_EchoTaps(stations, poll_interval))
    try:
        for tapper in tappers:
            tapper.start()
        rounds = _rounds(taps)
        for r in range(rounds):
            for tapper in tappers:
                for i in range(taps * r // rounds, taps * (r + 1) // rounds):
                    tapper.tap(i)
    finally:
        for tapper in tappers:
            tapper.stop()
    return [_tap_figures(stations, t.read_ms, t.lay_ms, poll_interval) for t in tappers]


def _tap_figures(
    stations: int, read_ms: list[float], lay_ms: list[float], poll_interval: float
) -> dict[str, Any]:
    return {
        "stations": stations,
        "taps": len(read_ms),
        "poll_interval_ms": poll_interval * 1000,
        "read_to_screen_p50": statistics.median(read_ms),
        "read_to_screen_p99": percentile(read_ms, 0.99),
        "lay_to_screen_p50": statistics.median(lay_ms),
        "lay_to_screen_p99": percentile(lay_ms, 0.99),
    }


# --- load mode -------------------------------------------------------------------------


@dataclass
class HubFigures:
    """One hub process's share of a load run."""

    tables: int
    sent: int
    latencies_ms: list[float] = field(repr=False)

    @property
    def lost(self) -> int:
        return self.sent - len(self.latencies_ms)

    def line(self) -> str:
        p50 = statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")
        p99 = percentile(self.latencies_ms, 0.99) if self.latencies_ms else float("nan")
        return (
            f"tables={self.tables} sent={self.sent} p50_ms={p50:.1f} p99_ms={p99:.1f} "
            f"lost={self.lost}"
        )


@dataclass
class Usage:
    """A process's CPU time over the load and its peak memory (from /proc)."""

    cpu_s: float
    peak_rss_mb: float


@dataclass
class LoadResult:
    tables: int
    stations: int
    seconds: float
    sent: int
    answered: int
    latencies_ms: list[float] = field(repr=False)
    #: Hub name -> its figures (the echo server counts as one hub).
    hubs: dict[str, HubFigures] = field(default_factory=dict, repr=False)
    #: Inputs answered more than once (two hubs on one table would do it).
    twice: int = 0
    #: Messages seen by the sniffer while loading, by kind (``station/screen``, ``public``...).
    messages: dict[str, int] = field(default_factory=dict)
    #: Process name -> its CPU time and memory over the load (where /proc has them).
    usage: dict[str, Usage] = field(default_factory=dict)
    #: The inputs' ids, in sending order.
    ids: list[str] = field(default_factory=list, repr=False)
    #: When each was sent (perf_counter seconds), in sending order.
    sent_at: list[float] = field(default_factory=list, repr=False)

    @property
    def lost(self) -> int:
        return self.sent - self.answered

    @property
    def inputs_per_s(self) -> float:
        return self.answered / self.seconds if self.seconds else 0.0

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 0.99) if self.latencies_ms else float("nan")

    @property
    def sent_by_hubs(self) -> int:
        """What the hubs published while loading (all but the stations' inputs and commands)."""
        return sum(n for kind, n in self.messages.items() if kind not in INPUT_KINDS)

    @property
    def per_input(self) -> float:
        return self.sent_by_hubs / self.answered if self.answered else float("nan")

    def line(self) -> str:
        return (
            f"tables={self.tables} stations={self.stations} inputs_per_s={self.inputs_per_s:.0f} "
            f"p50_ms={self.p50:.1f} p99_ms={self.p99:.1f} lost={self.lost}"
        )

    def details(self) -> list[str]:
        """Per hub, duplicates, messages per input and the processes' load, one per line."""
        lines = [f"{name}: {hub.line()}" for name, hub in self.hubs.items()]
        lines.append(f"answered twice: {self.twice}")
        if self.messages:
            kinds = sorted(
                (k for k in self.messages if k not in INPUT_KINDS), key=lambda k: -self.messages[k]
            )
            split = ", ".join(f"{k} {self.messages[k] / self.answered:.2f}" for k in kinds)
            lines.append(f"messages the hubs sent per input: {self.per_input:.2f} ({split})")
        for name, use in self.usage.items():
            share = use.cpu_s / self.seconds * 100 if self.seconds else 0.0
            lines.append(
                f"{name}: cpu {use.cpu_s:.1f} s ({share:.0f} % of one core), "
                f"peak rss {use.peak_rss_mb:.1f} MB"
            )
        return lines


#: Sniffed kinds that are not the hubs' doing.
INPUT_KINDS = frozenset({"station/input", "station/status", "host/command"})


def _plain_mosquitto(workdir: Path) -> Mosquitto:
    port = free_port()
    conf = workdir / "mosquitto.conf"
    conf.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
        f"max_queued_messages 100000\nset_tcp_nodelay true\nmax_inflight_messages {MAX_INFLIGHT}\n"
    )
    mosq = Mosquitto(conf, port)
    mosq.start()
    return mosq


def _table_names(tables: int) -> list[str]:
    return [f"t{i:03d}" for i in range(tables)]


def _venue_broker(
    workdir: Path, hub_tables: dict[str, list[str]]
) -> tuple[Mosquitto, dict[str, BrokerConfig], BrokerConfig]:
    """mosquitto over TLS with the venue's users and ACL as ``coffre broker-config`` writes
    them (each hub a user of its own, allowed on its own tables only), plus the bench
    user: the load generator speaks for every station, so it alone may do anything under
    ``coffre/``. Returns the broker, each hub's settings and the bench user's."""
    stations = [f"s{i + 1}" for i in range(STATIONS_PER_TABLE)]
    venue = VenueAccess(hub_tables, {t: stations for run in hub_tables.values() for t in run})
    conf_dir = workdir / "broker"
    port = free_port()
    loopback = ["127.0.0.1", "localhost"]
    report = configure_broker(conf_dir, venue, port, bind="127.0.0.1", tls_hostnames=loopback)
    password = secrets.token_urlsafe(16)
    with (conf_dir / "passwd").open("a") as f:
        f.write(f"{BENCH_USER}:{hash_password(password)}\n")
    with (conf_dir / "acl").open("a") as f:
        f.write(f"\nuser {BENCH_USER}\ntopic readwrite {proto.ROOT}/#\n")
    broker = serve(conf_dir, port, report.tls)
    passwords, ca = read_credentials(conf_dir), str(conf_dir / CA_FILE)
    hubs = {
        hub: BrokerConfig("127.0.0.1", port, hub_user(hub), passwords[hub_user(hub)], tls_ca=ca)
        for hub in hub_tables
    }
    return broker, hubs, BrokerConfig("127.0.0.1", port, BENCH_USER, password, tls_ca=ca)


def _hub_toml(workdir: Path, broker: BrokerConfig, tables: list[str]) -> Path:
    stations = ", ".join(f'"s{i + 1}"' for i in range(STATIONS_PER_TABLE))
    lines = ["[broker]", f'host = "{broker.host}"', f"port = {broker.port}"]
    if broker.username:
        lines += [f'username = "{broker.username}"', f'password = "{broker.password}"']
    if broker.tls_ca:
        lines.append(f'ca_file = "{broker.tls_ca}"')
    lines += ["[store]", f'path = "{workdir / "hub.sqlite3"}"', "[panel]", 'backend = "none"']
    for name in tables:
        # The load generator's stations send inputs, not statuses: no seat health here.
        lines += ["[[table]]", f'name = "{name}"', f"stations = [{stations}]", "seed = 1"]
        lines.append("watch_seats = false")
    path = workdir / "hub.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def split_tables(tables: list[str], hubs: int) -> list[list[str]]:
    """The tables in ``hubs`` consecutive runs as even as they go (16 + 16 + 16 for 48)."""
    n = len(tables)
    return [tables[i * n // hubs : (i + 1) * n // hubs] for i in range(hubs)]


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # utime and stime, fields 14 and 15 of proc(5)'s stat (counted after the ")": 12, 13)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


class _Meter:
    """CPU seconds some processes spend between ``start()`` and ``stop()``, and their peak
    memory; a process /proc does not show (not Linux, or gone) is left out."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.before: dict[str, float] = {}

    def start(self) -> None:
        for name, pid in self.pids.items():
            cpu = _cpu_seconds(pid)
            if cpu is not None:
                self.before[name] = cpu

    def stop(self) -> dict[str, Usage]:
        usage = {}
        for name, before in self.before.items():
            cpu, rss = _cpu_seconds(self.pids[name]), _peak_rss_mb(self.pids[name])
            if cpu is not None and rss is not None:
                usage[name] = Usage(cpu - before, rss)
        return usage


# --- the sniffer -------------------------------------------------------------------------


def _kind(topic: str) -> str:
    """``coffre/t1/station/s2/screen`` -> ``station/screen``; ``coffre/t1/public`` -> ``public``."""
    rest = topic.split("/")[2:]
    if rest[:1] == ["station"]:
        rest = [rest[0], *rest[2:]]
    return "/".join(rest)


def sniff(config: BrokerConfig) -> None:
    """Count every live message under ``coffre/#`` by kind until SIGTERM, then print the
    counts as JSON (a process of its own: the counting takes nothing from the generator)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    client = Client(config, f"coffre-sniff-{os.getpid()}", [f"{proto.ROOT}/#"])
    client.start()
    if not client.wait_connected(10):
        raise SystemExit("the sniffer cannot reach the broker")
    print("ready", flush=True)
    counts: Counter[str] = Counter()
    while True:
        try:
            msg = client.inbox.get(timeout=0.1)
        except queue.Empty:
            if stop.is_set():
                break
            continue
        if msg is None:
            break
        if not msg.retain:  # a retained message sent on subscribing is not traffic
            counts[_kind(msg.topic)] += 1
    client.stop()
    print(json.dumps(counts), flush=True)


class _Sniffer:
    def __init__(self, config: BrokerConfig) -> None:
        self.proc = subprocess.Popen(
            [*_helper_args(config), "--sniff"], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            stop_process(self.proc)
            raise RuntimeError("the sniffer did not start")
        time.sleep(0.3)  # its subscription is in place

    def counts(self) -> dict[str, int]:
        """Stop it; what it counted."""
        time.sleep(0.3)  # the last deliveries
        self.proc.terminate()
        out, _ = self.proc.communicate(timeout=30)
        counts: dict[str, int] = json.loads(out.strip().splitlines()[-1])
        return counts


# --- the load generator --------------------------------------------------------------------


class _ArrivalInbox(queue.Queue[tuple[float, Message | None]]):
    """A mailbox that notes when each message arrived, on the network thread as it is
    decoded: the generator works through a burst of answers one by one, and the station
    each one is for would not have waited for the others'."""

    def put(self, item: Message | None, block: bool = True, timeout: float | None = None) -> None:  # type: ignore[override]
        super().put((time.perf_counter(), item), block, timeout)


class _Generator:
    """Speaks for every station: knob turns at a fixed rate, answers timed and counted by id."""

    def __init__(self, config: BrokerConfig, tables: list[str]) -> None:
        self.tables = tables
        self.arrivals = _ArrivalInbox()
        self.client = Client(
            config,
            f"bench-load-{os.getpid()}",
            ["coffre/+/station/+/ack", "coffre/+/hub/status"],
            inbox=self.arrivals,  # type: ignore[arg-type]
        )
        #: input id -> (its table, when it was sent)
        self.sent: dict[str, tuple[str, float]] = {}
        #: input id -> ms until its first answer
        self.latency: dict[str, float] = {}
        #: input id -> answers received (1 unless something is wrong)
        self.answers: Counter[str] = Counter()
        self.up: set[str] = set()  # the hub serves the table
        self.ready: set[str] = set()  # and a game runs on it
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._receive, daemon=True)

    def start(self) -> None:
        self.client.start()
        self.thread.start()
        if not self.client.wait_connected(10):
            raise TimeoutError("the load generator cannot reach the broker")

    def _receive(self) -> None:
        while True:
            now, msg = self.arrivals.get()
            if msg is None:
                return
            if msg.topic.endswith("/hub/status"):
                status = json.loads(msg.payload) if msg.payload else {}
                table = msg.topic.split("/")[1]
                with self.lock:
                    if status.get("state") == "ready":
                        self.up.add(table)
                    if status.get("game"):
                        self.ready.add(table)
                continue
            answer_id = json.loads(msg.payload).get("id")
            with self.lock:
                self.answers[answer_id] += 1
                sent = self.sent.get(answer_id)
                if sent is not None and answer_id not in self.latency:
                    self.latency[answer_id] = (now - sent[1]) * 1000

    def start_games(self, timeout: float = 120.0) -> None:
        """Wait for the hubs to serve every table, then start a game on each."""
        self._wait(self.up, timeout, "served")
        for table in self.tables:
            command = {"cmd": "start", "game": BENCH_GAME, "players": 8, "id": "bench"}
            self.client.publish(proto.Topics(table).host_command, proto.encode(command))
        self._wait(self.ready, timeout, "started")

    def _wait(self, tables: set[str], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while len(tables) < len(self.tables):
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {len(tables)} of {len(self.tables)} tables {what}")
            time.sleep(0.05)

    def load(self, seconds: float, rate: float, boot: str) -> tuple[list[str], float]:
        """Send for ``seconds``; returns (the inputs' ids, seconds actually spent sending)."""
        stations = [(t, f"s{i + 1}") for t in self.tables for i in range(STATIONS_PER_TABLE)]
        period = 1.0 / rate
        start = time.perf_counter() + 0.2
        due = [(start + period * k / len(stations), k) for k in range(len(stations))]
        heapq.heapify(due)
        ids: list[str] = []
        turns = [0] * len(stations)
        end = start + seconds
        while due:
            at, k = due[0]
            if at >= end:
                break
            now = time.perf_counter()
            if at > now:
                time.sleep(min(at - now, 0.005))
                continue
            heapq.heapreplace(due, (at + period, k))
            table, station = stations[k]
            input_id = f"{boot}{k}:{len(ids) + 1}"
            ids.append(input_id)
            turns[k] += 1
            step = 1 if turns[k] % 2 else -1  # back and forth: every turn moves the cursor
            payload = proto.encode({"id": input_id, "kind": "knob", "step": step})
            with self.lock:
                self.sent[input_id] = (table, time.perf_counter())
            self.client.publish(proto.Topics(table).station(station, "input"), payload)
        return ids, time.perf_counter() - start

    def settle(self, ids: list[str]) -> None:
        """Wait (up to GRACE_SECONDS) for these inputs' answers."""
        deadline = time.monotonic() + GRACE_SECONDS
        while time.monotonic() < deadline:
            with self.lock:
                if all(i in self.latency for i in ids):
                    return
            time.sleep(0.05)

    def stop(self) -> None:
        self.client.stop()
        self.thread.join(2)


class Venue:
    """One mosquitto, ``hubs`` coffre hub processes sharing ``tables`` tables (or the echo
    server for all of them), and the load generator; every table plays a game. The broker
    is plain, or with ``users`` the venue's as ``coffre broker-config`` makes it (TLS, a
    user per hub allowed on its own tables only)."""

    def __init__(
        self,
        tables: int,
        hubs: int = 1,
        *,
        server: str = "coffre",
        env: dict[str, str] | None = None,
        workdir: Path | None = None,
        users: bool = False,
    ) -> None:
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="coffre-load-"))
        self.server = server
        self.env = env
        self.names = _table_names(tables)
        runs = split_tables(self.names, hubs) if server == "coffre" else [self.names]
        prefix = "hub" if server == "coffre" else "echo"
        self.hub_tables = {
            f"{prefix}{i + 1}" if len(runs) > 1 else prefix: r for i, r in enumerate(runs)
        }
        self.hub_of = {t: hub for hub, run in self.hub_tables.items() for t in run}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.users = users
        if users:
            self.broker, self.hub_configs, self.config = _venue_broker(
                self.workdir, self.hub_tables
            )
        else:
            self.broker = _plain_mosquitto(self.workdir)
            self.config = BrokerConfig("127.0.0.1", self.broker.port)
            self.hub_configs = dict.fromkeys(self.hub_tables, self.config)
        self.generator = _Generator(self.config, self.names)

    def start(self) -> None:
        self.generator.start()
        if self.server == "echo":
            self.procs["echo"] = _start_echo(self.config)
            self.generator.ready.update(self.names)
            time.sleep(1.0)
            return
        for hub, tables in self.hub_tables.items():
            hubdir = self.workdir / hub
            hubdir.mkdir(exist_ok=True)
            log = (hubdir / "hub.log").open("ab")
            config_file = _hub_toml(hubdir, self.hub_configs[hub], tables)
            self.procs[hub] = subprocess.Popen(
                [sys.executable, "-m", "firmware.cli", "hub", "--config", str(config_file)],
                stdout=log,
                stderr=log,
                env=self.env,
            )
        self.generator.start_games()
        time.sleep(0.5)

    def kill(self, hub: str) -> None:
        """Kill a hub process outright (a power cut: no goodbye, its will says lost)."""
        proc = self.procs.pop(hub)
        proc.kill()
        proc.wait()

    def run(self, seconds: float, rate: float, boot: str, *, sniff: bool = False) -> LoadResult:
        """One load: ``seconds`` of inputs, then their answers (on the hubs still running)."""
        sniffer = _Sniffer(self.config) if sniff else None
        meter = _Meter(
            {"mosquitto": self.broker.proc.pid if self.broker.proc else 0}
            | {name: p.pid for name, p in self.procs.items()}
            | {"generator": os.getpid()}
            | ({"sniffer": sniffer.proc.pid} if sniffer else {})
        )
        meter.start()
        ids, spent = self.generator.load(seconds, rate, boot)
        live = [i for i in ids if self.hub_of[self.generator.sent[i][0]] in self.procs]
        self.generator.settle(live)
        usage = meter.stop()
        messages = sniffer.counts() if sniffer else {}
        return self._result(ids, spent, messages, usage)

    def _result(
        self, ids: list[str], spent: float, messages: dict[str, int], usage: dict[str, Usage]
    ) -> LoadResult:
        gen = self.generator
        with gen.lock:
            latency = {i: gen.latency[i] for i in ids if i in gen.latency}
            twice = sum(1 for i in ids if gen.answers[i] > 1)
            tables = {i: gen.sent[i][0] for i in ids}
            sent_at = [gen.sent[i][1] for i in ids]
        hubs = {}
        for hub, run in self.hub_tables.items():
            mine = [i for i in ids if tables[i] in run]
            hubs[hub] = HubFigures(len(run), len(mine), [latency[i] for i in mine if i in latency])
        return LoadResult(
            len(self.names),
            len(self.names) * STATIONS_PER_TABLE,
            spent,
            len(ids),
            len(latency),
            list(latency.values()),
            hubs,
            twice,
            messages,
            usage,
            ids,
            sent_at,
        )

    def stop(self) -> None:
        self.generator.stop()
        for proc in self.procs.values():
            stop_process(proc)
        self.broker.stop()


def disk_floor(
    sent_at: list[float], commit_ms: float, stall_ms: float, stall_every_s: float
) -> list[float]:
    """Each input's wait (ms) on the simulated disk alone, as if nothing else took any
    time: a sync starts as soon as an input waits and the last sync ended, and covers
    every input sent before it started; it lasts ``commit_ms``, plus ``stall_ms`` for the
    first after every ``stall_every_s`` seconds (as ``COFFRE_SIMULATE_DISK`` does in the
    hub). Commit before ack: no answer can come sooner, whatever the hub does."""
    times = sorted(sent_at)
    waits: list[float] = []
    commit, stall = commit_ms / 1000, stall_ms / 1000
    next_stall = times[0] + stall_every_s if times and stall_every_s > 0 else float("inf")
    ended, i = float("-inf"), 0
    while i < len(times):
        start = max(ended, times[i])
        covered = i
        while covered < len(times) and times[covered] <= start:
            covered += 1
        ended = start + commit
        if start >= next_stall:
            ended += stall
            next_stall = start + stall_every_s
        waits += [(ended - t) * 1000 for t in times[i:covered]]
        i = covered
    return waits


def run_load(
    tables: int,
    seconds: float = 10.0,
    *,
    hubs: int = 1,
    server: str = "coffre",
    rate: float = 1.0,
    sniff: bool = False,
    users: bool | None = None,
    commit_delay_ms: float = 0.0,
    stall_ms: float = 0.0,
    stall_every_s: float = 0.0,
) -> LoadResult:
    """Load mode against ``hubs`` coffre hub processes (``server="coffre"``) or the echo
    server; ``sniff`` counts the messages the hubs send. ``users`` (by default with
    several hubs): the venue's broker, TLS and a user per hub; else a plain broker."""
    env = dict(os.environ)
    if commit_delay_ms or stall_ms:
        env["COFFRE_SIMULATE_DISK"] = f"{commit_delay_ms},{stall_ms},{stall_every_s}"
    secure = hubs > 1 if users is None else users
    venue = Venue(tables, hubs, server=server, env=env, users=secure)
    try:
        venue.start()
        return venue.run(seconds, rate, boot=f"b{os.getpid() % 10000}", sniff=sniff)
    finally:
        venue.stop()


# --- messages in a whole game ------------------------------------------------------------


@dataclass
class GameMessages:
    """What one whole game played by bots sends through the broker, by kind."""

    players: int
    messages: dict[str, int]

    @property
    def inputs(self) -> int:
        return sum(n for kind, n in self.messages.items() if kind in INPUT_KINDS)

    @property
    def per_input(self) -> float:
        sent = sum(n for kind, n in self.messages.items() if kind not in INPUT_KINDS)
        return sent / self.inputs if self.inputs else float("nan")

    def line(self) -> str:
        kinds = sorted(self.messages, key=lambda k: -self.messages[k])
        split = ", ".join(f"{k} {self.messages[k]}" for k in kinds)
        return (
            f"a {self.players}-player Secret Identity game by bots: {self.inputs} inputs and "
            f"commands, the hub sent {self.per_input:.2f} messages per input ({split})"
        )


def game_messages(players: int = 8, seed: int = 1) -> GameMessages:
    """Bots play one whole game on a real table (TLS, ACL, the hub in its own process)
    while a sniffer with the hub's user counts every message on the table."""
    from firmware.tools.bots.secret_identity import Director  # the bots: only here

    sim = SimTable(
        players=players,
        workdir=Path(tempfile.mkdtemp(prefix="coffre-game-")),
        embedded=False,
        seed=seed,
        hub_mode="process",
    )
    sim.start()
    try:
        sim.watch.wait_hub_ready()
        sniffer = _Sniffer(sim.broker.config(HUB_USER))
        bots = Director(sim, sim.watch, random.Random(seed), say=lambda _: None)
        bots.start_game(players)
        bots.play()
        return GameMessages(players, sniffer.counts())
    finally:
        sim.stop()


# --- the command -----------------------------------------------------------------------


def _ratio(coffre: float, base: float) -> str:
    return f"{coffre / base:.1f}x" if base > 0 else "n/a"


def _tap_report(stations: int, taps: int) -> None:
    coffre, base = run_pair(stations, taps)
    print(
        f"{coffre['taps']} taps on {coffre['stations']} stations through mosquitto on loopback "
        f"(reader polled every {coffre['poll_interval_ms']:.0f} ms; coffre and echo taps in "
        f"{_rounds(taps)} alternating rounds)"
    )
    for key, label in (("read_to_screen", "read -> screen"), ("lay_to_screen", "laid -> screen")):
        p50, p99 = coffre[f"{key}_p50"], coffre[f"{key}_p99"]
        e50, e99 = base[f"{key}_p50"], base[f"{key}_p99"]
        print(
            f"{label}: coffre p50 {p50:.2f} ms, p99 {p99:.2f} ms | echo p50 {e50:.2f} ms, "
            f"p99 {e99:.2f} ms | coffre/echo p50 {_ratio(p50, e50)}, p99 {_ratio(p99, e99)}"
        )


def machine() -> str:
    """The conditions a figure was measured in (this machine is often shared)."""
    return f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before the run"


def _load_report(args: Any) -> int:
    disk = ""
    if args.commit_delay or args.stall:
        disk = (
            f" on a simulated slow disk ({args.commit_delay:g} ms a commit, a {args.stall:g} ms "
            f"stall every {args.stall_every:g} s)"
        )
    hubs = ""
    if args.hubs > 1:
        hubs = f" on {args.hubs} hub processes (TLS, a broker user each)"
    print(
        f"{args.tables} tables x {STATIONS_PER_TABLE} stations{hubs} at {args.rate:g} input/s"
        f"{disk}; {machine()}"
    )
    result = run_load(
        args.tables,
        args.duration,
        hubs=args.hubs,
        rate=args.rate,
        sniff=not args.no_sniff,
        commit_delay_ms=args.commit_delay,
        stall_ms=args.stall,
        stall_every_s=args.stall_every,
    )
    for line in result.details():
        print(line)
    if disk and result.sent_at:
        floor = disk_floor(result.sent_at, args.commit_delay, args.stall, args.stall_every)
        print(
            f"the disk alone (these inputs, the rest free): p50 {statistics.median(floor):.1f} ms,"
            f" p99 {percentile(floor, 0.99):.1f} ms"
        )
    if not args.no_echo:
        base = run_load(args.tables, args.duration, server="echo", rate=args.rate)
        print(f"echo:   {base.line()}")
        print(
            f"coffre/echo: p50 {_ratio(result.p50, base.p50)}, p99 {_ratio(result.p99, base.p99)}"
        )
    print(result.line())
    return 0 if result.lost == 0 and result.twice == 0 else 1


def main(args: Any) -> int:
    from firmware.tools import piclass

    if getattr(args, "pi_class", False):
        return piclass.report(args)
    pi_class_only = [
        option
        for option, dest, default in (("--runs", "runs", 1), ("--i2c-hz", "i2c_hz", piclass.I2C_HZ))
        if getattr(args, dest, default) != default
    ]
    if pi_class_only:
        verb = "work" if len(pi_class_only) > 1 else "works"
        options = " and ".join(pi_class_only)
        print(f"coffre: bench: {options} {verb} only with --pi-class", file=sys.stderr)
        return 2
    if args.tables:
        return _load_report(args)
    _tap_report(args.stations, args.taps)
    return 0


if __name__ == "__main__":  # the echo server or the sniffer, in a process of its own
    ns = helper_parser().parse_args()
    broker = BrokerConfig(ns.host, ns.port, ns.username, ns.password, tls_ca=ns.ca)
    if ns.sniff:
        sniff(broker)
    else:
        echo(broker)
