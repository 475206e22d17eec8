"""The display's only input: ``public`` and ``hub/status`` of its tables, read-only.

One MQTT connection (the ``spectator`` user) follows every table the display shows. A
paho thread enqueues; :meth:`Spectator.run` (a thread of its own) decodes and hands each new
snapshot to a callback, which the web server turns into pages.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from firmware.display.sound import remember
from firmware.link import protocol as proto
from firmware.link.lang import LANGUAGES
from firmware.link.mqtt import BrokerConfig, Client

log = logging.getLogger(__name__)

SPECTATOR_USER = "spectator"


@dataclass
class Snapshot:
    """What the display knows of one table: the last public table and hub status."""

    table: str
    public: dict[str, Any] = field(default_factory=dict)
    status: dict[str, Any] = field(default_factory=dict)
    broker: bool = False  # the display's own link to the broker is up
    #: The display's own language: what it speaks until the hub says the table's.
    fallback: str = LANGUAGES[0]
    #: The last language the hub said (kept while the hub is lost: its will says none).
    heard: str | None = None
    #: The last moves of the game, as the page's sound cues need them (firmware.display.sound).
    moments: list[dict[str, Any]] = field(default_factory=list)
    #: The table's name as guests read it (display.toml's ``[names]``; empty: its id).
    name: str = ""
    #: The address a phone opens to follow this table (empty: not known).
    address: str = ""

    @property
    def title(self) -> str:
        """What the page calls the table: its name, else its id."""
        return self.name or self.table

    @property
    def hub_online(self) -> bool:
        return self.broker and self.status.get("state") == "ready"

    @property
    def language(self) -> str:
        """What the table speaks (the hub's status says it; the page follows it live)."""
        for said in (self.status.get("language"), self.heard):
            if said in LANGUAGES:
                return str(said)
        return self.fallback


class Spectator:
    """Follows tables on the broker; calls ``on_change(snapshot)`` on every change."""

    def __init__(
        self,
        broker: BrokerConfig,
        tables: Sequence[str],
        on_change: Callable[[Snapshot], None],
        language: str = LANGUAGES[0],
    ) -> None:
        self.topics = {name: proto.Topics(name) for name in tables}
        self.snapshots = {name: Snapshot(name, fallback=language) for name in tables}
        self.on_change = on_change
        self._lock = threading.Lock()
        subs = [t for ts in self.topics.values() for t in (ts.public, ts.hub_status)]
        self.client = Client(
            broker, f"display-{random.getrandbits(32):x}", subs, on_connected=self._connected
        )
        self._thread = threading.Thread(target=self._run, name="display-feed", daemon=True)
        self._watch = threading.Thread(target=self._watch_link, name="display-link", daemon=True)
        self._stopping = threading.Event()

    def start(self) -> None:
        self.client.start()
        self._thread.start()
        self._watch.start()

    def stop(self) -> None:
        self._stopping.set()
        self.client.stop()
        self._thread.join(2)

    def _connected(self) -> None:
        # Retained messages follow at once; until then the last known state stays shown.
        self._set_broker(True)

    def _watch_link(self) -> None:
        """The broker link's ups and downs become "hub offline" on every page."""
        while not self._stopping.wait(0.2):
            if not self.client.connected.is_set():
                self._set_broker(False)

    def _set_broker(self, up: bool) -> None:
        for snap in self.snapshots.values():
            with self._lock:
                if snap.broker == up:
                    continue
                snap.broker = up
            self.on_change(snap)

    def _run(self) -> None:
        while (msg := self.client.inbox.get()) is not None:
            try:
                self._handle(msg.topic, msg.payload)
            except Exception:  # one bad message must not stop the display
                log.exception("display: could not show %s", msg.topic)

    def _handle(self, topic: str, payload: bytes) -> None:
        for name, t in self.topics.items():
            if topic not in (t.public, t.hub_status):
                continue
            data = json.loads(payload) if payload else {}
            if not isinstance(data, dict):
                return
            snap = self.snapshots[name]
            with self._lock:
                if topic == t.public:
                    snap.public = data
                    remember(snap.moments, data)
                else:
                    snap.status = data
                    if data.get("language") in LANGUAGES:
                        snap.heard = data["language"]
                snap.broker = True
            self.on_change(snap)
