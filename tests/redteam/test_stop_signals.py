"""Red team, stopping: SIGTERM (systemd's stop) always ends `coffre station`, at any moment.

A handler that set a ``threading.Event`` could be re-entered by the next signal while
it held the event's lock and never return: about 1 stop in 35 hung until SIGKILL.
"""

from __future__ import annotations

import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Stops the programs' stop context over and over while two other processes send SIGTERM as
#: fast as it can, so that signals land inside the handler and inside the wait.
HAMMERED = """
import os, signal, subprocess, sys
from firmware.link.process import stop_on_signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # between two contexts: not our stop
loop = "import os, signal, time\\nend = time.time() + 3\\nwhile time.time() < end:\\n"
loop += f"    os.kill({os.getpid()}, signal.SIGTERM)"
hammers = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(2)]
stops = 0
while any(hammer.poll() is None for hammer in hammers):
    with stop_on_signal() as stop:
        stops += stop.wait(1.0)  # a timeout: the hammers' last signal came before it
print("stops", stops, flush=True)
"""


def test_signals_inside_the_stop_handler_never_hang_it() -> None:
    """SIGTERMs fired for 3 s at a process waiting to stop: every wait ends, none hangs."""
    run = subprocess.run(
        [sys.executable, "-c", HAMMERED], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert run.returncode == 0, run.stderr[-1500:]
    assert "RecursionError" not in run.stderr and "deadlock" not in run.stderr
    stops = int(run.stdout.split()[-1])
    print(f"{stops} stops under a SIGTERM hammer")
    assert stops > 0


@pytest.mark.slow
def test_sigterm_at_random_moments_stops_every_station(tmp_path: Path) -> None:
    """100 `coffre station` processes, each sent SIGTERM (1-3, µs apart) at a random
    moment of its start or its run: every one exits, none hangs or prints a traceback."""
    config = tmp_path / "station.toml"
    config.write_text(
        '[broker]\nhost = "127.0.0.1"\nport = 1\n'  # nobody there: it keeps dialling
        '[station]\ntable = "main"\nid = "p1"\nbackend = "mock"\n'
    )
    command = [sys.executable, "-m", "firmware.cli", "--log-level", "error", "station"]
    rng = random.Random(22)
    hung: list[int] = []
    took: list[float] = []
    bad: list[str] = []
    for first in range(0, 100, 4):  # 4 at a time: the machine has few cores
        procs = [
            subprocess.Popen(
                [*command, "--config", str(config)],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        started = time.monotonic()
        plan = sorted((rng.uniform(0.1, 3.0), n) for n in range(4))
        sent: dict[int, float] = {}
        for delay, n in plan:
            time.sleep(max(0.0, started + delay - time.monotonic()))
            sent[n] = time.monotonic()
            for _ in range(rng.randint(1, 3)):
                procs[n].send_signal(signal.SIGTERM)
                time.sleep(rng.uniform(0, 0.0003))
        for n, proc in enumerate(procs):
            try:
                _, err = proc.communicate(timeout=max(1.0, sent[n] + 30 - time.monotonic()))
            except subprocess.TimeoutExpired:
                hung.append(first + n)
                proc.kill()
                proc.communicate()
                continue
            took.append(time.monotonic() - sent[n])
            if proc.returncode not in (0, -signal.SIGTERM) or "Traceback" in err:
                bad.append(f"{first + n}: exit {proc.returncode}: {err[-300:]}")
    print(
        f"{len(took)} of 100 stations exited after SIGTERM, {len(hung)} hung; "
        f"seconds from signal to exit: median {statistics.median(took):.2f}, "
        f"max {max(took):.2f}"
    )
    assert hung == [] and bad == []
