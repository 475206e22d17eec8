"""``Client.wait_connected`` returns only once the broker holds the client's subscriptions.

A CONNACK alone is not enough: a message published between the CONNACK and the broker's
handling of the SUBSCRIBE reaches nobody. A hop that holds every SUBSCRIBE back for half a
second makes that window wide enough to hit every time.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client
from firmware.tools.brokers import Mosquitto, free_port
from firmware.tools.simtable import TABLE

SUBSCRIBE = 8
HOLD = 0.5


class SlowSubscribe:
    """A TCP hop to the broker that delays each SUBSCRIBE the client sends by ``HOLD``."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.server.getsockname()[1]
        self.held = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._up, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._down, args=(upstream, client), daemon=True).start()

    def _up(self, src: socket.socket, dst: socket.socket) -> None:
        """Client to broker, a whole packet at a time."""
        buffer = bytearray()
        try:
            while data := src.recv(4096):
                buffer += data
                while (end := _packet_end(buffer)) is not None:
                    if buffer[0] >> 4 == SUBSCRIBE:
                        self.held += 1
                        time.sleep(HOLD)
                    dst.sendall(buffer[:end])
                    del buffer[:end]
        except OSError:
            pass
        dst.close()

    def _down(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(4096):
                dst.sendall(data)
        except OSError:
            pass
        dst.close()

    def close(self) -> None:
        self.server.close()


def _packet_end(data: bytearray) -> int | None:
    """Where the first whole MQTT packet in ``data`` ends (None: not all of it is here)."""
    length, shift, i = 0, 0, 1
    while True:
        if i >= len(data):
            return None
        byte = data[i]
        length |= (byte & 0x7F) << shift
        shift += 7
        i += 1
        if not byte & 0x80:
            break
    end = i + length
    return end if end <= len(data) else None


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    """A plain mosquitto (no TLS, so the hop can read the packets) on a loopback port."""
    port = free_port()
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
    mosq = Mosquitto(conf, port)
    mosq.start()
    yield port
    mosq.stop()


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
