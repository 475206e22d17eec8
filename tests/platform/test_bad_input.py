"""Bad input gets a message a player can read, and changes nothing."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from firmware.hub.brokerconf import HUB_USER
from firmware.link import protocol as proto
from firmware.link.mqtt import Client
from firmware.tools.simtable import TABLE, SimTable
from hardware.keys import COLOURS
from tests.support.tables import (
    TableFactory,
    assert_readable,
    director,
    snapshot,
    spy,
    tap_refused,
)


@pytest.fixture
def voting(make_table: TableFactory) -> SimTable:
    """A 3-player table in round 1's vote phase."""
    sim = make_table(3)
    bots = director(sim, seed=9, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    return sim


def raw_input(sim: SimTable, station: str, payload: bytes, user_station: str | None = None) -> Any:
    """Publish a raw payload on a station's input topic and return the hub's ack."""
    t = proto.Topics(TABLE)
    if user_station is None:
        client = spy(sim, station, [t.station(station, "ack")])
    else:  # the hub's user reaches any station topic (an unknown station has no user)
        client = Client(sim.broker.config(HUB_USER), "raw-hub", [t.station(station, "ack")])
        client.start()
        assert client.wait_connected()
    time.sleep(0.1)
    client.publish(t.station(station, "input"), payload).wait_for_publish(2)
    msg = client.inbox.get(timeout=5)
    client.stop()
    assert msg is not None
    return json.loads(msg.payload)


def test_unknown_tag(voting: SimTable) -> None:
    """A tag the key set does not know: 'Unknown tag'."""
    before = snapshot(voting)
    assert tap_refused(voting, "p1", "DEADBEEF") == "Unknown tag"
    assert snapshot(voting) == before


def test_vote_on_your_own_safe(voting: SimTable) -> None:
    """Red's vote key on red's own station is refused."""
    before = snapshot(voting)
    red = voting.table_config.seating().colours[0]
    message = tap_refused(voting, "p1", voting.keys.uid_for("vote", red, 3))
    assert "own safe" in message
    assert snapshot(voting) == before


def test_key_in_the_wrong_phase(voting: SimTable) -> None:
    """A mystery key during the vote is refused."""
    before = snapshot(voting)
    tap_refused(voting, "p2", voting.keys.uid_for("mystery", None, 8))
    assert snapshot(voting) == before


def test_knob_press_in_the_wrong_phase(voting: SimTable) -> None:
    """Confirming pictos during the vote is refused with a message."""
    before = snapshot(voting)
    ack = voting.gesture("p3", lambda c: c.press())
    assert ack is not None and not ack.ok
    assert_readable(ack.message)
    assert snapshot(voting) == before


def test_key_of_a_colour_nobody_plays(voting: SimTable) -> None:
    """With 3 players, a white vote key belongs to nobody."""
    before = snapshot(voting)
    unused = COLOURS[5]
    message = tap_refused(voting, "p1", voting.keys.uid_for("vote", unused, 1))
    assert unused in message
    assert snapshot(voting) == before


def test_malformed_json(voting: SimTable) -> None:
    """Not JSON at all: 'Bad message'."""
    before = snapshot(voting)
    ack = raw_input(voting, "p1", b"{not json")
    assert ack["ok"] is False and ack["id"] is None
    assert_readable(ack["message"])
    assert snapshot(voting) == before


def test_schema_violation_is_refused_with_its_id(voting: SimTable) -> None:
    """Valid JSON with a bad field: refused, addressed to the input's id."""
    before = snapshot(voting)
    ack = raw_input(voting, "p1", b'{"id":"x1:1","kind":"tag","uid":"nothex!"}')
    assert ack == {"id": "x1:1", "ok": False, "message": ack["message"]}
    assert_readable(ack["message"])
    assert snapshot(voting) == before


def test_oversized_payload(voting: SimTable) -> None:
    """A payload over the limit is refused unread."""
    before = snapshot(voting)
    big = proto.encode({"id": "x1:2", "kind": "tag", "pad": "x" * 5000})
    ack = raw_input(voting, "p1", big)
    assert ack["ok"] is False and ack["message"] == "Message too big"
    assert snapshot(voting) == before


def test_input_from_an_unknown_station(voting: SimTable) -> None:
    """An input on a station topic the table does not have: 'Unknown station'."""
    before = snapshot(voting)
    payload = proto.encode({"id": "zz:1", "kind": "press"})
    ack = raw_input(voting, "zz", payload, user_station="hub")
    assert ack == {"id": "zz:1", "ok": False, "message": "Unknown station"}
    assert snapshot(voting) == before
