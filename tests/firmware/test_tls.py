"""TLS between stations, hub and mosquitto: certificates, refusals, the real fixture."""

from __future__ import annotations

import dataclasses
import json
import socket
import ssl
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from firmware.hub.brokerconf import HUB_USER, station_user
from firmware.hub.certs import default_hostnames, make_certificates, write_tls_files
from firmware.link import protocol as proto
from firmware.link.config import ConfigError
from firmware.link.mqtt import BrokerConfig, Client
from firmware.link.tls import CA_FILE, CERT_FILE, KEY_FILE, TLS_PORT, client_context
from firmware.station.config import load_station
from firmware.tools.brokers import find_mosquitto
from firmware.tools.simtable import TABLE
from tests.support.sniffer import Sniffer
from tests.support.tables import TableFactory, director, make_table
from tests.support.tls import (
    TlsBroker,
    tls_broker,
)

__all__ = ["make_table", "tls_broker"]  # fixtures, imported for this module's tests

NAMES = ["coffre-hub", "coffre-hub.local", "192.168.4.1", "localhost", "127.0.0.1"]


def _sans(cert: x509.Certificate) -> tuple[set[str], set[str]]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    dns = set(san.get_values_for_type(x509.DNSName))
    ips = {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
    return dns, ips


# --- certificates ----------------------------------------------------------------------


def test_broker_certificate_names_every_hostname_and_comes_from_the_ca(tmp_path: Path) -> None:
    """DNS names and IPs become SANs of a server-auth certificate the CA signed."""
    files = write_tls_files(tmp_path, NAMES)
    ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
    cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
    assert _sans(cert) == (
        {"coffre-hub", "coffre-hub.local", "localhost"},
        {"192.168.4.1", "127.0.0.1"},
    )
    cert.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]


def test_broker_key_is_private_and_the_ca_key_is_never_written(tmp_path: Path) -> None:
    """broker.key is 0600 (even over an old world-readable one); no file holds the CA key."""
    (tmp_path / KEY_FILE).write_text("old")
    (tmp_path / KEY_FILE).chmod(0o644)
    files = write_tls_files(tmp_path, ["127.0.0.1"])
    assert files.key.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([CA_FILE, CERT_FILE, KEY_FILE])
    assert b"PRIVATE KEY" not in files.ca.read_bytes() + files.cert.read_bytes()
    assert b"PRIVATE KEY" in files.key.read_bytes()


def test_every_run_makes_a_different_ca() -> None:
    """Two tables' CAs differ in name and key: one table never trusts another's broker."""
    a = x509.load_pem_x509_certificate(make_certificates(["127.0.0.1"])[0])
    b = x509.load_pem_x509_certificate(make_certificates(["127.0.0.1"])[0])
    assert a.subject != b.subject and a.public_key() != b.public_key()


def test_default_hostnames_cover_this_machine_and_loopback() -> None:
    """Without --hostname: this host's name, localhost and 127.0.0.1."""
    names = default_hostnames()
    assert socket.gethostname() in names
    assert {"localhost", "127.0.0.1"} <= set(names)
    assert len(names) == len({n.lower() for n in names})


def test_certificates_need_a_name() -> None:
    """An empty host list is refused rather than making a certificate nobody can verify."""
    with pytest.raises(ValueError):
        make_certificates([" "])


def test_client_context_trusts_only_the_ca_and_checks_names(tmp_path: Path) -> None:
    """TLS 1.2 at least, certificate required, host name checked, no system CAs."""
    files = write_tls_files(tmp_path, ["127.0.0.1"])
    context = client_context(files.ca)
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert len(context.get_ca_certs()) == 1


# --- station and hub configuration -----------------------------------------------------


def test_station_config_reads_ca_file_and_defaults_to_the_tls_port(tmp_path: Path) -> None:
    """[broker] ca_file becomes BrokerConfig.tls_ca; without a port it is 8883."""
    files = write_tls_files(tmp_path / "tls", ["hub.local"])
    path = tmp_path / "station.toml"
    path.write_text(
        f'[broker]\nhost = "hub.local"\nusername = "main.p1"\npassword = "pw"\n'
        f'ca_file = "{files.ca}"\n[station]\ntable = "main"\nid = "p1"\n'
    )
    broker = load_station(path).broker
    assert (broker.tls_ca, broker.port) == (str(files.ca), TLS_PORT)
    path.write_text('[broker]\nhost = "hub.local"\n[station]\ntable = "main"\nid = "p1"\n')
    assert (load_station(path).broker.tls_ca, load_station(path).broker.port) == (None, 1883)


def test_missing_ca_file_is_a_config_error(tmp_path: Path) -> None:
    """A ca_file that is not there stops the station instead of falling back to clear text."""
    path = tmp_path / "station.toml"
    path.write_text(
        f'[broker]\nca_file = "{tmp_path / "nope.crt"}"\n[station]\ntable = "main"\nid = "p1"\n'
    )
    with pytest.raises(ConfigError, match="ca_file"):
        load_station(path)


# --- a real mosquitto over TLS ---------------------------------------------------------


def _connects(config: BrokerConfig, timeout: float = 3.0) -> bool:
    client = Client(config, f"t-{time.monotonic_ns()}", [])
    client.start()
    try:
        return client.wait_connected(timeout)
    finally:
        client.stop()


def test_trusting_client_talks_through_the_tls_listener(tls_broker: TlsBroker) -> None:
    """With the CA: connected over TLS 1.2+, and messages flow hub -> station."""
    topics = proto.Topics("main")
    station = Client(tls_broker.config(station_user("main", "p1")), "t-p1", [topics.public])
    hub = Client(tls_broker.config(HUB_USER), "t-hub", [])
    for client in (station, hub):
        client.start()
        assert client.wait_connected(5)
    try:
        sock = station._paho.socket()
        assert isinstance(sock, ssl.SSLSocket) and sock.version() in ("TLSv1.2", "TLSv1.3")
        hub.publish(topics.public, b'{"hello":1}').wait_for_publish(2)
        msg = station.inbox.get(timeout=5)
        assert msg is not None and msg.payload == b'{"hello":1}'
    finally:
        station.stop()
        hub.stop()


def test_client_without_the_ca_is_refused(tls_broker: TlsBroker) -> None:
    """A plain MQTT client (no ca_file) gets no session from the TLS-only broker."""
    assert not _connects(tls_broker.config(HUB_USER, ca=None))


def test_client_trusting_another_ca_is_refused(tls_broker: TlsBroker, tmp_path: Path) -> None:
    """Another table's CA does not vouch for this broker: the handshake fails."""
    other = write_tls_files(tmp_path / "other", ["127.0.0.1", "localhost"])
    assert not _connects(tls_broker.config(HUB_USER, ca=str(other.ca)))
    assert _connects(tls_broker.config(HUB_USER))


def test_client_checks_the_broker_host_name(tmp_path: Path) -> None:
    """Right CA, but a certificate for 127.0.0.1 only: reaching it as 'localhost' fails."""
    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed")
    broker = TlsBroker(tmp_path / "broker", ["127.0.0.1"])
    try:
        assert not _connects(broker.config(HUB_USER, host="localhost"))
        assert _connects(broker.config(HUB_USER, host="127.0.0.1"))
    finally:
        broker.process.stop()


def test_a_fake_broker_learns_no_password(tmp_path: Path) -> None:
    """An impostor broker with its own CA's certificate gets neither session nor password."""
    _ca, cert_pem, key_pem = make_certificates(["127.0.0.1"])
    (tmp_path / "fake.crt").write_bytes(cert_pem)
    (tmp_path / "fake.key").write_bytes(key_pem)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(tmp_path / "fake.crt", tmp_path / "fake.key")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    heard = bytearray()

    def serve() -> None:
        try:
            raw, _ = listener.accept()
        except OSError:
            return
        try:
            with server_ctx.wrap_socket(raw, server_side=True) as conn:
                conn.settimeout(3)
                while data := conn.recv(4096):
                    heard.extend(data)
        except (OSError, ssl.SSLError):
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    table_ca = write_tls_files(tmp_path / "table", ["127.0.0.1"]).ca
    config = BrokerConfig("127.0.0.1", port, "main.p1", "hunter2-secret", tls_ca=str(table_ca))
    try:
        assert not _connects(config, timeout=2.0)
    finally:
        listener.close()
        thread.join(5)
    assert b"hunter2-secret" not in heard and b"MQTT" not in heard


# --- the whole-table fixture -----------------------------------------------------------


def test_the_table_fixture_runs_over_tls(make_table: TableFactory) -> None:
    """Hub and stations of the mosquitto fixture use TLS; a plain client is turned away."""
    sim = make_table(3)
    assert sim.broker.tls_ca is not None and sim.broker.conf_dir is not None
    conf = (sim.broker.conf_dir / "mosquitto.conf").read_text()
    assert f"cafile {sim.broker.tls_ca}" in conf and "tls_version tlsv1.2" in conf
    assert sim.hub is not None
    hub_links = sim.hub.clients()  # the shared connection and the tables' will connections
    assert len(hub_links) == 2
    for client in [*hub_links, *(s.client for s in sim.stations.values())]:
        assert isinstance(client._paho.socket(), ssl.SSLSocket)
    director(sim).start_game(3)
    ack = sim.tap("p1", sim.keys.uid_for("mystery", None, 5))
    assert ack is not None and ack.ok
    plain = sim.broker.config(station_user(TABLE, "p2"))
    assert not _connects(BrokerConfig(plain.host, plain.port, plain.username, plain.password))


def test_a_hub_process_reads_the_ca_from_its_config(make_table: TableFactory) -> None:
    """`coffre hub --config` with ca_file in [broker] reaches the TLS broker and serves."""
    sim = make_table(3, hub_mode="process")
    assert 'ca_file = "' in (sim.workdir / "hub.toml").read_text()
    director(sim).start_game(3)
    ack = sim.tap("p2", sim.keys.uid_for("mystery", None, 3))
    assert ack is not None and ack.ok


def test_the_wire_shows_neither_password_nor_secret_screen(make_table: TableFactory) -> None:
    """A station's own config through a sniffing hop: its screen arrives, the bytes say nothing."""
    sim = make_table(3)
    director(sim).start_game(3)
    ack = sim.tap("p1", sim.keys.uid_for("mystery", None, 7))
    assert ack is not None and ack.ok
    sniffer = Sniffer(sim.broker.port)
    config = sim.broker.station_config("p1")
    client = Client(
        dataclasses.replace(config, port=sniffer.port),
        "t-wifi",
        [proto.Topics(TABLE).station("p1", "screen")],
    )
    client.start()
    try:
        assert client.wait_connected(5)
        msg = client.inbox.get(timeout=5)
    finally:
        client.stop()
        sniffer.server.close()
    assert msg is not None and json.loads(msg.payload)["secret"]["big"] == "7"
    with sniffer.lock:
        wire = bytes(sniffer.seen)
    assert config.password is not None and config.password.encode() not in wire
    assert b'"big":"7"' not in wire and b"MQTT" not in wire and b"sim.p1" not in wire
