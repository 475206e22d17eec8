"""Crashes and restarts lose nothing that was acknowledged, and apply nothing twice."""

from __future__ import annotations

import json
import time

import msgspec

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.hub.store import Store
from firmware.link import protocol as proto
from firmware.tools.simtable import TABLE
from tests.support.tables import TableFactory, director, expected_scores, spy


def votes_in(sim_public: dict) -> list[int]:
    return [s["votes_in"] for s in sim_public["view"]["seats"]]


def test_hub_killed_mid_vote_resumes_with_every_input(make_table: TableFactory) -> None:
    """SIGKILL the hub mid-vote; taps made before and while it is down all count."""
    sim = make_table(4, hub_mode="process")
    bots = director(sim, seed=11, stop_at=(1, "vote"))
    bots.start_game(4)
    bots.play()
    votes = bots.record[1]["votes"]
    red = sim.table_config.seating().colours[0]
    # Red votes on the three others, acknowledged one by one.
    for safe, number in ((1, 2), (2, 3)):
        ack = sim.tap(sim.names[safe], sim.keys.uid_for("vote", red, number))
        assert ack is not None and ack.ok
        votes[(0, safe)] = number
    acked = votes_in(sim.watch.public)
    assert acked == [0, 1, 1, 0]

    sim.kill_hub()
    # With the hub dead, one more vote: the station keeps it until the hub answers.
    sim.tap(sim.names[3], sim.keys.uid_for("vote", red, 4), settle=False)
    votes[(0, 3)] = 4
    assert sim.stations["p4"].pending

    sim.start_hub()
    assert sim.stations["p4"].wait_settled(0, 15)
    sim.watch.wait(lambda p: votes_in(p) == [0, 1, 1, 1])
    bots.stop_at = None
    final = bots.play()
    assert final["over"]
    assert final["scores"] == expected_scores(bots.record, 4)


def test_station_restarted_mid_game_gets_its_screen_back(make_table: TableFactory) -> None:
    """A station that crashes and boots again shows the same screen and plays on."""
    sim = make_table(3)
    bots = director(sim, seed=4, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    old = sim.devices["p2"].display
    assert isinstance(old, MockDisplay) and old.last is not None
    sim.stations["p2"].stop(crash=True)
    fresh = StationDevices(MockReader(), MockDisplay(), MockControls())
    sim.start_station("p2", devices=fresh)
    assert sim.stations["p2"].wait_screen(10)
    time.sleep(0.1)
    assert isinstance(fresh.display, MockDisplay) and fresh.display.last is not None
    assert fresh.display.last.tobytes() == old.last.tobytes()
    bots.stop_at = None
    final = bots.play()
    assert final["scores"] == expected_scores(bots.record, 3)


def test_broker_restarted_mid_game_everyone_reconnects(make_table: TableFactory) -> None:
    """Stop and restart mosquitto mid-vote: hub, stations and watcher reconnect; play on."""
    sim = make_table(3)
    bots = director(sim, seed=6, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    sim.broker.process.stop()
    time.sleep(0.5)
    sim.broker.process.start()
    for station in sim.stations.values():
        assert station.client.wait_connected(15)
    assert sim.hub is not None and sim.hub.client.wait_connected(15)
    assert sim.watch.client.wait_connected(15)
    time.sleep(0.3)
    bots.stop_at = None
    final = bots.play()
    assert final["over"]
    assert final["scores"] == expected_scores(bots.record, 3)


def test_input_delivered_twice_is_applied_once(make_table: TableFactory) -> None:
    """The same input id twice (QoS 1 may redeliver) is one vote and one stored event."""
    sim = make_table(3)
    bots = director(sim, seed=6, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    version = sim.watch.public["version"]
    store_events = len(Store(sim.store_path).events(TABLE, 1))
    sender = spy(sim, "p1", [proto.Topics(TABLE).station("p1", "ack")])
    yellow = sim.table_config.seating().colours[1]
    payload = proto.encode(
        {"id": "dup:1", "kind": "tag", "uid": sim.keys.uid_for("vote", yellow, 5)}
    )
    topic = proto.Topics(TABLE).station("p1", "input")
    for _ in range(2):
        sender.publish(topic, payload).wait_for_publish(2)
    acks = [sender.inbox.get(timeout=5), sender.inbox.get(timeout=5)]
    sender.stop()
    decoded = [json.loads(a.payload) for a in acks if a is not None]
    assert [(a["id"], a["ok"]) for a in decoded] == [("dup:1", True), ("dup:1", True)]
    time.sleep(0.2)
    assert sim.watch.public["version"] == version + 1
    assert votes_in(sim.watch.public) == [1, 0, 0]
    assert len(Store(sim.store_path).events(TABLE, 1)) == store_events + 1


def test_a_station_offline_while_answered_gets_its_screen_and_its_answer_back(
    make_table: TableFactory,
) -> None:
    """The hub answers a station at QoS 0 (``proto.ANSWER_QOS``): a station whose link drops
    while its answer is on the way shows the newest screen once back (retained, sent again
    at its subscription) and has its input answered on its resend; the vote counts once."""
    sim = make_table(3)
    bots = director(sim, seed=6, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    hub = sim.hub
    assert hub is not None
    station = sim.stations["p1"]
    version = sim.watch.public["version"]
    written = hub.store.written
    # The answer waits for a slow fsync; the station's link drops meanwhile.
    hub.store.commit_delay = lambda: 0.6
    yellow = sim.table_config.seating().colours[1]
    reader = sim.devices["p1"].reader
    assert isinstance(reader, MockReader)
    before = station.sent
    reader.present_tag(sim.keys.uid_for("vote", yellow, 5))
    deadline = time.monotonic() + 10
    while hub.store.written == written and time.monotonic() < deadline:
        time.sleep(0.005)  # the hub has the input (committed, not yet durable nor answered)
    assert hub.store.written > written
    sock = station.client._paho.socket()
    assert sock is not None
    sock.close()  # paho reconnects after a second at the earliest: the answer finds it away
    sim.watch.wait(lambda p: p["version"] == version + 1)
    hub.store.commit_delay = None
    assert not station.client.connected.is_set() and station.pending
    assert station.wait_settled(before, 15)  # its resend (RESEND_AFTER) is answered
    reader.remove_tag()
    assert not station.pending and station.last_ack is not None and station.last_ack.ok
    assert votes_in(sim.watch.public) == [1, 0, 0]
    assert sim.watch.public["version"] == version + 1
    screen_topic = proto.Topics(TABLE).station("p1", "screen")
    newest = msgspec.json.decode(hub.actors[TABLE].published[screen_topic], type=proto.Screen)
    assert station.screen is not None
    assert (station.screen.title, station.screen.lines) == (newest.title, newest.lines)
