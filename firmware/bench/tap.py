"""Tap mode (``coffre bench``, the default): tap to screen on an 8-station table.

A mystery key is laid on one station after another and the time until that station's
glass changes is measured:

- read -> screen: from the poll that saw the tag to the new frame on the glass
  (station -> broker -> hub: decode, rules, SQLite commit -> broker -> station: render);
- lay -> screen: from the tag entering the field, so it adds up to one poll interval.

Between taps the host undoes the key, so every tap is a real, committed action. The
coffre table and the echo server's (:mod:`firmware.bench.echo`) are up at once and
tapped in alternating rounds, so a drift in the machine's load meets both.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from PIL import Image

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.bench import echo
from firmware.bench.shared import BENCH_GAME, percentile, ratio, stop_process
from firmware.hub.brokerconf import HUB_USER
from firmware.tools.brokers import start_broker
from firmware.tools.simtable import SimTable


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
        self.server = echo.start(sim.broker.config(HUB_USER))
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


def report(stations: int, taps: int) -> None:
    """``coffre bench``: tap mode against the coffre hub and the echo server, printed."""
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
            f"p99 {e99:.2f} ms | coffre/echo p50 {ratio(p50, e50)}, p99 {ratio(p99, e99)}"
        )
