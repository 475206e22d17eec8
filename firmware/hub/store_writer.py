"""The hub's writer thread: makes committed batches durable while the hub works on.

The hub's thread commits a batch without waiting for the disk (``Store`` with
``deferred_sync``) and wakes this thread, which fsyncs the store's log
(:meth:`~firmware.hub.store.Store.sync`) and tells the hub (``on_synced``) so it sends
what the synced batches held: their screens and answers, then the broker's acks. An
SD card's stall then delays those answers, never the handling of what comes meanwhile,
and the fsync after it covers every batch committed during it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from firmware.hub.store import Store


class StoreWriter:
    """Syncs ``store`` whenever woken, on a thread of its own; ``on_synced`` is told after
    each sync (with the OSError if the disk refused), from that thread."""

    def __init__(self, store: Store, on_synced: Callable[[OSError | None], None]) -> None:
        self.store = store
        self.on_synced = on_synced
        self._wanted = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="hub-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """A commit waits to be made durable."""
        self._wanted.set()

    def stop(self) -> None:
        """End the thread (a sync under way finishes first)."""
        self._stopping = True
        self._wanted.set()
        if self._thread.is_alive():
            self._thread.join(10)

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()  # before the sync: a commit after this wakes the next one
            if self._stopping:
                return
            try:
                self.store.sync()
            except OSError as exc:
                self.on_synced(exc)
                return  # the hub stops: nothing after a refused fsync is trusted
            self.on_synced(None)
