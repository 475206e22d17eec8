"""The shipped systemd units, checked off a Pi: hub and station boot under their settings.

No systemd is needed: the unit's working directory, umask and environment are applied
to real ``coffre hub`` / ``coffre station`` processes (TLS mosquitto, password files),
and a Unix socket stands in for systemd's NOTIFY_SOCKET.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.hub.brokerconf import HUB_USER, station_user
from firmware.link.config import EX_CONFIG
from tests.support.tls import TlsBroker, tls_broker

__all__ = ["tls_broker"]  # the fixture, imported for this module's tests

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
HARDENING = {
    "NoNewPrivileges": "true",
    "ProtectSystem": "strict",
    "ProtectHome": "true",
    "PrivateTmp": "true",
    "ProtectKernelTunables": "true",
    "ProtectControlGroups": "true",
    "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
    "UMask": "0077",
    "RestartPreventExitStatus": "78",
    "Type": "notify",
}


def service(name: str) -> dict[str, list[str]]:
    """The [Service] settings of a shipped unit (repeatable keys keep every value)."""
    return _section(UNITS / f"coffre-{name}.service", "[Service]")


def _section(unit: Path, wanted: str) -> dict[str, list[str]]:
    """One section's settings of a unit file."""
    settings: dict[str, list[str]] = {}
    section = ""
    for raw in unit.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line
        elif section == wanted:
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    return settings


class Unit:
    """A process started as systemd would start the unit, with paths moved under ``root``."""

    def __init__(self, name: str, root: Path, config: Path) -> None:
        self.settings = service(name)
        one = {k: v[-1] for k, v in self.settings.items()}
        state = one["StateDirectory"].split()[0]  # the first: its working directory
        assert one["WorkingDirectory"] == f"/var/lib/{state}"  # systemd makes it writable
        self.workdir = root / "var" / "lib" / state
        self.workdir.mkdir(parents=True, mode=int(one["StateDirectoryMode"], 8))
        self.umask = int(one["UMask"], 8)
        env = dict(v.split("=", 1) for v in self.settings.get("Environment", []))
        self.notify_path = root / "notify"
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(str(self.notify_path))
        self.notify.settimeout(20)
        env.update(
            PATH=os.environ.get("PATH", "/usr/bin:/bin"),
            PYTHONPATH=str(ROOT),
            NOTIFY_SOCKET=str(self.notify_path),
            WATCHDOG_USEC=str(int(one["WatchdogSec"]) * 1_000_000),
            INVOCATION_ID="test",
        )
        exec_start = one["ExecStart"].split()
        assert exec_start[:2] == ["/opt/coffre/venv/bin/coffre", name]
        argv = [sys.executable, "-m", "firmware.cli", *exec_start[1:]]
        argv[argv.index("--config") + 1] = str(config)
        self.process = subprocess.Popen(
            argv,
            cwd=self.workdir,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: os.umask(self.umask),
        )

    def wait_notified(self, message: bytes) -> None:
        while self.notify.recv(64) != message:
            pass

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGTERM)
        _out, err = self.process.communicate(timeout=30)
        self.notify.close()
        return self.process.returncode, err


@pytest.mark.parametrize("name", ["hub", "station"])
def test_units_carry_the_hardening_and_the_gpio_stack(name: str) -> None:
    """Each unit: notify type, UMask 0077, no restart on 78, lgpio, sandboxing on."""
    settings = {k: v[-1] for k, v in service(name).items()}
    for key, value in HARDENING.items():
        assert settings.get(key) == value, key
    env = service(name)["Environment"]
    assert "GPIOZERO_PIN_FACTORY=lgpio" in env
    assert "WorkingDirectory" in settings and "WatchdogSec" in settings
    if shutil.which("systemd-analyze"):  # the unit parses as systemd reads it
        text = (UNITS / f"coffre-{name}.service").read_text()
        unit = Path(f"/tmp/coffre-test-{os.getpid()}-{name}.service")
        unit.write_text(text.replace("/opt/coffre/venv/bin/coffre", "/bin/true"))
        try:
            run = subprocess.run(
                ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True
            )
        finally:
            unit.unlink()
        problems = [
            line for line in run.stderr.splitlines() if str(unit) in line or "coffre-test" in line
        ]
        assert not problems, problems


def test_bad_config_exits_78_which_the_unit_does_not_restart(tmp_path: Path) -> None:
    """A config typo under the station unit: one journal line and exit 78 (no restart loop)."""
    config = tmp_path / "station.toml"
    config.write_text('[broker]\nhots = "hub"\n[station]\ntable = "main"\nid = "p1"\n')
    unit = Unit("station", tmp_path, config)
    _out, err = unit.process.communicate(timeout=30)
    unit.notify.close()
    assert unit.process.returncode == EX_CONFIG
    assert str(EX_CONFIG) in unit.settings["RestartPreventExitStatus"]
    assert err.strip().splitlines() == [f"coffre: {config}: unknown key hots in [broker]"]


def test_hub_and_station_boot_under_the_units(tls_broker: TlsBroker, tmp_path: Path) -> None:
    """Both units' processes start, notify READY and WATCHDOG, talk over TLS, stop with 0;
    the hub's store lands in its working directory, readable by its user only."""
    secrets = tmp_path / "etc"
    secrets.mkdir()
    for user, filename in ((HUB_USER, "hub.password"), (station_user("main", "p1"), "p1.pw")):
        (secrets / filename).write_text(tls_broker.access.passwords[user] + "\n")
        (secrets / filename).chmod(0o600)
    broker = f'host = "127.0.0.1"\nport = {tls_broker.port}\nca_file = "{tls_broker.ca}"\n'
    hub_toml = secrets / "hub.toml"
    hub_toml.write_text(
        f'[broker]\n{broker}username = "hub"\npassword_file = "{secrets / "hub.password"}"\n'
        '[store]\npath = "hub.sqlite3"\n'  # relative: in the working directory
        '[[table]]\nname = "main"\nstations = ["p1"]\n'
    )
    station_toml = secrets / "station.toml"
    station_toml.write_text(
        f'[broker]\n{broker}username = "main.p1"\npassword_file = "{secrets / "p1.pw"}"\n'
        '[station]\ntable = "main"\nid = "p1"\nbackend = "mock"\n'
    )
    (tmp_path / "hub").mkdir()
    (tmp_path / "station").mkdir()
    hub = Unit("hub", tmp_path / "hub", hub_toml)
    station = Unit("station", tmp_path / "station", station_toml)
    try:
        hub.wait_notified(b"READY=1")
        station.wait_notified(b"READY=1")
        station.wait_notified(b"WATCHDOG=1")
        store = hub.workdir / "hub.sqlite3"
        assert store.is_file()
        assert stat.S_IMODE(store.stat().st_mode) == 0o600
    finally:
        station_rc, station_err = station.stop()
        hub_rc, hub_err = hub.stop()
    assert (hub_rc, station_rc) == (0, 0), hub_err + station_err
    assert "p1: the hub is ready" in station_err
    assert "main: station p1 is online" in hub_err
    assert "Traceback" not in hub_err + station_err
    # journald adds its own timestamp: the lines start with the level.
    assert all(line.split()[0] in ("INFO", "WARNING") for line in station_err.splitlines())


def test_roots_backup_starts_on_the_hubs_request_in_the_hubs_own_folder(tmp_path: Path) -> None:
    """coffre-backup.path watches the request file the hub writes in the folder its unit
    makes (a StateDirectory of the hub's: coffre's, 0700) and provisioning names in
    hub.toml's [backup] dir; it starts coffre-backup.service, a sandboxed root oneshot that
    runs ``coffre backup --requested`` on that very file and writes only in /var/lib/coffre.
    Both parse as systemd reads them; provisioning installs and enables the path."""
    watched = _section(UNITS / "coffre-backup.path", "[Path]")["PathExists"]
    assert len(watched) == 1
    request = Path(watched[0])
    backup = {k: v[-1] for k, v in _section(UNITS / "coffre-backup.service", "[Service]").items()}
    assert backup["Type"] == "oneshot" and "User" not in backup  # root: it reads ca.key
    exec_start = backup["ExecStart"].split()
    assert exec_start == ["/opt/coffre/venv/bin/coffre", "backup", "--requested", str(request)]
    hub = service("hub")
    folders = [f"/var/lib/{d}" for d in hub["StateDirectory"][-1].split()]
    assert str(request.parent) in folders, "the hub's own folder: systemd makes it, coffre's"
    assert hub["StateDirectoryMode"][-1] == "0700" and hub["User"][-1] == "coffre"
    script = (ROOT / "deploy" / "provision-pi.sh").read_text()
    assert f'[backup]\ndir = "{request.parent}"' in script
    assert '"$src/deploy/systemd/coffre-backup.path"' in script
    assert "for watch in coffre-broker-reload coffre-backup" in script
    for key in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "UMask"):
        assert backup[key] == HARDENING[key], key
    assert backup["ReadWritePaths"] == "/var/lib/coffre" and backup["PrivateNetwork"] == "true"
    if shutil.which("systemd-analyze"):  # both parse as systemd reads them
        for name in ("coffre-backup.path", "coffre-backup.service"):
            text = (UNITS / name).read_text()
            (tmp_path / name).write_text(text.replace("/opt/coffre/venv/bin/coffre", "/bin/true"))
        run = subprocess.run(
            ["systemd-analyze", "verify", str(tmp_path / "coffre-backup.path")],
            capture_output=True,
            text=True,
        )
        problems = [line for line in run.stderr.splitlines() if "coffre-backup" in line]
        assert not problems, problems
