"""The hub's mailbox: bounded, a fair share per sender, the hub's own events never dropped."""

from __future__ import annotations

import logging

import pytest

from firmware.hub.events import Synced, Tick
from firmware.hub.inbox import (
    ACK_BATCH,
    FLOOD_DROPS,
    FLOOD_WINDOW,
    SHED_SECONDS,
    FairInbox,
    sender,
)
from firmware.link.mqtt import Message


def test_senders_are_stations_and_hosts_by_table() -> None:
    """A station's input and status share one sender; the host is its table's own."""
    assert (
        sender("coffre/a/station/p1/input")
        == sender("coffre/a/station/p1/status")
        == ("a/station/p1")
    )
    assert sender("coffre/a/host/command") == "a/host"
    assert sender("coffre/b/station/p1/input") != sender("coffre/a/station/p1/input")


def test_a_flooding_sender_is_held_to_its_share_and_others_get_in(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Beyond its share a sender's messages are dropped (acked to the broker, one log line);
    once that makes it a flood, what it had waiting is dropped too; another station, the
    host and the hub's own events still get in."""
    now = [100.0]
    inbox = FairInbox(share=10, share_qos0=4, limit=100, clock=lambda: now[0])
    acked: list[int] = []

    def p1(n: int) -> Message:
        return Message("coffre/a/station/p1/input", b"%d" % n, ack=lambda: acked.append(n))

    with caplog.at_level(logging.WARNING):
        for n in range(10 + FLOOD_DROPS - 1):
            inbox.put(p1(n))
        assert inbox.qsize() == 10  # held to its share, not a flood yet
        for n in range(10 + FLOOD_DROPS - 1, 1000):
            inbox.put(p1(n))
        assert inbox.qsize() == 0  # a flood: its share is dropped too
        for _ in range(1000):
            inbox.put(Message("coffre/a/station/p2/input", b"q0"))  # QoS 0: no broker ack
    inbox.put(Message("coffre/b/station/p1/input", b"other", ack=lambda: None))
    inbox.put(Message("coffre/a/host/command", b"host", ack=lambda: None))
    for _ in range(200):
        inbox.put(Tick())
    assert inbox.qsize() == 2 + 200
    assert sorted(acked) == list(range(1000))  # every one told to the broker
    assert inbox.dropped == 1000 + 1000
    assert len([r for r in caplog.records if "faster than" in r.message]) == 2  # one per sender
    items = [inbox.get_nowait() for _ in range(inbox.qsize())]
    assert [m.payload for m in items if isinstance(m, Message)] == [b"other", b"host"]
    assert inbox.waiting == {}
    inbox.put(Message("coffre/a/station/p1/input", b"again", ack=lambda: None))
    assert inbox.qsize() == 0  # shed for a while
    now[0] += SHED_SECONDS + 0.1
    inbox.put(Message("coffre/a/station/p1/input", b"again", ack=lambda: None))
    assert inbox.qsize() == 1  # then its share is back


def test_the_mailbox_holds_at_most_its_limit_of_messages() -> None:
    """Many senders at once: no more than the limit wait, whoever sent them."""
    inbox = FairInbox(share=10, limit=50)
    for station in range(30):
        for _ in range(10):
            inbox.put(Message(f"coffre/a/station/s{station}/input", b"x", ack=lambda: None))
    assert inbox.qsize() == 50


def test_a_sender_dropped_often_within_a_second_is_told_as_a_flood_once() -> None:
    """FLOOD_DROPS drops within FLOOD_WINDOW: on_flood hears the topic once; a sender
    dropped as often but slowly is no flood; after the window it may be told again."""
    now = [100.0]
    inbox = FairInbox(share=1, share_qos0=1, clock=lambda: now[0])
    told: list[str] = []
    inbox.on_flood = told.append
    for n in range(FLOOD_DROPS * 3):
        inbox.put(Message("coffre/a/station/p1/input", b"%d" % n))
    assert told == ["coffre/a/station/p1/input"]
    for _ in range(FLOOD_DROPS * 2):  # one drop every 0.1 s: a busy sender, no flood
        now[0] += 0.1
        inbox.put(Message("coffre/b/station/p2/input", b"x"))
    assert told == ["coffre/a/station/p1/input"]
    now[0] += FLOOD_WINDOW + 1
    for _ in range(FLOOD_DROPS):
        inbox.put(Message("coffre/a/station/p1/input", b"x"))
    assert told == ["coffre/a/station/p1/input"] * 2


def test_the_writers_word_goes_first_in_line() -> None:
    """A Synced put behind waiting inputs comes out before them (it sends answers already
    durable); everything else keeps its order."""
    inbox = FairInbox()
    first, second = (
        Message("coffre/t/station/p1/input", b"1"),
        Message("coffre/t/host/command", b"2"),
    )
    inbox.put(first)
    inbox.put(Tick())
    inbox.put(second)
    inbox.put(Synced(None))
    assert [inbox.get_nowait() for _ in range(4)] == [Synced(None), first, Tick(), second]


def test_a_flooding_sender_gets_no_share_until_it_is_heard_again() -> None:
    """Once told as a flood, a sender's messages are all dropped (acked) for SHED_SECONDS,
    even with its share free; other senders of its table still get in; then it is let in."""
    now = [100.0]
    inbox = FairInbox(share=4, share_qos0=4, clock=lambda: now[0])
    inbox.on_flood = lambda _topic: None
    for n in range(4 + FLOOD_DROPS):
        inbox.put(Message("coffre/a/station/p1/input", b"%d" % n))
    while inbox.qsize():
        inbox.get_nowait()
    acked: list[bytes] = []
    inbox.put(Message("coffre/a/station/p1/input", b"late", ack=lambda: acked.append(b"late")))
    inbox.put(Message("coffre/a/station/p2/input", b"other"))
    assert acked == [b"late"] and [m.payload for m in [inbox.get_nowait()]] == [b"other"]
    now[0] += SHED_SECONDS + 0.1
    inbox.put(Message("coffre/a/station/p1/input", b"back"))
    assert inbox.qsize() == 1 and inbox.shed == {}


def test_dropped_messages_are_acked_to_the_broker_in_batches() -> None:
    """A flood's dropped messages are told to the broker ACK_BATCH at a time (so their
    PUBACKs go out together); the rest as soon as anything gets in or is taken out, so the
    broker's in-flight window never keeps them."""
    inbox = FairInbox(share=0, limit=100)
    inbox.on_flood = lambda _topic: None
    acked: list[int] = []
    for n in range(ACK_BATCH * 2 + 5):
        inbox.put(Message("coffre/a/station/p1/input", b"x", ack=lambda n=n: acked.append(n)))
    assert acked == list(range(ACK_BATCH * 2))
    inbox.put(Tick())
    assert acked == list(range(ACK_BATCH * 2 + 5))
    inbox.put(Message("coffre/a/station/p1/input", b"x", ack=lambda: acked.append(-1)))
    assert acked[-1] != -1
    inbox.get_nowait()
    assert acked[-1] == -1
