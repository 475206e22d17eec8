"""The hub across broker restarts: no socket, no thread left behind (real mosquitto, the
hub as a ``coffre hub`` process, its descriptors and threads read from /proc).

At every broker restart the hub's shared connection reconnects and each table's will
connection is dropped and made anew (firmware/hub/links.py): whatever a dropped link
held must go with it, or an evening of broker restarts grows the hub without end.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from firmware.tools.brokers import Mosquitto
from firmware.tools.simtable import SimTable
from tests.support.tables import TableFactory

RESTARTS = 20
#: The hub's connections to the broker when settled: the shared one and one table's will.
LINKS = 2


def _socket_inodes(pid: int) -> tuple[int, set[str]]:
    """How many descriptors the process holds, and the inodes of its sockets."""
    count, inodes = 0, set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        count += 1
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return count, inodes


def links_to(pid: int, port: int) -> int:
    """The process's established TCP connections to ``port`` on this machine."""
    _count, inodes = _socket_inodes(pid)
    found = 0
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = row.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if fields[9] in inodes and remote_port == port and fields[3] == "01":
                found += 1
    return found


def usage(pid: int) -> tuple[int, int]:
    """(file descriptors, threads) of the process."""
    return _socket_inodes(pid)[0], len(os.listdir(f"/proc/{pid}/task"))


def settled(pid: int, port: int, timeout: float = 30.0) -> tuple[int, int]:
    """The hub's usage once both its links are back and nothing moved for half a second."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if links_to(pid, port) == LINKS:
            now = usage(pid)
            if now == last:
                return now
            last = now
        time.sleep(0.5)
    raise AssertionError(f"the hub did not settle with {LINKS} links to the broker: {last}")


def restart(sim: SimTable) -> None:
    process = sim.broker.process
    assert isinstance(process, Mosquitto)
    process.stop()
    time.sleep(0.3)
    process.start()


def test_broker_restarts_leave_no_descriptor_or_thread_in_the_hub(
    make_table: TableFactory,
) -> None:
    """20 broker restarts: after each, once the hub is back on both links, it holds as
    many descriptors and threads as after the first; and it still answers a tap."""
    sim = make_table(3, hub_mode="process")
    assert sim.hub_process is not None
    pid, port = sim.hub_process.pid, sim.broker.port
    seen = [settled(pid, port)]
    for _ in range(RESTARTS):
        restart(sim)
        seen.append(settled(pid, port))
    print(f"\nhub (descriptors, threads): before {seen[0]}, after each restart {seen[1:]}")
    after_first = seen[1]
    assert all(s == after_first for s in seen[1:]), seen
    for station in sim.stations.values():
        assert station.client.wait_connected(15)
    answer = sim.tap("p1", "04a1b2c3d4e5f6")
    assert answer is not None and answer.id is not None
