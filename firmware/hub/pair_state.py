"""What a table's pairings hold while they wait, and how often its seats may be asked.

Data only, below the table's actor (:class:`~firmware.hub.actor.TableActor` keeps them);
the exchange itself is :mod:`firmware.hub.pairing`'s.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from firmware.link.limits import TokenBucket

#: Challenges a table gives at once (a first night: every seat asks together)...
TABLE_BURST = 8
#: ...then one every this many seconds.
TABLE_REFILL = 20.0


@dataclass
class Granting:
    """A grant sealed and written, waiting for the broker to take the new password."""

    user: str
    box: str
    done: threading.Event = field(default_factory=threading.Event)
    effective: bool = False


@dataclass
class Pending:
    """One station's pairing in progress."""

    session: str
    public: bytes
    commit: str
    hub_nonce: bytes
    expires: float
    ca: str
    #: Set once the station revealed its nonce: the four digits the host compares.
    code: str | None = None
    #: Since when the hub display shows this pairing (None: it does not).
    shown_at: float | None = None
    #: Set once the host said yes: the grant, sent when the broker takes its password.
    granting: Granting | None = None


@dataclass
class Guard:
    """How often a table's seats may be challenged: a cooldown per seat after a pairing
    that ended without a grant, and a token bucket for the whole table."""

    bucket: TokenBucket
    cool_until: dict[str, float] = field(default_factory=dict)

    @classmethod
    def since(cls, now: float) -> Guard:
        """A table's guard, its bucket full at ``now``."""
        return cls(TokenBucket(TABLE_BURST, TABLE_REFILL, now))

    def cooling(self, station: str, now: float) -> bool:
        return now < self.cool_until.get(station, -1.0)

    def take(self, now: float) -> bool:
        """One challenge from the table's bucket, if any is left."""
        return self.bucket.take(now)
