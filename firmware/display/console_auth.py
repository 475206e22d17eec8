"""Who may use the host's console: requests, the host's yes, sessions, and every write's checks.

A phone asks for a session on one table. The console page shows a four-digit code and
the hub's glass shows the same (``Console? 4721``); the host's ok on the panel (or
``coffre host --table T console-ok 4721``) grants that one request. The limits are the
pairing's (docs/pairing.md), per table rather than per seat, since the thing asked for
is the table's console:

- one request waits per table; a second while it waits refuses both, so nobody can slip
  a request in under a code the host is about to confirm;
- after a request ends without a grant (refused, expired, two requests) the table takes
  no request for :data:`COOLDOWN` seconds;
- a table takes at most :data:`BURST` requests at once, then one every :data:`REFILL`;
- a grant names the code the host compared and lands only on a request that has been
  shown for :data:`SETTLE_SECONDS` (a request that appeared under the host's finger is
  only shown).

The code is a comparison aid, not a secret: the request is picked up by the browser that
made it, through a 256-bit secret in its own cookie, so knowing or guessing a code gets
nothing. A granted request becomes a session: a random 256-bit token in an HttpOnly,
SameSite=Strict cookie, kept here only as its SHA-256, bound to the client address that
asked, ending after :data:`IDLE_SECONDS` unused or :data:`LIFE_SECONDS` in all, and at
once when revoked. Every write carries the session's CSRF token and a fresh nonce (it
becomes the host command's id, which the hub deduplicates too): a replayed write is
refused here before it reaches the hub.

Everything lives in the display's memory: a restarted display forgets every session and
request (phones ask again), and writes nothing to disk.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from firmware.link.lang import N_
from firmware.link.limits import TokenBucket

#: A request waits this long for the host's yes.
REQUEST_SECONDS = 120.0
#: After a request ends without a grant, the table takes none for this long.
COOLDOWN = 30.0
#: Requests a table takes at once, then one per REFILL seconds.
BURST = 4
REFILL = 20.0
#: A grant lands only on a request shown at least this long.
SETTLE_SECONDS = 1.5
#: A session ends after this long unused, or this long after it was granted.
IDLE_SECONDS = 3600.0
LIFE_SECONDS = 12 * 3600.0
#: Sessions kept per table (the oldest goes first): a host, a co-host, a tablet.
SESSIONS_PER_TABLE = 8
#: Nonces remembered per session (a write's nonce is refused once seen).
NONCES_KEPT = 4096
#: A write's nonce: what a browser's crypto.randomUUID() gives, or any 16-64 URL-safe chars.
NONCE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


class Refused(Exception):
    """A request, grant or write refused; the message is the one line shown."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Request:
    """One phone's request for a table's console."""

    table: str
    code: str
    address: str
    secret_hash: str
    born: float
    #: waiting, granted, refused, expired, two (two requests at once), taken (picked up)
    state: str = "waiting"
    #: Why it was refused, as the hub said it (empty: the state says it).
    why: str = ""

    @property
    def id(self) -> str:
        """A name for the request that is no credential (logs, the hub's glass)."""
        return self.secret_hash[:8]


@dataclass
class Session:
    """One granted phone: what the console lists (never its token)."""

    id: str
    table: str
    address: str
    token_hash: str
    csrf: str
    born: float
    #: The last write or page load (what keeps the session alive).
    used: float
    label: str = ""
    #: The last time this session read anything, its page's refreshes too (what the
    #: console lists as "last seen"; it does not keep the session alive).
    seen: float = 0.0
    #: The language this session chose ("": the table's).
    language: str = ""
    nonces: OrderedDict[str, None] = field(default_factory=OrderedDict)


class ConsoleDoor:
    """Requests and sessions of every table a display serves (one web thread uses it)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.pending: dict[str, Request] = {}
        #: Ended requests, by secret hash, until their browser reads how they ended.
        self.ended: dict[str, Request] = {}
        self.cool_until: dict[str, float] = {}
        self.buckets: dict[str, TokenBucket] = {}
        self.sessions: dict[str, Session] = {}  # by token hash

    # --- requests -----------------------------------------------------------------------

    def ask(self, table: str, address: str) -> tuple[Request, str]:
        """A new request and the secret its browser keeps; :class:`Refused` if the limits say no."""
        now = self.clock()
        self._expire(table, now)
        for digest, ended in list(self.ended.items()):
            if now - ended.born > 2 * REQUEST_SECONDS:
                del self.ended[digest]  # its browser never came back to read how it ended
        if now < self.cool_until.get(table, 0.0):
            raise Refused(N_("Too soon: wait a little and ask again"))
        waiting = self.pending.get(table)
        if waiting is not None:
            self._end(waiting, "two", now)
            raise Refused(N_("Two requests at once: both refused"))
        bucket = self.buckets.setdefault(table, TokenBucket(BURST, REFILL, now))
        if not bucket.take(now):
            raise Refused(N_("Too many requests: wait a little"))
        secret = secrets.token_urlsafe(32)
        code = f"{secrets.randbelow(10_000):04d}"
        request = Request(table, code, address, _digest(secret), now)
        self.pending[table] = request
        return request, secret

    def shown(self, table: str) -> Request | None:
        """The request the hub's glass shows for a table, if one waits."""
        self._expire(table, self.clock())
        return self.pending.get(table)

    def grant(self, table: str, code: str) -> str:
        """The host's yes for the request with this code; the one line for the host."""
        now = self.clock()
        self._expire(table, now)
        request = self.pending.get(table)
        if request is None:
            raise Refused(N_("No console request waits"))
        if not hmac.compare_digest(request.code, code):
            raise Refused(N_("The request shows another code: not granted"))
        if now - request.born < SETTLE_SECONDS:
            raise Refused(N_("A new request: look at its code first"))
        del self.pending[table]
        request.state = "granted"
        self.ended[request.secret_hash] = request
        return f"Console granted ({request.code})"

    def answer(self, request: Request, granted: bool, why: str = "") -> bool:
        """The hub's answer to this very request (it settles and checks the code on its
        side); False if the request no longer waits (two requests, expired)."""
        now = self.clock()
        self._expire(request.table, now)
        if self.pending.get(request.table) is not request:
            return False
        if granted:
            del self.pending[request.table]
            request.state = "granted"
            self.ended[request.secret_hash] = request
        else:
            self._end(request, "refused", now)
            request.why = why
        return True

    def refuse(self, table: str) -> str:
        """The host's no for whatever request waits on the table."""
        now = self.clock()
        self._expire(table, now)
        request = self.pending.get(table)
        if request is None:
            raise Refused(N_("No console request waits"))
        self._end(request, "refused", now)
        return "Console request refused"

    def state(self, secret: str, address: str, label: str = "") -> tuple[Request | None, str]:
        """How the request held by this secret stands, and a session token once granted
        (given once: the request is then gone)."""
        digest = _digest(secret)
        now = self.clock()
        for table in list(self.pending):
            self._expire(table, now)
        request = next((r for r in self.pending.values() if r.secret_hash == digest), None)
        if request is not None:
            return request, ""
        request = self.ended.get(digest)
        if request is None:
            return None, ""
        if request.state != "granted":
            if now - request.born > 2 * REQUEST_SECONDS:
                del self.ended[digest]
            return request, ""
        del self.ended[digest]
        if request.address != address:
            # A grant is for the browser that asked, from where it asked.
            request.state = "refused"
            return request, ""
        request.state = "taken"
        return request, self._new_session(request.table, address, label, now)

    def _expire(self, table: str, now: float) -> None:
        request = self.pending.get(table)
        if request is not None and now - request.born > REQUEST_SECONDS:
            self._end(request, "expired", now)

    def _end(self, request: Request, state: str, now: float) -> None:
        request.state = state
        self.pending.pop(request.table, None)
        self.ended[request.secret_hash] = request
        self.cool_until[request.table] = now + COOLDOWN

    # --- sessions -----------------------------------------------------------------------

    def _new_session(self, table: str, address: str, label: str, now: float) -> str:
        token = secrets.token_urlsafe(32)
        session = Session(
            id=secrets.token_hex(4),
            table=table,
            address=address,
            token_hash=_digest(token),
            csrf=secrets.token_urlsafe(32),
            born=now,
            used=now,
            label=label[:40],
            seen=now,
        )
        mine = sorted(self.of_table(table), key=lambda s: s.used)
        for old in mine[: max(0, len(mine) - SESSIONS_PER_TABLE + 1)]:
            del self.sessions[old.token_hash]
        self.sessions[session.token_hash] = session
        return token

    def session(self, token: str | None, address: str, *, touch: bool = True) -> Session | None:
        """The live session this cookie names, used from its own address, else None.
        ``touch=False``: a page's own refresh, which does not keep an idle session alive."""
        if not token:
            return None
        now = self.clock()
        session = self.sessions.get(_digest(token))
        if session is None:
            return None
        if now - session.used > IDLE_SECONDS or now - session.born > LIFE_SECONDS:
            del self.sessions[session.token_hash]
            return None
        if session.address != address:
            return None
        session.seen = now
        if touch:
            session.used = now
        return session

    def of_table(self, table: str) -> list[Session]:
        return [s for s in self.sessions.values() if s.table == table]

    def revoke(self, table: str, session_id: str) -> bool:
        """End one session of a table at once; False if it is not there."""
        for session in self.of_table(table):
            if session.id == session_id:
                del self.sessions[session.token_hash]
                return True
        return False

    def revoke_all(self, table: str) -> int:
        gone = self.of_table(table)
        for session in gone:
            del self.sessions[session.token_hash]
        return len(gone)

    # --- writes -------------------------------------------------------------------------

    def check_write(
        self,
        token: str | None,
        address: str,
        *,
        csrf: str,
        nonce: str,
        origin: str | None,
        expected_origin: str,
    ) -> Session:
        """The session a write comes from, if it is one: its cookie, its address, the
        page's own origin, the session's CSRF token and a nonce never seen; else
        :class:`Refused`. The nonce is spent even if the hub then refuses the command."""
        if origin is None or origin != expected_origin:
            raise Refused(N_("Refused: not sent from this console's page"))
        session = self.session(token, address)
        if session is None:
            raise Refused(N_("Sign in first"))
        if not csrf or not hmac.compare_digest(session.csrf, csrf):
            raise Refused(N_("Refused: this page is out of date, reload it"))
        if not NONCE.match(nonce):
            raise Refused(N_("Refused: no request id"))
        if nonce in session.nonces:
            raise Refused(N_("Already done"))
        session.nonces[nonce] = None
        while len(session.nonces) > NONCES_KEPT:
            session.nonces.popitem(last=False)
        return session
