"""``Client.burst``: what is published inside goes out whole and in order, waking paho's
network thread once every BURST_WAKE messages and at the end (not at each), and the
packets waiting go out in a few writes, not a write each (``Client._coalesced``: the hub's
PUBACKs and answers reach mosquitto together), on a real mosquitto."""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.link.mqtt import BURST_EAGER, BURST_WAKE, BrokerConfig, Client, Message
from tests.support.brokers import plain_mosquitto

TOPIC = "coffre/burst/test"
COUNT = 300


class CountingPair:
    """paho's wake-up socket, counting the wake-ups sent through it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sends = 0

    def send(self, data: bytes) -> int:
        self.sends += 1
        return self.sock.send(data)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    broker = plain_mosquitto(tmp_path)
    yield broker.port
    broker.stop()


@pytest.fixture
def pair(port: int) -> Iterator[tuple[Client, Client, CountingPair]]:
    """A sender whose wake-ups are counted, and a listener on TOPIC. The sender has no
    send window, as the hub's shared connection (with one, paho's thread sends what
    waited behind it as the broker's PUBACKs come, and wakes itself for each)."""
    listener = Client(BrokerConfig(port=port), "burst-listener", [TOPIC])
    sender = Client(BrokerConfig(port=port), "burst-sender", [], inflight=0)
    listener.start()
    sender.start()
    try:
        assert listener.wait_connected(5) and sender.wait_connected(5)
        counting = CountingPair(sender._paho._sockpairW)  # type: ignore[arg-type]
        sender._paho._sockpairW = counting  # type: ignore[assignment]
        yield sender, listener, counting
    finally:
        sender.stop()
        listener.stop()


def received(listener: Client, count: int) -> list[bytes]:
    got: list[bytes] = []
    while len(got) < count:
        try:
            item = listener.inbox.get(timeout=5)
        except queue.Empty:
            break
        if isinstance(item, Message):
            got.append(item.payload)
    return got


@pytest.mark.parametrize("qos", [0, 1])
def test_a_burst_arrives_whole_and_in_order_with_one_wake_up(
    pair: tuple[Client, Client, CountingPair], qos: int
) -> None:
    """COUNT messages published in a burst: all arrive, in order; paho is woken at each of
    the first BURST_EAGER, then once every BURST_WAKE and once at the end."""
    sender, listener, counting = pair
    sent = [f"m{i}".encode() for i in range(COUNT)]
    with sender.burst():
        for payload in sent:
            sender.publish(TOPIC, payload, qos=qos)
    assert received(listener, COUNT) == sent
    assert counting.sends == BURST_EAGER + COUNT // BURST_WAKE + 1


def test_without_a_burst_each_message_wakes_paho(
    pair: tuple[Client, Client, CountingPair],
) -> None:
    """The same messages outside a burst: one wake-up each (what the burst saves)."""
    sender, listener, counting = pair
    sent = [f"m{i}".encode() for i in range(COUNT)]
    for payload in sent:
        sender.publish(TOPIC, payload, qos=0)
    assert received(listener, COUNT) == sent
    assert counting.sends == COUNT


def test_a_burst_inside_a_burst_wakes_paho_once(
    pair: tuple[Client, Client, CountingPair],
) -> None:
    """Nested bursts: one burst, its eager wake-ups and its end (the inner one's end wakes
    nothing)."""
    sender, listener, counting = pair
    payloads = [f"m{i}".encode() for i in range(BURST_EAGER + 3)]
    with sender.burst():
        sender.publish(TOPIC, payloads[0], qos=0)
        with sender.burst():
            for payload in payloads[1:-1]:
                sender.publish(TOPIC, payload, qos=0)
        sender.publish(TOPIC, payloads[-1], qos=0)
    assert received(listener, len(payloads)) == payloads
    assert counting.sends == BURST_EAGER + 1


def test_packets_waiting_go_out_in_few_writes_whole_and_in_order(
    pair: tuple[Client, Client, CountingPair],
) -> None:
    """Packets waiting go out in one write (``Client._coalesced``), whole and in order:
    COUNT QoS 1 messages published in a burst: the listener gets every one, in order,
    and the sender's socket was written fewer than half as many times as there were
    packets."""
    sender, listener, _wakes = pair
    writes: list[int] = []
    send = sender._paho._sock_send

    def counted(buf: Any) -> int:
        writes.append(len(buf))
        return send(buf)

    sender._paho._sock_send = counted  # type: ignore[method-assign]
    # The packets wait for certain: paho's thread writes only once all are queued (left
    # to itself it may wake mid-burst, at its select's timeout, and keep pace with the
    # publisher, writing each as it comes: then none was waiting).
    queued = threading.Event()
    write = sender._paho._packet_write

    def once_queued() -> Any:
        queued.wait(10)
        return write()

    sender._paho._packet_write = once_queued  # type: ignore[method-assign]
    sent = [f"m{i}".encode() for i in range(COUNT)]
    with sender.burst():
        for payload in sent:
            sender.publish(TOPIC, payload, qos=1)
    queued.set()
    assert received(listener, COUNT) == sent
    assert sum(writes) >= COUNT * len(TOPIC)
    # paho alone writes each packet on its own: COUNT writes.
    assert len(writes) < COUNT // 2, f"{len(writes)} writes for {COUNT} packets"
