"""When the last backup was made reaches every table's ``hub/status``: a hub driven in this
process (no broker), two tables, every publish recorded per table."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from firmware.hub.backup_stamp import record_backup
from firmware.hub.config import TableConfig
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig
from tests.support.hub import KEYS, Clock, claimed, host


def recorder(table: str, into: list[dict[str, Any]]) -> Callable[..., None]:
    """A client's publish that keeps the table's hub statuses."""
    topic = proto.Topics(table).hub_status

    def publish(t: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
        if t == topic and payload:
            into.append(json.loads(payload))

    return publish


def test_a_backup_reaches_the_status_of_a_table_that_did_not_move(tmp_path: Path) -> None:
    """A host command on table a publishes a's status, which looks at the stamp first;
    table b, which nothing moved, still says so at the hub's next tick."""
    clock = Clock()
    store = tmp_path / "hub.db"
    tables = [TableConfig(name, ["p1", "p2", "p3"]) for name in ("a", "b")]
    hub = claimed(Hub(BrokerConfig(port=1), tables, store, keys=KEYS, clock=clock))
    statuses: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
    for name, actor in hub.actors.items():
        actor.client.publish = recorder(name, statuses[name])  # type: ignore[method-assign,union-attr]
    for name in statuses:  # each table publishes its status once
        host(hub, {"cmd": "sound", "sound": "narration"}, proto.Topics(name))
    assert statuses["a"] and statuses["b"]
    assert statuses["b"][-1].get("backup") is None
    archive = tmp_path / "coffre-hub.tar.gz"
    archive.write_bytes(b"an archive")
    stamp = record_backup(archive, store)
    host(hub, {"cmd": "sound", "sound": "off"}, proto.Topics("a"))
    assert statuses["a"][-1]["backup"] == msgspec.to_builtins(stamp)
    clock.now += 1
    hub._tick()
    assert statuses["b"][-1].get("backup") == msgspec.to_builtins(stamp), (
        "table b's status must say the backup too"
    )
