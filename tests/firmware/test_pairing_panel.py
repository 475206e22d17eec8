"""The panel's ok and back answer the pairing on the hub display, once it has been there
SETTLE_SECONDS: a hub driven in this process (no broker), two tables, its clock in hand."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from device.panel import MockPanel
from firmware.hub import pairing as hub_pairing
from firmware.hub import panel as host_panel
from firmware.hub.config import TableConfig
from firmware.hub.events import PanelPress
from firmware.hub.pairing import SETTLE_SECONDS, BrokerDoor
from firmware.hub.service import Hub
from firmware.link import pairing as pair
from firmware.link.mqtt import BrokerConfig, Message
from tests.support.hub import KEYS, Clock, claimed


def two_tables(tmp_path: Path, clock: Clock) -> tuple[Hub, list[tuple[str, Any]]]:
    """Tables a and b on one hub with a panel (it drives a) and a door to pair through."""
    tables = [TableConfig(name, ["p1", "p2", "p3"]) for name in ("a", "b")]
    (tmp_path / "broker").mkdir()
    hub = Hub(
        BrokerConfig(port=1),
        tables,
        tmp_path / "hub.db",
        keys=KEYS,
        clock=clock,
        panel=MockPanel(),
        door=BrokerDoor(tmp_path / "broker"),
    )
    sent: list[tuple[str, Any]] = []

    def publish(topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> Any:
        sent.append((topic, json.loads(payload) if payload else None))

    for actor in hub.actors.values():
        actor.client.publish = publish  # type: ignore[method-assign,union-attr]
    return claimed(hub), sent


def ask(hub: Hub, table: str, station: str, session: str) -> None:
    """A station's hello and reveal."""
    _, public = pair.keypair()
    nonce = os.urandom(16)
    topic = pair.enrol_topic(table, station, "request")
    hub.submit(Message(topic, pair.encode(pair.hello(session, public, nonce))))
    hub.submit(Message(topic, pair.encode(pair.reveal(session, nonce))))


@pytest.fixture(autouse=True)
def _broker_takes_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """No broker here: the new password counts as taken at once."""
    monkeypatch.setattr(hub_pairing, "login_works", lambda _config, _timeout: True)


def test_ok_on_a_code_just_shown_shows_it_and_a_later_ok_grants_it(tmp_path: Path) -> None:
    clock = Clock()
    hub, _sent = two_tables(tmp_path, clock)
    a = hub.actors["a"]
    ask(hub, "a", "p2", "s2")
    clock.now += SETTLE_SECONDS / 3
    hub.submit(PanelPress("ok"))
    assert a.pairing["p2"].granting is None  # shown, not granted
    clock.now += SETTLE_SECONDS
    hub.submit(PanelPress("ok"))
    granting = a.pairing["p2"].granting
    assert granting is not None and granting.user == "a.p2"


def test_a_table_switched_to_shows_its_code_before_ok_grants_it(tmp_path: Path) -> None:
    """Table b's request came while the panel drove table a: its code was never on the
    glass, so an ok just after switching to b shows it; only a later one grants."""
    clock = Clock()
    hub, _sent = two_tables(tmp_path, clock)
    b = hub.actors["b"]
    ask(hub, "b", "p1", "s1")
    clock.now += 10 * SETTLE_SECONDS  # the panel still drives a
    host_panel.switch(hub.ctx, hub.actors["a"], 1)
    assert hub.out.panel_actor is b
    clock.now += SETTLE_SECONDS / 3
    hub.submit(PanelPress("ok"))
    assert b.pairing["p1"].granting is None
    clock.now += SETTLE_SECONDS
    hub.submit(PanelPress("back"))
    assert "p1" not in b.pairing  # refused, the one shown


def test_ok_grants_the_request_shown_even_when_another_seat_asks_later(tmp_path: Path) -> None:
    """p2's code is on the display; p3 (later in seat order) reveals: the display still
    shows p2, and ok grants p2's request, not p3's."""
    clock = Clock()
    hub, _sent = two_tables(tmp_path, clock)
    a = hub.actors["a"]
    ask(hub, "a", "p2", "s2")
    clock.now += 2 * SETTLE_SECONDS
    ask(hub, "a", "p3", "s3")
    hub.submit(PanelPress("ok"))
    assert a.pairing["p2"].granting is not None
    assert a.pairing["p3"].granting is None
