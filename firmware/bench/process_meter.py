"""What the bench's processes cost over a run: CPU time and peak memory, read from /proc."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Usage:
    """A process's CPU time over the load and its peak memory (from /proc)."""

    cpu_s: float
    peak_rss_mb: float


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # utime and stime, fields 14 and 15 of proc(5)'s stat (counted after the ")": 12, 13)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


class Meter:
    """CPU seconds some processes spend between ``start()`` and ``stop()``, and their peak
    memory; a process /proc does not show (not Linux, or gone) is left out."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.before: dict[str, float] = {}

    def start(self) -> None:
        for name, pid in self.pids.items():
            cpu = _cpu_seconds(pid)
            if cpu is not None:
                self.before[name] = cpu

    def stop(self) -> dict[str, Usage]:
        usage = {}
        for name, before in self.before.items():
            cpu, rss = _cpu_seconds(self.pids[name]), _peak_rss_mb(self.pids[name])
            if cpu is not None and rss is not None:
                usage[name] = Usage(cpu - before, rss)
        return usage
