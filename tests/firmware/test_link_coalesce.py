"""A client writes the packets it has waiting in one go (see ``Client._coalesced``): the
hub's PUBACKs and answers reach mosquitto in a write or a few, not a write each, and still
whole and in order, on a real mosquitto."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.link.mqtt import BrokerConfig, Client, Message
from tests.support.brokers import plain_mosquitto

TOPIC = "coffre/coalesce/test"
COUNT = 300


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    broker = plain_mosquitto(tmp_path)
    yield broker.port
    broker.stop()


def test_packets_waiting_go_out_in_few_writes_whole_and_in_order(port: int) -> None:
    """COUNT QoS 1 messages published in a burst: the listener gets every one, in order,
    and the sender's socket was written fewer than half as many times as there were
    packets."""
    listener = Client(BrokerConfig(port=port), "coalesce-listener", [TOPIC])
    sender = Client(BrokerConfig(port=port), "coalesce-sender", [], inflight=0)
    listener.start()
    sender.start()
    try:
        assert listener.wait_connected(5) and sender.wait_connected(5)
        writes: list[int] = []
        send = sender._paho._sock_send

        def counted(buf: Any) -> int:
            writes.append(len(buf))
            return send(buf)

        sender._paho._sock_send = counted  # type: ignore[method-assign]
        sent = [f"m{i}".encode() for i in range(COUNT)]
        with sender.burst():
            for payload in sent:
                sender.publish(TOPIC, payload, qos=1)
        got: list[bytes] = []
        while len(got) < COUNT:
            try:
                item = listener.inbox.get(timeout=5)
            except queue.Empty:
                break
            if isinstance(item, Message):
                got.append(item.payload)
        assert got == sent
        assert sum(writes) >= COUNT * len(TOPIC)
        # paho alone writes each packet on its own: COUNT writes. How many fewer depends on
        # how the threads take turns (a loaded machine wrote fewer packets at a time).
        assert len(writes) < COUNT // 2, f"{len(writes)} writes for {COUNT} packets"
    finally:
        sender.stop()
        listener.stop()
