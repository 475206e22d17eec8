"""What a Pi installs: pip resolves each role's extra for 64-bit and 32-bit Pi OS.

pip runs for real (``install --dry-run --report``, against PyPI) with the machine it
resolves for set to aarch64 or armv7l: environment markers are evaluated as on that Pi.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from importlib.metadata import distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PI_MACHINES = ("aarch64", "armv7l")
#: pip as on another machine: markers see ``platform_machine`` of the Pi.
AS_MACHINE = """
import platform, sys
machine = sys.argv.pop(1)
platform.machine = lambda: machine
from pip._internal.cli.main import main
sys.exit(main())
"""
HUB_ONLY = {"amqtt", "cryptography", "pydantic-core", "pydantic", "typer", "aiohttp"}
#: PyNaCl (pairing's sealed box) brings cffi and pycparser: the station's only crypto.
STATION = {
    "lgpio", "rpi-lgpio", "spidev", "luma-oled", "luma-core", "gpiozero", "paho-mqtt", "pynacl",
}  # fmt: skip


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


@cache
def resolve(machine: str, extra: str) -> frozenset[str]:
    """The distributions ``pip install '.[extra]'`` would install on ``machine``."""
    report = Path(f"/tmp/coffre-pip-report-{machine}-{extra}.json")
    run = subprocess.run(
        [sys.executable, "-c", AS_MACHINE, machine, "install", "--dry-run", "--quiet",
         "--ignore-installed", "--report", str(report), f"{ROOT}[{extra}]"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    data = json.loads(report.read_text())
    report.unlink()
    assert data["environment"]["platform_machine"] == machine
    return frozenset(_norm(item["metadata"]["name"]) for item in data["install"])


@pytest.mark.parametrize("machine", PI_MACHINES)
def test_station_install_is_one_gpio_stack_and_lean(machine: str) -> None:
    """A station gets lgpio (+ rpi-lgpio for the reader), never RPi.GPIO, and nothing
    of the hub's or the simulator's; the list is printed (its length is the report's)."""
    names = resolve(machine, "station")
    print(f"\n{machine} station: {len(names)} distributions: {', '.join(sorted(names))}")
    assert names >= STATION
    assert "rpi-gpio" not in names, "RPi.GPIO and rpi-lgpio own the same files"
    assert not names & HUB_ONLY
    assert len(names) <= 18  # 15 before PyNaCl, cffi and pycparser


@pytest.mark.parametrize("machine", PI_MACHINES)
def test_hub_install_has_certificates_and_gpio(machine: str) -> None:
    """The hub (as provisioned: hub and display extras) gets cryptography (broker-config),
    lgpio (panel) and aiohttp (the table display), but not amqtt."""
    names = resolve(machine, "hub,display")
    assert names >= {"cryptography", "lgpio", "gpiozero", "aiohttp"}
    assert "amqtt" not in names and "rpi-gpio" not in names


def test_mfrc522_without_deps_lacks_only_what_rpi_lgpio_gives() -> None:
    """mfrc522 goes in with --no-deps: of its requirements only RPi.GPIO is left out, and
    rpi-lgpio provides that module; provisioning installs it exactly so."""
    requires = {_norm(r.split(";")[0].split(">")[0].split("=")[0].strip())
                for r in distribution("mfrc522").requires or []}  # fmt: skip
    assert requires - {"spidev"} == {"rpi-gpio"}
    script = (ROOT / "deploy" / "provision-pi.sh").read_text()
    assert "--no-deps mfrc522" in script
