"""Every benchmark runs, briefly: each mode of ``coffre bench`` and each ``tests/bench/bench_*.py``
on a few taps or a second of load, against a real mosquitto. They must finish and print
their figures; the figures themselves are never asserted (timing is the benchmarks' job).
A new ``coffre bench`` option or a new bench script without a run here fails the suite."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.bench.cpu_quota import Cgroups
from firmware.cli import build_parser
from firmware.tools.brokers import find_mosquitto

ROOT = Path(__file__).resolve().parents[2]
BENCH = Path(__file__).resolve().parent
NUMBER = r"\d+(\.\d+)?"

#: ``coffre bench`` arguments of each mode -> a line every run of it prints.
MODES: dict[str, tuple[list[str], str]] = {
    "tap": (
        ["--stations", "3", "--taps", "3"],
        rf"read -> screen: coffre p50 {NUMBER} ms, p99 {NUMBER} ms \| echo p50 {NUMBER} ms",
    ),
    "load": (
        ["--tables", "1", "--duration", "1", "--rate", "2"],
        rf"coffre/echo: p50 {NUMBER}x, p99 {NUMBER}x\n"
        rf"tables=1 stations=8 inputs_per_s={NUMBER} p50_ms={NUMBER} p99_ms={NUMBER} lost=0",
    ),
    "slow disk": (
        [
            "--tables",
            "1",
            "--duration",
            "1",
            "--commit-delay",
            "5",
            "--stall",
            "50",
            "--stall-every",
            "0.5",
            "--no-echo",
            "--no-sniff",
        ],
        rf"the disk alone \(these inputs, the rest free\): p50 {NUMBER} ms, p99 {NUMBER} ms\n"
        rf"tables=1 stations=8 inputs_per_s={NUMBER} p50_ms={NUMBER} p99_ms={NUMBER} lost=0",
    ),
    "venue": (
        ["--hubs", "2", "--tables", "2", "--duration", "1", "--no-echo"],
        rf"hub2: tables=1 sent=\d+ p50_ms={NUMBER} p99_ms={NUMBER} lost=0\n"
        r"answered twice: 0\n",
    ),
    "pi-class": (
        ["--pi-class", "--stations", "3", "--taps", "3", "--i2c-hz", "1000000", "--runs", "2"],
        r"--- run 1 of 2\n"
        rf"Pi-class: .*I2C at 1000 kHz \(beyond the SSD1306 datasheet's 400 kHz\).*"
        r"; LED and buzzer through gpiozero \(mock pins\)\n(.|\n)*"
        rf"3 taps, tap to glass: p50 {NUMBER} ms, p99 {NUMBER} ms.*\n"
        rf"  the \d+ taps that met no stall: (p50 {NUMBER} ms, p99 {NUMBER} ms|none);.*\n"
        rf"(.|\n)*  i2c +{NUMBER} / +{NUMBER} / +{NUMBER}\n"
        r"(.|\n)*--- run 2 of 2\n(.|\n)*3 taps, tap to glass(.|\n)*"
        rf"2 runs: tap to glass p50 median {NUMBER} ms \({NUMBER}, {NUMBER}\); "
        rf"p99 median {NUMBER} ms",
    ),
}

#: Each bench script -> its smoke arguments and a line it prints.
SCRIPTS: dict[str, tuple[list[str], str]] = {
    "bench_display.py": (["8"], rf"p50_ms: {NUMBER}"),
    "bench_latency.py": (["3"], rf"read_to_screen_p50: {NUMBER}"),
    "bench_load.py": (["1", "1", "--disk"], r"knee: \d+ tables with p99 <= 100 ms"),
    "bench_oled.py": (["2"], r"partial updates: \d+ screen changes, I2C bytes per change"),
    "bench_reader.py": (
        ["--seconds", "0.1", "--interval", "0.02", "--polls", "20", "--zero-share", "0.08"],
        r"package MFRC522_Request, no card: \d+ us",
    ),
    "bench_secret_identity.py": (["0.05"], rf"coop/dealt .* {NUMBER} games/s"),
    "bench_station_start.py": (["1"], r"median \d+ ms"),
    "bench_station_path.py": (
        ["3"],
        r"7-byte UID: CPU p50 +\d+ us.*\n(.|\n)*third pass: p50 +\d+ us(.|\n)*luma\): p50 +\d+ us"
        r"(.|\n)*LED blink on, one channel: CPU p50 +\d+ us(.|\n)*buzzer's thread\): CPU p50",
    ),
    "bench_views.py": (["0.01"], rf"identites-cryptees 16 seats .* shared +{NUMBER} us"),
    "bench_venue.py": (
        ["1", "2:2", "--game=3"],
        r"a 3-player Secret Identity game by bots: \d+ inputs",
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _need_mosquitto() -> None:
    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed: run the README's test command (it installs it)")


def run(args: list[str]) -> str:
    """Run a command from the repository's root with this checkout first on the path."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("mode", list(MODES))
def test_each_bench_mode_runs_and_prints_its_figures(mode: str) -> None:
    """Each mode of coffre bench completes on a few taps (or a second of load) and prints."""
    args, printed = MODES[mode]
    if mode == "pi-class" and Cgroups().kind is None:
        pytest.skip("no cgroup CPU control on this machine (needs root and the cpu controller)")
    out = run([sys.executable, "-m", "firmware.cli", "bench", *args])
    assert re.search(printed, out), out


def test_every_bench_option_is_smoke_run() -> None:
    """A coffre bench option no smoke run passes would be a mode nothing keeps working."""
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    bench = sub.choices["bench"]  # type: ignore[index]
    options = {o for a in bench._actions for o in a.option_strings if o not in ("-h", "--help")}
    used = {a for args, _ in MODES.values() for a in args if a.startswith("--")}
    assert options - used == set()


def test_every_bench_script_has_a_smoke_run() -> None:
    """Each tests/bench/bench_*.py is in SCRIPTS, so the suite runs it."""
    assert sorted(p.name for p in BENCH.glob("bench_*.py")) == sorted(SCRIPTS)


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_each_bench_script_runs_and_prints_its_figures(script: str) -> None:
    """Each benchmark script finishes on a tiny workload and prints its figures."""
    args, printed = SCRIPTS[script]
    if script == "bench_display.py":  # it imports tests.platform: run as a module
        command = [sys.executable, "-m", "tests.bench.bench_display", *args]
    else:
        command = [sys.executable, str(BENCH / script), *args]
    out = run(command)
    assert re.search(printed, out), out


def test_a_password_that_starts_with_a_dash_reaches_the_bench_processes() -> None:
    """A generated password may start with "-": the Pi-class station's and the echo
    server's command lines keep it whole (argparse took it for an option: the smoke run
    failed once in CI-like load with "--password: expected one argument")."""
    from firmware.bench import echo, pi_class
    from firmware.link.mqtt import BrokerConfig

    config = BrokerConfig("127.0.0.1", 1883, "sim.p1", "-Abc_123", tls_ca="/tmp/ca.crt")
    station = pi_class.parser().parse_args(pi_class.station_args(config, "p1", 0.02))
    assert (station.username, station.password, station.ca) == ("sim.p1", "-Abc_123", "/tmp/ca.crt")
    helper = echo.parser().parse_args(echo.command_line(config)[3:])
    assert (helper.username, helper.password, helper.ca) == ("sim.p1", "-Abc_123", "/tmp/ca.crt")
