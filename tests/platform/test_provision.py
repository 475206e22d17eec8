"""deploy/provision-pi.sh checks what it was given before it installs anything."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "provision-pi.sh"


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The script with every system tool it would call replaced by a recorder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    for tool in ("apt-get", "raspi-config", "useradd", "usermod", "hostnamectl", "systemctl"):
        fake = bin_dir / tool
        fake.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\n')
        fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    run = subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60
    )
    return run, calls


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "provision-pi.sh hub"),
        (("gateway",), "role must be hub or station"),
        (("station",), "station needs its id"),
        (("station", "P 1"), "station id 'P 1'"),
        (("station", "p1", "--table", "Main"), "table 'Main'"),
        (("hub", "--stations", "p1,P2"), "station id 'P2'"),
        (("station", "p1", "--colour", "red"), "unknown option '--colour'"),
    ],
)
def test_bad_arguments_stop_before_any_install(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    """A wrong role, id, table or option: exit 64 with the reason, and no tool was run."""
    run, calls = _run(tmp_path, *args)
    assert run.returncode == 64, run.stderr
    assert says in run.stderr
    assert not calls.exists(), calls.read_text()


def test_the_script_names_the_pi_and_sets_the_i2c_clock() -> None:
    """Provisioning renames the Pi (coffre-hub, coffre-<id>) and sets I2C to 400 kHz."""
    text = SCRIPT.read_text()
    assert "dtparam=i2c_arm_baudrate=400000" in text
    assert "echo coffre-hub" in text and 'echo "coffre-$station_id"' in text
    assert "bash -n" not in text
    check = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
