"""A hub driven in this process with no broker: its publishes recorded (the hub unit tests)."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.config import TableConfig
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from hardware.keys import load_keyset

KEYS = load_keyset()
T = proto.Topics("t")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_hub(
    tmp_path: Path, clock: Clock | None = None, **table: Any
) -> tuple[Hub, list[tuple[str, Any]]]:
    """A hub whose publishes are recorded instead of sent."""
    config = TableConfig("t", ["p1", "p2", "p3"], **table)
    hub = Hub(
        BrokerConfig(port=1), [config], tmp_path / "hub.db", keys=KEYS, clock=clock or Clock()
    )
    sent: list[tuple[str, Any]] = []

    def publish(topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> Any:
        sent.append((topic, json.loads(payload)))

    hub.client.publish = publish  # type: ignore[method-assign]
    return claimed(hub), sent


def claimed(hub: Hub) -> Hub:
    """As if the claim probe had found every table free (no broker here)."""
    for actor in hub.actors.values():
        actor.state = "live"
    return hub


def deliver(hub: Hub, topic: str, payload: Any) -> None:
    raw = payload if isinstance(payload, bytes) else proto.encode(payload)
    hub.submit(Message(topic, raw))


_command_ids = itertools.count(1)


def host(hub: Hub, command: dict[str, Any], topics: proto.Topics = T) -> None:
    """A host command as the panel or ``coffre host`` sends it: with a fresh id."""
    deliver(hub, topics.host_command, {"id": f"h:{next(_command_ids)}", **command})


def four_seat_hub(tmp_path: Path, clock: Clock) -> tuple[Hub, list[tuple[str, Any]]]:
    """A claimed hub with one four-seat table, every publish recorded (topic, payload)."""
    config = TableConfig("t", ["p1", "p2", "p3", "p4"])
    hub = claimed(Hub(BrokerConfig(port=1), [config], tmp_path / "hub.db", keys=KEYS, clock=clock))
    sent: list[tuple[str, Any]] = []

    def publish(topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> Any:
        sent.append((topic, json.loads(payload)))

    hub.client.publish = publish  # type: ignore[method-assign]
    return hub, sent


def screens(sent: list[tuple[str, Any]], station: str) -> list[dict[str, Any]]:
    """Every screen sent to ``station``, oldest first."""
    return [p for t, p in sent if t == T.station(station, "screen")]


def full_at_next_commit(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub's next commit fails as on a full card: written, rolled back, refused; the
    commits after it work again."""
    real = hub.store.commit

    def full() -> None:
        monkeypatch.setattr(hub.store, "commit", real)
        hub.store.rollback()
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(hub.store, "commit", full)
