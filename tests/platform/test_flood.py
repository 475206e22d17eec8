"""A station's credentials flooding the hub (QoS 0, full speed, 10 s) on a real mosquitto:
another table on the same hub is still answered, during the flood and after it.

The figures (messages sent, the hub's memory, the other table's answer times) are printed
(``-s``); the issue's promise is a p95 under 1 s. On a shared test machine that is a
figure to read, not to assert: what is asserted is that every input of the other table
was answered at all (ANSWER_SECONDS; before the inbox was bounded, some waited 25 s and
some were never answered).
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as paho
import pytest

from firmware.hub.config import TableConfig
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig
from hardware.keys import load_keyset
from tests.support.brokers import acl_mosquitto
from tests.support.flood import flood, rss_mb

KEYS = load_keyset()
STATIONS = ["p1", "p2", "p3"]
FLOOD_SECONDS = 10.0
#: How long one input of the other table may wait for its answer before it counts as lost.
ANSWER_SECONDS = 10.0
#: Users of the test broker and what each may write or read.
ACL = {
    "hub": "topic readwrite coffre/#\n",
    "a-p1": "topic write coffre/a/station/p1/input\ntopic write coffre/a/station/p1/status\n",
    "tester": "topic readwrite coffre/#\n",
}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[int]:
    mosq = acl_mosquitto(tmp_path / "broker", ACL)
    yield mosq.port
    mosq.stop()


class Timer:
    """Inputs to table b's station p1, each timed until its ack comes back."""

    def __init__(self, port: int) -> None:
        self.topics = proto.Topics("b")
        self.acked: dict[str, float] = {}
        self.done = threading.Condition()
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="tester")
        self.client.username_pw_set("tester", "pw-tester")
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe(self.topics.station("p1", "ack"), qos=1)
        self.client.loop_start()
        self.seq = 0

    def _on_message(self, _c: paho.Client, _u: object, msg: paho.MQTTMessage) -> None:

        with self.done:
            self.acked[json.loads(msg.payload)["id"]] = time.monotonic()
            self.done.notify_all()

    def one(self, timeout: float = ANSWER_SECONDS) -> float | None:
        """Send one input and wait for its answer: seconds, or None when none came."""
        self.seq += 1
        input_id = f"lt:{self.seq}"
        sent = time.monotonic()
        payload = proto.encode({"id": input_id, "kind": "press"})
        self.client.publish(self.topics.station("p1", "input"), payload, qos=1)
        with self.done:
            self.done.wait_for(lambda: input_id in self.acked, timeout)
        at = self.acked.get(input_id)
        return None if at is None else at - sent

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def figures(name: str, times: list[float | None]) -> str:
    got = sorted(t for t in times if t is not None)
    if not got:
        return f"{name}: none of {len(times)} answered"
    p95 = got[min(len(got) - 1, int(len(got) * 0.95))]
    return (
        f"{name}: {len(got)}/{len(times)} answered, p50 {statistics.median(got) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, max {got[-1] * 1000:.0f} ms"
    )


def test_a_flooding_station_leaves_another_table_answered(broker: int, tmp_path: Path) -> None:
    """10 s of QoS 0 inputs from table a's station p1: table b's inputs are all answered,
    before, during and after the flood."""
    tables = [TableConfig("a", STATIONS), TableConfig("b", STATIONS)]
    hub = Hub(
        BrokerConfig("127.0.0.1", broker, "hub", "pw-hub"), tables, tmp_path / "h.db", keys=KEYS
    )
    hub.start()
    timer = Timer(broker)
    try:
        deadline = time.monotonic() + 20
        while not all(a.state == "live" for a in hub.actors.values()):
            assert time.monotonic() < deadline, "the hub never ran its tables"
            time.sleep(0.05)
        for actor in hub.actors.values():
            assert actor.client is not None and actor.client.wait_connected(10)
        before = [timer.one() for _ in range(20)]
        memory_before = rss_mb()
        stop = threading.Event()
        result: list[int] = []
        flooder = threading.Thread(
            target=lambda: result.append(
                flood(
                    BrokerConfig("127.0.0.1", broker, "a-p1", "pw-a-p1"),
                    "coffre/a/station/p1/input",
                    FLOOD_SECONDS,
                    stop,
                )
            )
        )
        flooder.start()
        during = []
        while flooder.is_alive():
            during.append(timer.one())
            time.sleep(0.1)
        flooder.join()
        memory_peak = rss_mb()
        after = [timer.one() for _ in range(20)]
    finally:
        timer.close()
        hub.stop()
    inbox = hub.inbox
    print(
        f"\nflood: {result[0]} QoS 0 inputs in {FLOOD_SECONDS:.0f} s from one station; "
        f"hub inbox dropped {getattr(inbox, 'dropped', '?')}; "
        f"process RSS {memory_before:.0f} MB before, {memory_peak:.0f} MB after the flood"
    )
    for name, times in (("before", before), ("during", during), ("after", after)):
        print(figures(name, times))
    for times in (before, during, after):
        assert all(t is not None for t in times), "an input of the other table went unanswered"
