"""What a station (and the log) says about its connection, against a real mosquitto."""

from __future__ import annotations

import dataclasses
import logging
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from device.panel import MockPanel
from firmware.hub.brokerconf import HUB_USER, station_user
from firmware.hub.certs import write_tls_files
from firmware.hub.config import TableConfig
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, LinkState
from firmware.link.render import render_lines
from firmware.station.service import Station
from tests.support.tls import TlsBroker, tls_broker

__all__ = ["tls_broker"]  # the fixture, imported for this module's tests

P1 = station_user("main", "p1")


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but never listening: ours for the test, and refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _states(config: BrokerConfig, until: Callable[[LinkState], bool]) -> list[LinkState]:
    """The states a client goes through until ``until`` accepts one (or 8 s pass)."""
    seen: list[LinkState] = []
    client = Client(config, f"t-{time.monotonic_ns()}", [], on_state=seen.append)
    client.start()
    try:
        deadline = time.monotonic() + 8
        while not (seen and until(seen[-1])) and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(seen)
    finally:
        client.stop()


def _final(config: BrokerConfig) -> LinkState:
    return _states(config, lambda s: s.state != "connecting")[-1]


def test_no_broker_listening_is_reported(closed_port: int) -> None:
    """Nothing on the port: 'connecting', then 'Broker not running', each once; the log
    line starts coffre's broker on the hub, as coffre doctor does (not "mosquitto")."""
    seen = _states(BrokerConfig("127.0.0.1", closed_port), lambda s: s.state == "refused")
    assert [s.state for s in seen] == ["connecting", "refused"]
    assert seen[-1].text == "Broker not running"
    assert "on the hub, sudo systemctl start coffre-broker" in seen[-1].detail
    assert "mosquitto" not in seen[-1].detail


def test_unknown_host_name_is_broker_not_found() -> None:
    """A host name nobody resolves is 'Broker not found'."""
    state = _final(BrokerConfig("no-such-hub.invalid", 8883))
    assert (state.state, state.text) == ("not-found", "Broker not found")


def test_wrong_ca_is_named(tls_broker: TlsBroker, tmp_path: Path) -> None:
    """Another table's ca.crt: 'Certificate: wrong CA'; the log line pairs again as
    coffre doctor and docs/pairing.md do: the station's two files go, it restarts."""
    other = write_tls_files(tmp_path / "other", ["127.0.0.1"])
    password = str(tmp_path / "station.password")
    config = tls_broker.config(HUB_USER, ca=str(other.ca))
    state = _final(dataclasses.replace(config, password_file=password))
    assert (state.state, state.text) == ("wrong-ca", "Certificate: wrong CA")
    pair_again = f"sudo rm {password} {other.ca} && sudo systemctl restart coffre-station"
    assert pair_again in state.detail
    assert "copy" not in state.detail


def test_host_name_not_on_the_certificate_is_named(tmp_path: Path) -> None:
    """Dialling a name the certificate lacks: 'Certificate: wrong name', with the name."""
    broker = TlsBroker(tmp_path / "broker", ["127.0.0.1"])
    try:
        state = _final(broker.config(HUB_USER, host="localhost"))
    finally:
        broker.process.stop()
    assert (state.state, state.text) == ("wrong-name", "Certificate: wrong name")
    assert "localhost" in state.detail


def test_an_address_not_on_the_certificate_is_not_called_a_wrong_ca(tmp_path: Path) -> None:
    """Dialling the hub's IP address that the certificate lacks: 'IP not on certificate', with the
    fix (add it with --hostname), never the wrong-CA advice to copy ca.crt again."""
    broker = TlsBroker(tmp_path / "broker", ["localhost"])
    try:
        state = _final(broker.config(HUB_USER, host="127.0.0.1"))
    finally:
        broker.process.stop()
    assert (state.state, state.text) == ("wrong-name", "IP not on certificate")
    assert "--hostname 127.0.0.1" in state.detail and "ca.crt stays the same" in state.detail


def test_wrong_password_is_named(tls_broker: TlsBroker) -> None:
    """The broker answers and refuses the password: 'Wrong password'."""
    good = tls_broker.config(P1)
    bad = BrokerConfig(good.host, good.port, good.username, "not-it", tls_ca=good.tls_ca)
    state = _final(bad)
    assert (state.state, state.text) == ("wrong-password", "Wrong password")


def test_a_failure_is_logged_once_not_every_retry(
    caplog: pytest.LogCaptureFixture, closed_port: int
) -> None:
    """Retrying every second against a dead port logs one line, not one a retry."""
    caplog.set_level(logging.INFO, logger="firmware.link.mqtt")
    client = Client(BrokerConfig("127.0.0.1", closed_port), "t-once", [])
    client.start()
    time.sleep(3.5)  # about three retries
    client.stop()
    lines = [r.getMessage() for r in caplog.records if "nothing listens" in r.getMessage()]
    assert len(lines) == 1


def _station(config: BrokerConfig) -> tuple[Station, MockDisplay]:
    display = MockDisplay()
    devices = StationDevices(MockReader(), display, MockControls())
    return Station(config, "main", "p1", devices), display


def _wait_frame(display: MockDisplay, want: object, timeout: float = 6.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if display.frames and display.frames[-1].tobytes() == want:
            return True
        time.sleep(0.02)
    return False


def test_station_screen_says_connecting_then_what_is_wrong(closed_port: int) -> None:
    """Before any hub screen the OLED shows 'Connecting to …', then the problem."""
    station, display = _station(BrokerConfig("127.0.0.1", closed_port))
    station.start()
    try:
        connecting = render_lines("coffre p1", ["Connecting to", "127.0.0.1..."]).tobytes()
        refused = render_lines(
            "coffre p1", ["Broker not running", "Start coffre-broker", "Retrying..."]
        ).tobytes()
        assert _wait_frame(display, refused)
        assert connecting in [f.tobytes() for f in display.frames]
    finally:
        station.stop()


def test_station_screen_says_wrong_password(tls_broker: TlsBroker) -> None:
    """A refused password is on the station's screen within seconds."""
    good = tls_broker.config(P1)
    bad = BrokerConfig(good.host, good.port, good.username, "nope", tls_ca=good.tls_ca)
    station, display = _station(bad)
    station.start()
    try:
        want = render_lines(
            "coffre p1", ["Wrong password", "Pair it again", "Retrying..."]
        ).tobytes()
        assert _wait_frame(display, want)
    finally:
        station.stop()


def test_station_screen_says_hub_offline(tls_broker: TlsBroker) -> None:
    """Connected, but the hub's retained status is 'lost': 'Hub offline'."""
    hub = Client(tls_broker.config(HUB_USER), "t-hub", [])
    hub.start()
    assert hub.wait_connected(5)
    topics = proto.Topics("main")
    lost = proto.encode(proto.HubStatus(state="lost"))
    hub.publish(topics.hub_status, lost, retain=True).wait_for_publish(2)
    station, display = _station(tls_broker.config(P1))
    station.start()
    try:
        want = render_lines("coffre p1", ["Hub offline", "Start coffre-hub", "Inputs are kept"])
        assert _wait_frame(display, want.tobytes())
    finally:
        station.stop()
        hub.stop()


def test_hub_display_says_what_is_wrong(tmp_path: Path, closed_port: int) -> None:
    """The hub's own display shows its broker problem within seconds."""
    panel = MockPanel()
    hub = Hub(
        BrokerConfig("127.0.0.1", closed_port),
        [TableConfig("main", ["p1", "p2", "p3"])],
        tmp_path / "hub.db",
        panel=panel,
    )
    hub.start()
    try:
        want = render_lines(
            "coffre hub main",
            ["Broker not running", "Retrying...", "See: journalctl", "-u coffre-hub"],
        )
        display = panel.display
        assert isinstance(display, MockDisplay)
        assert _wait_frame(display, want.tobytes())
    finally:
        hub.stop()


def test_hub_logs_stations_joining(
    tls_broker: TlsBroker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A station coming online is one INFO line in the hub's log."""
    caplog.set_level(logging.INFO)
    hub = Hub(tls_broker.config(HUB_USER), [TableConfig("main", ["p1"])], tmp_path / "hub.db")
    hub.start()
    station, _display = _station(tls_broker.config(P1))
    station.start()
    try:
        deadline = time.monotonic() + 8
        text = ""
        while "main: station p1 is online" not in text and time.monotonic() < deadline:
            time.sleep(0.05)
            text = caplog.text
        assert "main: station p1 is online" in text
        assert text.count("main: station p1 is online") == 1
    finally:
        station.stop()
        hub.stop()
