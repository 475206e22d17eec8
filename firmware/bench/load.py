"""Load mode (``coffre bench --tables N``) and venue mode (``--hubs H --tables N``).

Load mode: one hub process runs N tables of 8 stations; every station turns its knob once a
second (each turn is a committed event that changes its screen), sent by a load generator
that speaks for all stations on one connection (the broker has no ACL or TLS here, for
coffre and echo alike). Measured: input -> its answer (the hub sends the screens first).
``--commit-delay MS`` (with ``--stall MS --stall-every S``) runs the hub on the simulated
SD card of :mod:`firmware.bench.sd_card` and prints what that disk alone allows these
inputs. The last line is for scripts:
``tables=N stations=M inputs_per_s=X p50_ms=Y p99_ms=Z lost=0``.

Venue mode: the same load on H ``coffre hub`` processes, the N tables split between them,
all on one mosquitto set up as ``coffre broker-config`` sets up a venue (TLS, a broker user
per hub allowed on its own tables). Also printed: p50/p99 per hub, inputs answered twice
(must be 0), the messages the hubs send per input (counted by :mod:`firmware.bench.sniffer`)
and each process's CPU time and memory over the load (:mod:`firmware.bench.process_meter`).
"""

from __future__ import annotations

import heapq
import json
import os
import queue
import secrets
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

from firmware.bench import echo
from firmware.bench.process_meter import Meter, Usage
from firmware.bench.sd_card import disk_floor, simulated_disk
from firmware.bench.shared import (
    BENCH_GAME,
    STATIONS_PER_TABLE,
    machine,
    percentile,
    ratio,
    stop_process,
)
from firmware.bench.sniffer import INPUT_KINDS, Sniffer
from firmware.hub.brokerconf import (
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
from firmware.tools.brokers import Mosquitto, free_port, serve

#: The load generator's broker user on a venue broker (a bench's own: no install has it).
BENCH_USER = "bench"
#: How long the load generator waits for the last answers once it stops sending.
GRACE_SECONDS = 5.0


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
            self.procs["echo"] = echo.start(self.config)
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
        sniffer = Sniffer(self.config) if sniff else None
        meter = Meter(
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
        env.update(simulated_disk(commit_delay_ms, stall_ms, stall_every_s))
    secure = hubs > 1 if users is None else users
    venue = Venue(tables, hubs, server=server, env=env, users=secure)
    try:
        venue.start()
        return venue.run(seconds, rate, boot=f"b{os.getpid() % 10000}", sniff=sniff)
    finally:
        venue.stop()


def report(args: Any) -> int:
    """``coffre bench --tables N`` (``--hubs H``): the load against coffre and the echo
    server, printed; 1 when an input was lost or answered twice."""
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
        print(f"coffre/echo: p50 {ratio(result.p50, base.p50)}, p99 {ratio(result.p99, base.p99)}")
    print(result.line())
    return 0 if result.lost == 0 and result.twice == 0 else 1
