"""Bytes on the I2C bus per screen change of a station's SSD1306 (prints numbers).

Replays every golden station screen sequence (real consecutive screens of whole games)
on an emulated panel, twice: with luma's stock ``ssd1306.display()`` (the whole 1 KiB
GDDRAM each time) and with Ssd1306Display's partial updates.

Run: .venv/bin/python tests/bench/bench_oled.py [sequences]
``sequences``: only the first N golden sequences (all by default).
"""

from __future__ import annotations

import importlib
import statistics
from pathlib import Path

from PIL import Image

from device.emulated import open_emulated_station
from device.emulated.rack import vendor_fakes

GOLDEN = Path(__file__).resolve().parent.parent / "platform" / "golden"


def sequences() -> list[list[Image.Image]]:
    found = []
    for folder in sorted(p for p in GOLDEN.glob("*/*") if p.is_dir()):
        frames = [Image.open(f).convert("1") for f in sorted(folder.glob("*.png"))]
        if len(frames) > 1:
            found.append(frames)
    return found


def measure(partial: bool, runs: list[list[Image.Image]]) -> list[int]:
    """I2C bytes of each change (the first frame of each sequence not counted)."""
    costs = []
    for frames in runs:
        station = open_emulated_station()
        try:
            chip = station.panel
            if partial:
                show = station.display.show
            else:
                with vendor_fakes():
                    oled = importlib.import_module("luma.oled.device")
                    serial = importlib.import_module("luma.core.interface.serial")
                    stock = oled.ssd1306(serial.i2c(port=station.display.port))
                    show = stock.display
            show(frames[0])
            for frame in frames[1:]:
                before = chip.bytes_written
                show(frame)
                costs.append(chip.bytes_written - before)
        finally:
            station.close()
    return costs


if __name__ == "__main__":
    import sys

    runs = sequences()[: int(sys.argv[1])] if len(sys.argv) > 1 else sequences()
    for label, partial in (("luma display()", False), ("partial updates", True)):
        costs = measure(partial, runs)
        print(
            f"{label}: {len(costs)} screen changes, I2C bytes per change: "
            f"median {statistics.median(costs):.0f}, mean {statistics.mean(costs):.0f}, "
            f"max {max(costs)}"
        )
