"""coffre doctor on a faked Pi (/proc, /boot, /dev, /etc in a temp tree) and off a Pi."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import socket
import ssl
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from device.base import ReaderError, StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.hub.brokerconf import station_user
from firmware.tools.brokers import free_port
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
    assert cert.status == FAIL and "--hostname 127.0.0.1" in cert.fix
    assert "localhost" in cert.detail, "the names it has, to dial one of them"
    assert "copy" not in cert.line()
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


# --- every check is one line, whatever it meets ------------------------------------------


def test_a_passwd_in_latin_1_is_read_not_a_traceback(tmp_path: Path, broker: TlsBroker) -> None:
    """An /etc/passwd whose comment field is Latin-1 (not UTF-8): the groups and the
    password file's owner are still checked, every check is one line, nothing raised."""
    fake_pi(tmp_path)
    passwd = tmp_path / "etc/passwd"
    passwd.write_bytes("hélène:x:1001:1001:Hélène Crête:/home/h:/bin/sh\n".encode("latin-1"))
    with passwd.open("a") as f:
        f.write(f"coffre:x:{os.getuid()}:999::/:/x\n")
    station_toml(tmp_path, broker, "localhost", _password(tmp_path, broker))
    out = io.StringIO()
    doctor = Doctor(root=tmp_path, open_devices=_mock_parts, unit_active=lambda _u: False)
    assert report(doctor, out) == 0, out.getvalue()
    text = out.getvalue()
    assert "PASS groups: coffre in gpio, spi, i2c" in text
    assert "PASS password file" in text and "the coffre user's" in text


@contextlib.contextmanager
def not_a_broker(behaviour: str) -> Iterator[int]:
    """A TCP server on a loopback port that is not an MQTT broker: it resets every
    connection once the client spoke ("reset") or at once ("reset-at-once"), answers
    HTTP garbage and closes ("garbage"), or accepts and says nothing ("silent"). Yields
    its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            if behaviour.startswith("reset"):  # RST instead of FIN: ConnectionResetError
                if behaviour == "reset":  # once the client spoke (a TLS hello, a CONNECT)
                    conn.settimeout(2)
                    with contextlib.suppress(OSError):
                        conn.recv(1)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()
            elif behaviour == "garbage":
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                conn.close()
            else:
                held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()
        for conn in held:
            conn.close()


@pytest.mark.parametrize("tls", [True, False], ids=["tls", "plain"])
@pytest.mark.parametrize("behaviour", ["reset", "reset-at-once", "garbage", "silent"])
def test_something_else_on_the_brokers_port_is_one_line_naming_it(
    tmp_path: Path, broker: TlsBroker, behaviour: str, tls: bool
) -> None:
    """Not coffre's broker on the port (a reset, HTTP, silence; with TLS and plain MQTT):
    one FAIL line saying something else answers there and how to see what, then the
    clock is still checked; no traceback, no login tried through it."""
    (tmp_path / "etc/coffre").mkdir(parents=True)
    password = _password(tmp_path, broker)
    with not_a_broker(behaviour) as port:
        ca = f'ca_file = "{broker.ca}"\n' if tls else ""
        (tmp_path / "etc/coffre/station.toml").write_text(
            f'[broker]\nhost = "127.0.0.1"\nport = {port}\nusername = "{P1}"\n'
            f'password_file = "{password}"\n{ca}'
            '[station]\ntable = "main"\nid = "p1"\nbackend = "real"\n'
        )
        out = io.StringIO()
        assert report(Doctor(root=tmp_path, timeout=0.5), out) == 1
    lines = out.getvalue().splitlines()
    failed = [line for line in lines if line.startswith("FAIL")]
    assert len(failed) == 1, lines
    assert not any(line.startswith(("PASS broker", "PASS login")) for line in lines), lines
    assert "something that is not coffre's broker answers on 127.0.0.1" in failed[0]
    assert f"sudo ss -ltnp 'sport = :{port}'" in failed[0]
    assert "[broker] host and port in" in failed[0]
    assert any(line.startswith("PASS clock") for line in lines), lines


# --- the right fix, case by case -----------------------------------------------------------


@pytest.mark.parametrize("host", ["no-such-hub.invalid", "203.0.113.9", "localhost"])
def test_a_station_naming_the_wrong_hub_is_told_to_fix_its_host(
    tmp_path: Path, broker: TlsBroker, host: str
) -> None:
    """station.toml naming a hub that is not there (a name that does not resolve, an
    address with no hub, localhost on a station): the fix is [broker] host in
    station.toml, with the name it tried, not "start the broker"."""
    (tmp_path / "etc/coffre").mkdir(parents=True)
    station_toml(tmp_path, broker, host, _password(tmp_path, broker))
    toml = tmp_path / "etc/coffre/station.toml"
    toml.write_text(toml.read_text().replace(f"port = {broker.port}", f"port = {free_port()}"))
    checks = _checks(Doctor(root=tmp_path, timeout=0.5))
    assert checks["broker"].status == FAIL
    assert f"set [broker] host in {toml}" in checks["broker"].fix
    assert f"it tried {host}" in checks["broker"].fix
    assert "login" not in checks


def hub_tree(root: Path, broker: TlsBroker) -> Path:
    """A provisioned hub on a fake Pi, on the real broker's folder: hub.toml and
    display.toml, their passwords 0600, and the folder as broker-config leaves it
    (passwd 0660, acl 0664, credentials/ 0770 in the coffre group, keys 0600)."""
    from firmware.hub.certs import write_private

    fake_pi(root)
    folder = Path(broker.ca).parent
    # broker-config keeps the CA's key beside ca.crt; the test broker does not: a stand-in
    # (the doctor reads its mode, never its bytes).
    write_private(folder / "ca.key", b"-----BEGIN PRIVATE KEY-----\n")
    credentials = folder / "credentials"
    credentials.mkdir()
    credentials.chmod(0o770)
    for user, secret in broker.access.passwords.items():
        write_private(credentials / f"{user}.password", (secret + "\n").encode())
    (folder / "passwd").chmod(0o660)
    (folder / "acl").chmod(0o664)
    etc = root / "etc/coffre"
    for user in ("hub", "spectator"):
        (etc / f"{user}.password").write_text(broker.access.passwords[user] + "\n")
        (etc / f"{user}.password").chmod(0o600)
    section = (
        f'[broker]\nhost = "localhost"\nport = {broker.port}\nusername = "{{user}}"\n'
        f'password_file = "{etc}/{{user}}.password"\nca_file = "{broker.ca}"\n'
    )
    (etc / "hub.toml").write_text(
        section.format(user="hub")
        + f'[store]\npath = "{root}/hub.sqlite3"\n[pairing]\nbroker_dir = "{folder}"\n'
        '[[table]]\nname = "main"\nstations = ["p1"]\n'
    )
    (etc / "display.toml").write_text('tables = ["main"]\n' + section.format(user="spectator"))
    return folder


def test_a_healthy_hub_passes_every_check(tmp_path: Path, broker: TlsBroker) -> None:
    """A hub as provisioning leaves it: every line PASS, the secrets and what pairing
    writes included, and "all good"."""
    hub_tree(tmp_path, broker)
    out = io.StringIO()
    assert report(Doctor(root=tmp_path, unit_active=lambda _u: False), out) == 0, out.getvalue()
    names = [line.split(":")[0] for line in out.getvalue().splitlines()[:-1]]
    assert names == [
        "PASS board", "PASS i2c", "PASS i2c speed", "PASS groups", "PASS config",
        "PASS password file", "PASS secrets", "PASS pairing", "PASS broker",
        "PASS certificate", "PASS login", "PASS clock", "PASS broker config",
    ]  # fmt: skip


def test_a_hubs_key_or_spectator_password_open_to_others_fails(
    tmp_path: Path, broker: TlsBroker
) -> None:
    """The CA's key and the display's password readable by others, a station's kept
    password too: one FAIL naming each, the fix chmods them 0600 (not "all good")."""
    folder = hub_tree(tmp_path, broker)
    spectator = tmp_path / "etc/coffre/spectator.password"
    kept = folder / "credentials" / f"{P1}.password"
    for path in (folder / "ca.key", spectator, kept):
        path.chmod(0o644)
    out = io.StringIO()
    assert report(Doctor(root=tmp_path, unit_active=lambda _u: False), out) == 1
    secrets = next(line for line in out.getvalue().splitlines() if " secrets:" in line)
    assert secrets.startswith("FAIL secrets")
    for path in (folder / "ca.key", spectator, kept):
        assert f"{path} is 0644 (others can read it)" in secrets
    fix = secrets.split(" -> fix: ")[1].split()
    assert fix[:3] == ["sudo", "chmod", "0600"]
    assert set(fix[3:]) == {str(folder / "ca.key"), str(spectator), str(kept)}
    assert f"{folder / 'passwd'}" not in secrets, "passwd is 0660: the hub's group writes it"


def test_a_link_where_a_secret_should_be_is_a_fail_of_its_own_never_a_chmod(
    tmp_path: Path, broker: TlsBroker
) -> None:
    """A station's kept password, the display's password and passwd made links to an
    open file elsewhere: each a FAIL saying it is a link, the fix removes it and has it
    written again; no chmod anywhere (root would follow the link to its target)."""
    folder = hub_tree(tmp_path, broker)
    target = tmp_path / "elsewhere"
    target.write_text("not a secret\n")
    target.chmod(0o644)
    kept = folder / "credentials" / f"{P1}.password"
    spectator = tmp_path / "etc/coffre/spectator.password"
    passwd = folder / "passwd"
    for path in (kept, spectator, passwd):
        path.unlink()
        path.symlink_to(target)
    checks = _checks(Doctor(root=tmp_path, unit_active=lambda _u: False))
    secrets = checks["secrets"]
    assert secrets.status == FAIL
    for path in (kept, spectator, passwd):
        assert f"{path} is a link" in secrets.detail
    assert "chmod" not in secrets.line()
    assert (
        f"sudo rm {spectator} && sudo install -m 0600 -o coffre -g coffre "
        f"{folder / 'credentials' / 'spectator.password'} {spectator}"
    ) in secrets.fix
    assert f"sudo rm {passwd} {kept} && re-run provisioning" in secrets.fix
    pairing = checks["pairing"]
    assert pairing.status == FAIL and "passwd (a link)" in pairing.detail
    assert "chmod" not in pairing.line() and "chgrp" not in pairing.line()
    assert target.stat().st_mode & 0o777 == 0o644


def test_a_stations_password_file_that_is_a_link_is_paired_again_not_chmodded(
    tmp_path: Path, broker: TlsBroker
) -> None:
    """The station's password a link to a world-readable file: FAIL "is a link", the fix
    removes it and restarts the station (it pairs), never a chmod through it."""
    fake_pi(tmp_path)
    real = _password(tmp_path, broker, 0o644).rename(tmp_path / "elsewhere")
    link = tmp_path / "etc/coffre/station.password"
    link.symlink_to(real)
    station_toml(tmp_path, broker, "localhost", link)
    checks = _checks(Doctor(root=tmp_path, open_devices=_mock_parts, unit_active=lambda _u: False))
    check = checks["password file"]
    assert check.status == FAIL and f"{link} is a link" in check.detail
    assert check.fix.startswith(f"pair again: sudo rm {link} && sudo systemctl restart")
    assert "chmod" not in check.line()
    # A link to nothing: the config cannot read it, and the fix still removes the link.
    real.unlink()
    config = _checks(Doctor(root=tmp_path, unit_active=lambda _u: False))["config"]
    assert config.status == FAIL
    assert config.fix.startswith(f"pair again: sudo rm {link} && sudo systemctl restart")


def test_a_restored_passwd_the_hub_cannot_write_fails_pairing(
    tmp_path: Path, broker: TlsBroker
) -> None:
    """passwd, acl and credentials/ owned mosquitto:mosquitto (as a restore left them),
    the coffre user in none of their groups: pairing FAILs naming each with its owner
    and mode, and the fix gives each the coffre group back; done, it passes."""
    folder = hub_tree(tmp_path, broker)
    (folder / "passwd").chmod(0o600)
    me, mine = os.getuid(), os.getgid()
    (tmp_path / "etc/passwd").write_text(
        f"mosquitto:x:{me}:{mine}::/:/x\ncoffre:x:{me + 1}:999::/:/x\n"
    )
    group = tmp_path / "etc/group"
    group.write_text(f"mosquitto:x:{mine}:\ncoffre:x:999:\n")
    pairing = _checks(Doctor(root=tmp_path, unit_active=lambda _u: False))["pairing"]
    assert pairing.status == FAIL
    assert "passwd (mosquitto:mosquitto 0600)" in pairing.detail
    assert "acl (mosquitto:mosquitto 0664)" in pairing.detail
    assert "credentials (mosquitto:mosquitto 0770)" in pairing.detail
    assert "no station can pair" in pairing.detail
    passwd, acl, credentials = (folder / name for name in ("passwd", "acl", "credentials"))
    assert pairing.fix == (
        f"sudo chgrp coffre {passwd} {acl} {credentials} && sudo chmod 0660 {passwd} && "
        f"sudo chmod 0664 {acl} && sudo chmod 0770 {credentials}"
    )
    # The fix done (chgrp in the fake tree's terms: coffre's group is the files' own).
    passwd.chmod(0o660)
    group.write_text(f"mosquitto:x:998:\ncoffre:x:{mine}:\n")
    (tmp_path / "etc/passwd").write_text(f"coffre:x:{me + 1}:{mine}::/:/x\n")
    pairing = _checks(Doctor(root=tmp_path, unit_active=lambda _u: False))["pairing"]
    assert pairing.status == PASS, pairing.line()


@pytest.mark.parametrize("distro_mosquitto", [False, True])
def test_a_stopped_broker_is_given_the_command_that_starts_it(
    tmp_path: Path, broker: TlsBroker, distro_mosquitto: bool
) -> None:
    """coffre-broker stopped on the hub: the fix is `sudo systemctl start coffre-broker`;
    with the distribution's mosquitto running the line says it is not coffre's, never
    "is mosquitto up?"."""
    hub_tree(tmp_path, broker)
    broker.process.stop()
    active = {"mosquitto"} if distro_mosquitto else set()
    check = _checks(Doctor(root=tmp_path, unit_active=active.__contains__))["broker"]
    assert check.status == FAIL
    assert check.detail.startswith(f"nothing listens on localhost:{broker.port}")
    assert check.fix == "sudo systemctl start coffre-broker"
    assert "is mosquitto up" not in check.line()
    said = "the distribution's mosquitto runs, but coffre's broker is coffre-broker"
    assert (said in check.detail) == distro_mosquitto


def test_another_tables_ca_is_told_to_pair_again(tmp_path: Path, broker: TlsBroker) -> None:
    """A station holding another table's ca.crt: the fix is docs/pairing.md's (delete
    the station's files, restart it: it pairs), never "copy the hub's ca.crt"."""
    other = TlsBroker(tmp_path / "other", ["localhost"])
    try:
        (tmp_path / "etc/coffre").mkdir(parents=True)
        password = _password(tmp_path, broker)
        station_toml(tmp_path, broker, "localhost", password)
        toml = tmp_path / "etc/coffre/station.toml"
        toml.write_text(toml.read_text().replace(broker.ca, other.ca))
        checks = _checks(Doctor(root=tmp_path))
    finally:
        other.process.stop()
    cert = checks["certificate"]
    assert cert.status == FAIL and "another table's CA" in cert.detail
    assert cert.fix == (
        f"pair again: sudo rm {password} {other.ca} && sudo systemctl restart coffre-station "
        "(docs/pairing.md)"
    )
    assert "copy" not in cert.line()


def test_a_wrong_password_is_one_line_with_its_fix(
    tmp_path: Path,
    broker: TlsBroker,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A password the broker refuses: FAIL login with the fix (pair again: delete
    station.password, restart coffre-station), and no log line of the MQTT client's
    above it."""
    (tmp_path / "etc/coffre").mkdir(parents=True)
    password = _password(tmp_path, broker)
    password.write_text("not-the-password\n")
    station_toml(tmp_path, broker, "localhost", password)
    caplog.set_level(logging.INFO)
    out = io.StringIO()
    assert report(Doctor(root=tmp_path), out) == 1
    login = next(line for line in out.getvalue().splitlines() if " login:" in line)
    assert login.startswith("FAIL login")
    assert login.endswith(
        f"-> fix: pair again: sudo rm {password} && sudo systemctl restart coffre-station "
        "(docs/pairing.md)"
    )
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("running", [True, False])
def test_a_ca_crt_gone_under_a_running_station_says_restart_it(
    tmp_path: Path, broker: TlsBroker, running: bool
) -> None:
    """ca.crt removed: the station pairs when it starts, so a running station is to be
    restarted (`sudo systemctl restart coffre-station`), a stopped one started."""
    (tmp_path / "etc/coffre").mkdir(parents=True)
    station_toml(tmp_path, broker, "localhost", _password(tmp_path, broker))
    toml = tmp_path / "etc/coffre/station.toml"
    gone = tmp_path / "ca.crt"
    toml.write_text(toml.read_text().replace(broker.ca, str(gone)))
    active = {"coffre-station"} if running else set()
    config = _checks(Doctor(root=tmp_path, unit_active=active.__contains__))["config"]
    assert config.status == FAIL and str(gone) in config.detail
    verb = "restart" if running else "start"
    assert config.fix == f"sudo systemctl {verb} coffre-station: it pairs (docs/pairing.md)"


def _foreign_tls_server(folder: Path) -> ssl.SSLContext:
    """The server side of a TLS service that is not coffre's (another application's
    broker): a self-signed certificate of its own organisation, naming localhost."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Home Assistant"),
            x509.NameAttribute(NameOID.COMMON_NAME, "mqtt.home"),
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir()
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return context


def test_another_applications_tls_broker_on_the_port_is_not_taken_for_another_table(
    tmp_path: Path, broker: TlsBroker
) -> None:
    """A TLS server whose certificate is not from any coffre CA (another application's
    broker on coffre's port): said to be something else holding the port, not "pair
    again" (which would not help)."""
    context = _foreign_tls_server(tmp_path / "foreign")
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.settimeout(2)
            with contextlib.suppress(OSError), context.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        (tmp_path / "etc/coffre").mkdir(parents=True)
        station_toml(tmp_path, broker, "localhost", _password(tmp_path, broker))
        toml = tmp_path / "etc/coffre/station.toml"
        port = server.getsockname()[1]
        toml.write_text(toml.read_text().replace(f"port = {broker.port}", f"port = {port}"))
        checks = _checks(Doctor(root=tmp_path, timeout=1.0))
    finally:
        stop.set()
        thread.join()
        server.close()
    found = checks["broker"]
    assert found.status == FAIL
    assert "something that is not coffre's broker answers" in found.detail
    assert "mqtt.home" in found.detail
    assert f"sudo ss -ltnp 'sport = :{port}'" in found.fix
    assert "pair again" not in found.fix
    assert "certificate" not in checks and "login" not in checks


def test_a_hub_dialling_another_port_than_its_broker_is_told_which(
    tmp_path: Path, broker: TlsBroker
) -> None:
    """hub.toml's port is not the one coffre-broker listens on (its mosquitto.conf): the
    fix is the port to set, not "start coffre-broker" (it runs)."""
    hub_tree(tmp_path, broker)
    toml = tmp_path / "etc/coffre/hub.toml"
    toml.write_text(toml.read_text().replace(f"port = {broker.port}", f"port = {free_port()}"))
    active = {"coffre-broker"}
    check = _checks(Doctor(root=tmp_path, unit_active=active.__contains__))["broker"]
    assert check.status == FAIL and f"coffre-broker listens on {broker.port}" in check.detail
    assert check.fix == f"set [broker] port = {broker.port} in {toml}"


@pytest.mark.parametrize(
    ("raised", "said", "fix"),
    [
        (
            PermissionError(13, "Permission denied", "/boot/firmware/config.txt"),
            "cannot read /boot/firmware/config.txt: permission denied",
            "run it as root: sudo coffre doctor",
        ),
        (
            RuntimeError("a driver's own error"),
            "could not be checked (RuntimeError: a driver's own error)",
            "a bug in coffre doctor: report this line",
        ),
    ],
)
def test_a_check_that_meets_the_unforeseen_is_one_line_and_the_rest_runs(
    tmp_path: Path,
    broker: TlsBroker,
    monkeypatch: pytest.MonkeyPatch,
    raised: Exception,
    said: str,
    fix: str,
) -> None:
    """Whatever a check raises is its own FAIL line with what to do; the checks after
    it still run (here the I2C clock's read fails, and groups to clock follow)."""
    fake_pi(tmp_path)
    station_toml(tmp_path, broker, "localhost", _password(tmp_path, broker))

    def fails(_self: Doctor, _on_pi: bool) -> Check:
        raise raised

    monkeypatch.setattr(Doctor, "i2c_speed", fails)
    doctor = Doctor(root=tmp_path, open_devices=_mock_parts, unit_active=lambda _u: False)
    out = io.StringIO()
    assert report(doctor, out) == 1
    lines = out.getvalue().splitlines()
    assert f"FAIL i2c speed: {said} -> fix: {fix}" in lines
    after = [
        line.split(":")[0]
        for line in lines[lines.index(f"FAIL i2c speed: {said} -> fix: {fix}") + 1 :]
    ]
    assert after[:-1] == [
        "PASS groups", "PASS config", "PASS password file", "PASS chips", "PASS broker",
        "PASS certificate", "PASS login", "PASS clock",
    ]  # fmt: skip
