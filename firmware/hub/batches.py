"""The hub's batches: items worked in one store transaction, what they send held back until
the store is durable, and what a failed transaction takes back.

Whatever waits in the mailbox (up to the service's MAX_BATCH, for at most
:data:`BATCH_SECONDS` of handling) is handled in one store transaction, so one fsync pays
for all of it. Only after that commit is durable are the screens published, the answers
sent, and the messages acknowledged to the broker (paho's manual acks), so a crash loses
nothing that was answered and the broker delivers again what was not. If the store fails,
the batch is rolled back, the tables it touched are rebuilt from the store, and every input
that would have been acked ok is answered "not saved" instead.

The fsync is the writer thread's (:mod:`~firmware.hub.store_writer`): a committed batch
waits here (:class:`Unsynced`, in order, with whatever the hub sends after it, a
countdown's redraw included) until the store's count of synced commits covers it.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from firmware.hub import moves
from firmware.hub.context import Batch, HubContext
from firmware.hub.events import Item
from firmware.hub.inputs import say
from firmware.hub.moves import NOT_SAVED, STORE_ERRORS
from firmware.hub.publish import Held
from firmware.hub.throttle import line
from firmware.link import protocol as proto
from firmware.link.mqtt import Message

log = logging.getLogger(__name__)

#: A transaction takes no more messages once its handling took this long (seconds): after
#: a disk stall, the oldest waiting inputs are answered first, not after the whole backlog.
BATCH_SECONDS = 0.01


@dataclass
class Unsynced:
    """What the hub sends once the store is durable up to ``commit``, in order: the held
    screens and answers, then the broker's acks of the messages handled."""

    commit: int
    held: list[Held]
    messages: list[Message]


class Batches:
    """Runs batches in store transactions and sends what they held once it is durable.

    ``burst``: the shared connection's burst (what goes out together, see
    :meth:`Client.burst <firmware.link.mqtt.Client.burst>`)."""

    def __init__(self, ctx: HubContext, burst: Callable[[], AbstractContextManager[None]]) -> None:
        self.ctx = ctx
        self.burst = burst
        #: Committed batches whose sending waits for a sync, oldest first.
        self.unsynced: deque[Unsynced] = deque()

    def guarded(self, step: Callable[..., None], *args: Any) -> None:
        """Run one step; a bug or a failing disk must not take the tables down."""
        try:
            step(*args)
        except Exception as exc:
            name = getattr(step, "__name__", "a step")
            held = self.ctx.throttle.allow((name, type(exc)))
            if held == 0:
                log.exception("hub: %s failed", name)
            elif held is not None:
                log.error("hub: %s failed: %s (+%d more)", name, line(exc), held)

    def run(self, items: list[Item], handle: Callable[[Batch, Item], None]) -> list[Item]:
        """Handle items in one transaction; returns those left when the store broke."""
        store, out = self.ctx.store, self.ctx.out
        batch = Batch()
        out.hold()
        try:
            store.begin()
        except STORE_ERRORS as exc:
            # Not even a transaction: each write tries (and fails, and answers) on its own.
            self.store_trouble(exc)
            for item in items:
                self.guarded(handle, batch, item)
            self.finish(items)
            return []
        done = 0
        deadline = time.perf_counter() + BATCH_SECONDS
        try:
            for item in items:
                done += 1
                self.guarded(handle, batch, item)
                if batch.broken is not None:
                    raise batch.broken
                if time.perf_counter() > deadline:
                    break
                # What the writer made durable meanwhile goes out now, not after this batch
                # (after a stall, a batch may take its whole BATCH_SECONDS).
                self.send_synced()
            store.commit()
        except STORE_ERRORS as exc:
            store.rollback()
            self.store_trouble(exc)
            self.undo(batch)
        except BaseException:
            store.rollback()
            out.release(paint=False)
            raise
        self.finish(items[:done])
        return items[done:]

    def undo(self, batch: Batch) -> None:
        """The batch was rolled back: rebuild its tables from the store, take back its oks."""
        out = self.ctx.out
        kept = []
        for item in out.release(paint=False):
            if isinstance(item.payload, proto.Ack):
                if item.payload.ok:
                    message = say(item.actor, NOT_SAVED)
                    item.payload = proto.Ack(item.payload.id, False, message)
                kept.append(item)
            elif item.actor.config.name not in batch.touched:
                kept.append(item)
        out.held = kept
        for actor in batch.touched.values():
            actor.table, actor.record, actor.timer_due = None, None, None
            actor.published.clear()  # what was held for it is dropped: send all again
            self.guarded(moves.resume, self.ctx, actor)
            out.note(actor, NOT_SAVED)
            self.guarded(out.all, actor)

    def finish(self, handled: list[Item]) -> None:
        """After the commit: what was held (screens, then answers, in order), then broker
        acks, once the store is durable up to this commit (see :meth:`send_synced`)."""
        held = self.ctx.out.release()
        waiting = {id(m) for a in self.ctx.actors.values() for m in a.held_inputs}
        messages = [  # not what a table being taken over holds (ownership.hold)
            item for item in handled if isinstance(item, Message) and id(item) not in waiting
        ]
        self.unsynced.append(Unsynced(self.ctx.store.written, held, messages))
        self.send_synced()  # at once if the batch wrote nothing and nothing waits before it

    def send_synced(self) -> None:
        """Send, in order, what every batch the store has made durable held (in one burst)."""
        store = self.ctx.store
        if not self.unsynced or self.unsynced[0].commit > store.synced:
            return
        with self.burst():
            while self.unsynced and self.unsynced[0].commit <= store.synced:
                done = self.unsynced.popleft()
                for held in done.held:
                    self.guarded(self.send_held, held)
                for message in done.messages:
                    self.guarded(message.done)

    def ticked(self, tick: Callable[[], list[Item]]) -> list[Item]:
        """Run the tick; what it sends waits behind the batches not yet durable (a screen
        it redraws may show what they did). Returns what a table taken over held."""
        if not self.unsynced:
            return self._guarded_tick(tick)
        self.ctx.out.hold()
        try:
            released = self._guarded_tick(tick)
        finally:
            held = self.ctx.out.release()
        self.unsynced[-1].held += held
        return released

    def _guarded_tick(self, run: Callable[[], list[Item]]) -> list[Item]:
        released: list[Item] = []

        def tick() -> None:
            released.extend(run())

        self.guarded(tick)
        return released

    def send_held(self, item: Held) -> None:
        client = item.actor.client
        if client is None or item.actor.state != "live":
            return  # the table was refused in this batch: nothing more goes out on it
        client.publish(item.topic, item.encoded(), retain=item.retain, qos=item.qos)

    def store_trouble(self, exc: BaseException) -> None:
        self.ctx.throttle.warning(("store", type(exc)), f"hub: store failed: {line(exc)}")
