"""One table's console requests as data (the hub's side is :mod:`firmware.hub.console`):
held until the host answers, one per table, bound to its code, with the pairing's limits;
and the display's signed-in phones as it last reported them, with the ones the host ends.

The sessions are the display's (its cookies): the hub hears of them through the display's
``console-report``, which it holds as it holds a request, and answers when the host ends
one (``end a1b2c3d4``, at once) or after :data:`HOLD_SECONDS` (nothing to end: the display
reports again). So the host can list and end the phones from the hub without the hub
being able to reach the display any other way than answering its commands.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass, field

from firmware.link.lang import N_
from firmware.link.limits import TokenBucket

#: The answer that grants, word for word (the display grants on nothing else).
GRANTED = "Console granted"
REQUEST_SECONDS = 120.0
COOLDOWN = 30.0
BURST = 4
REFILL = 20.0
SETTLE_SECONDS = 1.5
#: A display's report of its sessions is answered at the latest after this long.
HOLD_SECONDS = 60.0
#: The list is the display's while its reports keep coming (a display that stopped has
#: no sessions the hub can speak of).
FRESH_SECONDS = HOLD_SECONDS + 30.0
#: Session ids one answer names (an answer is one short line).
ENDS_PER_ANSWER = 6

Answer = Callable[[str, bool, str], None]


@dataclass
class Waiting:
    """A request on the glass: the id to answer, the code, when it came, since when the
    glass shows it (None: not yet, a pairing code or another table is on the glass)."""

    id: str
    code: str
    born: float
    shown_at: float | None = None


@dataclass(frozen=True)
class Phone:
    """One signed-in phone as the display reported it (times: the display's wall clock)."""

    id: str
    label: str
    born: float
    seen: float


@dataclass
class ConsoleRequests:
    """One table's console requests, and the display's signed-in phones."""

    waiting: Waiting | None = None
    cool_until: float = 0.0
    #: The table's requests, BURST at once then one every REFILL (from its first request).
    bucket: TokenBucket | None = None
    #: The phones of the display's last report, and when it came (the hub's clock).
    phones: list[Phone] = field(default_factory=list)
    heard: float | None = None
    #: The report held for its answer: its command id and when it came.
    held: tuple[str, float] | None = None
    #: Sessions the host ended that the display has not been told of yet.
    ending: set[str] = field(default_factory=set)

    # --- the display's sessions ------------------------------------------------------

    def signed_in(self, now: float) -> list[Phone]:
        """The phones signed in, as the display last said (none once it stopped saying)."""
        if self.heard is None or now - self.heard > FRESH_SECONDS:
            return []
        return [p for p in self.phones if p.id not in self.ending]

    def reported(self, cmd_id: str, phones: list[Phone], now: float, answer: Answer) -> None:
        """The display's list; held for its answer (a newer report answers the older)."""
        if self.held is not None and self.held[0] != cmd_id:
            answer(self.held[0], True, "")
        self.phones, self.heard, self.held = phones, now, (cmd_id, now)
        self.ending &= {p.id for p in phones}
        if self.ending:
            self._tell(answer)

    def end(self, which: str, now: float, answer: Answer) -> tuple[bool, str]:
        """The host ends one phone's session (its id) or ``all``; the display is told at
        once if its report is held, else at its next one (it reports again at once)."""
        ids = {p.id for p in self.signed_in(now)}
        chosen = ids if which == "all" else {which} & ids
        if not chosen:
            return False, "No phone is signed in" if which == "all" else "No such phone"
        self.ending |= chosen
        if self.held is not None:
            self._tell(answer)
        return True, "Phone signed out" if len(chosen) == 1 else "Phones signed out"

    def release(self, now: float, answer: Answer) -> None:
        """A report held HOLD_SECONDS is answered (nothing to end): the display reports again."""
        if self.held is not None and now - self.held[1] > HOLD_SECONDS:
            answer(self.held[0], True, "")
            self.held = None

    def _tell(self, answer: Answer) -> None:
        assert self.held is not None
        told = sorted(self.ending)[:ENDS_PER_ANSWER]
        answer(self.held[0], True, "end " + " ".join(told))
        self.held = None
        self.ending -= set(told)
        self.phones = [p for p in self.phones if p.id not in told]

    # --- requests --------------------------------------------------------------------

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
