"""Red team, secrets at rest: their modes come from coffre, never from the unit's UMask.

Every test runs under umask 000, the worst a unit file (or a careless shell) can give.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.hub.brokerconf import Venue, configure_broker
from firmware.hub.store import Store

ROOT = Path(__file__).resolve().parents[2]
COMMAND = (sys.executable, "-m", "firmware.cli", "broker-config", "--hostname", "localhost")


@pytest.fixture(autouse=True)
def _umask_000() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_store_and_its_lock_are_created_0600(tmp_path: Path) -> None:
    """Under umask 000 the hub's store, its WAL files and its lock file are 0600."""
    path = tmp_path / "hub.sqlite3"
    store = Store(path, exclusive=True)
    store.new_game("t", "secret-identity", 3, {}, 1, ["a", "b", "c"])
    files = [path, Path(f"{path}.lock"), Path(f"{path}-wal"), Path(f"{path}-shm")]
    modes = {p.name: oct(mode(p)) for p in files if p.exists()}
    store.close()
    assert len(modes) == 4, modes
    assert set(modes.values()) == {"0o600"}, modes


def test_broker_secrets_are_created_0600_without_a_chmod(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """passwd, the keys and the password files are 0600 from creation (no 0666 window)."""
    monkeypatch.setattr(Path, "chmod", lambda *_a, **_k: None)  # only creation counts
    out = tmp_path / "broker"
    venue = Venue({"hub": ["main"]}, {"main": ["p1", "p2"]})
    configure_broker(out, venue, 8883, tls_hostnames=["localhost"])
    secrets = [out / "passwd", out / "ca.key", out / "broker.key"]
    secrets += sorted((out / "credentials").iterdir())
    assert len(secrets) > 5
    assert {p.name: oct(mode(p)) for p in secrets} == {p.name: "0o600" for p in secrets}
    assert mode(out / "credentials") == 0o700


def test_re_running_broker_config_repairs_modes(tmp_path: Path) -> None:
    """A re-run of `coffre broker-config` over a folder an earlier umask left wide open
    makes the secrets 0600, their folder 0700 and nothing writable by others."""

    def run() -> None:
        subprocess.run(
            [*COMMAND, "--out", str(out), "--table", "main", "--stations", "p1,p2"],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )

    out = tmp_path / "broker"
    run()
    for path in [out, *out.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o666)
    run()
    private = [out / "passwd", out / "ca.key", out / "broker.key"]
    private += sorted((out / "credentials").iterdir())
    assert {p.name: oct(mode(p)) for p in private} == {p.name: "0o600" for p in private}
    assert mode(out / "credentials") == 0o700
    writable = [str(p) for p in [out, *out.rglob("*")] if mode(p) & 0o022]
    assert writable == []
