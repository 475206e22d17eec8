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


class FakeWill(FakeData):
    """A will connection: made by the links (in place of firmware.link.mqtt.Client),
    connected when the test says so."""

    made: ClassVar[list[FakeWill]] = []

    def __init__(self, _broker: Any, client_id: str, _subs: Any, **kwargs: Any) -> None:
        super().__init__()
        self.connected.clear()
        self.client_id, self.kwargs = client_id, kwargs
        self.stopped = False
        FakeWill.made.append(self)

    def start(self) -> None:
        self.connected.set()
        self.kwargs["on_connected"]()

    def stop(self, **_kw: Any) -> None:
        self.stopped = True

    def confirm(self) -> None:
        """The broker answers its SUBSCRIBE."""
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
    FakeWill.made = []
    monkeypatch.setattr(links_module, "Client", FakeWill)
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


def test_the_other_stations_are_heard_and_answered_on_the_will_connection(
    rig: tuple[HubLinks, FakeData, list[Any]],
) -> None:
    """A station floods: the table's will connection (a clean session) subscribes the
    table's other stations; once the broker confirms, the shared connection drops them (the
    flood's backlog there no longer comes before them), and their answers go out on the
    will connection, everything else on the shared one. When the flooder is heard again the
    wildcard is back on the shared connection, and only once the broker confirms it does
    the will connection let the stations go."""
    hub, data, timers = rig
    link = hub.tables["a"]
    hub._open_will(link)
    [will] = FakeWill.made
    assert will.kwargs["clean_session"] and will.kwargs["manual_ack"]
    assert will.kwargs["inbox"] is hub.inbox
    link.publish("coffre/a/station/p2/ack", b"{}")
    assert data.calls[-1] == ("pub", ["coffre/a/station/p2/ack"]) and will.calls == []
    hub.mute("coffre/a/station/p1/input")
    assert will.calls == [("sub", ["coffre/a/station/p2/input", "coffre/a/station/p3/input"])]
    data.calls.clear()
    will.confirm()
    assert data.calls == [("unsub", ["coffre/a/station/p2/input", "coffre/a/station/p3/input"])]
    data.calls.clear()
    link.publish("coffre/a/station/p2/ack", b"{}")
    link.publish("coffre/a/station/p2/screen", b"{}", retain=True)
    assert will.calls[-1] == ("pub", ["coffre/a/station/p2/ack"])
    assert data.calls == [("pub", ["coffre/a/station/p2/screen"])]
    data.calls.clear()
    will.calls.clear()
    timers[0].fire()
    assert data.calls == [("sub", ["coffre/a/station/+/input"])] and will.calls == []
    hub._subscribed(1, [])  # the broker confirms the wildcard
    assert will.calls == [("unsub", ["coffre/a/station/p2/input", "coffre/a/station/p3/input"])]
    assert link.aside == set() and not will.stopped
    link.publish("coffre/a/station/p2/ack", b"{}")
    assert data.calls[-1] == ("pub", ["coffre/a/station/p2/ack"])


def test_a_will_connection_lost_gives_its_stations_back_to_the_shared_one(
    rig: tuple[HubLinks, FakeData, list[Any]],
) -> None:
    """The will connection drops: the stations it heard are subscribed on the shared
    connection again at once (nobody unheard while it reconnects), and asked of it again
    once it is back; a second flooder of the table is dropped from it, not added back to
    the shared one."""
    hub, data, _timers = rig
    link = hub.tables["a"]
    hub._open_will(link)
    [will] = FakeWill.made
    hub.mute("coffre/a/station/p1/input")
    will.confirm()
    hub.mute("coffre/a/station/p3/input")
    assert will.calls[-1] == ("unsub", ["coffre/a/station/p3/input"])
    data.calls.clear()
    will.calls.clear()
    will.connected.clear()
    will.kwargs["on_state"](LinkState("disconnected", "Broker lost"))
    assert data.calls == [("sub", ["coffre/a/station/p2/input"])]
    assert link.aside == set()
    will.start()  # back
    assert will.calls == [("sub", ["coffre/a/station/p2/input"])]
