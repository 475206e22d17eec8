"""``coffre bench --pi-class``: tap to glass projected onto a Zero 2 W station and a Pi 4 hub.

Every station is a process of its own on emulated chips (the real MFRC522 and SSD1306
drivers, see :mod:`device.emulated`), the hub is ``coffre hub`` in a process of its own,
and mosquitto (TLS and ACL, as installed) runs beside it, as on the hub's Pi. Each of
them is confined to the CPU share of one core that a Zero 2 W (stations) or a Pi 4 (hub
and broker) gives Python, by a cgroup CPU quota (v2 ``cpu.max`` or v1
``cpu.cfs_quota_us``, whichever this machine lets root write). On top:

- the reader is polled at its real interval (the tag is laid at a random moment of it),
  and the MFRC522 chip timer runs in real time;
- the hub's store waits as an SD card does (``COFFRE_SIMULATE_DISK``: a delay per fsync,
  per commit before the writer thread, and a stall every few seconds);
- the SSD1306's I2C time is charged for the bytes the driver actually sent (address
  byte, control bytes and data, 9 clocks a byte at 400 kHz): the station thread sleeps
  that long after each frame, as it would block in the ``i2c_rdwr`` ioctl.

Each step is stamped with ``time.perf_counter()`` (CLOCK_MONOTONIC, one clock for every
process of the machine) so a tap's time splits into poll, station, network, hub,
commit, render and I2C. How the CPU shares were derived: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import runpy
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware.link.mqtt import BrokerConfig

#: The CPU time of the calibration loop (n-body, 200,000 steps) on each board, as a
#: share of this machine is computed at run time; these are the boards' own figures.
#: Pi 4 (Cortex-A72, 1.5 GHz): 5,000,000 n-body steps in 158.3 s of Python (see the notes).
PI4_NBODY_S_PER_STEP = 158.3 / 5_000_000
#: Zero 2 W (Cortex-A53, 1 GHz) against a Pi 4: 0.33 (single-core sysbench per clock,
#: A53 / A72, times 1.0 / 1.5 GHz; see the notes).
ZERO_VS_PI4 = 0.33
CALIBRATION_STEPS = 200_000

I2C_HZ = 400_000
I2C_BITS_PER_BYTE = 9  # 8 data bits and the ACK
I2C_FRAME_BITS = 2  # START and STOP

#: A plausible SD card under SQLite synchronous=FULL: 5 ms a commit, a 100 ms stall every 2 s.
SD_COMMIT_MS = 5.0
SD_STALL_MS = 100.0
SD_STALL_EVERY_S = 2.0

STEPS = ("poll", "station", "network", "hub", "commit", "render", "i2c")


# --- how much CPU a board gives Python -----------------------------------------------------


def nbody_seconds(steps: int = CALIBRATION_STEPS) -> float:
    """CPU seconds of ``steps`` steps of the benchmarks game's n-body (Python #1) here."""
    bodies = [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 39.47841760435743),
        ([4.84, -1.16, -0.10], [0.61, 2.81, -0.03], 0.037693674870389),
        ([8.34, 4.12, -0.40], [-1.01, 1.83, 0.01], 0.011286326131968),
        ([12.89, -15.11, -0.22], [1.08, 0.87, -0.01], 0.0017237240570597),
        ([15.38, -25.92, 0.18], [0.98, 0.59, -0.03], 0.0020336868699246),
    ]
    pairs = [(bodies[i], b) for i in range(len(bodies)) for b in bodies[i + 1 :]]
    dt = 0.01
    start = time.process_time()
    for _ in range(steps):
        for ([x1, y1, z1], v1, m1), ([x2, y2, z2], v2, m2) in pairs:
            dx, dy, dz = x1 - x2, y1 - y2, z1 - z2
            mag = dt * ((dx * dx + dy * dy + dz * dz) ** (-1.5))
            b1m, b2m = m1 * mag, m2 * mag
            v1[0] -= dx * b2m
            v1[1] -= dy * b2m
            v1[2] -= dz * b2m
            v2[0] += dx * b1m
            v2[1] += dy * b1m
            v2[2] += dz * b1m
        for r, [vx, vy, vz], _m in bodies:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz
    return time.process_time() - start


@dataclass
class Shares:
    """The share of one of this machine's cores that each board's Python gets."""

    pi4: float
    zero: float
    here_s: float = 0.0  # the calibration loop's CPU time here

    @classmethod
    def calibrate(cls) -> Shares:
        here = nbody_seconds()
        pi4 = min(1.0, here / (PI4_NBODY_S_PER_STEP * CALIBRATION_STEPS))
        return cls(pi4, pi4 * ZERO_VS_PI4, here)


# --- cgroup CPU quotas -----------------------------------------------------------------------


class Cgroups:
    """CPU-quota groups for the bench's processes, made and removed by the bench."""

    V2 = Path("/sys/fs/cgroup")
    V1 = Path("/sys/fs/cgroup/cpu")

    def __init__(self) -> None:
        self.made: list[Path] = []
        self.kind = self._probe()

    def _probe(self) -> str | None:
        if os.geteuid() != 0:
            return None
        if (self.V2 / "cgroup.controllers").is_file():
            controllers = (self.V2 / "cgroup.controllers").read_text().split()
            return "v2" if "cpu" in controllers else None
        if (self.V1 / "cpu.cfs_quota_us").is_file():
            return "v1"
        return None

    def group(self, name: str, share: float) -> Path:
        """A group whose processes together get ``share`` of one core (1 ms slices at least:
        the kernel's smallest quota)."""
        assert self.kind is not None
        quota = 1000
        period = max(1000, min(1_000_000, round(quota / share)))
        base = self.V2 if self.kind == "v2" else self.V1
        path = base / f"coffre-bench-{os.getpid()}-{name}"
        path.mkdir(exist_ok=True)
        self.made.append(path)
        if self.kind == "v2":
            (path / "cpu.max").write_text(f"{quota} {period}\n")
        else:
            (path / "cpu.cfs_period_us").write_text(f"{period}\n")
            (path / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        return path

    @staticmethod
    def enter(path: Path, pid: int) -> None:
        (path / "cgroup.procs").write_text(f"{pid}\n")

    def remove(self) -> None:
        """Remove the groups (their processes have ended: a group with members stays)."""
        for path in reversed(self.made):
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
        self.made.clear()


# --- the station process -----------------------------------------------------------------------


class _Events:
    """JSON lines to stdout, one writer at a time."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.lock = threading.Lock()

    def __call__(self, **event: Any) -> None:
        line = json.dumps(event)
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()


def station_main(ns: argparse.Namespace) -> int:
    """One station on emulated chips; stdin says ``lay UID`` / ``lift`` / ``quit``."""
    from device.emulated import open_emulated_station
    from firmware.link.mqtt import BrokerConfig
    from firmware.station.service import Station

    emit = _Events(sys.stdout)
    emu = open_emulated_station(timer="realtime")
    emulated = _count_emulation()
    charge = [0.0, 0]  # seconds of I2C owed by the frame being drawn, its bytes
    panel_write = emu.panel.i2c_write

    def i2c_write(data: bytes) -> None:
        panel_write(data)
        charge[0] += ((1 + len(data)) * I2C_BITS_PER_BYTE + I2C_FRAME_BITS) / I2C_HZ
        charge[1] += 1 + len(data)

    emu.panel.i2c_write = i2c_write  # type: ignore[method-assign]
    display = emu.display
    show = display.show

    def timed_show(image: Any) -> None:
        charge[0], charge[1] = 0.0, 0
        before = emulated["i2c"]
        t0 = time.perf_counter()
        show(image)
        t1 = time.perf_counter()
        if charge[0]:
            time.sleep(charge[0])  # the bus is busy: the station thread waits in i2c_rdwr
        glass = time.perf_counter()
        emit(ev="frame", t0=t0, t1=t1, glass=glass, i2c_bytes=charge[1],
             emulated=emulated["i2c"] - before)  # fmt: skip

    display.show = timed_show

    class TracedStation(Station):
        def _send(self, fields: dict[str, Any]) -> None:
            super()._send(fields)
            if fields.get("kind") == "tag":
                emit(ev="sent", id=f"{self.boot}:{self.seq}", read=self.read_at,
                     sent=time.perf_counter(), spi_emulated=emulated["spi"])  # fmt: skip

    broker = BrokerConfig(ns.host, ns.port, ns.username, ns.password, tls_ca=ns.ca)
    station = TracedStation(
        broker, ns.table, ns.id, emu.devices, poll_interval=ns.poll, show_link=False
    )
    screen_topic = station.topics.station(ns.id, "screen")
    inbox = station.client.inbox
    put = inbox.put

    def stamped_put(item: Any, block: bool = True, timeout: float | None = None) -> None:
        if getattr(item, "topic", None) == screen_topic:
            emit(ev="screen", t=time.perf_counter())
        put(item, block, timeout)

    inbox.put = stamped_put  # type: ignore[method-assign]
    station.start()
    emit(ev="up")
    try:
        for line in sys.stdin:
            words = line.split()
            if not words or words[0] == "quit":
                break
            if words[0] == "lay":
                time.sleep(random.uniform(0, ns.poll))  # any moment of the poll interval
                emit(ev="laid", t=time.perf_counter(), spi_emulated=emulated["spi"])
                emu.field.place(words[1])
            elif words[0] == "lift":
                emu.field.remove()
                while emu.reader.current is not None:
                    time.sleep(ns.poll / 2)
                emit(ev="lifted")
    finally:
        station.stop()
        emu.close()
    return 0


def _count_emulation() -> dict[str, float]:
    """CPU seconds spent in the emulated chips and their fake buses (silicon and a kernel
    ioctl on a Pi), by bus: the run reports the steps with and without them."""
    from device.emulated import EmulatedStation, rack

    spent = {"spi": 0.0, "i2c": 0.0}

    def count(cls: Any, name: str, bus: str) -> None:
        inner = getattr(cls, name)

        def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return inner(self, *args, **kwargs)
            finally:
                spent[bus] += time.thread_time() - start

        setattr(cls, name, counted)

    for name in ("xfer", "xfer2", "xfer3", "writebytes", "writebytes2", "readbytes"):
        count(rack.FakeSpiDev, name, "spi")
    count(rack.FakeSMBus, "_write", "i2c")
    count(EmulatedStation, "glass_written", "i2c")  # the emulated glass's frame log
    return spent


# --- the hub process -------------------------------------------------------------------------


def hub_main(ns: argparse.Namespace) -> int:
    """``coffre hub`` with its inputs, commits and screens stamped into ``--trace``."""
    from firmware.hub import service
    from firmware.hub.store import Store
    from firmware.link import mqtt

    trace = open(ns.trace, "a", buffering=1)  # noqa: SIM115 - the process's whole life
    lock = threading.Lock()

    def note(**event: Any) -> None:
        with lock:
            trace.write(json.dumps(event) + "\n")

    on_message = mqtt.Client._on_message

    def _on_message(self: Any, c: Any, u: Any, msg: Any) -> None:
        if msg.topic.endswith("/input"):
            with contextlib.suppress(ValueError, AttributeError):
                note(ev="in", id=json.loads(msg.payload).get("id"), t=time.perf_counter())
        on_message(self, c, u, msg)

    commit = Store.commit
    sync = getattr(Store, "sync", None)  # the writer thread's fsync (absent before it)

    def _commit(self: Store) -> None:
        t0 = time.perf_counter()
        commit(self)
        note(ev="commit", t0=t0, t1=time.perf_counter())

    def _sync(self: Store) -> int:
        before = self.synced
        t0 = time.perf_counter()
        done = int(sync(self))  # type: ignore[misc]
        if done > before:
            note(ev="sync", t0=t0, t1=time.perf_counter())
        return done

    send_held = service.Hub._send_held

    def _send_held(self: Any, item: Any) -> None:
        send_held(self, item)
        if item.topic.endswith("/screen"):
            note(ev="pub", topic=item.topic, t=time.perf_counter())

    mqtt.Client._on_message = _on_message  # type: ignore[method-assign,assignment]
    Store.commit = _commit  # type: ignore[method-assign]
    if sync is not None:
        Store.sync = _sync  # type: ignore[method-assign]
    service.Hub._send_held = _send_held  # type: ignore[method-assign]
    # The real command line, as the unit runs it (tools never import the CLI module).
    sys.argv = ["coffre", "hub", "--config", ns.config]
    try:
        runpy.run_module("firmware.cli", run_name="__main__")
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


# --- the run -------------------------------------------------------------------------------------


class StationProc:
    """A station process and the events it printed."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        with log.open("ab") as err:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                bufsize=1,
            )  # fmt: skip
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with contextlib.suppress(ValueError):
                self.events.put(json.loads(line))

    def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def next(self, kind: str, timeout: float = 20.0) -> dict[str, Any]:
        """The next event of that kind (earlier ones of other kinds are dropped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {kind} from the station")
            try:
                event = self.events.get(timeout=min(left, 1.0))
            except queue.Empty:
                if self.proc.poll() is not None:
                    tail = self.log.read_text(errors="replace")[-2000:]
                    code = self.proc.returncode
                    raise ChildProcessError(f"a station ended ({code}): {tail}") from None
                continue
            if event.get("ev") == kind:
                return event

    def drain(self) -> list[dict[str, Any]]:
        got = []
        with contextlib.suppress(queue.Empty):
            while True:
                got.append(self.events.get_nowait())
        return got

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.say("quit")
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Tap:
    """One tap's stamps (perf_counter seconds)."""

    station: str
    laid: float
    read: float
    sent: float
    input_id: str
    screen_in: float
    draw0: float
    draw1: float
    glass: float
    i2c_bytes: int
    #: CPU seconds (host) spent in the emulated MFRC522 while polling, in the emulated
    #: SSD1306 while drawing.
    poll_emulated: float = 0.0
    render_emulated: float = 0.0
    hub_in: float = 0.0
    commit0: float = 0.0
    commit1: float = 0.0
    pub: float = 0.0
    stalled: bool = False

    def split(self) -> dict[str, float]:
        """Milliseconds in each step; they add up to the tap's total."""
        ms = 1000.0
        return {
            "poll": (self.read - self.laid) * ms,
            "station": ((self.sent - self.read) + (self.draw0 - self.screen_in)) * ms,
            "network": ((self.hub_in - self.sent) + (self.screen_in - self.pub)) * ms,
            "hub": ((self.commit0 - self.hub_in) + (self.pub - self.commit1)) * ms,
            "commit": (self.commit1 - self.commit0) * ms,
            "render": (self.draw1 - self.draw0) * ms,
            "i2c": (self.glass - self.draw1) * ms,
        }

    @property
    def total(self) -> float:
        return (self.glass - self.laid) * 1000.0

    def emulation_ms(self, share: float) -> float:
        """What the chips' emulation cost this tap at the station's CPU share (ms): silicon
        on a Pi, so the tap less this is the estimate without it."""
        return (self.poll_emulated + self.render_emulated) / share * 1000.0


@dataclass
class PiClassResult:
    shares: Shares
    confined: str
    poll_ms: float
    disk: tuple[float, float, float]
    taps: list[Tap] = field(default_factory=list)

    def totals(self) -> list[float]:
        return [t.total for t in self.taps]

    def lines(self) -> list[str]:
        from firmware.tools.bench import percentile

        totals = self.totals()
        commit, stall, every = self.disk
        out = [
            f"Pi-class: stations as a Zero 2 W ({self.shares.zero * 100:.1f} % of a core here), "
            f"hub and mosquitto as a Pi 4 ({self.shares.pi4 * 100:.1f} % each) by {self.confined}; "
            f"reader polled every {self.poll_ms:g} ms; SD card {commit:g} ms a commit, "
            f"a {stall:g} ms stall every {every:g} s; SSD1306 I2C at {I2C_HZ // 1000} kHz",
            f"(calibration: {CALIBRATION_STEPS:,} n-body steps took {self.shares.here_s:.2f} s of "
            f"CPU here, {PI4_NBODY_S_PER_STEP * CALIBRATION_STEPS:.2f} s on a Pi 4)",
            f"{len(totals)} taps, tap to glass: p50 {statistics.median(totals):.1f} ms, "
            f"p99 {percentile(totals, 0.99):.1f} ms, max {max(totals):.1f} ms "
            f"({sum(t.stalled for t in self.taps)} taps met an SD stall)",
            "where the time goes (ms): step p50 / mean / p99",
        ]
        splits = [t.split() for t in self.taps]
        for step in STEPS:
            values = [s[step] for s in splits]
            out.append(
                f"  {step:<8} {statistics.median(values):7.2f} / {statistics.mean(values):7.2f}"
                f" / {percentile(values, 0.99):7.2f}"
            )
        less = [t.total - t.emulation_ms(self.shares.zero) for t in self.taps]
        chips = [t.emulation_ms(self.shares.zero) for t in self.taps]
        out.append(
            f"  of which chip emulation (Python here, silicon on a Pi) at the Zero's share: "
            f"p50 {statistics.median(chips):.2f} ms; tap to glass without it: "
            f"p50 {statistics.median(less):.1f} ms, p99 {percentile(less, 0.99):.1f} ms"
        )
        sent = [t.i2c_bytes for t in self.taps]
        out.append(
            f"  (I2C bytes a frame: median {statistics.median(sent):.0f}, max {max(sent)}; "
            f"mean of the sum of steps {statistics.mean(totals):.2f} ms)"
        )
        return out


def _module_args(*extra: str) -> list[str]:
    return [sys.executable, "-m", "firmware.tools.piclass", *extra]


def run_pi_class(
    taps: int = 40,
    *,
    stations: int = 8,
    poll_interval: float = 0.02,
    disk: tuple[float, float, float] = (SD_COMMIT_MS, SD_STALL_MS, SD_STALL_EVERY_S),
    shares: Shares | None = None,
    workdir: Path | None = None,
) -> PiClassResult:
    """The Pi-class tap run; raises RuntimeError when this machine has no CPU quotas."""
    from firmware.hub.brokerconf import HOST_USER
    from firmware.tools.bench import BENCH_GAME, stop_process
    from firmware.tools.brokers import start_broker
    from firmware.tools.simtable import PublicWatcher, SimTable

    cgroups = Cgroups()
    if cgroups.kind is None:
        raise RuntimeError(
            "no cgroup CPU control here (it needs root and a writable cpu controller)"
        )
    shares = shares or Shares.calibrate()
    workdir = workdir or Path(tempfile.mkdtemp(prefix="coffre-piclass-"))
    sim = SimTable(players=stations, workdir=workdir, embedded=False, seed=1, hub_mode="process")
    result = PiClassResult(shares, f"cgroup {cgroups.kind} CPU quotas", poll_interval * 1000, disk)
    procs: list[StationProc] = []
    hub: subprocess.Popen[bytes] | None = None
    trace = workdir / "hub-trace.jsonl"
    broker = start_broker(workdir, sim.names, embedded=False)
    sim.broker = broker
    watch = PublicWatcher(broker.config(HOST_USER))
    try:
        pi4_broker = cgroups.group("pi4-broker", shares.pi4)
        mosquitto = getattr(broker.process, "proc", None)
        if mosquitto is not None:
            cgroups.enter(pi4_broker, mosquitto.pid)
        watch.start()
        sim.watch = watch
        (workdir / "hub.toml").write_text(sim.hub_toml())
        pi4_hub = cgroups.group("pi4-hub", shares.pi4)
        env = {**os.environ, "COFFRE_SIMULATE_DISK": ",".join(f"{x:g}" for x in disk)}
        log = (workdir / "hub.log").open("ab")
        hub = subprocess.Popen(
            _module_args("hub", "--config", str(workdir / "hub.toml"), "--trace", str(trace)),
            stdout=log,
            stderr=log,
            env=env,
            preexec_fn=lambda: Cgroups.enter(pi4_hub, os.getpid()),
        )
        watch.wait_hub_ready(60)
        for name in sim.names:
            args = station_args(broker.station_config(name), name, poll_interval)
            group = cgroups.group(f"zero-{name}", shares.zero)
            proc = StationProc(_module_args(*args), workdir / f"station-{name}.log")
            Cgroups.enter(group, proc.proc.pid)
            procs.append(proc)
        for proc in procs:
            proc.next("up", 120)
            proc.next("frame", 120)  # the hub's first screen is on the glass
        sim.host({"cmd": "start", "game": BENCH_GAME, "players": stations})
        watch.wait(lambda p: p.get("game") == BENCH_GAME, 30)
        time.sleep(1.0)
        for i in range(taps):
            k = i % stations
            uid = sim.keys.uid_for("mystery", None, 1 + k)
            result.taps.append(_one_tap(sim, watch, procs[k], sim.names[k], uid))
    finally:
        for proc in procs:
            proc.stop()
        stop_process(hub)
        with contextlib.suppress(Exception):
            watch.stop()
        broker.stop()
        cgroups.remove()
    _match_hub(result.taps, trace, disk)
    return result


def _one_tap(sim: Any, watch: Any, proc: StationProc, name: str, uid: str) -> Tap:
    proc.drain()
    proc.say(f"lay {uid}")
    laid_event = proc.next("laid")
    laid, laid_spi = laid_event["t"], laid_event["spi_emulated"]
    sent = proc.next("sent")
    screen_in = proc.next("screen")["t"]
    frame = proc.next("frame")
    while frame["t0"] < screen_in:
        frame = proc.next("frame")
    proc.say("lift")
    proc.next("lifted")
    version = watch.public["version"]
    proc.drain()
    sim.host({"cmd": "undo"})
    watch.wait(lambda p: bool(p["version"] != version), 30)
    proc.next("frame")  # the undone screen is drawn: the table is still again
    time.sleep(0.05)
    return Tap(
        name,
        laid,
        sent["read"],
        sent["sent"],
        sent["id"],
        screen_in,
        frame["t0"],
        frame["t1"],
        frame["glass"],
        frame["i2c_bytes"],
        poll_emulated=sent["spi_emulated"] - laid_spi,
        render_emulated=frame["emulated"],
    )


def _match_hub(taps: list[Tap], trace: Path, disk: tuple[float, float, float]) -> None:
    """Fill in each tap's hub stamps from the hub's trace."""
    events = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    arrived = {e["id"]: e["t"] for e in events if e["ev"] == "in"}
    commits = [e for e in events if e["ev"] == "commit"]
    syncs = [e for e in events if e["ev"] == "sync"]
    pubs = [e for e in events if e["ev"] == "pub"]
    for tap in taps:
        tap.hub_in = arrived.get(tap.input_id, tap.sent)
        done = next((c for c in commits if c["t0"] >= tap.hub_in), None)
        if done is None:
            continue
        tap.commit0, tap.commit1 = done["t0"], done["t1"]
        # With a writer thread, the commit is durable at the end of the first fsync that
        # started after it ended (the SD card's time is there).
        synced = next((x for x in syncs if x["t0"] >= done["t1"]), None)
        if synced is not None:
            tap.commit1 = synced["t1"]
        tap.stalled = disk[1] > 0 and (tap.commit1 - tap.commit0) * 1000 > disk[0] + disk[1] / 2
        topic = f"/station/{tap.station}/screen"
        pub = next((p for p in pubs if p["t"] >= tap.commit1 and p["topic"].endswith(topic)), None)
        tap.pub = pub["t"] if pub is not None else tap.commit1


def report(args: Any) -> int:
    """``coffre bench --pi-class``: print the run's figures."""
    disk = (
        args.commit_delay or SD_COMMIT_MS,
        args.stall or SD_STALL_MS,
        args.stall_every or SD_STALL_EVERY_S,
    )
    try:
        result = run_pi_class(args.taps, stations=args.stations, disk=disk)
    except RuntimeError as exc:
        print(f"coffre: bench --pi-class: {exc}", file=sys.stderr)
        return 2
    for line in result.lines():
        print(line)
    return 0


def station_args(config: BrokerConfig, name: str, poll_interval: float) -> list[str]:
    """A station process's arguments (its broker's as bench gives them: whole)."""
    from firmware.tools.bench import broker_args
    from firmware.tools.brokers import TABLE

    args = ["station", "--table", TABLE, "--id", name, "--poll", str(poll_interval)]
    return args + broker_args(config)


def parser() -> argparse.ArgumentParser:
    """The command line of this module's processes (a station, the hub)."""
    parser = argparse.ArgumentParser(description="coffre bench --pi-class's processes")
    sub = parser.add_subparsers(dest="role", required=True)
    st = sub.add_parser("station")
    st.add_argument("--table", required=True)
    st.add_argument("--id", required=True)
    st.add_argument("--poll", type=float, default=0.02)
    st.add_argument("--host", default="127.0.0.1")
    st.add_argument("--port", type=int, required=True)
    st.add_argument("--username")
    st.add_argument("--password")
    st.add_argument("--ca")
    hb = sub.add_parser("hub")
    hb.add_argument("--config", required=True)
    hb.add_argument("--trace", required=True)
    return parser


if __name__ == "__main__":
    ns = parser().parse_args()
    sys.exit(station_main(ns) if ns.role == "station" else hub_main(ns))
