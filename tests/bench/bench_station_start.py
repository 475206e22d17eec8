"""How long ``coffre station`` takes from exec to READY=1 (prints numbers).

Run: .venv/bin/python tests/bench/bench_station_start.py [runs] [python]
``python`` defaults to this interpreter; pass a lean station venv's to time what a
station installs. The station runs the mock backend against a closed port, so the
time is the program's own: imports, config, devices, the MQTT client's start.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def socket_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def once(python: str, folder: Path) -> float:
    """Seconds from exec to READY=1 on NOTIFY_SOCKET."""
    config = folder / "station.toml"
    config.write_text(
        f'[broker]\nhost = "127.0.0.1"\nport = {socket_port()}\n'
        '[station]\ntable = "main"\nid = "p1"\nbackend = "mock"\n'
    )
    path = folder / "notify"
    path.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(30)
        env = {**os.environ, "NOTIFY_SOCKET": str(path)}
        started = time.perf_counter()
        proc = subprocess.Popen(
            [python, "-m", "firmware.cli", "station", "--config", str(config)],
            env=env,
            stderr=subprocess.DEVNULL,
            cwd=folder,
        )
        while sock.recv(64) != b"READY=1":
            pass
        elapsed = time.perf_counter() - started
        proc.terminate()
        proc.wait(10)
    return elapsed


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    python = sys.argv[2] if len(sys.argv) > 2 else sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        times = [once(python, Path(tmp)) for _ in range(runs)]
    print(f"station start to READY=1 over {runs} runs ({python}):")
    print(
        f"  median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms, "
        f"max {max(times) * 1000:.0f} ms"
    )
