"""The hub's side of the host's console: a phone's request, shown on the glass, answered by
the host (docs/host-guide.md).

The display sends ``console`` (a :class:`~firmware.link.protocol.HostCommand` with the
code its phone shows) as the table's host user. The hub holds it, shows ``Console? 4721``
and answers that command's id on ``host/ack`` only when the request ends: ``Console
granted`` on the host's yes (the panel's ok once the request has been on the glass
:data:`SETTLE_SECONDS`, or ``console-ok 4721`` with the code the host compared), a
refusal otherwise (back, ``console-refuse``, :data:`REQUEST_SECONDS` without an answer,
two requests at once). The limits are the display's and the pairing's: one request per
table (a second refuses both), a cooldown after a request that ended without a grant,
a token bucket per table.

The hub holds no session: sessions are the display's (its cookies), so a grant is one
answer and nothing is stored. :class:`ConsoleRequests` is one table's state; it publishes
nothing itself, it calls the ``answer`` it is given (``hub.out.answer`` in the hub).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass

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
    """A request on the glass: the id to answer, the code, when it came."""

    id: str
    code: str
    born: float


@dataclass
class ConsoleRequests:
    """One table's console requests."""

    waiting: Waiting | None = None
    cool_until: float = 0.0
    tokens: float = float(BURST)
    at: float | None = None

    def title(self, now: float, answer: Answer) -> tuple[str, dict[str, str]] | None:
        """The glass's title while a request waits (``Console? {code}``)."""
        self.expire(now, answer)
        if self.waiting is None:
            return None
        return "Console? {code}", {"code": self.waiting.code}

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
        at = now if self.at is None else self.at
        self.tokens = min(float(BURST), self.tokens + (now - at) / REFILL)
        self.at = now
        if self.tokens < 1:
            answer(cmd_id, False, "Too many requests")
            return
        self.tokens -= 1
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
        if code is None and now - waiting.born < SETTLE_SECONDS:
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
