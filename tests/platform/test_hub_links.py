"""The hub's links on a real mosquitto: one connection carries every table, and each
table still has a will of its own (firmware.hub.links).

The hub runs in this process, behind a TCP hop that keeps every packet each of its
connections sent; a watcher reads the tables' retained hub statuses.
"""

from __future__ import annotations

import logging
import queue
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest

from firmware.hub.config import TableConfig
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, Message
from firmware.tools.brokers import Mosquitto
from hardware.keys import load_keyset
from tests.support.brokers import acl_mosquitto
from tests.support.sniffer import PacketHop

KEYS = load_keyset()
TABLES = ["t", "u", "v"]
STATIONS = ["p1", "p2", "p3"]
CONNECT, PUBLISH, PUBACK, SUBSCRIBE, UNSUBSCRIBE, DISCONNECT = 1, 3, 4, 8, 10, 14
WILL_FLAG = 0x04


@dataclass
class Rig:
    broker: Mosquitto
    hop: PacketHop
    hub: Hub
    watch: Client
    statuses: dict[str, list[str]]

    def drain(self) -> None:
        """Read what the watcher heard so far into ``statuses`` (state by table, in order)."""
        while True:
            try:
                msg = self.watch.inbox.get_nowait()
            except queue.Empty:
                return
            if msg is None:
                return
            table = msg.topic.split("/")[1]
            status = proto.decode_hub_status(msg.payload) if msg.payload else None
            self.statuses.setdefault(table, []).append(status.state if status else "")

    def wait(self, what: str, test: Callable[[], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.drain()
            if test():
                return
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}: {self.statuses}")

    def last(self, table: str) -> str:
        return (self.statuses.get(table) or [""])[-1]

    def all_ready(self) -> bool:
        return all(self.last(t) == "ready" for t in TABLES)

    def connections(self) -> dict[int, list[tuple[int, int, bytes]]]:
        """The packets each of the hub's connections sent, by connection (not the claim
        probe's: a clean session of its own that reads the statuses once, then leaves)."""
        with self.hop.lock:
            sent = {conn: list(packets) for conn, packets in self.hop.sent.items()}
        return {c: p for c, p in sent.items() if not _client_id(p[0][2]).startswith("coffre-probe")}


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    acl = {"hub": "topic readwrite coffre/#\n", "tester": "topic readwrite coffre/#\n"}
    broker = acl_mosquitto(tmp_path / "broker", acl)
    hop = PacketHop(broker.port)
    watch = Client(
        BrokerConfig("127.0.0.1", broker.port, "tester", "pw-tester"),
        "watch",
        [proto.Topics(t).hub_status for t in TABLES],
    )
    watch.start()
    assert watch.wait_connected(10)
    hub = Hub(
        BrokerConfig("127.0.0.1", hop.port, "hub", "pw-hub"),
        [TableConfig(t, STATIONS) for t in TABLES],
        tmp_path / "hub.db",
        keys=KEYS,
    )
    hub.start()
    r = Rig(broker, hop, hub, watch, {})
    try:
        r.wait("every table ready", r.all_ready)
        yield r
    finally:
        hub.stop()
        watch.stop()
        hop.close()
        broker.stop()


def _sent(packets: list[tuple[int, int, bytes]], kind: int) -> int:
    return sum(1 for k, _f, _b in packets if k == kind)


def test_one_connection_carries_every_table_and_each_table_has_its_will(rig: Rig) -> None:
    """Every subscription and publish of the hub goes over one connection; each other
    connection carries one table's will and sends nothing else."""
    conns = rig.connections()
    talking = [c for c, packets in conns.items() if _sent(packets, SUBSCRIBE)]
    assert len(talking) == 1
    data = conns[talking[0]]
    assert _sent(data, SUBSCRIBE) == len(TABLES)  # one SUBSCRIBE per table
    others = [packets for c, packets in conns.items() if c != talking[0]]
    assert len(others) == len(TABLES)
    wills: set[str] = set()
    for packets in others:
        assert _sent(packets, PUBLISH) == _sent(packets, SUBSCRIBE) == 0
        (_kind, _flags, body), *_ = packets
        assert _kind == CONNECT
        wills.add(_will_topic(body))
    assert wills == {proto.Topics(t).hub_status for t in TABLES}


def test_a_clean_start_says_no_warning(rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    """Every table coming up on a live broker: nothing above INFO (a will connection
    connecting is not trouble)."""
    said = [r.getMessage() for r in caplog.get_records("setup") if r.levelno >= logging.WARNING]
    assert said == []


def test_a_crashed_hub_leaves_every_table_lost(rig: Rig) -> None:
    """Every connection dropped as a dying process drops it: each table's will says lost."""
    rig.hub.links.crash()
    rig.wait("every table lost", lambda: all(rig.last(t) == "lost" for t in TABLES))


def test_the_shared_connection_lost_says_lost_on_every_table_then_ready(rig: Rig) -> None:
    """A hub that cannot hear its tables does not leave them reading ready: every will goes
    out, and every table is ready again once the connection is back."""
    sock = rig.hub.links.data._paho.socket()
    assert sock is not None
    sock.close()  # the link breaks under the hub (as a broker dropping it would)
    rig.wait("every table lost", lambda: all("lost" in rig.statuses[t] for t in TABLES))
    rig.wait("every table ready again", rig.all_ready)


def test_one_will_connection_lost_is_said_on_its_table_only_and_repaired(rig: Rig) -> None:
    """A table's will connection breaking alone: its table reads lost, then ready again;
    the other tables hear nothing."""
    before = {t: len(rig.statuses[t]) for t in TABLES}
    link = rig.hub.actors["u"].client
    assert link is not None and link.will_link is not None
    sock = link.will_link._paho.socket()
    assert sock is not None
    sock.close()
    rig.wait("u lost", lambda: "lost" in rig.statuses["u"][before["u"] :])
    rig.wait("u ready again", lambda: rig.last("u") == "ready")
    time.sleep(0.5)
    rig.drain()
    assert all(len(rig.statuses[t]) == before[t] for t in ("t", "v"))


def test_a_clean_stop_says_goodbye_on_every_table_and_no_will_overwrites_it(rig: Rig) -> None:
    """The hub stopping: disconnected on every table, and it stays so (no will after it)."""
    rig.hub.stop()
    rig.wait("every table disconnected", lambda: all(rig.last(t) == "disconnected" for t in TABLES))
    time.sleep(6)  # beyond a will's delay (1.5 keepalives of 3 s)
    rig.drain()
    assert all(rig.last(t) == "disconnected" for t in TABLES)
    wills_closed = [
        packets
        for packets in rig.connections().values()
        if not _sent(packets, SUBSCRIBE) and packets
    ]
    assert all(_sent(p, DISCONNECT) == 1 for p in wills_closed)


def test_inputs_of_every_table_are_answered_over_the_one_connection(rig: Rig) -> None:
    """A host command on each table gets its answer: the shared session hears them all."""
    answers: Client = Client(
        BrokerConfig("127.0.0.1", rig.broker.port, "tester", "pw-tester"),
        "answers",
        [proto.Topics(t).host_ack for t in TABLES],
    )
    answers.start()
    assert answers.wait_connected(10)
    try:
        for i, t in enumerate(TABLES):
            command = {"cmd": "start", "game": "secret-identity", "players": 3, "id": f"c:{i}"}
            rig.watch.publish(proto.Topics(t).host_command, proto.encode(command))
        heard: dict[str, Message] = {}
        deadline = time.monotonic() + 20
        while len(heard) < len(TABLES) and time.monotonic() < deadline:
            try:
                msg = answers.inbox.get(timeout=0.5)
            except queue.Empty:
                continue
            if msg is not None:
                heard[msg.topic.split("/")[1]] = msg
        assert set(heard) == set(TABLES)
        ids = {t: msgspec.json.decode(m.payload, type=proto.Ack).id for t, m in heard.items()}
        assert ids == {t: f"c:{i}" for i, t in enumerate(TABLES)}
    finally:
        answers.stop()


def test_stations_are_answered_at_qos_0_and_the_rest_at_qos_1(rig: Rig) -> None:
    """A station's screens and acks go at ``proto.ANSWER_QOS`` (no PUBACK to handle); the
    host's answers, ``public`` and the hub status keep QoS 1; the station's input is still
    acked to the broker."""
    t = proto.Topics("t")
    command = {"cmd": "start", "game": "secret-identity", "players": 3, "id": "c:1"}
    rig.watch.publish(t.host_command, proto.encode(command))
    turn = {"id": "b:1", "kind": "knob", "step": 1}
    rig.watch.publish(t.station("p1", "input"), proto.encode(turn))

    def published() -> dict[str, set[int]]:
        qos: dict[str, set[int]] = {}
        for packets in rig.connections().values():
            for kind, flags, body in packets:
                if kind == PUBLISH:
                    topic = body[2 : 2 + int.from_bytes(body[:2], "big")].decode()
                    qos.setdefault(topic, set()).add((flags >> 1) & 3)
        return qos

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not {t.host_ack, t.station("p1", "ack")} <= set(
        published()
    ):
        time.sleep(0.05)
    qos = published()
    answers = {k: v for k, v in qos.items() if k.endswith(("/screen", "/ack")) and "/station/" in k}
    assert t.station("p1", "ack") in answers and t.station("p2", "screen") in answers
    assert all(v == {proto.ANSWER_QOS} for v in answers.values()), answers
    for topic in (t.host_ack, t.public, t.hub_status, t.host_screen):
        assert qos[topic] == {proto.QOS}, topic
    shared = next(p for p in rig.connections().values() if _sent(p, SUBSCRIBE))
    assert _sent(shared, PUBACK) >= 2  # the command's and the knob turn's, after the commit


def test_a_broker_outage_is_said_in_one_line_and_every_table_comes_back(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    """The broker gone a few seconds: the shared connection says so, under its label (its
    client id holds a secret token, which no line shows); no will connection adds a line
    of its own; every table reads ready again once the broker is back."""
    _hear_the_links(caplog)
    rig.broker.stop()
    links = [a.client for a in rig.hub.actors.values()]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(
        link is not None and link.connected.is_set() for link in links
    ):
        time.sleep(0.05)
    time.sleep(3)  # a few reconnection attempts, refused
    rig.broker.start()
    rig.statuses.clear()
    rig.wait("every table ready again", rig.all_ready)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    label = rig.hub.links.label
    assert label == "coffre-hub"
    assert any(line.startswith(f"{label}: ") for line in said), said
    token = rig.hub.links.data.client_id.removeprefix(f"{label}-")
    assert len(token) >= 16 and not any(token in r.getMessage() for r in caplog.records)
    _assert_wills_said_once(rig, caplog.records)


def test_every_will_connection_dropped_at_once_is_one_line(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    """Every table's will connection dropped at once (a broker or network blip that spares
    the shared one): one line per kind of trouble, not one per table; all come back."""
    _hear_the_links(caplog)
    for actor in rig.hub.actors.values():
        assert actor.client is not None and actor.client.will_link is not None
        sock = actor.client.will_link._paho.socket()
        assert sock is not None
        sock.close()
    rig.wait("every table lost", lambda: all("lost" in rig.statuses[t] for t in TABLES))
    rig.wait("every table ready again", rig.all_ready)
    wills = _assert_wills_said_once(rig, caplog.records)
    assert wills, "the trouble is not said at all"


def test_a_table_taken_out_of_the_configuration_is_unsubscribed_from(
    rig: Rig, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The hub restarted without table v (moved to another hub): its persistent session
    still brings v's messages; the first one makes the hub drop v's subscriptions."""
    rig.hub.stop()
    caplog.set_level(logging.INFO)
    hub = Hub(
        BrokerConfig("127.0.0.1", rig.hop.port, "hub", "pw-hub"),
        [TableConfig(t, STATIONS) for t in TABLES if t != "v"],
        tmp_path / "hub.db",  # the same store: the same client id, the same session
        keys=KEYS,
    )
    hub.start()
    try:
        assert hub.links.data.wait_connected(10)
        v = proto.Topics("v")
        rig.watch.publish(v.station("p1", "input"), proto.encode({"id": "x:1", "kind": "press"}))
        unsubscribed: list[bytes] = []
        deadline = time.monotonic() + 20
        while not unsubscribed and time.monotonic() < deadline:
            time.sleep(0.05)
            packets = rig.connections().values()
            # At connection the hub also drops per-station subscriptions its session may
            # still hold from a flood: only the packets that leave a table's wildcard count.
            unsubscribed = [
                b
                for p in packets
                for k, _f, b in p
                if k == UNSUBSCRIBE and b"/station/+/input" in b
            ]
        assert len(unsubscribed) == 1
        assert v.all_station_inputs.encode() in unsubscribed[0]
        assert proto.Topics("t").all_station_inputs.encode() not in unsubscribed[0]
        assert any(
            "table v is not in this hub's configuration" in r.getMessage() for r in caplog.records
        )
    finally:
        hub.stop()


def _hear_the_links(caplog: pytest.LogCaptureFixture) -> None:
    """Every line of the links at INFO and above, whatever an earlier test set (the host
    tool sets firmware.link.mqtt to ERROR for its process)."""
    for name in ("", "firmware.link.mqtt", "firmware.hub.links", "firmware.hub.throttle"):
        caplog.set_level(logging.INFO, logger=name)


def _assert_wills_said_once(rig: Rig, records: list[logging.LogRecord]) -> list[str]:
    """The lines about the will connections: each kind of trouble once, whatever the
    number of tables; none from the will connections themselves above DEBUG."""
    wills = [r.getMessage() for r in records if "will connection" in r.getMessage()]
    assert not any("connecting to" in line for line in wills), wills  # calm, not trouble
    kinds = Counter(re.sub(r"table \S+'s ", "", line) for line in wills)
    assert all(n == 1 for n in kinds.values()), wills
    ids = {rig.hub.links.will_id(t) for t in TABLES}
    loud = [
        r.getMessage()
        for r in records
        if r.levelno >= logging.INFO and any(i in r.getMessage() for i in ids)
    ]
    assert loud == []
    return wills


def _client_id(connect_body: bytes) -> str:
    name_len = int.from_bytes(connect_body[:2], "big")
    at = 2 + name_len + 1 + 3  # protocol name, level, flags, keepalive
    id_len = int.from_bytes(connect_body[at : at + 2], "big")
    return connect_body[at + 2 : at + 2 + id_len].decode()


def _will_topic(connect_body: bytes) -> str:
    """The will topic of a CONNECT packet's body ("" without a will)."""
    name_len = int.from_bytes(connect_body[:2], "big")
    at = 2 + name_len + 1  # protocol name, level
    flags = connect_body[at]
    if not flags & WILL_FLAG:
        return ""
    at += 3  # flags, keepalive
    id_len = int.from_bytes(connect_body[at : at + 2], "big")
    at += 2 + id_len
    topic_len = int.from_bytes(connect_body[at : at + 2], "big")
    return connect_body[at + 2 : at + 2 + topic_len].decode()
