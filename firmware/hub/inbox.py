"""The hub's mailbox, bounded, with a fair share for every sender.

The hub's broker connection and the panel feed one mailbox that the hub's thread works in
order (see :mod:`firmware.hub.service`). A station's credentials publishing at full speed
must not grow the hub without bound, nor put every other station and table behind its
backlog: each sender (a station, the host, by table) may have at most SHARE messages
waiting, and the mailbox at most LIMIT. Beyond that a message is dropped: acknowledged to
the broker (so a QoS 1 flood does not stall the connection's in-flight window) and
never answered (a message with no broker ack, QoS 0, has a smaller share); a real
station sends an unanswered input again. One log line per sender
every LOG_EVERY seconds says so. A sender dropped this way many times a second floods:
``on_flood`` is told (the links stop hearing that sender alone, see
:mod:`firmware.hub.links`), its messages still waiting are dropped too, and until the
links hear it again none of its messages get in, so
what the broker had already sent of the flood costs the hub's thread nothing while the
table's other seats are answered. The hub's own events (panel, timers, links) are never
dropped, and the writer's word that the store is durable (``Synced``) goes first in line.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from firmware.hub.events import Item, Synced
from firmware.hub.throttle import Throttle
from firmware.link.mqtt import Message

log = logging.getLogger(__name__)

#: Messages one sender (a table's station, its host) may have waiting for the hub: far
#: more than a real station ever has unanswered (it sends an input again under the same
#: id), so what it sends at QoS 1 is never dropped, even the backlog a restarted hub is
#: handed.
SHARE = 64
#: The same for QoS 0, which nothing of coffre sends (a flood, a stray client): no
#: in-flight window holds it back, and nobody sends it again.
SHARE_QOS0 = 8
#: Messages the mailbox holds at most, whoever sent them.
LIMIT = 4096
#: A sender with this many messages dropped within FLOOD_WINDOW seconds floods the hub:
#: ``on_flood`` is told (the hub's links then stop hearing that sender for a while). Few:
#: a real station never has its share waiting, and every message of a flood decoded
#: before the links stop it is one more the broker has queued ahead of the other seats.
FLOOD_DROPS = 20
FLOOD_WINDOW = 1.0
#: How long a sender that floods gets no share at all (seconds): as long as the hub's links
#: do not hear it (firmware.hub.links.MUTE_SECONDS). What the broker had sent of the flood
#: before then costs the hub a dropped message each, and none of its thread's work.
SHED_SECONDS = 10.0
#: Dropped messages' broker acks are told this many at once, or as soon as anything gets
#: in or is taken out (see FairInbox._drop).
ACK_BATCH = 128


def sender(topic: str) -> str:
    """Who a message comes from, as far as sharing goes: ``<table>/station/<id>`` for a
    station's topics, else the topic less its last level (``<table>/host``...)."""
    parts = topic.split("/")
    if len(parts) >= 4 and parts[2] == "station":
        return "/".join(parts[1:4])
    return "/".join(parts[1:-1]) or topic


class FairInbox(queue.Queue[Item | None]):
    """A FIFO mailbox that drops a sender's messages beyond its share (see the module)."""

    def __init__(
        self,
        share: int = SHARE,
        limit: int = LIMIT,
        share_qos0: int = SHARE_QOS0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.share, self.limit, self.share_qos0 = share, limit, share_qos0
        self.waiting: Counter[str] = Counter()
        self.dropped = 0
        self._throttle = Throttle()
        self._log_lock = threading.Lock()
        self.clock = clock
        #: Called (on the putting thread) with the topic of a message from a sender that
        #: floods (FLOOD_DROPS within FLOOD_WINDOW), once per such window.
        self.on_flood: Callable[[str], None] | None = None
        self._drops: dict[str, tuple[float, int]] = {}
        #: Senders that flood, each with when it gets a share again.
        self.shed: dict[str, float] = {}
        #: Broker acks of dropped messages not told yet (see _drop).
        self._held_acks: list[Callable[[], None]] = []
        self._ack_lock = threading.Lock()

    def put(self, item: Item | None, block: bool = True, timeout: float | None = None) -> None:
        if isinstance(item, Message):
            who = sender(item.topic)
            share = self.share if item.ack is not None else self.share_qos0
            with self.mutex:
                full = self.waiting[who] >= share or self._qsize() >= self.limit
                if who in self.shed and not full:
                    full = self.clock() < self.shed[who]
                    if not full:
                        del self.shed[who]
            if full:
                self._drop(item, who)
                return
        super().put(item, block, timeout)
        if self._held_acks:
            self._ack_held()

    def get(self, block: bool = True, timeout: float | None = None) -> Item | None:
        item = super().get(block, timeout)
        if self._held_acks:
            self._ack_held()
        return item

    def _put(self, item: Any) -> None:
        if isinstance(item, Message):
            self.waiting[sender(item.topic)] += 1
        elif isinstance(item, Synced):
            # First in line: it sends answers already durable, which should not wait for
            # the inputs that came after them to be handled.
            self.queue.appendleft(item)
            return
        super()._put(item)

    def _get(self) -> Any:
        item = super()._get()
        if isinstance(item, Message):
            who = sender(item.topic)
            self.waiting[who] -= 1
            if self.waiting[who] <= 0:
                del self.waiting[who]
        return item

    def _take_out(self, who: str) -> list[Message]:
        """Take ``who``'s messages out of the line (it floods): they would each cost the
        hub's thread an input handled, and every other seat waits behind them. Under the
        mutex."""
        mine = [m for m in self.queue if isinstance(m, Message) and sender(m.topic) == who]
        if mine:
            taken = set(map(id, mine))
            kept = [m for m in self.queue if id(m) not in taken]
            self.queue.clear()
            self.queue.extend(kept)
            self.waiting.pop(who, None)
        return mine

    def _ack_held(self) -> None:
        with self._ack_lock:
            acks, self._held_acks = self._held_acks, []
        for ack in acks:
            # A connection gone down meanwhile has nothing more to be told.
            with contextlib.suppress(Exception):
                ack()

    def _drop(self, item: Message, who: str) -> None:
        """Drop ``item``, and tell the broker it is handled, so its in-flight window stays
        open: ACK_BATCH at once, or sooner as soon as anything gets in or is taken out.
        One at a time, each PUBACK goes out in a write (a TLS record) of its own, and
        mosquitto reads one record from a client each time round its loop: while a flood
        kept it busy, the backlog of a flood was acked a few records a loop, and every
        answer of the hub waited behind hundreds of PUBACKs still unread."""
        self.dropped += 1
        if item.ack is not None:
            with self._ack_lock:
                self._held_acks.append(item.ack)
                full = len(self._held_acks) >= ACK_BATCH
            if full:
                self._ack_held()
        with self._log_lock:
            held = self._throttle.allow(who)
            now = self.clock()
            since, count = self._drops.get(who, (now, 0))
            if now - since > FLOOD_WINDOW:
                since, count = now, 0
            count += 1
            flooding = count == FLOOD_DROPS
            self._drops[who] = (since, count)
            if flooding:
                with self.mutex:
                    self.shed[who] = now + SHED_SECONDS
                    waiting = self._take_out(who)
                self.dropped += len(waiting)
                with self._ack_lock:
                    self._held_acks.extend(m.ack for m in waiting if m.ack is not None)
        if flooding and self.on_flood is not None:
            self.on_flood(item.topic)
        if held is not None:
            log.warning(
                "hub: %s sends faster than the hub answers: messages beyond its share of "
                "the hub's mailbox are dropped%s",
                who,
                f" (+{held} more)" if held else "",
            )
