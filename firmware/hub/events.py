"""What the hub's thread works on besides MQTT messages.

The hub has one mailbox (see :mod:`firmware.hub.service`). MQTT messages land in it from
the hub's broker connection; everything else that must happen on the hub's thread comes as one
of these typed events: from the panel's thread, the claim probe's, the connections'
callbacks, or the hub's own loop when time passes. Tests hand them to ``Hub.submit``.
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware.hub.claim import Verdict
from firmware.link.mqtt import Message


@dataclass(frozen=True)
class PanelPress:
    """A button of the host's panel (prev, next, ok, back, stop)."""

    button: str


@dataclass(frozen=True)
class ClaimDecided:
    """The ownership probe decided a table: this hub runs it, or leaves it alone."""

    verdict: Verdict


@dataclass(frozen=True)
class Connected:
    """A table's connection is (back) up and subscribed."""

    table: str


@dataclass(frozen=True)
class LinkChanged:
    """A connection of the hub changed state; ``table`` None: the claim probe's."""

    table: str | None


@dataclass(frozen=True)
class Denied:
    """The broker refused one of a table's subscriptions (SUBACK 0x80: its ACL)."""

    table: str


@dataclass(frozen=True)
class TimersDue:
    """Fire the table timers that are due (a countdown, a reveal delay); worked in a batch."""


@dataclass(frozen=True)
class Tick:
    """Time passed: redraw what shows it (a countdown's second, a note's end, the next page
    of a long host screen) and give up on a claim the broker never echoed. Worked after the
    batch, since it stores nothing."""


@dataclass(frozen=True)
class Synced:
    """The writer thread synced the store (``error``: the disk refused; see Store.sync)."""

    error: OSError | None = None


Event = PanelPress | ClaimDecided | Connected | LinkChanged | Denied | TimersDue | Tick | Synced
#: What the hub's mailbox holds.
Item = Message | Event
