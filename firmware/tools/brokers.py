"""Brokers for the simulator and the tests: mosquitto on a loopback port, or embedded amqtt.

:func:`start_broker` writes the table's password file, ACL and TLS certificate (as
``coffre broker-config`` would) and starts mosquitto on a free loopback port
(:func:`start_venue_broker`: a venue's hubs, tables and users, with broker-config's own
code); where
mosquitto is missing the simulator falls back to amqtt in this process (plain MQTT, no
ACL, loopback only). Never used on a real table: there, systemd runs mosquitto.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware.hub.brokerconf import (
    TableAccess,
    Venue,
    configure_broker,
    mosquitto_conf,
    read_credentials,
    station_user,
    write_broker_files,
)
from firmware.hub.certs import TlsFiles
from firmware.link.mqtt import BrokerConfig
from firmware.link.tls import CA_FILE

#: The simulated table's name.
TABLE = "sim"


class EmbeddedBroker:
    """amqtt in a background thread on 127.0.0.1 (no ACL: for the simulator only)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="amqtt", daemon=True)
        self._ready = threading.Event()
        self._broker: Any = None

    def _run(self) -> None:
        from amqtt.broker import Broker  # optional: only the simulator's fallback

        asyncio.set_event_loop(self._loop)
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{self.port}"}},
            "sys_interval": 0,
            "auth": {"allow-anonymous": True},
            "topic-check": {"enabled": False},
        }
        self._broker = Broker(config, loop=self._loop)
        self._loop.run_until_complete(self._broker.start())
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> None:
        # amqtt logs (and survives) a race of its own when clients come and go at once
        # ("dictionary changed size during iteration"); the game is unaffected.
        for name in ("amqtt", "transitions", "passlib", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("embedded broker did not start")

    def stop(self) -> None:
        if self._broker is not None:
            fut = asyncio.run_coroutine_threadsafe(self._broker.shutdown(), self._loop)
            with contextlib.suppress(Exception):
                fut.result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


@dataclass
class BrokerSetup:
    """A running broker and the credentials of everyone at the table."""

    port: int
    access: TableAccess | None
    process: Mosquitto | EmbeddedBroker
    conf_dir: Path | None = None
    #: The CA that signed mosquitto's certificate (None: the plain embedded broker).
    tls_ca: Path | None = None
    #: Every user's password (empty: the embedded broker, which has no users).
    passwords: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.access is not None:
            self.passwords = self.access.passwords

    def config(self, user: str) -> BrokerConfig:
        return BrokerConfig(
            "127.0.0.1",
            self.port,
            user if self.passwords else None,
            self.passwords[user] if self.passwords else None,
            tls_ca=str(self.tls_ca) if self.tls_ca else None,
        )

    def station_config(self, station: str) -> BrokerConfig:
        return self.config(station_user(TABLE, station) if self.access else station)

    def stop(self) -> None:
        self.process.stop()


def start_broker(
    workdir: Path, stations: list[str], *, embedded: bool | None = None, table: str = TABLE
) -> BrokerSetup:
    """mosquitto with the table's ACL over TLS when installed (or asked), else embedded amqtt.

    mosquitto listens on 127.0.0.1 with TLS only, its certificate (for 127.0.0.1 and
    localhost) signed by a CA made in ``workdir/broker``. The embedded amqtt fallback
    stays plain MQTT: it has no ACL either and listens on loopback only.
    """
    port = free_port()
    if embedded is None:
        embedded = find_mosquitto() is None
    if embedded:
        import importlib.util

        if importlib.util.find_spec("amqtt") is None:  # the "sim" extra
            raise ModuleNotFoundError("No module named 'amqtt'", name="amqtt")
        broker = EmbeddedBroker(port)
        broker.start()
        return BrokerSetup(port, None, broker)
    access = TableAccess(table, stations)
    conf_dir = workdir / "broker"
    conf = write_broker_files(
        conf_dir,
        port,
        [access],
        stay_root=os.geteuid() == 0,
        tls_hostnames=["127.0.0.1", "localhost"],
    )
    mosq = Mosquitto(conf, port)
    mosq.start()
    return BrokerSetup(port, access, mosq, conf_dir, tls_ca=conf_dir / CA_FILE)


def start_venue_broker(workdir: Path, venue: Venue, port: int | None = None) -> BrokerSetup:
    """mosquitto over TLS on a loopback port with a venue's users and ACL, its files written
    into ``workdir/broker`` by ``coffre broker-config``'s own code (a re-run keeps them)."""
    port = port or free_port()
    conf_dir = workdir / "broker"
    report = configure_broker(
        conf_dir, venue, port, bind="127.0.0.1", tls_hostnames=["127.0.0.1", "localhost"]
    )
    mosq = serve(conf_dir, port, report.tls)
    return BrokerSetup(
        port, None, mosq, conf_dir, conf_dir / CA_FILE, passwords=read_credentials(conf_dir)
    )


def serve(conf_dir: Path, port: int, tls: TlsFiles | None) -> Mosquitto:
    """Start mosquitto on loopback ``port`` with the users and ACL in ``conf_dir`` (as
    ``coffre broker-config`` wrote them) and its certificate ``tls``."""
    (conf_dir / "data").mkdir(exist_ok=True)
    conf = conf_dir / "mosquitto.conf"
    conf.write_text(mosquitto_conf(port, conf_dir, stay_root=os.geteuid() == 0, tls=tls))
    mosq = Mosquitto(conf, port)
    mosq.start()
    return mosq


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def find_mosquitto() -> str | None:
    """The mosquitto binary, if installed."""
    return shutil.which("mosquitto") or next(
        (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if Path(p).exists()), None
    )


class Mosquitto:
    """A mosquitto process on a loopback port, for the simulator and the tests."""

    def __init__(self, conf: Path, port: int) -> None:
        self.conf = conf
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> None:
        binary = find_mosquitto()
        if binary is None:
            raise RuntimeError("mosquitto is not installed")
        self.proc = subprocess.Popen(
            [binary, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            self._wait_listening(self.proc, timeout)
        except BaseException:  # a broker that did not come up, or a stop meanwhile: no orphan
            self.stop()
            raise

    def _wait_listening(self, proc: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"mosquitto exited: {err}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start listening")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
