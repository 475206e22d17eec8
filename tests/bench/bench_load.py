"""Tables per hub process: the load bench at growing table counts (prints numbers).

Run: .venv/bin/python tests/bench/bench_load.py [seconds] [tables...] [--disk] [--echo]
``--disk``: a simulated 5 ms commit plus a 100 ms stall every 2 s. Each line is the
summary of ``coffre bench --tables N``; the knee is the last N whose p99 stays under
the limit (50 ms, or 100 ms on the slow disk).
"""

from __future__ import annotations

import sys

from firmware.bench.load import run_load

if __name__ == "__main__":
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    numbers = [a for a in sys.argv[1:] if not a.startswith("--")]
    seconds = float(numbers[0]) if numbers else 10.0
    counts = [int(n) for n in numbers[1:]] or [8, 16, 32, 48, 64, 96, 128]
    disk = {"commit_delay_ms": 5.0, "stall_ms": 100.0, "stall_every_s": 2.0}
    limit = 100.0 if "--disk" in flags else 50.0
    knee = 0
    for tables in counts:
        if "--echo" in flags:
            result = run_load(tables, seconds, server="echo")
        else:
            result = run_load(tables, seconds, **(disk if "--disk" in flags else {}))
        print(result.line(), flush=True)
        if result.p99 <= limit and result.lost == 0:
            knee = tables
    print(f"knee: {knee} tables with p99 <= {limit:g} ms")
