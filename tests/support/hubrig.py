"""A hub without a broker: messages go in through ``Hub.submit``, publishes are recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from firmware.hub.config import TableConfig
from firmware.hub.events import Connected
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from hardware.keys import COLOURS, load_keyset

KEYS = load_keyset()
TABLE = "t"
T = proto.Topics(TABLE)
#: What a station's glass shows of a message (a refusal longer than this is unreadable).
SCREEN_CHARS = 63


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Rig:
    """One hub on a store, every publish recorded as (topic, decoded payload, retain)."""

    def __init__(
        self,
        tmp_path: Path,
        stations: tuple[str, ...] = ("p1", "p2", "p3"),
        clock: Callable[[], float] | None = None,
        **table: Any,
    ) -> None:
        self.tmp_path = tmp_path
        self.stations = stations
        self.config = TableConfig(TABLE, list(stations), **table)
        self.hub = Hub(
            BrokerConfig(port=1),
            [self.config],
            tmp_path / "hub.db",
            keys=KEYS,
            clock=clock or Clock(),
        )
        self.sent: list[tuple[str, Any, bool]] = []
        self.seq = 0
        self.commands = 0  # the host's command counter (a restarted hub's rig carries it)
        self.hub.client.publish = self._record  # type: ignore[method-assign]
        self.hub.actors[TABLE].state = "live"  # as if the claim probe had found it free
        # One claim for every rig: two rigs' traffic compares equal (it is no secret).
        self.hub.claim = self.hub.out.claim = proto.Claim(hub="rig", run="1", host="rig")

    def _record(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> Any:
        self.sent.append((topic, json.loads(payload) if payload else None, retain))
        return _Done()

    # --- driving ------------------------------------------------------------------

    def deliver(self, topic: str, payload: Any, *, retain: bool = False) -> None:
        raw = payload if isinstance(payload, bytes) else proto.encode(payload)
        self.hub.submit(Message(topic, raw, retain))

    def connected(self) -> None:
        """What the hub does when its broker connection comes (back) up."""
        self.hub.submit(Connected(TABLE))

    def host(self, cmd: str, **extra: Any) -> None:
        """A host command with an id no earlier command had (as the panel's count)."""
        self.commands += 1
        self.deliver(T.host_command, {"cmd": cmd, "id": f"h:{self.commands}", **extra})

    def start(self, players: int = 3, seed: int = 5, **extra: Any) -> None:
        self.host("start", game="secret-identity", players=players, seed=seed, **extra)

    def send(self, station: str, input_id: str | None = None, **fields: Any) -> dict[str, Any]:
        """One station input; returns the hub's ack to it."""
        if input_id is None:
            self.seq += 1
            input_id = f"rt{station.replace('-', '')}:{self.seq}"
        before = len(self.acks(station))
        self.deliver(T.station(station, "input"), {"id": input_id, **fields})
        acks = self.acks(station)
        assert len(acks) == before + 1, "the hub did not answer"
        ack: dict[str, Any] = acks[-1]
        return ack

    def tap(self, station: str, uid: str, input_id: str | None = None) -> dict[str, Any]:
        return self.send(station, input_id, kind="tag", uid=uid)

    def mystery(self, station: str, number: int) -> dict[str, Any]:
        return self.tap(station, KEYS.uid_for("mystery", None, number))

    def vote(self, voter: int, station: str, number: int) -> dict[str, Any]:
        return self.tap(station, KEYS.uid_for("vote", COLOURS[voter], number))

    def press(self, station: str) -> dict[str, Any]:
        return self.send(station, kind="press")

    def knob(self, station: str, step: int) -> dict[str, Any]:
        return self.send(station, kind="knob", step=step)

    # --- reading ------------------------------------------------------------------

    @property
    def table(self) -> Any:
        table = self.hub.actors[TABLE].table
        assert table is not None
        return table

    def acks(self, station: str) -> list[dict[str, Any]]:
        return [p for t, p, _ in self.sent if t == T.station(station, "ack")]

    def last(self, topic: str) -> Any:
        return [p for t, p, _ in self.sent if t == topic][-1]

    def public(self) -> dict[str, Any]:
        pub: dict[str, Any] = self.last(T.public)
        return pub

    def host_lines(self) -> list[str]:
        lines: list[str] = self.last(T.host_screen)["lines"]
        return lines

    def events(self) -> list[dict[str, Any]]:
        record = self.hub.actors[TABLE].record
        assert record is not None
        return self.hub.store.events(TABLE, record.game_no)

    def close(self) -> None:
        self.hub.store.close()


class _Done:
    """Stands for paho's MQTTMessageInfo."""

    rc = 0

    def wait_for_publish(self, timeout: float | None = None) -> None:
        return None


def prepare_all(rig: Rig, numbers: list[int], pictos: int = 1) -> None:
    """Every seat locks its mystery key and confirms ``pictos`` pictos."""
    for seat, number in enumerate(numbers):
        station = rig.stations[seat]
        assert rig.mystery(station, number)["ok"]
        for _ in range(pictos - 1):
            assert rig.knob(station, 1)["ok"]
        assert rig.press(station)["ok"]


def readable(message: str) -> bool:
    """A message a player can read on the glass: short, not empty, no traceback."""
    return bool(message) and len(message) <= SCREEN_CHARS and "Traceback" not in message


def voting_rig(tmp_path: Path, players: int = 3, **table: Any) -> Rig:
    """A table in round 1's vote phase, mystery keys 1..n, one picto each."""
    stations = tuple(f"p{i + 1}" for i in range(players))
    rig = Rig(tmp_path, stations, **table)
    rig.connected()
    rig.start(players)
    prepare_all(rig, list(range(1, players + 1)))
    assert rig.public()["view"]["phase"] == "vote"
    return rig
