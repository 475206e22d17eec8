"""The hub's links stop hearing a flooding sender alone: a station is cut out of its
table's wildcard subscription (the table's other stations stay subscribed throughout),
any other subscription is muted whole; both are heard again after MUTE_SECONDS. Meanwhile
the table's other stations are heard, and answered, on a side connection of its own."""

from __future__ import annotations

import queue
import threading
from typing import Any, ClassVar

import pytest

from firmware.hub import links as links_module
from firmware.hub.links import HubLinks
from firmware.link.mqtt import BrokerConfig, LinkState, Will

TOPICS = [
    "coffre/a/station/+/input",
    "coffre/a/station/+/status",
    "coffre/a/host/command",
]


class FakeData:
    """The shared connection as far as subscriptions go: what was asked, in order."""

    def __init__(self) -> None:
        self.connected = threading.Event()
        self.connected.set()
        self.calls: list[tuple[str, list[str]]] = []

    def subscribe(self, topics: list[str]) -> int:
        self.calls.append(("sub", list(topics)))
        return 1

    def unsubscribe(self, topics: list[str]) -> None:
        if topics:
            self.calls.append(("unsub", list(topics)))

    def publish(self, topic: str, payload: bytes, **_kw: Any) -> None:
        self.calls.append(("pub", [topic]))


class FakeSide(FakeData):
    """A side connection: made by the links (in place of firmware.link.mqtt.Client), not
    connected until the test says so."""

    made: ClassVar[list[FakeSide]] = []

    def __init__(self, _broker: Any, client_id: str, _subs: Any, **kwargs: Any) -> None:
        super().__init__()
        self.connected.clear()
        self.client_id, self.kwargs = client_id, kwargs
        self.started = self.stopped = False
        FakeSide.made.append(self)

    def start(self) -> None:
        self.started = True

    def stop(self, **_kw: Any) -> None:
        self.stopped = True

    def up(self) -> None:
        """Connected, and the broker answers its SUBSCRIBE."""
        self.connected.set()
        self.kwargs["on_connected"]()
        self.kwargs["on_subscribed"](1, [])


@pytest.fixture
def rig(monkeypatch: pytest.MonkeyPatch) -> tuple[HubLinks, FakeData, list[Any]]:
    timers: list[Any] = []

    class Timer:
        def __init__(self, _delay: float, fn: Any, args: tuple[Any, ...]) -> None:
            self.fire = lambda: fn(*args)
            self.daemon = False
            timers.append(self)

        def start(self) -> None:
            pass

    monkeypatch.setattr(links_module.threading, "Timer", Timer)
    hub = HubLinks(BrokerConfig(port=1), "hub", queue.Queue(), will_id=lambda n: n)
    data = FakeData()
    hub.data = data  # type: ignore[assignment]
    FakeSide.made = []
    monkeypatch.setattr(links_module, "Client", FakeSide)
    link = hub.table("a", TOPICS, Will("coffre/a/hub/status", b"lost"), ["p1", "p2", "p3"])
    link.joined = True
    return hub, data, timers


def test_a_flooding_station_is_cut_out_of_its_tables_wildcard_alone(
    rig: tuple[HubLinks, FakeData, list[Any]],
) -> None:
    """The other stations' topics are subscribed before the wildcard is dropped; the status
    wildcard and the host stay as they are; after the timer the wildcard comes back first."""
    hub, data, timers = rig
    hub.mute("coffre/a/station/p1/input")
    assert data.calls == [
        ("sub", ["coffre/a/station/p2/input", "coffre/a/station/p3/input"]),
        ("unsub", ["coffre/a/station/+/input"]),
    ]
    hub.mute("coffre/a/station/p1/input")  # told again while muted: nothing more
    assert len(data.calls) == 2 and len(timers) == 1
    hub.mute("coffre/a/station/p3/input")  # a second station floods: it goes too
    assert data.calls[2:] == [("unsub", ["coffre/a/station/p3/input"])]
    data.calls.clear()
    timers[0].fire()  # p1 is heard again; p3 still not
    assert data.calls == [
        ("sub", ["coffre/a/station/p1/input"]),
    ]
    data.calls.clear()
    timers[1].fire()
    assert data.calls == [
        ("sub", ["coffre/a/station/+/input"]),
        ("unsub", ["coffre/a/station/p1/input", "coffre/a/station/p2/input"]),
    ]


def test_a_flooded_host_subscription_is_muted_whole(
    rig: tuple[HubLinks, FakeData, list[Any]],
) -> None:
    hub, data, timers = rig
    hub.mute("coffre/a/host/command")
    assert data.calls == [("unsub", ["coffre/a/host/command"])]
    timers[0].fire()
    assert data.calls[1:] == [("sub", ["coffre/a/host/command"])]


def test_a_new_connection_hears_everyone_and_drops_what_a_flood_narrowed(
    rig: tuple[HubLinks, FakeData, list[Any]],
) -> None:
    """Reconnected: the table's own subscriptions, and every narrowed topic dropped (the
    persistent session may keep them, even a dead hub's); a late timer changes nothing."""
    hub, data, timers = rig
    hub.mute("coffre/a/station/p1/input")
    data.calls.clear()
    hub._open_will = lambda link: None  # type: ignore[method-assign]
    hub._data_up()
    assert data.calls[0] == ("sub", TOPICS)
    dropped = data.calls[1]
    assert dropped[0] == "unsub" and "coffre/a/station/p2/input" in dropped[1]
    assert "coffre/a/station/p3/status" in dropped[1]
    data.calls.clear()
    timers[0].fire()
    assert data.calls == []


def test_the_other_stations_are_heard_and_answered_on_a_side_connection(
    rig: tuple[HubLinks, FakeData, list[Any]],
) -> None:
    """A station floods: a side connection (a clean session) subscribes the table's other
    stations; once the broker confirms, the shared connection drops them (the flood's
    backlog there no longer comes before them), and their answers go out on the side
    connection, everything else on the shared one. When the flooder is heard again the
    wildcard is back on the shared connection, and only once the broker confirms it does
    the side connection close."""
    hub, data, timers = rig
    link = hub.tables["a"]
    hub.mute("coffre/a/station/p1/input")
    [side] = FakeSide.made
    assert side.started and side.kwargs["clean_session"] and side.kwargs["manual_ack"]
    assert side.client_id == "a-side"
    data.calls.clear()
    side.up()
    assert side.calls == [("sub", ["coffre/a/station/p2/input", "coffre/a/station/p3/input"])]
    assert data.calls == [("unsub", ["coffre/a/station/p2/input", "coffre/a/station/p3/input"])]
    data.calls.clear()
    link.publish("coffre/a/station/p2/ack", b"{}")
    link.publish("coffre/a/station/p2/screen", b"{}", retain=True)
    assert side.calls[-1] == ("pub", ["coffre/a/station/p2/ack"])
    assert data.calls == [("pub", ["coffre/a/station/p2/screen"])]
    data.calls.clear()
    timers[0].fire()
    assert data.calls == [("sub", ["coffre/a/station/+/input"])] and not side.stopped
    hub._subscribed(1, [])  # the broker confirms the wildcard
    assert side.stopped and link.side is None and link.aside == set()
    link.publish("coffre/a/station/p2/ack", b"{}")
    assert data.calls[-1] == ("pub", ["coffre/a/station/p2/ack"])


def test_a_side_connection_lost_gives_its_stations_back_to_the_shared_one(
    rig: tuple[HubLinks, FakeData, list[Any]],
) -> None:
    """The side connection drops: the stations it heard are subscribed on the shared
    connection again at once (nobody unheard while it reconnects); a second flooder of the
    table is dropped from the side connection, not added back to the shared one."""
    hub, data, _timers = rig
    hub.mute("coffre/a/station/p1/input")
    [side] = FakeSide.made
    side.up()
    hub.mute("coffre/a/station/p3/input")
    assert side.calls[-1] == ("unsub", ["coffre/a/station/p3/input"])
    data.calls.clear()
    side.connected.clear()
    side.kwargs["on_state"](LinkState("disconnected", "Broker lost"))
    assert data.calls == [("sub", ["coffre/a/station/p2/input"])]
    assert hub.tables["a"].aside == set()
