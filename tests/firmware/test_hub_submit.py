"""The hub's public door: typed events and messages handed to ``Hub.submit``, no broker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from firmware.hub import batches
from firmware.hub.claim import Verdict
from firmware.hub.config import TableConfig
from firmware.hub.events import ClaimDecided, Connected, Denied, Tick, TimersDue
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from hardware.keys import load_keyset

KEYS = load_keyset()
OTHER = proto.Claim(hub="0", run="r", host="elsewhere")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def two_tables(tmp_path: Path) -> tuple[Hub, list[tuple[str, Any]]]:
    """A hub with tables t and u, neither claimed yet; what goes out and who connects, kept."""
    configs = [TableConfig("t", ["p1", "p2", "p3"]), TableConfig("u", ["p1", "p2", "p3"])]
    hub = Hub(BrokerConfig(port=1), configs, tmp_path / "hub.db", keys=KEYS, clock=Clock())
    sent: list[tuple[str, Any]] = []
    for name, actor in hub.actors.items():
        assert actor.client is not None
        actor.client.publish = lambda topic, payload, retain=False, qos=1: sent.append(  # type: ignore[method-assign]
            (topic, json.loads(payload) if payload else None)
        )
        actor.client.start = lambda name=name: sent.append(("started", name))  # type: ignore[method-assign,misc]
        actor.client.leave = lambda name=name: sent.append(("left", name))  # type: ignore[method-assign,misc]
    return hub, sent


def test_a_verdict_connects_a_free_table_and_keeps_this_hub_off_an_owned_one(
    tmp_path: Path,
) -> None:
    """ClaimDecided: the free table connects and runs; the owned one gets nothing from
    this hub, and the hub goes on (it still has a table)."""
    hub, sent = two_tables(tmp_path)
    hub.submit(ClaimDecided(Verdict("t")), ClaimDecided(Verdict("u", owner=OTHER)))
    assert (hub.actors["t"].state, hub.actors["u"].state) == ("live", "refused")
    assert ("started", "t") in sent and ("started", "u") not in sent
    before = len(sent)
    hub.submit(Connected("t"), Connected("u"))  # u's is a stale callback: ignored
    topics = [t for t, _p in sent[before:]]
    assert topics[0] == "coffre/t/hub/status"  # the claim first, then what it owns
    assert all(t.startswith("coffre/t/") for t, _p in sent if t.startswith("coffre/"))
    assert hub.gave_up is None
    hub.store.close()


def test_a_refused_subscription_makes_the_hub_leave_that_table(tmp_path: Path) -> None:
    """Denied on a running table: the hub leaves it cleanly; with no table left, it gives up."""
    hub, sent = two_tables(tmp_path)
    hub.submit(ClaimDecided(Verdict("t")), ClaimDecided(Verdict("u", owner=OTHER)))
    hub.submit(Connected("t"))
    hub.submit(Denied("t"))
    assert hub.actors["t"].state == "refused" and sent[-1] == ("left", "t")
    refused = hub.actors["t"].refused
    assert refused is not None and refused.denied
    assert hub.gave_up is not None and "no table left" in hub.gave_up
    count = len(sent)
    start = {"cmd": "start", "game": "secret-identity", "players": 3, "id": "h:1"}
    hub.submit(Message(proto.Topics("t").host_command, proto.encode(start)), TimersDue(), Tick())
    assert len(sent) == count and hub.actors["t"].table is None
    hub.store.close()


def test_a_batch_fed_at_once_is_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several items in one submit: one commit for all of them, each answered."""
    # However slow the machine: past BATCH_SECONDS of handling a batch is cut in two (a
    # loaded CI box took 10 ms for three taps, one run in eight).
    monkeypatch.setattr(batches, "BATCH_SECONDS", 60.0)
    hub, sent = two_tables(tmp_path)
    hub.submit(ClaimDecided(Verdict("t")), Connected("t"))
    t = proto.Topics("t")
    start = {"cmd": "start", "game": "secret-identity", "players": 3, "seed": 5, "id": "h:1"}
    hub.submit(Message(t.host_command, proto.encode(start)))
    commits = hub.store.commits
    taps = [
        Message(
            t.station(station, "input"),
            proto.encode({"id": f"f:{n}", "kind": "tag", "uid": KEYS.uid_for("mystery", None, n)}),
        )
        for n, station in enumerate(("p1", "p2", "p3"), start=1)
    ]
    hub.submit(*taps)
    assert hub.store.commits == commits + 1
    acks = [p for topic, p in sent if topic.endswith("/ack") and "/station/" in topic]
    assert [a["id"] for a in acks] == ["f:1", "f:2", "f:3"] and all(a["ok"] for a in acks)
    hub.store.close()
