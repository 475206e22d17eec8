"""The Pi-class run's hub: ``coffre hub`` as the unit runs it, with each input's arrival,
each commit and fsync, and each screen's publish stamped (``time.perf_counter()``) into a
trace file; the hub's code is unchanged."""

from __future__ import annotations

import argparse
import contextlib
import json
import runpy
import sys
import threading
import time
from typing import Any


def hub_main(ns: argparse.Namespace) -> int:
    """``coffre hub`` with its inputs, commits and screens stamped into ``--trace``."""
    from firmware.hub.batches import Batches
    from firmware.hub.store import Store
    from firmware.link import mqtt

    trace = open(ns.trace, "a", buffering=1)  # noqa: SIM115 - the process's whole life
    lock = threading.Lock()

    def note(**event: Any) -> None:
        with lock:
            trace.write(json.dumps(event) + "\n")

    on_message = mqtt.Client._on_message

    def _on_message(self: Any, c: Any, u: Any, msg: Any) -> None:
        if msg.topic.endswith("/input"):
            with contextlib.suppress(ValueError, AttributeError):
                note(ev="in", id=json.loads(msg.payload).get("id"), t=time.perf_counter())
        on_message(self, c, u, msg)

    commit = Store.commit
    sync = getattr(Store, "sync", None)  # the writer thread's fsync, where the store has one

    def _commit(self: Store) -> None:
        t0 = time.perf_counter()
        commit(self)
        note(ev="commit", t0=t0, t1=time.perf_counter())

    def _sync(self: Store) -> int:
        before = self.synced
        t0 = time.perf_counter()
        done = int(sync(self))  # type: ignore[misc]
        if done > before:
            note(ev="sync", t0=t0, t1=time.perf_counter())
        return done

    send_held = Batches.send_held

    def _send_held(self: Any, item: Any) -> None:
        # Stamped as it is handed to the client: a station may have the screen before
        # the publish call returns (a stamp after it made "network" negative at times).
        t = time.perf_counter()
        send_held(self, item)
        if item.topic.endswith("/screen"):
            note(ev="pub", topic=item.topic, t=t)

    mqtt.Client._on_message = _on_message  # type: ignore[method-assign,assignment]
    Store.commit = _commit  # type: ignore[method-assign]
    if sync is not None:
        Store.sync = _sync  # type: ignore[method-assign]
    Batches.send_held = _send_held  # type: ignore[method-assign]
    # The real command line, as the unit runs it (the bench never imports the CLI module).
    sys.argv = ["coffre", "hub", "--config", ns.config]
    try:
        runpy.run_module("firmware.cli", run_name="__main__")
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
