"""One table's console requests as data (the hub's side is :mod:`firmware.hub.console`):
held until the host answers, one per table, bound to its code, with the pairing's limits."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass

from firmware.link.lang import N_
from firmware.link.limits import TokenBucket

#: The answer that grants, word for word (the display grants on nothing else).
GRANTED = "Console granted"
REQUEST_SECONDS = 120.0
COOLDOWN = 30.0
BURST = 4
REFILL = 20.0
SETTLE_SECONDS = 1.5

Answer = Callable[[str, bool, str], None]


@dataclass
class Waiting:
    """A request on the glass: the id to answer, the code, when it came, since when the
    glass shows it (None: not yet, a pairing code or another table is on the glass)."""

    id: str
    code: str
    born: float
    shown_at: float | None = None


@dataclass
class ConsoleRequests:
    """One table's console requests."""

    waiting: Waiting | None = None
    cool_until: float = 0.0
    #: The table's requests, BURST at once then one every REFILL (from its first request).
    bucket: TokenBucket | None = None

    def title(self, now: float, answer: Answer) -> tuple[str, dict[str, str]] | None:
        """The glass's title while a request waits (``Console? {code}``)."""
        self.expire(now, answer)
        if self.waiting is None:
            return None
        if self.waiting.shown_at is None:
            self.waiting.shown_at = now
        return N_("Console? {code}"), {"code": self.waiting.code}

    def hidden(self) -> None:
        """The glass no longer shows the request (a pairing code came first, or the panel
        moved to another table): it settles again once it is back."""
        if self.waiting is not None:
            self.waiting.shown_at = None

    def ask(self, cmd_id: str, code: str, now: float, answer: Answer) -> None:
        """A display's ``console`` command; answered now if refused, else when it ends."""
        self.expire(now, answer)
        if now < self.cool_until:
            answer(cmd_id, False, "Too soon: wait")
            return
        if self.waiting is not None:
            if self.waiting.id == cmd_id:
                return  # the broker delivered it again: it still waits
            self._end(now, answer, "Two requests at once")
            answer(cmd_id, False, "Two requests at once")
            return
        if self.bucket is None:
            self.bucket = TokenBucket(BURST, REFILL, now)
        if not self.bucket.take(now):
            answer(cmd_id, False, "Too many requests")
            return
        self.waiting = Waiting(cmd_id, code, now)

    def ok(self, code: str | None, now: float, answer: Answer) -> tuple[bool, str]:
        """The host's yes: ``console-ok CODE`` (the code he compared), or the panel's ok
        (``code`` None: the request on the glass, once it has been there SETTLE_SECONDS)."""
        self.expire(now, answer)
        waiting = self.waiting
        if waiting is None:
            return False, "No console request waits"
        if code is not None and not hmac.compare_digest(waiting.code, code):
            return False, "The request shows another code"
        if code is None and (waiting.shown_at is None or now - waiting.shown_at < SETTLE_SECONDS):
            return False, "A new request: look at its code"
        self.waiting = None
        answer(waiting.id, True, GRANTED)
        return True, GRANTED

    def refuse(self, now: float, answer: Answer) -> tuple[bool, str]:
        """The host's no (back on the panel, ``console-refuse``)."""
        self.expire(now, answer)
        if self.waiting is None:
            return False, "No console request waits"
        self._end(now, answer, "Refused by the host")
        return True, "Console request refused"

    def expire(self, now: float, answer: Answer) -> None:
        if self.waiting is not None and now - self.waiting.born > REQUEST_SECONDS:
            self._end(now, answer, "Nobody answered")

    def _end(self, now: float, answer: Answer, why: str) -> None:
        assert self.waiting is not None
        answer(self.waiting.id, False, why)
        self.waiting = None
        self.cool_until = now + COOLDOWN
