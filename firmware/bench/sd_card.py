"""The simulated SD card: a delay per commit and a stall every few seconds.

The bench asks the hub's store for it through ``COFFRE_SIMULATE_DISK`` (``commit_ms,
stall_ms, stall_every_s``); :func:`disk_floor` says what such a disk alone allows a run's
inputs, the floor under any measured figure.
"""

from __future__ import annotations

#: A plausible SD card: 5 ms a durable commit, a 100 ms stall every 2 s.
SD_COMMIT_MS = 5.0
SD_STALL_MS = 100.0
SD_STALL_EVERY_S = 2.0


def simulated_disk(commit_ms: float, stall_ms: float, stall_every_s: float) -> dict[str, str]:
    """The environment that makes a hub process's store wait as this disk does."""
    return {"COFFRE_SIMULATE_DISK": f"{commit_ms:g},{stall_ms:g},{stall_every_s:g}"}


def disk_floor(
    sent_at: list[float], commit_ms: float, stall_ms: float, stall_every_s: float
) -> list[float]:
    """Each input's wait (ms) on the simulated disk alone, as if nothing else took any
    time: a sync starts as soon as an input waits and the last sync ended, and covers
    every input sent before it started; it lasts ``commit_ms``, plus ``stall_ms`` for the
    first after every ``stall_every_s`` seconds (as ``COFFRE_SIMULATE_DISK`` does in the
    hub). Commit before ack: no answer can come sooner, whatever the hub does."""
    times = sorted(sent_at)
    waits: list[float] = []
    commit, stall = commit_ms / 1000, stall_ms / 1000
    next_stall = times[0] + stall_every_s if times and stall_every_s > 0 else float("inf")
    ended, i = float("-inf"), 0
    while i < len(times):
        start = max(ended, times[i])
        covered = i
        while covered < len(times) and times[covered] <= start:
            covered += 1
        ended = start + commit
        if start >= next_stall:
            ended += stall
            next_stall = start + stall_every_s
        waits += [(ended - t) * 1000 for t in times[i:covered]]
        i = covered
    return waits
