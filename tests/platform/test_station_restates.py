"""A station says its state again at every (re)connection (real mosquitto + the table's ACL).

A broker restored from a backup, or restarted without its retained messages, has no
station status: each station must say it again when it reconnects, or the hub lists the
seat as never seen. Here the retained status is wiped, the broker restarted, and the
status must come back, for a running station and for one stuck in an error state.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from device.base import ReaderError, StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.hub.brokerconf import HUB_USER, station_user
from firmware.link import protocol as proto
from firmware.link.mqtt import Client
from firmware.station.boot import Boot
from firmware.station.service import Station
from firmware.tools.brokers import TABLE, BrokerSetup, Mosquitto, start_broker

T = proto.Topics(TABLE)
SEATS = ["p1", "p2", "p3"]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerSetup]:
    setup = start_broker(tmp_path, SEATS, embedded=False)
    try:
        yield setup
    finally:
        setup.stop()


def statuses(broker: BrokerSetup, station: str, wait: float) -> list[proto.StationStatus]:
    """The station statuses a newcomer hears within ``wait`` seconds (retained first)."""
    topic = T.station(station, "status")
    client = Client(broker.config(HUB_USER), f"look-{time.monotonic_ns()}", [topic])
    client.start()
    assert client.wait_connected(10)
    heard = []
    deadline = time.monotonic() + wait
    try:
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = client.inbox.get(timeout=left)
            except queue.Empty:
                break
            if msg is not None and msg.topic == topic and msg.payload:
                heard.append(msgspec.json.decode(msg.payload, type=proto.StationStatus))
    finally:
        client.stop()
    return heard


def wait_status(broker: BrokerSetup, station: str, state: str, timeout: float = 15) -> None:
    """Wait until a newcomer hears ``state`` as the station's status."""
    deadline = time.monotonic() + timeout
    heard: list[proto.StationStatus] = []
    while time.monotonic() < deadline:
        heard = statuses(broker, station, 0.5)
        if any(s.state == state for s in heard):
            return
    raise AssertionError(f"{station}: never {state!r}; heard {heard}")


def wipe_and_restart(broker: BrokerSetup, station: str) -> None:
    """What a restore does to the broker's memory: the retained status gone, and every
    client's connection dropped while the broker comes back."""
    wiper = Client(broker.config(HUB_USER), "wiper", [])
    wiper.start()
    assert wiper.wait_connected(10)
    wiper.publish(T.station(station, "status"), b"", retain=True).wait_for_publish(5)
    wiper.stop()
    assert statuses(broker, station, 0.5) == [], "the retained status was not wiped"
    process = broker.process
    assert isinstance(process, Mosquitto)
    process.stop()
    time.sleep(0.5)
    process.start()


def test_a_running_station_says_online_again_after_the_broker_lost_it(
    broker: BrokerSetup,
) -> None:
    devices = StationDevices(MockReader(), MockDisplay(), MockControls())
    station = Station(broker.station_config("p1"), TABLE, "p1", devices, show_link=False)
    station.start()
    try:
        assert station.client.wait_connected(10)
        wait_status(broker, "p1", "online")
        wipe_and_restart(broker, "p1")
        wait_status(broker, "p1", "online")
    finally:
        station.stop()


def station_toml(tmp_path: Path, broker: BrokerSetup, name: str) -> Path:
    """A paired station's files (config, password, the table's CA)."""
    folder = tmp_path / name
    folder.mkdir()
    password = folder / "station.password"
    password.write_text(broker.passwords[station_user(TABLE, name)] + "\n")
    config = folder / "station.toml"
    config.write_text(
        f'[broker]\nhost = "127.0.0.1"\nport = {broker.port}\n'
        f'username = "{station_user(TABLE, name)}"\npassword_file = "{password}"\n'
        f'ca_file = "{broker.tls_ca}"\n\n'
        f'[station]\ntable = "{TABLE}"\nid = "{name}"\nbackend = "mock"\n'
    )
    return config


def test_a_station_in_error_says_so_again_after_the_broker_lost_it(
    tmp_path: Path, broker: BrokerSetup
) -> None:
    """A station whose reader does not answer reports ``error``; the broker restored (its
    retained status gone) hears ``error`` again, with the reason, once the station is back."""

    def no_reader(_pins: object, _backend: str | None) -> StationDevices:
        raise ReaderError("no reader")

    boot = Boot(
        station_toml(tmp_path, broker, "p2"),
        open_devices=no_reader,
        open_display=lambda _pins, _backend: MockDisplay(),
        retry_seconds=0.3,
    )
    stop = threading.Event()
    thread = threading.Thread(target=boot.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_status(broker, "p2", "error")
        for _ in range(2):  # and again: every reconnection, not only the first
            wipe_and_restart(broker, "p2")
            wait_status(broker, "p2", "error")
        heard = statuses(broker, "p2", 0.5)
        assert [(s.state, s.reason) for s in heard] == [("error", "no reader")]
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
