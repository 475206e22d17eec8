"""The hub's loop asks when the next timer is due only of the tables a batch may have
moved (asking all of them walks every table: ~0.2 ms at 100 tables, more than an input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.hub import service
from firmware.hub.actor import TableActor
from firmware.hub.config import TableConfig
from firmware.hub.events import PanelPress, Synced, TimersDue
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from tests.support.hub import KEYS, Clock, claimed

TABLES = ["t", "u", "v"]


def three_tables(tmp_path: Path) -> Hub:
    configs = [TableConfig(name, ["p1", "p2", "p3"]) for name in TABLES]
    hub = claimed(Hub(BrokerConfig(port=1), configs, tmp_path / "hub.db", keys=KEYS, clock=Clock()))
    hub.links.data.publish = lambda *a, **k: None  # type: ignore[method-assign,assignment]
    return hub


def turn(table: str, n: int) -> Message:
    payload = proto.encode({"id": f"a:{n}", "kind": "knob", "step": 1})
    return Message(proto.Topics(table).station("p1", "input"), payload)


def names(actors: list[TableActor] | None) -> list[str] | None:
    return None if actors is None else sorted(a.config.name for a in actors)


def test_messages_of_one_table_ask_that_table_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a batch of one table's inputs, only that table is asked when it is next due."""
    hub = three_tables(tmp_path)
    asked: list[list[str]] = []
    real = service.next_wake  # type: ignore[attr-defined]

    def spy(actors: list[TableActor], now: float) -> float | None:
        asked.append(sorted(a.config.name for a in actors))
        return real(actors, now)

    monkeypatch.setattr(service, "next_wake", spy)
    for n in range(20):
        hub.inbox.put(turn("u", n))
    hub.inbox.put(None)
    hub.run()  # on this thread: one batch, then the stop
    assert asked == [TABLES, ["u"]]


def test_what_a_batch_may_have_moved(tmp_path: Path) -> None:
    """Messages move their own live tables; a timer, the panel or a message the hub cannot
    place may move any (None); what the writer's Synced sends moves none."""
    hub = three_tables(tmp_path)
    assert names(hub._touched([turn("t", 1), turn("v", 2), turn("t", 3)])) == ["t", "v"]
    assert names(hub._touched([Synced(None)])) == []
    assert hub._touched([turn("t", 1), TimersDue()]) is None
    assert hub._touched([PanelPress("ok")]) is None
    assert hub._touched([Message("coffre/elsewhere/hub/status", b"")]) is None
    assert hub._touched([Message("other/t/station/p1/input", b"")]) is None
    hub.actors["v"].state = "probing"
    assert names(hub._touched([turn("v", 1)])) == []
