"""coffre doctor on a faked Pi (/proc, /boot, /dev, /etc in a temp tree) and off a Pi."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from device.base import ReaderError, StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.hub.brokerconf import station_user
from firmware.tools.doctor import FAIL, PASS, SKIP, Check, Doctor, report
from tests.support.tls import TlsBroker

P1 = station_user("main", "p1")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[TlsBroker]:
    """A TLS mosquitto whose certificate names localhost only (not 127.0.0.1)."""
    b = TlsBroker(tmp_path / "broker", ["localhost"])
    yield b
    b.process.stop()


def fake_pi(root: Path, *, spi: bool = True, groups: str = "gpio,spi,i2c") -> None:
    """A Raspberry Pi's tree: model, config.txt, /dev nodes, the coffre user and groups."""
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/model").write_text("Raspberry Pi Zero 2 W Rev 1.0\x00")
    (root / "boot/firmware").mkdir(parents=True)
    lines = ["dtparam=i2c_arm=on", "dtparam=i2c_arm_baudrate=400000"]
    lines += ["dtparam=spi=on"] if spi else ["#dtparam=spi=on"]
    (root / "boot/firmware/config.txt").write_text("\n".join(lines) + "\n")
    (root / "dev").mkdir()
    for node in ("spidev0.0", "i2c-1"):
        (root / "dev" / node).touch()
    etc = root / "etc"
    (etc / "coffre").mkdir(parents=True)
    (etc / "passwd").write_text(f"root:x:0:0::/root:/bin/sh\ncoffre:x:{os.getuid()}:999::/:/x\n")
    wanted = set(groups.split(","))
    (etc / "group").write_text(
        "".join(
            f"{g}:x:{900 + i}:{'coffre' if g in wanted else ''}\n"
            for i, g in enumerate(("gpio", "spi", "i2c"))
        )
    )


def station_toml(root: Path, broker: TlsBroker, host: str, password: Path) -> None:
    (root / "etc/coffre/station.toml").write_text(
        f'[broker]\nhost = "{host}"\nport = {broker.port}\nusername = "{P1}"\n'
        f'password_file = "{password}"\nca_file = "{broker.ca}"\n'
        '[station]\ntable = "main"\nid = "p1"\nbackend = "real"\n'
    )


def _password(root: Path, broker: TlsBroker, mode: int = 0o600) -> Path:
    path = root / "etc/coffre/station.password"
    path.write_text(broker.access.passwords[P1] + "\n")
    path.chmod(mode)
    return path


def _mock_parts() -> StationDevices:
    return StationDevices(MockReader(), MockDisplay(), MockControls())


def _checks(doctor: Doctor) -> dict[str, Check]:
    return {c.name: c for c in doctor.run()}


def test_a_healthy_station_passes_every_check(tmp_path: Path, broker: TlsBroker) -> None:
    """SPI, I2C at 400 kHz, groups, a 0600 password, the chips, the broker, the
    certificate's name, the login and the clock: all PASS, exit 0."""
    fake_pi(tmp_path)
    station_toml(tmp_path, broker, "localhost", _password(tmp_path, broker))
    doctor = Doctor(root=tmp_path, open_devices=_mock_parts, unit_active=lambda _u: False)
    out = io.StringIO()
    assert report(doctor, out) == 0, out.getvalue()
    lines = out.getvalue().splitlines()
    names = [line.split(":")[0] for line in lines[:-1]]
    assert names == [
        "PASS board", "PASS spi", "PASS i2c", "PASS i2c speed", "PASS groups", "PASS config",
        "PASS password file", "PASS chips", "PASS broker", "PASS certificate", "PASS login",
        "PASS clock",
    ]  # fmt: skip
    assert lines[-1].startswith("all good")


def test_each_fault_is_one_fail_line_with_its_fix(tmp_path: Path, broker: TlsBroker) -> None:
    """SPI off, coffre not in spi, a world-readable password, a silent reader, and the hub's
    IP not on the certificate: each a FAIL naming the fix (never 'copy ca.crt')."""
    fake_pi(tmp_path, spi=False, groups="gpio,i2c")
    station_toml(tmp_path, broker, "127.0.0.1", _password(tmp_path, broker, 0o644))

    def silent() -> StationDevices:
        raise ReaderError("no MFRC522 on SPI 0.0")

    checks = _checks(Doctor(root=tmp_path, open_devices=silent, unit_active=lambda _u: False))
    assert checks["spi"].status == FAIL and "raspi-config nonint do_spi 0" in checks["spi"].fix
    assert checks["groups"].status == FAIL and checks["groups"].fix == "sudo usermod -aG spi coffre"
    assert checks["password file"].status == FAIL and "chmod 0600" in checks["password file"].fix
    assert checks["chips"].status == FAIL and "MFRC522" in checks["chips"].detail
    cert = checks["certificate"]
    assert cert.status == FAIL and "--hostname 127.0.0.1" in cert.detail
    assert "copy" not in cert.detail
    assert "login" not in checks, "no login tried through a certificate that failed"


def test_off_a_pi_it_runs_and_says_what_it_cannot_check(tmp_path: Path, broker: TlsBroker) -> None:
    """No /proc/device-tree/model: board, buses and chips are SKIP with the reason; the
    files, the broker and the clock are still checked."""
    (tmp_path / "etc/coffre").mkdir(parents=True)
    station_toml(tmp_path, broker, "localhost", _password(tmp_path, broker))
    checks = _checks(Doctor(root=tmp_path))
    for name in ("board", "spi", "i2c", "i2c speed", "chips"):
        assert checks[name].status == SKIP, name
    assert "not a Raspberry Pi" in checks["board"].detail
    assert checks["groups"].status == SKIP
    assert checks["login"].status == PASS and checks["certificate"].status == PASS


def test_without_a_role_it_says_so_and_still_runs(tmp_path: Path) -> None:
    """Nothing provisioned: a FAIL with the provisioning command, the board, and a SKIP."""
    out = io.StringIO()
    assert report(Doctor(root=tmp_path), out) == 1
    text = out.getvalue()
    assert "FAIL role" in text and "provision-pi.sh" in text and "SKIP board" in text


def test_a_hub_with_an_old_conf_d_snippet_is_told_to_remove_it(tmp_path: Path) -> None:
    """An older coffre's conf.d/coffre.conf and no coffre-broker config: two FAILs, fixes named."""
    fake_pi(tmp_path)
    (tmp_path / "etc/mosquitto/conf.d").mkdir(parents=True)
    (tmp_path / "etc/mosquitto/conf.d/coffre.conf").write_text(
        "# generated by coffre broker-config\n"
    )
    doctor = Doctor(root=tmp_path, role="hub")
    checks = {c.name: c for c in doctor.hub_setup()}
    assert checks["broker config"].status == FAIL and "--apply" in checks["broker config"].fix
    assert checks["mosquitto"].status == FAIL and "sudo rm" in checks["mosquitto"].fix


def test_plain_debian_without_the_pi_groups_says_so_in_one_readable_line(
    tmp_path: Path, broker: TlsBroker
) -> None:
    """The coffre user on a system with no gpio, spi or i2c group (plain Debian, the
    clean-table run): groups PASS, saying there is nothing to join (it said "coffre in  (")."""
    (tmp_path / "etc/coffre").mkdir(parents=True)
    (tmp_path / "etc/passwd").write_text(f"coffre:x:{os.getuid()}:999::/:/x\n")
    (tmp_path / "etc/group").write_text("coffre:x:999:\n")
    station_toml(tmp_path, broker, "localhost", _password(tmp_path, broker))
    groups = _checks(Doctor(root=tmp_path))["groups"]
    assert groups.status == PASS
    assert groups.detail == "no gpio, spi, i2c group here: nothing to join"


@pytest.mark.parametrize(
    ("line", "status", "said"),
    [
        (None, FAIL, "the default 100 kHz: a full OLED frame takes 93 ms"),
        ("dtparam=i2c_arm_baudrate=100000", FAIL, "100 kHz: a full OLED frame takes 93 ms"),
        ("dtparam=i2c_arm=on,i2c_arm_baudrate=400000", PASS, "400 kHz"),
        ("dtparam=i2c_baudrate=1000000", PASS, "1000 kHz (a full OLED frame takes 9 ms)"),
    ],
)
def test_the_i2c_clock_is_read_as_the_firmware_reads_it(
    tmp_path: Path, line: str | None, status: str, said: str
) -> None:
    """Absent or slow: FAIL with the line to set; 400 kHz: PASS; faster: PASS, said to be
    beyond the panel's rating (a hardware hacker's choice, not a mistake)."""
    fake_pi(tmp_path)
    config = tmp_path / "boot/firmware/config.txt"
    lines = [x for x in config.read_text().splitlines() if "baudrate" not in x]
    config.write_text("\n".join([*lines, *([line] if line else [])]) + "\n")
    check = Doctor(root=tmp_path).i2c_speed(on_pi=True)
    assert check.status == status and said in check.detail
    if status == FAIL:
        assert "dtparam=i2c_arm_baudrate=400000" in check.fix
    else:
        assert ("beyond" in check.detail) == (said != "400 kHz")
