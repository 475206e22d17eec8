"""A venue on one broker: several hub processes sharing the tables (prints numbers).

Run: .venv/bin/python tests/bench/bench_venue.py [seconds] [hubs:tables ...] [--game[=PLAYERS]]
Default: 10 s of ``3:48`` (three hubs of 16 tables, 8 stations each, a knob turn a
second per station, on a venue broker: TLS and a broker user per hub). Each run prints
p50/p99 per hub, inputs answered twice, the messages the hubs send per input and the
processes' CPU and memory, then the summary line of ``coffre bench --hubs H --tables
N``. A knob turn costs the hub two messages (the screen, the ack); ``--game`` also counts
a whole game played by bots, where taps change ``public`` and the hub status too. The
The docs' sizing comes from ``... 30 3:48 --game`` and, at a game's pace, ``coffre bench
--hubs 5 --tables 100 --rate 0.05 --duration 60 --no-echo``.
"""

from __future__ import annotations

import os
import sys

from firmware.bench.game_messages import game_messages
from firmware.bench.load import run_load
from firmware.bench.shared import machine

if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if ":" not in a and not a.startswith("--")]
    seconds = float(numbers[0]) if numbers else 10.0
    runs = [tuple(int(n) for n in a.split(":")) for a in sys.argv[1:] if ":" in a] or [(3, 48)]
    for hubs, tables in runs:
        print(f"{hubs} hubs, {tables} tables, {seconds:g} s; {machine()}", flush=True)
        result = run_load(tables, seconds, hubs=hubs, sniff=True)
        for line in result.details():
            print(f"  {line}")
        print(f"  load average after: {os.getloadavg()[0]:.1f}")
        print(f"  {result.line()}", flush=True)
    game = [a for a in sys.argv[1:] if a == "--game" or a.startswith("--game=")]
    if game:
        players = int(game[0].partition("=")[2] or 8)
        print(game_messages(players).line())
