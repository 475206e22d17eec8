"""``coffre bench --pi-class``: tap to glass projected onto a Zero 2 W station and a Pi 4 hub.

Every station is a process of its own modelled as a Zero 2 W
(:mod:`firmware.bench.pi_zero_model`), the hub is ``coffre hub`` in a process of its own
(:mod:`firmware.bench.traced_hub`), and mosquitto (TLS and ACL, as installed) runs beside
it, as on the hub's Pi. Each of them is confined to the CPU share of one core that a Zero
2 W (stations) or a Pi 4 (hub and broker) gives Python (:mod:`firmware.bench.cpu_quota`).
On top, the reader is polled at its real interval (the tag is laid at a random moment of
it) and the hub's store waits as an SD card does (:mod:`firmware.bench.sd_card`).

Each step is stamped with ``time.perf_counter()`` (CLOCK_MONOTONIC, one clock for every
process of the machine) so a tap's time splits into poll, station, network, hub, commit,
render and I2C. How the CPU shares were derived: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from firmware.bench.cpu_quota import CALIBRATION_STEPS, PI4_NBODY_S_PER_STEP, Cgroups, Shares
from firmware.bench.pi_zero_model import I2C_HZ, station_main
from firmware.bench.sd_card import (
    SD_COMMIT_MS,
    SD_STALL_EVERY_S,
    SD_STALL_MS,
    simulated_disk,
)
from firmware.bench.shared import BENCH_GAME, broker_args, percentile, stop_process
from firmware.bench.traced_hub import hub_main
from firmware.hub.brokerconf import HOST_USER
from firmware.tools.brokers import TABLE, start_broker
from firmware.tools.simtable import PublicWatcher, SimTable

if TYPE_CHECKING:
    from firmware.link.mqtt import BrokerConfig

STEPS = ("poll", "station", "network", "hub", "commit", "render", "i2c")


class StationProc:
    """A station process and the events it printed."""

    def __init__(self, args: list[str], log: Path, group: Path) -> None:
        self.log = log
        with log.open("ab") as err:
            # In its group from the start: a later move of the whole process would take
            # the chips' threads back into the quota.
            self.proc = subprocess.Popen(
                args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                bufsize=1, preexec_fn=lambda: Cgroups.enter(group, os.getpid()),
            )  # fmt: skip
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.kept: list[dict[str, Any]] = []
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

    def next(self, kind: str, timeout: float = 20.0, *, keep: str | None = None) -> dict[str, Any]:
        """The next event of that kind (earlier ones of other kinds are dropped, but those
        of kind ``keep``, which go to ``kept``)."""
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
            if keep is not None and event.get("ev") == keep:
                self.kept.append(event)

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
    #: CPU seconds (host) spent in the emulated MFRC522 while polling (in the quota), in
    #: the emulated SSD1306 for the frame (outside it, when moved), queueing the frame's
    #: I2C writes to it (in the quota); the SPI wire seconds of the poll.
    poll_emulated: float = 0.0
    render_emulated: float = 0.0
    render_queued: float = 0.0
    spi_wire: float = 0.0
    #: CPU seconds (host) of the RF exchanges during the poll (outside the quota, when
    #: moved); whether the frame reached the emulated panel after its wire time.
    poll_rf: float = 0.0
    late: bool = False
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

    def emulation_ms(self, share: float, outside: bool) -> float:
        """What the chips' emulation charged to the quota cost this tap at the station's
        CPU share (ms): silicon on a Pi, so the tap less this is the estimate without it."""
        charged = self.poll_emulated
        if not outside:
            charged += self.render_emulated + self.poll_rf
        return charged / share * 1000.0


@dataclass
class PiClassResult:
    shares: Shares
    confined: str
    poll_ms: float
    disk: tuple[float, float, float]
    i2c_hz: int = I2C_HZ
    #: Whether every station's chips ran outside its quota (cgroup v1 threads).
    chips_outside: bool = False
    taps: list[Tap] = field(default_factory=list)
    #: the stations' controls' class (``GpioControls``: gpiozero over mock pins)
    controls: str = ""

    def totals(self) -> list[float]:
        return [t.total for t in self.taps]

    def by_stall(self) -> tuple[list[float], list[float]]:
        """The totals of the taps that met no SD stall, and of those that met one."""
        clear = [t.total for t in self.taps if not t.stalled]
        stalled = [t.total for t in self.taps if t.stalled]
        return clear, stalled

    def lines(self) -> list[str]:
        def p50_p99(values: list[float]) -> str:
            if not values:
                return "none"
            return f"p50 {statistics.median(values):.1f} ms, p99 {percentile(values, 0.99):.1f} ms"

        totals = self.totals()
        commit, stall, every = self.disk
        zero = self.shares.zero
        beyond = " (beyond the SSD1306 datasheet's 400 kHz)" if self.i2c_hz > I2C_HZ else ""
        chips = (
            "the chips' emulation outside the Zero's quota (a thread of its own)"
            if self.chips_outside
            else "the chips' emulation inside the Zero's quota"
        )
        clear, stalled = self.by_stall()
        out = [
            f"Pi-class: stations as a Zero 2 W ({zero * 100:.1f} % of a core here), "
            f"hub and mosquitto as a Pi 4 ({self.shares.pi4 * 100:.1f} % each) by {self.confined}; "
            f"reader polled every {self.poll_ms:g} ms; SD card {commit:g} ms a commit, "
            f"a {stall:g} ms stall every {every:g} s; SSD1306 I2C at {self.i2c_hz / 1000:g} kHz"
            f"{beyond}; MFRC522 SPI wire time charged; {chips}"
            + (
                "; LED and buzzer through gpiozero (mock pins)"
                if self.controls == "GpioControls"
                else ""
            ),
            f"(calibration: {CALIBRATION_STEPS:,} n-body steps took {self.shares.here_s:.2f} s of "
            f"CPU here, {PI4_NBODY_S_PER_STEP * CALIBRATION_STEPS:.2f} s on a Pi 4)",
            f"{len(totals)} taps, tap to glass: p50 {statistics.median(totals):.1f} ms, "
            f"p99 {percentile(totals, 0.99):.1f} ms, max {max(totals):.1f} ms "
            f"({len(stalled)} taps met an SD stall)",
            f"  the {len(clear)} taps that met no stall: {p50_p99(clear)}; "
            f"the {len(stalled)} that met one: {p50_p99(stalled)}",
            "where the time goes (ms): step p50 / mean / p99",
        ]
        splits = [t.split() for t in self.taps]
        for step in STEPS:
            values = [s[step] for s in splits]
            out.append(
                f"  {step:<8} {statistics.median(values):7.2f} / {statistics.mean(values):7.2f}"
                f" / {percentile(values, 0.99):7.2f}"
            )
        us = 1e6
        where = "outside the quota" if self.chips_outside else "in the quota"

        def p50_us(values: list[float]) -> str:
            return f"{statistics.median(values) * us:.0f} us"

        out.append(
            f"  chips' emulation a tap, CPU here (p50): MFRC522 registers and hand-offs "
            f"{p50_us([t.poll_emulated for t in self.taps])} in the quota, its RF exchanges "
            f"{p50_us([t.poll_rf for t in self.taps])} {where}; SSD1306 "
            f"{p50_us([t.render_emulated for t in self.taps])} {where}, handing it the frame "
            f"{p50_us([t.render_queued for t in self.taps])} in the quota; SPI wire time "
            f"during the poll {p50_us([t.spi_wire for t in self.taps])}; "
            f"{sum(t.late for t in self.taps)} frames reached the emulated panel after "
            f"their I2C time (stamped when it had them)"
        )
        less = [t.total - t.emulation_ms(zero, self.chips_outside) for t in self.taps]
        chips_ms = [t.emulation_ms(zero, self.chips_outside) for t in self.taps]
        out.append(
            f"  the emulation left in the quota, at the Zero's share: p50 "
            f"{statistics.median(chips_ms):.2f} ms; tap to glass without it: {p50_p99(less)}"
        )
        sent = [t.i2c_bytes for t in self.taps]
        out.append(
            f"  (I2C bytes a frame: median {statistics.median(sent):.0f}, max {max(sent)}; "
            f"mean of the sum of steps {statistics.mean(totals):.2f} ms)"
        )
        return out


def _module_args(*extra: str) -> list[str]:
    return [sys.executable, "-m", "firmware.bench.pi_class", *extra]


def run_pi_class(
    taps: int = 40,
    *,
    stations: int = 8,
    poll_interval: float = 0.02,
    disk: tuple[float, float, float] = (SD_COMMIT_MS, SD_STALL_MS, SD_STALL_EVERY_S),
    shares: Shares | None = None,
    workdir: Path | None = None,
    i2c_hz: int = I2C_HZ,
) -> PiClassResult:
    """The Pi-class tap run; raises RuntimeError when this machine has no CPU quotas."""
    cgroups = Cgroups()
    if cgroups.kind is None:
        raise RuntimeError(
            "no cgroup CPU control here (it needs root and a writable cpu controller)"
        )
    shares = shares or Shares.calibrate()
    workdir = workdir or Path(tempfile.mkdtemp(prefix="coffre-pi-class-"))
    sim = SimTable(players=stations, workdir=workdir, embedded=False, seed=1, hub_mode="process")
    result = PiClassResult(
        shares, f"cgroup {cgroups.kind} CPU quotas", poll_interval * 1000, disk, i2c_hz
    )
    procs: list[StationProc] = []
    hub: subprocess.Popen[bytes] | None = None
    trace = workdir / "hub-trace.jsonl"
    broker = start_broker(workdir, sim.names, embedded=False)
    sim.broker = broker
    watch = PublicWatcher(broker.config(HOST_USER))
    try:
        chips = cgroups.chips()
        pi4_broker = cgroups.group("pi4-broker", shares.pi4)
        mosquitto = getattr(broker.process, "proc", None)
        if mosquitto is not None:
            cgroups.enter(pi4_broker, mosquitto.pid)
        watch.start()
        sim.watch = watch
        (workdir / "hub.toml").write_text(sim.hub_toml())
        pi4_hub = cgroups.group("pi4-hub", shares.pi4)
        env = {**os.environ, **simulated_disk(*disk)}
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
            args = station_args(
                broker.station_config(name), name, poll_interval, shares.zero, i2c_hz, chips
            )
            group = cgroups.group(f"zero-{name}", shares.zero)
            procs.append(StationProc(_module_args(*args), workdir / f"station-{name}.log", group))
        outside, controls = [], set()
        for proc in procs:
            up = proc.next("up", 120)
            outside.append(bool(up.get("chips_outside")))
            controls.add(str(up.get("controls")))
            proc.next("frame", 120)  # the hub's first screen is on the glass
        result.chips_outside = all(outside)
        result.controls = controls.pop() if len(controls) == 1 else ""
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
    laid, before = laid_event["t"], laid_event["spent"]
    # The screen is stamped on the station's network thread, the input's publish on its
    # station thread: under the quota the answer can be stamped before "sent" is.
    proc.kept.clear()
    sent = proc.next("sent", keep="screen")
    early = [e for e in proc.kept if e["t"] >= sent["read"]]
    screen_in = early[0]["t"] if early else proc.next("screen")["t"]
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
        poll_emulated=sent["spent"]["spi"] - before["spi"],
        render_emulated=frame["emulated"],
        render_queued=frame["queued"],
        poll_rf=sent["spent"]["rf"] - before["rf"],
        late=bool(frame["late"]),
        spi_wire=sent["spent"]["spi_wire"] - before["spi_wire"],
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
    runs, i2c_hz = getattr(args, "runs", 1), getattr(args, "i2c_hz", I2C_HZ)
    results = []
    for k in range(runs):
        if runs > 1:
            print(f"--- run {k + 1} of {runs}", flush=True)
        try:
            result = run_pi_class(args.taps, stations=args.stations, disk=disk, i2c_hz=i2c_hz)
        except RuntimeError as exc:
            print(f"coffre: bench --pi-class: {exc}", file=sys.stderr)
            return 2
        for line in result.lines():
            print(line, flush=True)
        results.append(result)
    if runs > 1:
        print(summary(results))
    return 0


def summary(results: list[PiClassResult]) -> str:
    """The median over whole runs of each run's p50 and p99: one run moves by ~10-30 ms
    with the quota's period against a tap's steps (docs/benchmarks.md), so two trees are
    compared by several runs each, calibrated afresh."""

    def median_of(figures: list[float]) -> str:
        listed = ", ".join(f"{f:.1f}" for f in figures)
        return f"median {statistics.median(figures):.1f} ms ({listed})"

    p50s = [statistics.median(r.totals()) for r in results]
    p99s = [percentile(r.totals(), 0.99) for r in results]
    clear_p99s = [percentile(c, 0.99) for r in results if (c := r.by_stall()[0])]
    line = f"{len(results)} runs: tap to glass p50 {median_of(p50s)}; p99 {median_of(p99s)}"
    if clear_p99s:
        line += f"; taps that met no stall, p99 {median_of(clear_p99s)}"
    return line


def station_args(
    config: BrokerConfig,
    name: str,
    poll_interval: float,
    share: float = 1.0,
    i2c_hz: int = I2C_HZ,
    chips: Path | None = None,
) -> list[str]:
    """A station process's arguments (its broker's as bench gives them: whole)."""
    args = ["station", "--table", TABLE, "--id", name, "--poll", str(poll_interval)]
    args += ["--share", repr(share), "--i2c-hz", str(i2c_hz)]
    if chips is not None:
        args += ["--chips", str(chips)]
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
    st.add_argument("--share", type=float, default=1.0, help="the Zero's share of a core here")
    st.add_argument("--i2c-hz", type=int, default=I2C_HZ)
    st.add_argument("--chips", help="a cgroup v1 tasks file for the chips' threads")
    hb = sub.add_parser("hub")
    hb.add_argument("--config", required=True)
    hb.add_argument("--trace", required=True)
    return parser


if __name__ == "__main__":
    ns = parser().parse_args()
    sys.exit(station_main(ns) if ns.role == "station" else hub_main(ns))
