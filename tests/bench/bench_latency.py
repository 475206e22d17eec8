"""Tap-to-screen latency through mosquitto on loopback with 8 stations (prints numbers).

Run: .venv/bin/python tests/bench/bench_latency.py [taps]
"""

from __future__ import annotations

import sys

from firmware.bench.tap import run

if __name__ == "__main__":
    taps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    result = run(stations=8, taps=taps)
    for key, value in result.items():
        print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
