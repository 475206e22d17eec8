"""Broker set-up: password hashes, ACL lines, TLS files, the generated config runs in mosquitto."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from pathlib import Path

from cryptography import x509

from firmware.hub.brokerconf import (
    PBKDF2_ROUNDS,
    SPECTATOR_USER,
    TableAccess,
    hash_password,
    station_user,
    write_broker_files,
)
from firmware.hub.config import load_hub
from firmware.tools.brokers import Mosquitto, free_port

ROOT = Path(__file__).resolve().parents[2]


def test_password_hash_is_mosquitto_pbkdf2() -> None:
    """$7$ hashes: PBKDF2-SHA512, 101 rounds, base64 salt and digest."""
    salt = b"0123456789ab"
    text = hash_password("secret", salt=salt)
    kind, rounds, salt64, digest64 = text.split("$")[1:]
    assert (kind, int(rounds)) == ("7", PBKDF2_ROUNDS)
    assert base64.b64decode(salt64) == salt
    want = hashlib.pbkdf2_hmac("sha512", b"secret", salt, PBKDF2_ROUNDS)
    assert base64.b64decode(digest64) == want


def test_acl_gives_each_station_only_its_own_topics() -> None:
    """A station may write its input/status and read its screen/ack, public, hub status."""
    acl = TableAccess("main", ["p1", "p2"]).acl()
    block = acl.split(f"user {station_user('main', 'p1')}\n")[1].split("\n\n")[0]
    assert block.splitlines() == [
        "topic write coffre/main/station/p1/input",
        "topic readwrite coffre/main/station/p1/status",
        "topic read coffre/main/station/p1/screen",
        "topic read coffre/main/station/p1/ack",
        "topic read coffre/main/public",
        "topic read coffre/main/hub/status",
    ]
    assert "p2" not in block
    assert "user hub\ntopic readwrite coffre/main/#" in acl


def test_the_spectator_reads_public_and_hub_status_of_its_tables_only() -> None:
    """The table display's user: read-only, two topics per table, nothing else."""
    acl = write_acl_of([TableAccess("main", ["p1"]), TableAccess("side", ["q1"])])
    block = acl.split(f"user {SPECTATOR_USER}\n")[1].split("\n\n")[0]
    assert block.splitlines() == [
        "topic read coffre/main/public",
        "topic read coffre/main/hub/status",
        "topic read coffre/side/public",
        "topic read coffre/side/hub/status",
    ]


def write_acl_of(tables: list[TableAccess]) -> str:
    from firmware.hub.brokerconf import _merge_acl

    return _merge_acl([t.acl() for t in tables])


def test_every_user_gets_a_distinct_password() -> None:
    """Generated passwords are unique per user."""
    access = TableAccess("main", ["p1", "p2", "p3"])
    assert (
        len(set(access.passwords.values())) == len(access.users()) == 8
    )  # with enrol-main (pairing)


def test_generated_config_starts_mosquitto(tmp_path: Path) -> None:
    """The files load in a real mosquitto with anonymous refused."""
    port = free_port()
    conf = write_broker_files(tmp_path, port, [TableAccess("main", ["p1"])], stay_root=True)
    text = conf.read_text()
    assert "allow_anonymous false" in text and f"listener {port} 127.0.0.1" in text
    broker = Mosquitto(conf, port)
    broker.start()
    broker.stop()


def _cli(out: Path, *args: str) -> str:
    """``coffre broker-config --out out args`` in a process of its own; its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "broker-config", "--out", str(out), *args],
        check=True,
        capture_output=True,
        cwd=ROOT,
        text=True,
    )
    return done.stdout


def _broker_config(out: Path, *extra: str) -> str:
    return _cli(out, "--table", "main", "--stations", "p1,p2", *extra)


def test_broker_config_command_writes_credentials(tmp_path: Path) -> None:
    """`coffre broker-config` writes conf, passwd, acl and one private password file per user."""
    _broker_config(tmp_path)
    users = {p.stem for p in (tmp_path / "credentials").glob("*.password")}
    assert users == {"hub", "host", "host-main", "spectator", "main.p1", "main.p2", "enrol-main"}
    assert (tmp_path / "credentials" / "hub.password").stat().st_mode & 0o077 == 0


def test_broker_config_command_makes_tls_the_default(tmp_path: Path) -> None:
    """Without options: a TLS-only listener on 8883 with the CA, certificate and 0600 key."""
    out = _broker_config(tmp_path, "--hostname", "coffre-hub.local", "--hostname", "10.0.0.2")
    conf = (tmp_path / "mosquitto.conf").read_text()
    assert "listener 8883\n" in conf and "listener 1883" not in conf
    for line in (
        f"cafile {tmp_path / 'ca.crt'}",
        f"certfile {tmp_path / 'broker.crt'}",
        f"keyfile {tmp_path / 'broker.key'}",
        "tls_version tlsv1.2",
    ):
        assert line + "\n" in conf
    assert (tmp_path / "broker.key").stat().st_mode & 0o777 == 0o600
    cert = x509.load_pem_x509_certificate((tmp_path / "broker.crt").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    names = ["coffre-hub.local", "10.0.0.2", "localhost", "127.0.0.1"]
    assert [str(n.value) for n in san] == names, "loopback is always there: the hub dials it"
    # By hand: where a provisioned station.toml looks (not /etc/coffre, which it never reads).
    assert "ca.crt to /var/lib/coffre-station/ca.crt" in out and "owned by coffre, 0600" in out


def test_printed_hub_settings_make_a_hub_toml_that_dials_the_broker(tmp_path: Path) -> None:
    """The [broker] lines printed for a hub, pasted into its hub.toml, name the broker's
    certificate name, a port other than the default, the hub's user and the copied files."""
    out = _broker_config(tmp_path / "b", "--hostname", "venue.example", "--port", "8884")
    line = next(x for x in out.splitlines() if "[broker] has " in x)
    settings = line.split("[broker] has ", 1)[1].replace(", ", "\n")
    # What the host copies onto the hub (as printed), with /etc/coffre in a temp folder.
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "hub.password").write_text(_password(tmp_path / "b", "hub") + "\n")
    (etc / "ca.crt").write_bytes((tmp_path / "b" / "ca.crt").read_bytes())
    settings = settings.replace("/etc/coffre/", f"{etc}/")
    hub_toml = tmp_path / "hub.toml"
    hub_toml.write_text(f"[broker]\n{settings}\n[[table]]\nname = 'main'\nstations = ['p1']\n")
    broker = load_hub(hub_toml).broker
    assert (broker.host, broker.port, broker.username) == ("venue.example", 8884, "hub")
    assert broker.password == _password(tmp_path / "b", "hub").strip()
    assert broker.tls_ca == str(etc / "ca.crt")


def test_broker_config_command_no_tls_opts_out(tmp_path: Path) -> None:
    """--no-tls: the old plain listener on 1883 and no certificate files."""
    _broker_config(tmp_path, "--no-tls")
    conf = (tmp_path / "mosquitto.conf").read_text()
    assert "listener 1883\n" in conf and "cafile" not in conf
    assert not (tmp_path / "ca.crt").exists() and not (tmp_path / "broker.key").exists()


def test_generated_tls_config_starts_mosquitto(tmp_path: Path) -> None:
    """mosquitto loads the generated TLS listener (key, certificate, CA, tlsv1.2)."""
    port = free_port()
    conf = write_broker_files(
        tmp_path, port, [TableAccess("main", ["p1"])], stay_root=True, tls_hostnames=["127.0.0.1"]
    )
    assert "keyfile " in conf.read_text()
    broker = Mosquitto(conf, port)
    broker.start()
    broker.stop()


def _password(out: Path, user: str) -> str:
    return (out / "credentials" / f"{user}.password").read_text()


def test_re_running_keeps_passwords_and_the_ca(tmp_path: Path) -> None:
    """Adding a sixth station: old users keep their passwords, ca.crt stays, p6 is new."""
    first = _broker_config(tmp_path, "--hostname", "coffre-hub")
    before = {u: _password(tmp_path, u) for u in ("hub", "host", "main.p1", "main.p2")}
    ca = (tmp_path / "ca.crt").read_bytes()
    assert (tmp_path / "ca.key").stat().st_mode & 0o777 == 0o600
    assert "made the venue's CA" in first
    again = ("--stations", "p1,p2,p6", "--hostname", "coffre-hub", "--hostname", "coffre-hub.local")
    out = _cli(tmp_path, "--table", "main", *again)
    assert {u: _password(tmp_path, u) for u in before} == before
    assert (tmp_path / "ca.crt").read_bytes() == ca
    assert "kept the venue's CA" in out
    assert "    table main: p6\n" in out, "only p6 needs files"
    assert "added: station main.p6\n" in out
    cert = x509.load_pem_x509_certificate((tmp_path / "broker.crt").read_bytes())
    issuer = x509.load_pem_x509_certificate(ca)
    cert.verify_directly_issued_by(issuer)  # the new certificate comes from the same CA


def test_re_running_for_another_table_keeps_the_first(tmp_path: Path) -> None:
    """A second table in the same folder: the first table's users and ACL stay."""
    main = ("--table", "main", "--stations", "p1", "--no-tls")
    _cli(tmp_path, *main)
    pw = _password(tmp_path, "main.p1")
    _cli(tmp_path, "--table", "side", "--stations", "p1", "--no-tls")
    assert _password(tmp_path, "main.p1") == pw
    acl = (tmp_path / "acl").read_text()
    assert "user main.p1" in acl and "user side.p1" in acl
    _cli(tmp_path, "--table", "side", "--stations", "", "--no-tls")
    assert not (tmp_path / "credentials" / "side.p1.password").exists()


def test_broker_conf_runs_coffres_own_mosquitto(tmp_path: Path) -> None:
    """The whole mosquitto.conf broker-config writes starts a mosquitto of coffre's own
    (persistence in its data folder, nothing from the distribution's config), and a
    station of the first run still connects after a re-run added a station."""
    from firmware.hub.brokerconf import Venue, configure_broker, station_user
    from firmware.link.mqtt import BrokerConfig, Client

    port = free_port()
    out = tmp_path / "coffre"
    data = tmp_path / "data"
    data.mkdir()
    for seats in (["p1"], ["p1", "p2"]):
        venue = Venue({"hub": ["main"]}, {"main": seats})
        configure_broker(
            out, venue, port, bind="127.0.0.1", tls_hostnames=["127.0.0.1"], data_dir=data,
            system_conf_d=tmp_path / "conf.d",
        )  # fmt: skip
    text = (out / "mosquitto.conf").read_text()
    assert f"persistence_location {data}/\n" in text and "per_listener_settings" not in text
    assert not (out / "coffre.conf").exists()
    conf = tmp_path / "test.conf"  # as root, stay root: the temp folders are root's
    conf.write_text(text + ("user root\n" if os.geteuid() == 0 else ""))
    broker = Mosquitto(conf, port)
    broker.start()
    try:
        user = station_user("main", "p1")
        config = BrokerConfig("127.0.0.1", port, user, _password(out, user).strip(),
                              tls_ca=str(out / "ca.crt"))  # fmt: skip
        client = Client(config, "t-own", [])
        client.start()
        try:
            assert client.wait_connected(5)
        finally:
            client.stop()
    finally:
        broker.stop()


def test_the_hub_s_group_may_add_a_paired_station_after_broker_config(tmp_path: Path) -> None:
    """As root, configure_broker leaves passwd 0660, acl 0664 and credentials/ 0770 in the
    hub's group (the mode repair of secrets used to run last and take the group's write
    away: no station could pair on a provisioned hub); ca.key stays 0600."""
    import grp

    from firmware.hub.brokerconf import Venue, configure_broker

    if os.geteuid() != 0:
        import pytest

        pytest.skip("chown to a group needs root")
    group = grp.getgrgid(os.getegid()).gr_name
    out = tmp_path / "coffre"
    venue = Venue({"hub": ["main"]}, {"main": ["p1"]})
    configure_broker(
        out, venue, free_port(), tls_hostnames=["127.0.0.1"],
        system_conf_d=tmp_path / "conf.d", group=group,
    )  # fmt: skip
    modes = {n: (out / n).stat().st_mode & 0o777 for n in ("passwd", "acl", "credentials")}
    assert modes == {"passwd": 0o660, "acl": 0o664, "credentials": 0o770}
    assert (out / "ca.key").stat().st_mode & 0o777 == 0o600
