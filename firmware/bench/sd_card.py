"""The simulated SD card: a delay per commit and a stall every few seconds.

The bench asks a ``coffre hub`` child process for it through ``COFFRE_SIMULATE_DISK``
(``commit_ms,stall_ms,stall_every_s``), which the command line turns into the store's
``commit_delay`` hook (:func:`commit_delay_from_env`); the store itself never reads it.
:func:`disk_floor` says what such a disk alone allows a run's inputs, the floor under any
measured figure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

#: A plausible SD card: 5 ms a durable commit, a 100 ms stall every 2 s.
SD_COMMIT_MS = 5.0
SD_STALL_MS = 100.0
SD_STALL_EVERY_S = 2.0


def simulated_disk(commit_ms: float, stall_ms: float, stall_every_s: float) -> dict[str, str]:
    """The environment that makes a hub process's store wait as this disk does."""
    return {"COFFRE_SIMULATE_DISK": f"{commit_ms:g},{stall_ms:g},{stall_every_s:g}"}


def commit_delay_from_env() -> Callable[[], float] | None:
    """The store's ``commit_delay`` hook for the disk ``COFFRE_SIMULATE_DISK`` asks for
    (None without it).

    Each commit waits ``commit_ms`` (each sync with ``deferred_sync``: that is where a
    card's time goes, and a sync takes that long in all, this machine's fsync included);
    the first one after every ``every_s`` seconds waits
    ``stall_ms`` more (the stalls of an SD card). Not for real tables.
    """
    spec = os.environ.get("COFFRE_SIMULATE_DISK")
    if not spec:
        return None
    parts = [float(x) for x in spec.split(",")]
    commit_ms, stall_ms, every_s = [*parts, 0.0, 0.0][:3]
    next_stall = [time.monotonic() + every_s]

    def delay() -> float:
        now = time.monotonic()
        if every_s > 0 and now >= next_stall[0]:
            next_stall[0] = now + every_s
            return (commit_ms + stall_ms) / 1000
        return commit_ms / 1000

    return delay


def disk_floor(
    sent_at: list[float], commit_ms: float, stall_ms: float, stall_every_s: float
) -> list[float]:
    """Each input's wait (ms) on the simulated disk alone, as if nothing else took any
    time: a sync starts as soon as an input waits and the last sync ended, and covers
    every input sent before it started; it lasts ``commit_ms``, plus ``stall_ms`` for the
    first after every ``stall_every_s`` seconds (as :func:`commit_delay_from_env` does in
    the hub). Commit before ack: no answer can come sooner, whatever the hub does."""
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
