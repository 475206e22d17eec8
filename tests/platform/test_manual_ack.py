"""The hub's MQTT client tells the broker a message arrived only once the hub has stored it."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import pytest

from firmware.hub.brokerconf import HOST_USER, HUB_USER
from firmware.link import protocol as proto
from firmware.link.mqtt import Client
from firmware.tools.brokers import start_broker
from firmware.tools.simtable import TABLE

TOPIC = proto.Topics(TABLE).host_command


def test_a_command_not_acked_before_a_crash_is_delivered_again(tmp_path: Path) -> None:
    """A host command the hub never acked comes back after its crash; an acked one does not."""
    broker = start_broker(tmp_path, ["p1"], embedded=False)

    def hub_client() -> Client:
        client = Client(
            broker.config(HUB_USER), "ack-test-hub", [TOPIC], clean_session=False, manual_ack=True
        )
        client.start()
        assert client.wait_connected()
        return client

    host = Client(broker.config(HOST_USER), "ack-test-host", [])
    try:
        first = hub_client()
        host.start()
        assert host.wait_connected()
        host.publish(TOPIC, b'{"cmd":"next","id":"h:1"}').wait_for_publish(5)
        msg = first.inbox.get(timeout=5)
        assert msg is not None and msg.ack is not None
        first.stop(clean=False)  # killed before its commit: never acked
        second = hub_client()
        again = second.inbox.get(timeout=5)
        assert again is not None and again.payload == msg.payload
        again.done()  # committed this time
        time.sleep(0.3)
        second.stop(clean=False)
        third = hub_client()
        with pytest.raises(queue.Empty):
            third.inbox.get(timeout=1.0)
        third.stop()
    finally:
        host.stop()
        broker.stop()
