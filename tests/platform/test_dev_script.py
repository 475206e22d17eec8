"""deploy/dev.sh: asked nothing, it lists its commands; a command goes where it says."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _checkout(tmp_path: Path) -> Path:
    """A checkout holding only the script (any set-up it tried would show in it)."""
    (tmp_path / "deploy").mkdir()
    shutil.copy(ROOT / "deploy" / "dev.sh", tmp_path / "deploy" / "dev.sh")
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path


def _dev(checkout: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(checkout / "deploy" / "dev.sh"), *args],
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.parametrize("args", [(), ("help",), ("--help",)])
def test_no_command_lists_the_commands_and_sets_nothing_up(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """`bash deploy/dev.sh` says which commands exist, exits 0 and makes no .venv."""
    checkout = _checkout(tmp_path)
    run = _dev(checkout, *args)
    assert run.returncode == 0, run.stderr
    for command in ("dev.sh sim", "dev.sh test", "dev.sh [help]"):
        assert command in run.stdout, run.stdout
    assert not (checkout / ".venv").exists()


def test_an_unknown_command_is_one_line_and_exit_64(tmp_path: Path) -> None:
    """A mistyped command names the ones there are, before any set-up."""
    checkout = _checkout(tmp_path)
    run = _dev(checkout, "tset")
    assert run.returncode == 64
    assert run.stderr == "dev.sh: no command 'tset'; there are: sim, test, help\n"
    assert not (checkout / ".venv").exists()


def test_sim_runs_the_venvs_coffre_with_its_options(tmp_path: Path) -> None:
    """With a venv already installed, `dev.sh sim ...` is that venv's `coffre sim ...`."""
    checkout = _checkout(tmp_path)
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "coffre"):
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*"\n')
        (bin_dir / name).chmod(0o755)
    stamp = checkout / ".venv" / ".installed"
    stamp.touch()
    os.utime(checkout / "pyproject.toml", (0, 0))  # older than the stamp: nothing to install
    run = _dev(checkout, "sim", "--players", "3")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "coffre sim --players 3\n"
