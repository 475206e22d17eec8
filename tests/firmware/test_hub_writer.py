"""The hub's writer thread: a stalled disk delays answers, never the work on other tables."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from firmware.hub.claim import Verdict
from firmware.hub.config import TableConfig
from firmware.hub.events import ClaimDecided, Connected, Synced
from firmware.hub.service import Hub
from firmware.hub.store import Store
from firmware.hub.store_writer import StoreWriter
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from hardware.keys import load_keyset
from tests.support.hub import claimed

KEYS = load_keyset()


class Disk:
    """Store.sync behind a gate: closed, the fsync waits (an SD card's stall)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.fail: OSError | None = None
        sync = Store.sync

        def gated(store: Store) -> int:
            self.gate.wait()
            if self.fail is not None:
                raise self.fail
            return sync(store)

        monkeypatch.setattr(Store, "sync", gated)


def wait_for(check: Callable[[], bool], what: str) -> None:
    """Wait (not a timing assert: a generous bound so a stuck hub fails the test)."""
    deadline = time.monotonic() + 20
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.005)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Hub, list[tuple[str, Any]]]]:
    """A hub running tables t and u on its own thread and writer, its sends kept, no broker."""
    configs = [TableConfig("t", ["p1", "p2", "p3"]), TableConfig("u", ["p1", "p2", "p3"])]
    hub = Hub(BrokerConfig(port=1), configs, tmp_path / "hub.db", keys=KEYS)
    sent: list[tuple[str, Any]] = []
    lock = threading.Lock()
    for actor in hub.actors.values():
        assert actor.client is not None

        def publish(topic: str, payload: bytes, retain: bool = False, qos: int = 1) -> None:
            with lock:
                sent.append((topic, json.loads(payload) if payload else None))

        actor.client.publish = publish  # type: ignore[method-assign]
        actor.client.start = lambda: None  # type: ignore[method-assign]
    # What start() does, less the claim probe (it would need a broker): the verdicts are fed.
    hub.writer = StoreWriter(hub.store, lambda error: hub.inbox.put(Synced(error)))
    hub.writer.start()
    thread = threading.Thread(target=hub.run, daemon=True)
    hub._thread = thread
    thread.start()
    for name in ("t", "u"):
        hub.inbox.put(ClaimDecided(Verdict(name)))
        hub.inbox.put(Connected(name))
    for name in ("t", "u"):
        start = {"cmd": "start", "game": "secret-identity", "players": 3, "seed": 5, "id": "h:1"}
        hub.inbox.put(Message(proto.Topics(name).host_command, proto.encode(start)))
    wait_for(lambda: all(a.table is not None for a in hub.actors.values()), "games started")
    try:
        yield hub, sent
    finally:
        hub.inbox.put(None)
        thread.join(10)
        hub.writer.stop()
        hub.store.close()


def tap(table: str, station: str, n: int) -> Message:
    uid = KEYS.uid_for("mystery", None, n)
    payload = proto.encode({"id": f"b:{n}", "kind": "tag", "uid": uid})
    return Message(proto.Topics(table).station(station, "input"), payload)


def version(hub: Hub, table: str) -> int:
    found = hub.actors[table].table
    return -1 if found is None else int(found.state.version)


def acks(sent: list[tuple[str, Any]], table: str) -> list[Any]:
    return [p for t, p in list(sent) if t.startswith(f"coffre/{table}/station/") and "/ack" in t]


def test_a_stalled_sync_holds_answers_while_other_tables_go_on(
    running: tuple[Hub, list[tuple[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """During a stall the hub applies table u's tap after t's, answers neither; once the
    disk is back, both answers go out, t's first."""
    hub, sent = running
    wait_for(lambda: not hub.batches.unsynced, "the starts answered")
    disk = Disk(monkeypatch)
    disk.gate.clear()
    before = {name: version(hub, name) for name in ("t", "u")}
    answered = {name: len(acks(sent, name)) for name in ("t", "u")}
    hub.inbox.put(tap("t", "p1", 1))
    wait_for(lambda: version(hub, "t") > before["t"], "t's tap applied")
    hub.inbox.put(tap("u", "p2", 2))
    wait_for(lambda: version(hub, "u") > before["u"], "u's tap applied during the stall")
    assert [len(acks(sent, name)) for name in ("t", "u")] == [answered["t"], answered["u"]]
    disk.gate.set()
    wait_for(lambda: len(acks(sent, "u")) > answered["u"], "u's tap answered")
    order = [t for t, p in list(sent) if "/ack" in t and p and p.get("id", "").startswith("b:")]
    assert order == ["coffre/t/station/p1/ack", "coffre/u/station/p2/ack"]
    assert all(p["ok"] for p in acks(sent, "t")[answered["t"] :])


def test_a_disk_that_refuses_to_sync_stops_the_hub_unanswered(
    running: tuple[Hub, list[tuple[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An fsync error: the tap stays unanswered and the hub's thread ends (systemd restarts
    it; the broker delivers the tap again)."""
    hub, sent = running
    told: list[str] = []
    hub.on_failed = told.append  # the CLI ends the process on it (exit 74)
    wait_for(lambda: not hub.batches.unsynced, "the starts answered")
    disk = Disk(monkeypatch)
    disk.fail = OSError(5, "Input/output error")
    answered = len(acks(sent, "t"))
    hub.inbox.put(tap("t", "p1", 1))
    wait_for(lambda: not hub.alive(), "the hub stopped")
    assert len(acks(sent, "t")) == answered
    assert told == [hub.failed]
    assert hub.failed is not None and "Input/output error" in hub.failed


def test_a_deferred_commit_is_durable_only_after_a_sync(tmp_path: Path) -> None:
    """With deferred_sync a batch's commit runs synchronous=NORMAL and counts as synced only
    once sync() ran; a transaction of its own syncs before it returns."""
    store = Store(tmp_path / "s.db", deferred_sync=True)
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    store.new_game("t", "secret-identity", 3, {}, 1, ["a", "b", "c"])
    assert store.synced == store.written > 0
    store.begin()
    store.append("t", 1, {"x": 1}, "s:1")
    store.commit()
    assert store.written > store.synced
    assert store.sync() == store.written == store.synced
    store.begin()
    store.commit()  # wrote nothing: nothing to make durable
    assert store.synced == store.written
    store.close()
    full = Store(tmp_path / "f.db")
    assert full._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    full.begin()
    full.append("t", 1, {"x": 1}, "s:1")
    full.commit()
    assert full.synced == full.written
    full.close()


def tapped_unsynced(tmp_path: Path) -> tuple[Hub, list[str]]:
    """A hub whose writer is the test (it syncs by hand), a game started and p1's tap
    committed but not yet durable; the topics it publishes to are kept."""
    hub = claimed(
        Hub(
            BrokerConfig(port=1),
            [TableConfig("t", ["p1", "p2", "p3"])],
            tmp_path / "h.db",
            keys=KEYS,
        )
    )
    sent: list[str] = []
    for actor in hub.actors.values():
        assert actor.client is not None
        actor.client.publish = lambda topic, payload, retain=False, qos=1: sent.append(topic)  # type: ignore[method-assign,misc]
    hub.writer = cast(StoreWriter, _NoWriter())  # the test syncs, as the writer would
    start = {"cmd": "start", "game": "secret-identity", "players": 3, "seed": 5, "id": "h:1"}
    hub.submit(Message(proto.Topics("t").host_command, proto.encode(start)))
    hub._submit([tap("t", "p1", 1)], wait=False)
    assert acks_of(sent, "p1") == 0  # committed, not yet durable: held
    return hub, sent


def test_answers_made_durable_go_out_before_the_next_batch_is_handled(tmp_path: Path) -> None:
    """The writer's Synced arriving with new inputs: the answers it made durable are sent
    first, not after the new inputs' handling (a backlog after a stall would hold them)."""
    hub, sent = tapped_unsynced(tmp_path)
    hub.store.sync()
    seen: list[int] = []
    handle = hub._handle

    def handling(batch: Any, item: Any) -> None:
        seen.append(acks_of(sent, "p1"))
        handle(batch, item)

    hub._handle = handling  # type: ignore[method-assign]
    hub._submit([tap("t", "p2", 2), Synced(None)], wait=False)
    assert seen == [1]  # p1's answer went out before p2's tap was handled


def test_answers_made_durable_during_a_batch_go_out_before_its_next_input(
    tmp_path: Path,
) -> None:
    """The writer's sync ending while the hub works a batch: the answers it made durable
    are sent before the batch's next input, not when the batch is done (after a stall the
    hub may be in a batch of several milliseconds)."""
    hub, sent = tapped_unsynced(tmp_path)
    seen: list[int] = []
    handle = hub._handle

    def handling(batch: Any, item: Any) -> None:
        seen.append(acks_of(sent, "p1"))
        handle(batch, item)
        if len(seen) == 1:
            hub.store.sync()  # the writer's fsync ends while the batch goes on

    hub._handle = handling  # type: ignore[method-assign]
    hub._submit([tap("t", "p2", 2), tap("t", "p3", 3)], wait=False)
    assert seen == [0, 1]  # p1's answer went out between p2's tap and p3's


class _NoWriter:
    def wake(self) -> None:
        """Nothing: the test syncs the store itself."""


def acks_of(sent: list[str], station: str) -> int:
    return sum(1 for t in sent if t == proto.Topics("t").station(station, "ack"))
