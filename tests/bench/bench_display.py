"""Table display latency: hub publish -> DOM change, 8 tables on one display (prints numbers).

Run: .venv/bin/python -m tests.bench.bench_display [updates]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.support.browser import display_latency

TABLES = 8

if __name__ == "__main__":
    # At least one update per table: a table the run never updated has no latency to show.
    updates = max(TABLES, int(sys.argv[1]) if len(sys.argv) > 1 else 800)
    with tempfile.TemporaryDirectory(prefix="coffre-bench-") as tmp:
        result = display_latency(Path(tmp), tables=TABLES, updates=updates)
    for key, value in result.items():
        print(f"{key}: {value:.1f}")
