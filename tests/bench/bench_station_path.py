"""The station's own CPU on a tap, in process (prints numbers): reading a card through the
emulated MFRC522, rendering real screens, and showing them on the emulated SSD1306.

The chips are wired as the Pi-class run wires them (``firmware.bench.pi_zero_model.wire``: the
MFRC522's RF exchanges and the SSD1306 on threads of their own), so the CPU printed is
the calling thread's, as that run charges it to a Zero's quota: our device code, luma,
the mfrc522 package, the fake buses' register work and the hand-offs. The screens are
those every station shows in random games of the five games (``tests/support/screens``).
Also printed: what one SPI register transfer, one sleep's wake-up and one RF hand-off
cost the caller here, the units a read is made of; and a read's blink and tick through
gpiozero's LED and buzzer over its mock pins, each after the station idled 20 ms.

Run: .venv/bin/python -m tests.bench.bench_station_path [reads]
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from device.emulated import open_emulated_station
from firmware.bench.pi_zero_model import mock_pin_controls, wire
from firmware.link import render as rendering
from firmware.link.protocol import Screen, Secret
from tests.support.screens import play

GAMES = (
    ("secret-identity", 5),
    ("incognito", 4),
    ("ultra-secret", 4),
    ("identites-cryptees", 6),
    ("identiquest", 4),
)
UIDS = (("7-byte UID", "04A1B2C3D4E5F6"), ("4-byte UID", "DEADBEEF"))


def us(seconds: list[float]) -> str:
    """p50 and mean in microseconds."""
    p50, mean = statistics.median(seconds) * 1e6, statistics.mean(seconds) * 1e6
    return f"p50 {p50:6.0f} us, mean {mean:6.0f} us"


def screens() -> list[tuple[Screen, bool]]:
    """Every station's screen (flap closed, and open over a secret) every 5th step of a
    random game of each game, in English."""
    out = []
    for game, players in GAMES:
        for shown in itertools.islice(play(game, players, "en", 1), 0, 400, 5):
            for glass in shown:
                if glass.where == "hub":
                    continue
                if glass.where.endswith("+flap"):
                    secret = Secret(title=glass.title, big=glass.big, lines=glass.lines)
                    out.append((Screen(rev=1, title="-", secret=secret), True))
                else:
                    out.append((Screen(rev=1, title=glass.title, lines=glass.lines), False))
    return out


def cpu_of(fn: Callable[[], Any]) -> float:
    """This thread's CPU seconds for one call of ``fn``."""
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def main() -> None:
    """Print the figures."""
    reads = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with open_emulated_station(timer="realtime") as st:
        buses = wire(st, 1.0, None, 400_000)
        reader, display, chip = st.reader, st.display, st.chip
        dev = reader._dev  # the mfrc522 package's object under the reader
        print("Units (the calling thread's CPU here):")
        units = {
            "an SPI register write (the package's Write_MFRC522)": lambda: dev.Write_MFRC522(
                0x04, 0x7F
            ),
            "a wake-up from a 0.5 ms sleep": lambda: time.sleep(0.0005),
            "an RF exchange's hand-off (empty)": lambda: buses.rf_thread.call(lambda: None),
        }
        for name, fn in units.items():
            print(f"  {name}: {us([cpu_of(fn) for _ in range(500)])}")
        print(f"Reading a card (chip timer in real time, {reads} reads):")
        for name, uid in UIDS:
            cpu, wall, transfers = [], [], []
            for i in range(reads + 20):
                st.field.place(uid)
                spi0, start = chip.spi_transfers, time.perf_counter()
                spent = cpu_of(reader.poll)
                if i >= 20:
                    cpu.append(spent)
                    wall.append(time.perf_counter() - start)
                    transfers.append(chip.spi_transfers - spi0)
                st.field.remove()
                while reader.current is not None:
                    reader.poll()
            print(
                f"  {name}: CPU {us(cpu)}; wall p50 {statistics.median(wall) * 1000:.2f} ms; "
                f"{statistics.median(transfers):.0f} SPI transfers"
            )
        empty = [cpu_of(reader.poll) for _ in range(reads * 2)]
        print(f"  no card: CPU {us(empty)}")
        models = screens()
        print(f"Rendering {len(models)} station screens (render(); its line masks cleared first):")
        rendering.LINES.clear()
        rendering.big_word.cache_clear()
        for label in ("first pass", "second pass", "third pass"):
            cpu = [cpu_of(lambda m=m: rendering.render(m[0], show_secret=m[1])) for m in models]
            print(f"  {label}: {us(cpu)}")
        images = [rendering.render(m, show_secret=o) for m, o in models]
        cpu = []
        for image in images:
            cpu.append(cpu_of(lambda image=image: display.show(image)))
            buses.drain()  # the emulated panel takes the frame, outside the figure
        print(f"Showing them one after the other (Ssd1306Display.show(), luma): {us(cpu)}")
    feedback(max(20, reads // 2))


def feedback(n: int) -> None:
    """A read's blink and tick through gpiozero (mock pins, as the Pi-class station has
    them), each call after 20 ms of idling, as a tap finds the station."""
    controls = mock_pin_controls()
    try:
        print("A read's feedback through gpiozero, after 20 ms idle (mock pins):")
        calls = {
            "LED blink on, one channel": lambda: controls.led((0.0, 0.0, 1.0)),
            "LED blink off, one channel": lambda: controls.led((0.0, 0.0, 0.0)),
            "beep (the tick handed to the buzzer's thread)": lambda: controls.beep("tick"),
        }
        for label, call in calls.items():
            cpu = []
            for _ in range(n):
                time.sleep(0.02)
                cpu.append(cpu_of(call))
            print(f"  {label}: CPU {us(cpu)}")
    finally:
        controls.close()


if __name__ == "__main__":
    main()
