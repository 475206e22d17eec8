"""``coffre bench``: tap-to-screen latency through a real broker on loopback.

An 8-station table on mosquitto; a mystery key is laid on one station after
another during the prepare phase, and the time until that station's screen
changes is measured. Two figures per tap:

- read -> screen: from the poll that saw the tag to the new frame on the glass
  (station -> broker -> hub: decode, rules, SQLite commit -> broker -> station: render);
- lay -> screen: from the tag entering the field, so it adds up to one poll interval.

Between taps the host undoes the key, so every tap is a real, committed action.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from PIL import Image

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(stations: int = 8, taps: int = 200, poll_interval: float = 0.02) -> dict[str, Any]:
    """Measure; returns the figures in milliseconds."""
    workdir = Path(tempfile.mkdtemp(prefix="coffre-bench-"))
    # The hub in its own process, as on the table (it is on its own Pi).
    sim = SimTable(
        players=stations,
        workdir=workdir,
        embedded=False,
        seed=1,
        hub_mode="process",
        poll_interval=poll_interval,
    )
    clocks = {}
    for name in sim.names:
        clock = _FrameClock()
        clocks[name] = clock
        sim.devices[name] = StationDevices(
            MockReader(), MockDisplay(on_frame=clock), MockControls()
        )
    sim.start()
    read_ms: list[float] = []
    lay_ms: list[float] = []
    try:
        sim.host({"cmd": "start", "game": "secret-identity", "players": stations})
        sim.watch.wait(lambda p: p.get("game") == "secret-identity")
        time.sleep(0.3)
        for i in range(taps):
            name = sim.names[i % stations]
            clock = clocks[name]
            reader = sim.devices[name].reader
            assert isinstance(reader, MockReader)
            before = clock.count
            laid = time.perf_counter()
            reader.present_tag(sim.keys.uid_for("mystery", None, 1 + i % stations))
            shown = clock.wait_beyond(before)
            read = sim.stations[name].read_at
            read_ms.append((shown - read) * 1000)
            lay_ms.append((shown - laid) * 1000)
            assert sim.stations[name].wait_settled(0, 5)
            reader.remove_tag()
            time.sleep(poll_interval * 2)
            version = sim.watch.public["version"]
            count = clock.count
            sim.host({"cmd": "undo"})
            sim.watch.wait(lambda p, v=version: bool(p["version"] != v))  # type: ignore[misc]
            clock.wait_beyond(count)
    finally:
        sim.stop()
    return {
        "stations": stations,
        "taps": len(read_ms),
        "poll_interval_ms": poll_interval * 1000,
        "read_to_screen_p50": statistics.median(read_ms),
        "read_to_screen_p99": percentile(read_ms, 0.99),
        "lay_to_screen_p50": statistics.median(lay_ms),
        "lay_to_screen_p99": percentile(lay_ms, 0.99),
    }


def main(args: Any) -> int:
    result = run(args.stations, args.taps)
    print(
        f"{result['taps']} taps on {result['stations']} stations through mosquitto on loopback "
        f"(reader polled every {result['poll_interval_ms']:.0f} ms)"
    )
    print(
        f"read -> screen updated: p50 {result['read_to_screen_p50']:.2f} ms, "
        f"p99 {result['read_to_screen_p99']:.2f} ms"
    )
    print(
        f"tag laid -> screen updated: p50 {result['lay_to_screen_p50']:.2f} ms, "
        f"p99 {result['lay_to_screen_p99']:.2f} ms"
    )
    return 0
