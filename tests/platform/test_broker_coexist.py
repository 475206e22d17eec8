"""coffre's own mosquitto next to another application's: neither breaks the other, and a
station added later connects after a reload, with no broker restart."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.hub.brokerconf import (
    BROKER_CONF,
    Venue,
    configure_broker,
    hash_password,
    read_credentials,
    station_user,
)
from firmware.link.mqtt import BrokerConfig, Client, LinkState
from firmware.tools.brokers import Mosquitto, find_mosquitto, free_port

pytestmark = pytest.mark.skipif(find_mosquitto() is None, reason="mosquitto is not installed")
ROOT_LINE = "user root\n" if os.geteuid() == 0 else ""  # tmp folders are root's own


def _other_app(tmp_path: Path) -> tuple[Mosquitto, int]:
    """A mosquitto as Home Assistant's users set it up: a global password_file, its own
    listener, and Debian's include_dir (where an older coffre dropped coffre.conf)."""
    folder = tmp_path / "ha"
    (folder / "conf.d").mkdir(parents=True)
    (folder / "passwd").write_text(f"homeassistant:{hash_password('ha-secret')}\n")
    port = free_port()
    conf = folder / "mosquitto.conf"
    conf.write_text(
        f"persistence false\nlog_dest stderr\nlistener {port} 127.0.0.1\n"
        f"allow_anonymous false\npassword_file {folder / 'passwd'}\n"
        f"include_dir {folder / 'conf.d'}\n{ROOT_LINE}"
    )
    broker = Mosquitto(conf, port)
    broker.start()
    return broker, port


def _coffre(out: Path, stations: list[str], port: int, conf_d: Path) -> str:
    """configure_broker as `coffre broker-config` runs it; the report's ``apply``."""
    venue = Venue({"hub": ["main"]}, {"main": stations}, venue_host=True)
    report = configure_broker(
        out, venue, port, bind="127.0.0.1", tls_hostnames=["127.0.0.1"], system_conf_d=conf_d
    )
    # The unit starts it as the mosquitto user; a test's temp folder is root's only.
    (out / "test.conf").write_text((out / BROKER_CONF).read_text() + ROOT_LINE)
    return report.apply


@pytest.fixture
def started() -> Iterator[list[Client | Mosquitto]]:
    """Everything a test starts, stopped at the end."""
    things: list[Client | Mosquitto] = []
    try:
        yield things
    finally:
        for thing in reversed(things):
            thing.stop()


def _client(config: BrokerConfig, name: str, started: list[Client | Mosquitto]) -> Client:
    client = Client(config, name, [])
    started.append(client)
    client.start()
    return client


def test_the_other_apps_broker_keeps_working_beside_coffres(
    tmp_path: Path, started: list[Client | Mosquitto]
) -> None:
    """An existing mosquitto with its own password_file and listener keeps running and
    accepting its users once coffre's broker is configured and running; coffre writes
    nothing into its conf.d, and neither broker knows the other's users."""
    other, other_port = _other_app(tmp_path)
    started.append(other)
    out, port = tmp_path / "coffre", free_port()
    _coffre(out, ["p1"], port, tmp_path / "ha" / "conf.d")
    assert list((tmp_path / "ha" / "conf.d").iterdir()) == []
    ours = Mosquitto(out / "test.conf", port)
    ours.start()
    started.append(ours)
    # The other application's broker, restarted with everything coffre did, still starts.
    other.stop()
    other.start()
    ha = BrokerConfig("127.0.0.1", other_port, "homeassistant", "ha-secret")
    assert _client(ha, "ha", started).wait_connected(10)
    pw = read_credentials(out)
    user = station_user("main", "p1")
    ca = str(out / "ca.crt")
    station = BrokerConfig("127.0.0.1", port, user, pw[user], tls_ca=ca)
    assert _client(station, "p1", started).wait_connected(10)
    stranger = _client(BrokerConfig("127.0.0.1", other_port, user, pw[user]), "x", started)
    ha_on_ours = BrokerConfig("127.0.0.1", port, "homeassistant", "ha-secret", tls_ca=ca)
    intruder = _client(ha_on_ours, "y", started)
    for client in (stranger, intruder):
        assert not client.wait_connected(3)
        assert client.state.state == "wrong-password", client.state


def test_a_station_added_later_connects_after_a_reload_not_a_restart(
    tmp_path: Path, started: list[Client | Mosquitto]
) -> None:
    """p2 added to a running table: the run asks only for a reload (SIGHUP); after it p2
    connects, and p1, connected all along, was never dropped (same broker process)."""
    out, port = tmp_path / "coffre", free_port()
    assert _coffre(out, ["p1"], port, tmp_path) == "restart"  # a first run: start it
    broker = Mosquitto(out / "test.conf", port)
    broker.start()
    started.append(broker)
    assert broker.proc is not None
    pid = broker.proc.pid
    ca = str(out / "ca.crt")
    pw = read_credentials(out)
    states: list[LinkState] = []
    p1 = Client(
        BrokerConfig("127.0.0.1", port, "main.p1", pw["main.p1"], tls_ca=ca),
        "p1",
        [],
        on_state=states.append,
    )
    started.append(p1)
    p1.start()
    assert p1.wait_connected(10)
    assert _coffre(out, ["p1", "p2"], port, tmp_path) == "reload"
    broker.proc.send_signal(signal.SIGHUP)
    p2_password = read_credentials(out)["main.p2"]
    p2_config = BrokerConfig("127.0.0.1", port, "main.p2", p2_password, tls_ca=ca)
    assert _client(p2_config, "p2", started).wait_connected(10)
    assert broker.proc.poll() is None and broker.proc.pid == pid
    assert p1.connected.is_set()
    assert [s.state for s in states] == ["connecting", "connected"], states


def test_a_re_run_says_what_the_running_broker_needs(tmp_path: Path) -> None:
    """Same venue: nothing; a new station: reload; a new certificate name or port: restart;
    an older coffre's conf.d snippet is named for removal."""
    venue = Venue({"hub": ["main"]}, {"main": ["p1"]})
    conf_d = tmp_path / "conf.d"
    conf_d.mkdir()
    (conf_d / "coffre.conf").write_text("# generated by coffre broker-config: old\n")
    (conf_d / "zigbee2mqtt.conf").write_text("listener 1884\n")

    def run(v: Venue, port: int = 8883, names: tuple[str, ...] = ("hub",)) -> str:
        report = configure_broker(
            tmp_path / "b", v, port, tls_hostnames=list(names), system_conf_d=conf_d
        )
        assert report.legacy_conf_d == conf_d / "coffre.conf"
        return report.apply

    assert run(venue) == "restart"
    cert = (tmp_path / "b" / "broker.crt").read_bytes()
    assert run(venue) == "none"
    assert (tmp_path / "b" / "broker.crt").read_bytes() == cert, "same names: same certificate"
    assert run(Venue({"hub": ["main"]}, {"main": ["p1", "p2"]})) == "reload"
    assert run(Venue({"hub": ["main"]}, {"main": ["p1"]})) == "reload"
    assert run(venue, names=("hub", "10.0.0.2")) == "restart"
    assert run(venue, port=8884, names=("hub", "10.0.0.2")) == "restart"
