"""Red team: SIGKILL the hub at random moments while it commits inputs in batches."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest

from firmware.hub.brokerconf import HUB_USER
from firmware.hub.store import Store
from firmware.link import protocol as proto
from firmware.link.mqtt import Client
from firmware.tools.simtable import TABLE
from tests.support.tables import TableFactory, director, drain

T = proto.Topics(TABLE)
PLAYERS = 5


def test_random_kills_during_batched_commits_lose_no_acked_input(
    make_table: TableFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five voters tap at once on a slow disk, the hub is killed 3 times: acked oks stored once."""
    # Each commit takes 15 ms (simulated), so taps pile up in the mailbox: real batches.
    monkeypatch.setenv("COFFRE_SIMULATE_DISK", "15,0,0")
    sim = make_table(PLAYERS, hub_mode="process")
    bots = director(sim, seed=21, stop_at=(1, "vote"))
    bots.start_game(PLAYERS)
    bots.play()
    watcher = Client(sim.broker.config(HUB_USER), "redteam-batch-acks", [f"{T.base}/station/+/ack"])
    watcher.start()
    assert watcher.wait_connected()
    colours = sim.table_config.seating().colours
    rng = random.Random(5)

    def voter(seat: int) -> None:
        """Move one vote key back and forth between two other safes: each tap is an event."""
        safes = [s for s in range(PLAYERS) if s != seat][:2]
        uid = sim.keys.uid_for("vote", colours[seat], 1 + seat)
        for i in range(10):
            sim.tap(sim.names[safes[i % 2]], uid, settle=False)
            time.sleep(0.01)

    threads = [threading.Thread(target=voter, args=(s,)) for s in range(PLAYERS)]
    for thread in threads:
        thread.start()
    for _ in range(3):
        time.sleep(rng.uniform(0.05, 0.4))
        sim.kill_hub()
        sim.start_hub()
    for thread in threads:
        thread.join()
    for name in sim.names:
        assert sim.stations[name].wait_settled(0, 30), f"{name} still has unanswered inputs"
    time.sleep(0.3)
    acks = [json.loads(payload) for _, payload in drain(watcher)]
    watcher.stop()
    assert acks, "no input was answered"
    acked = {(a["id"]) for a in acks if a["ok"]}
    rows = (
        Store(sim.store_path)
        ._db.execute("SELECT source_id FROM events WHERE source_id IS NOT NULL")
        .fetchall()
    )
    stored = [r[0] for r in rows]
    assert len(stored) == len(set(stored)), "an input was stored twice"
    stored_ids = {s.rsplit("/", 1)[1] for s in stored}
    assert acked <= stored_ids, acked - stored_ids
