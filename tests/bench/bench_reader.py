"""Benchmark: the cost of one Mfrc522Reader.poll() against the emulated MFRC522, and the
station reader loop's idle CPU (CPU-seconds per second, no card), at the station's poll
interval (firmware.station.service.POLL_INTERVAL, 20 ms) and at 50 ms; each loop's CPU
is also given as a share of a Zero 2 W's core, by the Pi-class run's calibration
(``firmware.bench.cpu_quota.Shares``: the Zero's share of one core here).

Run: .venv/bin/python tests/bench/bench_reader.py [--seconds 5] [--interval 0.02 0.05]
[--zero-share 0.08]  (without it, calibrated: ~1.5 s)
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from typing import Any

from device.emulated import open_emulated_station


def percentiles(samples_ns: list[int]) -> str:
    """p50/p99/max in microseconds."""
    s = sorted(samples_ns)
    p50 = s[len(s) // 2] / 1000
    p99 = s[min(len(s) - 1, int(len(s) * 0.99))] / 1000
    return f"p50 {p50:7.1f} us   p99 {p99:7.1f} us   max {s[-1] / 1000:7.1f} us"


def poll_cost(n: int) -> None:
    """Per-poll wall time with the chip's timer firing at once (pure driver + SPI cost)."""
    with open_emulated_station() as st:
        reader = st.reader
        for label, place in (("no card       ", None), ("card lying    ", "DEADBEEF"),
                             ("7-byte lying  ", "04A1B2C3D4E5F6")):  # fmt: skip
            st.field.remove()
            if place:
                st.field.place(place)
            for _ in range(50):
                reader.poll()
            samples = []
            spi0 = st.chip.spi_transfers
            cpu0 = time.thread_time_ns()
            for _ in range(n):
                t = time.perf_counter_ns()
                reader.poll()
                samples.append(time.perf_counter_ns() - t)
            cpu = (time.thread_time_ns() - cpu0) / n / 1000
            spi = (st.chip.spi_transfers - spi0) / n
            print(
                f"  poll, {label}: wall {percentiles(samples)}; "
                f"CPU mean {cpu:.1f} us; {spi:.1f} SPI transfers"
            )


def idle_cpu(
    seconds: float, interval: float, timer: str, card: str | None = None, zero: float = 0.0
) -> float:
    """CPU-seconds per second of a station reader loop with no card (timer "none": the
    same loop without the poll, i.e. the cost of waking up)."""
    with open_emulated_station(timer="instant" if timer == "none" else timer) as st:  # type: ignore[arg-type]
        reader = st.reader
        if card:
            st.field.place(card)
        poll = (lambda: None) if timer == "none" else reader.poll
        wall0, cpu0 = time.monotonic(), time.process_time()
        next_tick = wall0
        polls = 0
        while time.monotonic() - wall0 < seconds:
            poll()
            polls += 1
            next_tick += interval
            delay = next_tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        wall, cpu = time.monotonic() - wall0, time.process_time() - cpu0
        rate = cpu / wall
        what = f"card {card} lying" if card else "idle loop"
        of_zero = f"; {rate / zero * 100:.0f} % of a Zero 2 W" if zero else ""
        print(
            f"  {what}, chip timer {timer:8}: {polls} polls in {wall:.2f} s, "
            f"CPU {cpu * 1000:.1f} ms -> {rate:.4f} CPU-s/s ({rate * 100:.2f} % of a core"
            f"{of_zero})"
        )
        return rate


def package_request_cost() -> None:
    """For contrast: the mfrc522 package's own MFRC522_Request with no card."""
    with open_emulated_station(timer="realtime") as st:
        module = importlib.import_module("mfrc522.MFRC522")
        dev: Any = st.reader._dev  # the package's MFRC522 object under our reader
        samples = []
        cpu0 = time.process_time()
        spi0 = st.chip.spi_transfers
        for _ in range(20):
            t = time.perf_counter_ns()
            dev.MFRC522_Request(module.MFRC522.PICC_REQIDL)
            samples.append(time.perf_counter_ns() - t)
        cpu = (time.process_time() - cpu0) / 20
        spi = (st.chip.spi_transfers - spi0) / 20
        print(
            f"  package MFRC522_Request, no card: {statistics.median(samples) / 1000:.0f} us, "
            f"CPU {cpu * 1e6:.0f} us, {spi:.0f} SPI transfers per call (busy loop)"
        )


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--interval", type=float, nargs="+", default=[0.02, 0.05])
    parser.add_argument("--polls", type=int, default=5000)
    parser.add_argument("--zero-share", type=float, help="a Zero 2 W's share of a core here")
    args = parser.parse_args()
    from firmware.bench.cpu_quota import Shares

    zero = args.zero_share or Shares.calibrate().zero
    print(f"(a Zero 2 W: {zero * 100:.1f} % of a core here)")
    print("Mfrc522Reader.poll() against the emulated MFRC522 (instant chip timer;")
    print("wall p99/max include preemption on a shared machine, CPU mean does not):")
    poll_cost(args.polls)
    for interval in args.interval:
        print(f"Station reader loop, one poll every {interval * 1000:.0f} ms:")
        idle_cpu(args.seconds, interval, "none", zero=zero)
        idle_cpu(args.seconds, interval, "instant", zero=zero)
        idle_cpu(args.seconds, interval, "realtime", zero=zero)
        idle_cpu(args.seconds, interval, "realtime", card="04A1B2C3D4E5F6", zero=zero)
    print("Reference:")
    package_request_cost()


if __name__ == "__main__":
    main()
