"""``Client.wait_connected`` returns only once the broker holds the client's subscriptions.

A CONNACK alone is not enough: a message published between the CONNACK and the broker's
handling of the SUBSCRIBE reaches nobody. A hop that holds every SUBSCRIBE back for half a
second makes that window wide enough to hit every time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client
from firmware.tools.simtable import TABLE
from tests.support.brokers import plain_mosquitto
from tests.support.sniffer import PacketHop, Send

SUBSCRIBE = 8
HOLD = 0.5


class SlowSubscribe(PacketHop):
    """A hop to the broker that holds each SUBSCRIBE a client sends back for ``HOLD``."""

    def packet(self, kind: int, raw: bytes, send: Send) -> None:
        if kind == SUBSCRIBE:
            time.sleep(HOLD)
        send(raw)

    @property
    def held(self) -> int:
        return sum(kind == SUBSCRIBE for kind, _flags, _body in self.packets())


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    """A plain mosquitto (no TLS, so the hop can read the packets) on a loopback port."""
    broker = plain_mosquitto(tmp_path)
    yield broker.port
    broker.stop()


def test_a_message_sent_right_after_wait_connected_arrives(port: int) -> None:
    topic = proto.Topics(TABLE).host_command
    hop = SlowSubscribe(port)
    listener = Client(BrokerConfig(port=hop.port), "slow-sub", [topic])
    sender = Client(BrokerConfig(port=port), "sender", [])
    try:
        sender.start()
        assert sender.wait_connected(5)
        listener.start()
        assert listener.wait_connected(5)
        assert hop.held == 1
        sender.publish(topic, b'{"cmd":"next","id":"h:1"}').wait_for_publish(2)
        msg = listener.inbox.get(timeout=3)
        assert msg is not None and msg.payload == b'{"cmd":"next","id":"h:1"}'
    finally:
        listener.stop()
        sender.stop()
        hop.close()


def test_wait_connected_times_out_while_the_subscription_is_unanswered(port: int) -> None:
    hop = SlowSubscribe(port)
    client = Client(BrokerConfig(port=hop.port), "slow-sub", [proto.Topics(TABLE).host_command])
    try:
        client.start()
        assert client.connected.wait(5)
        assert not client.wait_connected(0.1)  # connected, but not yet subscribed
        assert client.wait_connected(5)
    finally:
        client.stop()
        hop.close()
