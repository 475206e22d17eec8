"""A real mosquitto over TLS on a loopback port (one table), and its fixture."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.hub.brokerconf import TableAccess, write_broker_files
from firmware.link.mqtt import BrokerConfig
from firmware.link.tls import CA_FILE
from firmware.tools.brokers import Mosquitto, find_mosquitto, free_port


class TlsBroker:
    """mosquitto with TLS on a loopback port, one table, as broker-config writes it."""

    def __init__(self, folder: Path, hostnames: list[str]) -> None:
        self.port = free_port()
        self.access = TableAccess("main", ["p1"])
        conf = write_broker_files(
            folder,
            self.port,
            [self.access],
            stay_root=os.geteuid() == 0,
            tls_hostnames=hostnames,
        )
        self.ca = str(folder / CA_FILE)
        self.process = Mosquitto(conf, self.port)
        self.process.start()

    def config(self, user: str, *, host: str = "127.0.0.1", ca: str | None = "") -> BrokerConfig:
        tls_ca = self.ca if ca == "" else ca
        return BrokerConfig(host, self.port, user, self.access.passwords[user], tls_ca=tls_ca)


@pytest.fixture
def tls_broker(tmp_path: Path) -> Iterator[TlsBroker]:
    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed: run the README's test command (it installs it)")
    broker = TlsBroker(tmp_path / "broker", ["127.0.0.1", "localhost"])
    yield broker
    broker.process.stop()
