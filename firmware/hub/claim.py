"""The ownership guard: a hub runs a table only when no other live hub does.

Every hub status a hub publishes (and its will, ``lost``) carries its :class:`Claim`: the
hub's broker identity, a run id new at every start and the machine's name. Before a hub
connects to a table with its persistent client id (which would kick off a hub sharing it)
or publishes anything there, :class:`ClaimProbe` reads the table's retained hub status
through a connection of its own with a random id and a clean session:

- no status, ``lost``, ``disconnected``, or a claim of this very hub (its last run): the
  table is free, at once;
- ``ready`` with another hub's claim: that hub may have died without a goodbye, so the
  probe waits for its will (the broker sends it 1.5 keepalives after the owner fell
  silent) and refuses the table if the claim is still live then;
- a subscription the broker refuses (SUBACK 0x80: its ACL does not let this hub's user
  on that table): refused.

A claim can outlive its hub: a broker restarted with its persistence while that hub was
away keeps its retained ``ready`` and never sends its will. The host who knows that hub is
gone for good starts this one with ``coffre hub --take-over TABLE``: the probe then hands
the table over at once (logged, naming the old claim), and the running hub ignores the
retained copy of that claim. Should the old hub be alive after all, its next status is a
live one and the two settle it as any claim race.

While a table runs, the hub watches its hub status too (see :mod:`firmware.hub.ownership`):
two hubs that claimed one table at the same moment settle it with :meth:`Claim.beats`,
the same answer on both sides, and a broker that never shows the hub its own claim (a
broker whose ACL silently drops what this hub writes) makes it leave the table.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, LinkState, Message

log = logging.getLogger(__name__)

#: The hub's keepalive on its connections, will connections included (seconds): a hub
#: that vanishes has its wills published within 1.5 times this, so another hub waits a
#: few seconds, not more.
HUB_KEEPALIVE = 3
#: Beyond 1.5 keepalives: how late the broker may notice (it checks about every second).
WILL_SLACK = 2.0
#: How long a running hub waits to see its own claim come back from the broker.
ECHO_SECONDS = 10.0
#: After another hub claimed a table this hub keeps, when it sends the table again (the
#: other hub's last screens may land after the first repaint; it has left by then).
REPAINT_SECONDS = 2.0

_SYNCED = "!synced"


def will_delay(claim: proto.Claim | None) -> float:
    """Seconds after which a vanished owner's will is surely out."""
    keepalive = claim.keepalive if claim is not None else 10  # an older hub: the default
    return 1.5 * keepalive + WILL_SLACK


def new_claim(hub: str, keepalive: int) -> proto.Claim:
    """This process's claim (a new run id every start)."""
    return proto.Claim(
        hub=hub, run=os.urandom(4).hex(), host=socket.gethostname()[:64], keepalive=keepalive
    )


@dataclass(frozen=True)
class Verdict:
    """What the probe found for one table: ``owner`` is None when the table is free."""

    table: str
    owner: proto.Claim | None = None
    #: The broker refused this hub's user on the table (its ACL).
    denied: bool = False
    #: Free because the host asked to take it over from this (stale) claim.
    taken_from: proto.Claim | None = None

    @property
    def free(self) -> bool:
        return self.owner is None and not self.denied

    def line(self) -> str:
        """Why the table is refused, for the log."""
        if self.denied:
            return (
                f"table {self.table}: the broker does not let this hub's user on it "
                "(see its ACL: coffre broker-config); this hub leaves it alone"
            )
        owner = self.owner
        who = f"hub {owner.hub} on {owner.host or '?'}" if owner else "another hub"
        if owner is not None and self.taken_from is not None:
            return (
                f"table {self.table}: {who}, which this hub was told to take it over from "
                "(--take-over), is alive after all and keeps it; this hub leaves it alone"
            )
        return (
            f"table {self.table}: {who} runs it (its claim is live); this hub leaves it "
            "alone (one hub per table: fix this hub's hub.toml, or stop the other hub; "
            f"if that hub is gone for good: coffre hub --take-over {self.table})"
        )


class ClaimProbe:
    """Reads the tables' hub statuses and decides each table (in a thread of its own).

    ``decided`` is called once per table, as soon as that table is decided (free tables
    at once, a contested one after the owner's will delay).
    """

    def __init__(
        self,
        broker: BrokerConfig,
        tables: list[str],
        me: proto.Claim,
        decided: Callable[[Verdict], None],
        clock: Callable[[], float] = time.monotonic,
        on_state: Callable[[LinkState], None] | None = None,
        take_over: Collection[str] = (),
    ) -> None:
        self.tables = tables
        self.take_over = set(take_over)
        self.me = me
        self.decided = decided
        self.clock = clock
        self.topics = {proto.Topics(t).hub_status: t for t in tables}
        self.denied: set[str] = set()
        self._first: int | None = None
        self._barrier: int | None = None
        self.client = Client(
            broker,
            f"coffre-probe-{os.urandom(6).hex()}",  # never the hub's: it kicks no one off
            list(self.topics),
            clean_session=True,
            on_subscribed=self._subscribed,
            qos=0,  # retained statuses come at once, outside the in-flight window
            on_state=on_state,  # the first connection's troubles, for the hub display
        )
        self._thread = threading.Thread(target=self._run, name="hub-claims", daemon=True)

    def start(self) -> None:
        self.client.start()
        self._thread.start()

    def stop(self) -> None:
        self.client.stop()
        self._thread.join(5)

    def _subscribed(self, mid: int, refused: list[str]) -> None:
        """In paho's thread. The first SUBACK; then one more SUBSCRIBE as a barrier: the
        broker sends a subscription's retained messages right after its SUBACK, so once the
        second SUBACK is here, every retained status is already in the inbox."""
        if mid == self._barrier:
            self.client.inbox.put(Message(_SYNCED, b""))
            return
        self.denied |= {self.topics[t] for t in refused}
        self._barrier = self.client.subscribe(list(self.topics)[:1])

    def _run(self) -> None:
        status: dict[str, proto.HubStatus | None] = {}
        while True:  # the retained statuses, until the barrier (the broker may be late)
            msg = self.client.inbox.get()
            if msg is None:
                return
            if msg.topic == _SYNCED:
                break
            status[self.topics[msg.topic]] = read_status(msg.payload)
        waiting: dict[str, tuple[float, proto.Claim]] = {}
        now = self.clock()
        for table in self.tables:
            owner = self._live_owner(status.get(table))
            if table in self.denied:
                self.decided(Verdict(table, denied=True))
            elif owner is None:
                self.decided(Verdict(table))
            elif table in self.take_over:
                log.warning(
                    "table %s: taking it over from hub %s on %s, as asked (--take-over): "
                    "its claim is left from a run that is gone",
                    table,
                    owner.hub,
                    owner.host,
                )
                self.decided(Verdict(table, taken_from=owner))
            else:
                waiting[table] = (now + will_delay(owner), owner)
                log.info(
                    "table %s: hub %s on %s claims it; waiting %.0f s for its will",
                    table,
                    owner.hub,
                    owner.host,
                    will_delay(owner),
                )
        while waiting:
            due = min(d for d, _ in waiting.values())
            try:
                msg = self.client.inbox.get(timeout=max(0.0, due - self.clock()))
            except queue.Empty:
                msg = Message(_SYNCED, b"")
            if msg is None:
                return
            found = self.topics.get(msg.topic)
            if found in waiting and self._live_owner(read_status(msg.payload)) is None:
                del waiting[found]
                self.decided(Verdict(found))
            for name, (when, owner) in list(waiting.items()):
                if self.clock() >= when:
                    del waiting[name]
                    self.decided(Verdict(name, owner=owner))
        self.client.stop()

    def _live_owner(self, status: proto.HubStatus | None) -> proto.Claim | None:
        """The claim of another hub that looks alive, else None."""
        if status is None or status.state != "ready":
            return None
        claim = status.claim or proto.Claim(hub="?", run="?", host="an older hub")
        return None if claim.hub == self.me.hub else claim


def read_status(payload: bytes) -> proto.HubStatus | None:
    """A hub status, or None for an empty or unreadable one (it claims nothing)."""
    if not payload:
        return None
    try:
        return proto.decode_hub_status(payload)
    except proto.ProtocolError:
        return None
