"""Pairing on a real mosquitto (TLS, broker-config's files, the ACL): a hub that may pair,
and helpers to play a station, the host and a stranger on the Wi-Fi (docs/pairing.md)."""

from __future__ import annotations

import json
import os
import queue
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from device.panel import MockPanel
from firmware.hub.brokerconf import Venue
from firmware.hub.config import TableConfig
from firmware.hub.pairing import BrokerDoor
from firmware.hub.service import Hub
from firmware.link import pairing as pair
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, Message
from firmware.station import pairing as station_pairing
from firmware.station.service import Station
from firmware.tools.brokers import BrokerSetup, start_venue_broker
from firmware.tools.host import send

TABLE = "main"
SEATS = ["p1", "p2", "p3"]
T = proto.Topics(TABLE)


@dataclass
class Rig:
    """A broker, a hub that may pair, and helpers to play station, host and stranger."""

    tmp: Path
    broker: BrokerSetup
    hub: Hub
    panel: MockPanel
    reloads: list[float] = field(default_factory=list)
    started: list[Client | Station] = field(default_factory=list)

    def station_toml(self, name: str) -> Path:
        """A provisioned station: its config, no password file, no ca.crt."""
        folder = self.tmp / name
        folder.mkdir(exist_ok=True)
        config = folder / "station.toml"
        config.write_text(
            f'[broker]\nhost = "127.0.0.1"\nport = {self.broker.port}\n'
            f'username = "{TABLE}.{name}"\npassword_file = "{folder / "station.password"}"\n'
            f'ca_file = "{folder / "ca.crt"}"\n\n'
            f'[station]\ntable = "{TABLE}"\nid = "{name}"\nbackend = "mock"\n'
        )
        return config

    def watch(self, *topics: str, user: str = "host") -> Client:
        client = Client(self.broker.config(user), f"watch-{uuid.uuid4().hex[:8]}", list(topics))
        self.started.append(client)
        client.start()
        assert client.wait_connected(10)
        return client

    def host(self, cmd: str, station: str | None = None, **kw: object) -> proto.Ack:
        command = proto.HostCommand(cmd=cmd, station=station, id=uuid.uuid4().hex, **kw)  # type: ignore[arg-type]
        return send(self.broker.config("host"), TABLE, command, timeout=10)


def latest(client: Client, topic: str, want: str, timeout: float = 15.0) -> dict[str, object]:
    """The first retained/live JSON payload on ``topic`` whose text contains ``want``."""
    deadline = time.monotonic() + timeout
    seen = b""
    while time.monotonic() < deadline:
        try:
            msg = client.inbox.get(timeout=0.2)
        except queue.Empty:
            continue
        if msg is not None and msg.topic == topic and msg.payload:
            seen = msg.payload
            if want in msg.payload.decode():
                return dict(json.loads(msg.payload))
    raise AssertionError(f"{topic}: never {want!r}; last {seen!r}")


@pytest.fixture(name="rig")
def rig_fixture(tmp_path: Path) -> Iterator[Rig]:
    venue = Venue({"hub": [TABLE]}, {TABLE: SEATS}, venue_host=True)
    broker = start_venue_broker(tmp_path, venue)
    assert broker.conf_dir is not None
    reloads: list[float] = []

    def reload() -> None:
        reloads.append(time.monotonic())
        proc = broker.process.proc  # type: ignore[union-attr]
        proc.send_signal(signal.SIGHUP)

    panel = MockPanel()
    hub = Hub(
        broker.config("hub"),
        [TableConfig(TABLE, list(SEATS), watch_seats=True)],
        tmp_path / "hub.sqlite3",
        panel=panel,
        door=BrokerDoor(broker.conf_dir, reload=reload),
    )
    hub.start()
    r = Rig(tmp_path, broker, hub, panel, reloads)
    try:
        latest(r.watch(T.hub_status), T.hub_status, '"ready"')  # the hub runs the table
        yield r
    finally:
        for thing in reversed(r.started):
            thing.stop()
        hub.stop()
        broker.stop()


class Glass:
    """What the station's pairing showed, line by line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def __call__(self, title: str, lines: list[str]) -> None:
        with self.changed:
            self.lines.extend(lines)
            self.changed.notify_all()

    def code(self, timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = [
                    ln.removeprefix("Pair code ")
                    for ln in self.lines
                    if ln.startswith("Pair code ")
                ]
                if found:
                    return found[-1]
                left = deadline - time.monotonic()
                assert left > 0, f"no code shown: {self.lines}"
                self.changed.wait(left)


def pair_in_background(config: Path) -> tuple[Glass, list[bool], threading.Event, threading.Thread]:
    glass, result, stop = Glass(), [], threading.Event()

    def run() -> None:
        result.append(station_pairing.pair_until_done(config, glass, stop, again=None))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return glass, result, stop, thread


def stranger(rig: Rig) -> Client:
    """Anyone on the Wi-Fi: the enrol user's password is public; it reads every reply."""
    config = BrokerConfig(
        "127.0.0.1",
        rig.broker.port,
        pair.enrol_user(TABLE),
        pair.ENROL_PASSWORD,
        tls_unverified=True,
    )
    topics = [f"coffre/{TABLE}/enrol/+/reply", T.station("p1", "screen"), T.public]
    client = Client(config, f"stranger-{uuid.uuid4().hex[:8]}", topics)
    rig.started.append(client)
    client.start()
    assert client.wait_connected(10)
    return client


def next_reply(
    client: Client, suffix: str, step: str | None = None, timeout: float = 15.0
) -> bytes:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = client.inbox.get(timeout=0.2)
        except queue.Empty:
            continue
        wanted = step is None or f'"step":"{step}"' in msg.payload.decode() if msg else False
        if msg is not None and msg.topic.endswith(suffix) and wanted:
            return msg.payload
    raise AssertionError(f"nothing on {suffix}")


def drain(client: Client) -> list[Message]:
    out: list[Message] = []
    while True:
        try:
            msg = client.inbox.get(timeout=0.3)
        except queue.Empty:
            return out
        if msg is not None:
            out.append(msg)


@dataclass
class Asker:
    """Someone on the Wi-Fi who asks to pair: one key and nonce, fresh sessions."""

    spy: Client
    private: bytes = b""
    public: bytes = b""
    nonce: bytes = field(default_factory=lambda: os.urandom(16))

    def __post_init__(self) -> None:
        self.private, self.public = pair.keypair()

    def hello(self, seat: str, session: str) -> None:
        hello = pair.hello(session, self.public, self.nonce)
        self.spy.publish(pair.enrol_topic(TABLE, seat, "request"), pair.encode(hello))

    def reveal(self, seat: str, session: str) -> None:
        reveal = pair.reveal(session, self.nonce)
        self.spy.publish(pair.enrol_topic(TABLE, seat, "request"), pair.encode(reveal))

    def reply(self, session: str, timeout: float = 5.0) -> pair.Reply | None:
        """The hub's next reply to ``session`` (others are skipped), or None."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = self.spy.inbox.get(timeout=left)
            except queue.Empty:
                return None
            if msg is None or not msg.topic.endswith("/reply"):
                continue
            reply = pair.decode_reply(msg.payload)
            if reply.session == session:
                return reply
        return None

    def code(self, challenge: pair.Reply) -> str:
        """What the hub will show once he reveals: he knows it before he does."""
        return pair.pair_code(self.public, challenge.ca, self.nonce, pair.unb64(challenge.nonce))
