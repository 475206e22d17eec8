"""What every benchmark mode uses: the table it plays, its percentiles, its helper
processes' command lines and how they end, and the conditions a figure was measured in."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Any

from firmware.link.mqtt import BrokerConfig
from rules.secret_identity import INFO as BENCH_INFO

STATIONS_PER_TABLE = 8
#: The game every bench plays (its bots, the Director, know it best).
BENCH_GAME = BENCH_INFO.id


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` by nearest rank (one of the values)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def broker_args(config: BrokerConfig) -> list[str]:
    """``--host``, ``--port`` and the credentials of a bench process's broker, each
    ``--name=value`` whole (a generated password may start with "-")."""
    args = [f"--host={config.host}", f"--port={config.port}"]
    if config.username:
        args += [f"--username={config.username}", f"--password={config.password or ''}"]
    if config.tls_ca:
        args += [f"--ca={config.tls_ca}"]
    return args


def stop_process(proc: subprocess.Popen[Any] | None) -> None:
    """End a helper process: SIGTERM, then SIGKILL after 10 s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def ratio(coffre: float, base: float) -> str:
    """``coffre`` against the echo baseline, as ``2.3x``."""
    return f"{coffre / base:.1f}x" if base > 0 else "n/a"


def machine() -> str:
    """The conditions a figure was measured in (this machine is often shared)."""
    return f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before the run"


def broker_parser(description: str) -> argparse.ArgumentParser:
    """The broker options of a bench helper process (:func:`module_command` passes them)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("--ca")
    return parser


def broker_of(ns: argparse.Namespace) -> BrokerConfig:
    """The broker a helper process was given on its command line."""
    return BrokerConfig(ns.host, ns.port, ns.username, ns.password, tls_ca=ns.ca)


def module_command(module: str, config: BrokerConfig) -> list[str]:
    """The command line of ``module`` run as a process of its own on ``config``'s broker."""
    return [sys.executable, "-m", module, *broker_args(config)]
