"""Pairing on the hub: a station asks, the host compares the code and confirms, the
station gets its own broker password and the table's CA (docs/pairing.md).

The exchange (see :mod:`firmware.link.pairing`) runs on the hub's thread like any other
message: a ``hello`` gets a ``challenge``, a ``reveal`` makes the code, which the hub
display and ``coffre host`` show ("Pair p6? 4721"); the host's ok on the panel grants the
request on the screen, ``coffre host pair p6 4721`` grants p6's request if its code is
4721; back (or ``coffre host refuse p6``) refuses. A pairing expires
:data:`~firmware.link.pairing.PAIR_SECONDS` after its hello.

Whoever asks to pair learns the hub's nonce with the challenge, so he can work out the
hub's code before he reveals and, had he as many challenges as he likes, pick one that
matches a code he has seen on a station's glass. Challenges are therefore scarce (see
:class:`~firmware.hub.pair_state.Guard`): a pending pairing is never replaced (a second
request for its seat refuses both, on both screens), a seat whose pairing ended without a
grant answers no hello for :data:`SEAT_COOLDOWN` seconds, and a table issues at most
:data:`TABLE_BURST` challenges at once, then one every :data:`TABLE_REFILL` seconds.

Granting seals the box first (a key no box can be sealed to changes nothing), then
writes the station's new password into the broker's password file (and its user into
the ACL if the venue did not list it), keeps it in ``credentials/`` like
``broker-config`` does, and has the broker reload (SIGHUP: nobody is disconnected). The
grant goes out once a login with the new password works (a thread tries it), so the
station's first login is not refused by a broker still on the old file. The CA
certificate is public and goes in the sealed box; ``ca.key`` is never read here.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from firmware.hub.actor import TableActor
from firmware.hub.brokerconf import CREDENTIALS, Venue, hash_password, station_user
from firmware.hub.certs import write_private
from firmware.hub.context import HubContext
from firmware.hub.health import first_asking as _first
from firmware.hub.pair_state import TABLE_BURST as TABLE_BURST  # the limits, named here too
from firmware.hub.pair_state import TABLE_REFILL as TABLE_REFILL
from firmware.hub.pair_state import Granting, Guard, Pending
from firmware.link import pairing as pair
from firmware.link import protocol as proto
from firmware.link.lang import N_
from firmware.link.mqtt import BrokerConfig, Client, LinkState
from firmware.link.tls import CA_FILE

log = logging.getLogger(__name__)

#: Most pairings waiting at once on a table (a flood of hellos gets no more answers).
MAX_PENDING = 8
#: After a seat's pairing ends without a grant (refused, expired, failed, two requests),
#: its next challenge waits this long (seconds); a station asks again after
#: :data:`firmware.station.pairing.AGAIN_SECONDS`, which is no shorter.
SEAT_COOLDOWN = 30.0
#: The panel's ok or back on a pairing shown for less than this long (seconds) shows it
#: (the host may have been looking at the one before), it does not answer it.
SETTLE_SECONDS = 1.5
#: How long a grant waits for the broker to take the new password (seconds): longer, it
#: goes out anyway and the log says the broker's reload is late.
VERIFY_SECONDS = 10.0
#: The host's yes or no as answered: done or not, the message id and its fields.
Said = tuple[bool, str, dict[str, str]]


def reload_by_path_unit() -> None:
    """On a Pi nothing to do: ``coffre-broker-reload.path`` sees ``passwd`` change and
    reloads coffre-broker (SIGHUP) as root, so the hub needs no privilege for it."""


class BrokerDoor:
    """The broker's users and ACL, as far as pairing touches them (``broker-config``'s
    folder, e.g. ``/etc/mosquitto/coffre``)."""

    def __init__(self, conf_dir: Path, reload: Callable[[], None] = reload_by_path_unit) -> None:
        self.conf_dir = Path(conf_dir)
        self.reload = reload

    def ca_pem(self) -> str:
        """The table's CA certificate (public), or "" without TLS."""
        path = self.conf_dir / CA_FILE
        return path.read_text() if path.is_file() else ""

    def grant(self, table: str, station: str, password: str) -> str:
        """Give the station's user ``password`` (the old one stops working once the broker
        reloads); returns the user once the broker has been asked to reload.

        The password file is written last: if anything before it fails, the broker's
        users are as they were."""
        user = station_user(table, station)
        folder = self.conf_dir / CREDENTIALS
        folder.mkdir(mode=0o700, exist_ok=True)
        (folder / f"{user}.password").unlink(missing_ok=True)
        write_private(folder / f"{user}.password", (password + "\n").encode())
        acl = self.conf_dir / "acl"
        text = acl.read_text() if acl.is_file() else ""
        if f"user {user}\n" not in text:
            block = Venue({"hub": [table]}, {table: [station]}).acl()
            start = block.index(f"user {user}\n")
            acl.write_text(text + block[start:].split("\n\n")[0] + "\n\n")
        passwd = self.conf_dir / "passwd"
        kept = [ln for ln in _lines(passwd) if ln and not ln.startswith(f"{user}:")]
        # Written in place: the file keeps its owner and mode (mosquitto must read it).
        passwd.write_text("".join(f"{ln}\n" for ln in [*kept, f"{user}:{hash_password(password)}"]))
        self.reload()
        return user


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.is_file() else []


def login_works(config: BrokerConfig, timeout: float) -> bool:
    """Whether the broker takes ``config``'s user and password within ``timeout`` seconds
    (a fresh connection every try: a refused one says the reload has not happened yet)."""
    deadline = time.monotonic() + timeout
    while True:
        states: queue.Queue[LinkState] = queue.Queue()
        client = Client(
            config, f"coffre-pair-check-{os.urandom(6).hex()}", [], on_state=states.put, quiet=True
        )
        client.start()
        try:
            while (left := deadline - time.monotonic()) > 0:
                try:
                    state = states.get(timeout=min(left, 1.0))
                except queue.Empty:
                    break
                if state.ok:
                    return True
                if state.state != "connecting":
                    break  # refused: the broker still reads the old file
        finally:
            client.stop()
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def guard(actor: TableActor, now: float) -> Guard:
    if actor.pair_guard is None:
        actor.pair_guard = Guard.since(now)
    return actor.pair_guard


def request(ctx: HubContext, actor: TableActor, station: str, payload: bytes) -> None:
    """A station's ``hello`` or ``reveal``."""
    try:
        req = pair.decode_request(payload)
    except proto.ProtocolError as exc:
        ctx.throttle.warning(("enrol", actor.config.name), f"hub: pairing {station}: {exc}")
        return
    now = ctx.clock()
    pending = actor.pairing.get(station)
    if req.step == "hello":
        _hello(ctx, actor, station, req, pending, now)
    elif pending is not None and pending.session == req.session and pending.code is None:
        try:
            nonce = pair.unb64(req.nonce, 16)
        except proto.ProtocolError:
            nonce = b""
        if pair.commitment(pending.public, nonce) != pending.commit:
            _end(ctx, actor, station, N_("{station}: pairing failed"), pending)
            return
        pending.code = pair.pair_code(pending.public, pending.ca, nonce, pending.hub_nonce)
        log.info("%s: %s asks to pair, code %s", actor.config.name, station, pending.code)
        _restage(actor, now)
        ctx.out.all(actor)  # the code on the hub display, the request beside the seat


def _hello(
    ctx: HubContext,
    actor: TableActor,
    station: str,
    req: pair.Request,
    pending: Pending | None,
    now: float,
) -> None:
    name = actor.config.name
    if station not in actor.config.stations:
        _reply(ctx, actor, station, pair.Reply("refused", req.session, reason="Not a seat here"))
        return
    if pending is not None and pending.session != req.session:
        if pending.granting is not None:  # the host said yes to the request on the screen
            _reply(ctx, actor, station, pair.Reply("refused", req.session, reason="Seat busy"))
            return
        # A second key for a seat already asked for: one of them is not the station. Never
        # replace the first (each replacement would be a new challenge, a new guess at the
        # code on the station's glass): both end, the seat cools down.
        log.warning("%s: two pairing requests for %s: both refused", name, station)
        _end(ctx, actor, station, N_("{station}: two requests, refused"), pending)
        _reply(ctx, actor, station, pair.Reply("refused", req.session, reason="Two requests"))
        return
    door = ctx.door
    if pending is not None:  # the same hello again (the station did not hear the challenge)
        if pending.code is None and door is not None:
            _reply(ctx, actor, station, _challenge(pending))
        return
    if len(actor.pairing) >= MAX_PENDING:
        return  # a flood: no more answers until some pairings end
    if req.suite != pair.SUITE:  # an older station: its box is not one we seal any more
        _reply(
            ctx, actor, station, pair.Reply("refused", req.session, reason="Update this station")
        )
        ctx.out.note(actor, N_("{station}: pairing failed"), {"station": station})
        ctx.out.all(actor)
        return
    if door is None:
        reason = "Hub cannot pair"
        _reply(ctx, actor, station, pair.Reply("refused", req.session, reason=reason))
        ctx.out.note(actor, N_("{station}: hub cannot pair"), {"station": station})
        return
    try:
        public = pair.unb64(req.pub, 32)
    except proto.ProtocolError:
        return
    limits = guard(actor, now)
    if limits.cooling(station, now):
        ctx.throttle.warning(
            ("enrol-cool", name, station), f"hub: {name}: {station} asked to pair too soon"
        )
        _reply(ctx, actor, station, pair.Reply("refused", req.session, reason="Too soon: wait"))
        return
    if not limits.take(now):
        ctx.throttle.warning(("enrol-dry", name), f"hub: {name}: too many pairing requests")
        _reply(ctx, actor, station, pair.Reply("refused", req.session, reason="Too many requests"))
        return
    nonce = os.urandom(16)
    pending = Pending(
        req.session, public, req.commit, nonce, now + pair.PAIR_SECONDS, door.ca_pem()
    )
    actor.pairing[station] = pending
    _reply(ctx, actor, station, _challenge(pending))
    ctx.out.all(actor)  # a seat not online is "pairing" in hub/status


def _challenge(pending: Pending) -> pair.Reply:
    return pair.Reply(
        "challenge",
        pending.session,
        nonce=pair.b64(pending.hub_nonce),
        ca=pending.ca,
        expires_in=pair.PAIR_SECONDS,
    )


def confirm(
    ctx: HubContext,
    actor: TableActor,
    station: str | None,
    *,
    code: str | None = None,
    session: str | None = None,
) -> Said:
    """The host's yes to one request: the station's whose code is ``code`` (the command
    line), or the one whose session is ``session`` (the panel's ok on the screen)."""
    pending = actor.pairing.get(station or "")
    if station is None or pending is None or pending.code is None or pending.granting:
        if station is None:
            return False, N_("Name the station"), {}
        return False, N_("No pairing waits for {station}"), {"station": station}
    if session is not None and pending.session != session:
        return False, N_("{station}: not the request shown"), {"station": station}
    if session is None and code != pending.code:
        if code is None:
            said = N_("Give the code {station} shows: pair {station} NNNN")
            return False, said, {"station": station}
        log.warning("%s: pair %s %s: not the code asked", actor.config.name, station, code)
        return False, N_("{station} asks with another code: not paired"), {"station": station}
    user = station_user(actor.config.name, station)
    password = secrets.token_urlsafe(16)
    grant = pair.encode(pair.Grant(user, password, pending.ca))
    try:
        box = pair.b64(pair.seal(pending.public, grant))
    except pair.BoxError:  # a key no box can be sealed to (a low-order point): not a station
        _end(ctx, actor, station, N_("{station}: pairing failed"), pending)
        return False, N_("{station}: pairing failed (bad key)"), {"station": station}
    assert ctx.door is not None
    try:
        ctx.door.grant(actor.config.name, station, password)
    except OSError as exc:
        log.error(
            "%s: pairing %s: cannot write the broker's users: %s", actor.config.name, station, exc
        )
        _end(ctx, actor, station, N_("{station}: pairing failed"), pending)
        return False, N_("Cannot write the broker's users: {error}"), {"error": str(exc)[:30]}
    now = ctx.clock()
    pending.granting = granting = Granting(user, box)
    pending.expires = now + VERIFY_SECONDS + 2.0  # a net: the check below wakes the hub
    check = dataclasses.replace(ctx.broker, username=user, password=password)

    def verify() -> None:
        granting.effective = login_works(check, VERIFY_SECONDS)
        granting.done.set()
        ctx.wake()  # the hub's loop ticks: tick() sends the grant

    threading.Thread(target=verify, name=f"pair-{station}", daemon=True).start()
    _restage(actor, now)
    ctx.out.all(actor)
    return True, N_("{station} paired"), {"station": station}


def _granted(ctx: HubContext, actor: TableActor, station: str, pending: Pending) -> None:
    """The broker takes the new password (or VERIFY_SECONDS passed): the grant goes out."""
    granting = pending.granting
    assert granting is not None
    name = actor.config.name
    if not granting.effective:
        log.warning(
            "%s: the broker did not take %s's new password within %g s (is "
            "coffre-broker-reload.path running?): the grant goes out anyway",
            name,
            station,
            VERIFY_SECONDS,
        )
    _reply(ctx, actor, station, pair.Reply("granted", pending.session, box=granting.box))
    del actor.pairing[station]
    actor.station_states.pop(station, None)  # its old status (if any) is history
    log.info("%s: %s paired (user %s)", name, station, granting.user)
    ctx.out.note(actor, N_("{station} paired"), {"station": station})
    ctx.out.all(actor)


def refuse(
    ctx: HubContext, actor: TableActor, station: str | None, *, session: str | None = None
) -> Said:
    """The host's no (to the one shown when ``station`` is None)."""
    station = station or _first(actor)
    pending = actor.pairing.get(station or "")
    if station is None or pending is None or pending.granting is not None:
        if station is None:
            return False, N_("No pairing waits"), {}
        return False, N_("No pairing waits for {station}"), {"station": station}
    if session is not None and pending.session != session:
        return False, N_("{station}: not the request shown"), {"station": station}
    _end(ctx, actor, station, N_("{station}: pairing refused"), pending)
    return True, N_("{station}: pairing refused"), {"station": station}


def tick(ctx: HubContext, actor: TableActor, now: float) -> None:
    """Pairings past their time end, on both screens; grants whose password the broker
    took go out."""
    for station, pending in list(actor.pairing.items()):
        if pending.granting is not None:
            if pending.granting.done.is_set() or now >= pending.expires:
                _granted(ctx, actor, station, pending)
        elif now >= pending.expires:
            _end(ctx, actor, station, N_("{station}: pairing expired"), pending)


def next_due(actor: TableActor) -> float | None:
    return min((p.expires for p in actor.pairing.values()), default=None)


def panel(ctx: HubContext, actor: TableActor, button: str) -> bool:
    """The panel's ok confirms and back refuses the pairing shown; True if it was one.

    Bound to the request on the screen (its session), not to a seat; one that came on
    the screen less than SETTLE_SECONDS ago is shown again, not answered."""
    station = _first(actor)
    if station is None or button not in ("ok", "back"):
        return False
    pending = actor.pairing[station]
    now = ctx.clock()
    if pending.shown_at is None or now - pending.shown_at < SETTLE_SECONDS:
        log.info("%s: %s on a pairing just shown: shown, not answered", actor.config.name, button)
        if pending.shown_at is None:
            pending.shown_at = now
        ctx.out.host(actor)
        return True
    if button == "ok":
        confirm(ctx, actor, station, session=pending.session)
    else:
        refuse(ctx, actor, station, session=pending.session)
    return True


def shown_again(actor: TableActor, now: float) -> None:
    """The panel shows this table afresh (the host switched to it): its pairing too."""
    station = _first(actor)
    if station is not None:
        actor.pairing[station].shown_at = now


def _restage(actor: TableActor, now: float) -> None:
    """Which pairing the hub display shows may have changed: it is shown from now."""
    first = _first(actor)
    for station, pending in actor.pairing.items():
        if station != first:
            pending.shown_at = None
        elif pending.shown_at is None:
            pending.shown_at = now


_REASONS = {
    "{station}: pairing refused": "Refused by the host",
    "{station}: pairing expired": "Pairing expired",
    "{station}: two requests, refused": "Two requests",
    "{station}: pairing failed": "Pairing failed",
}


def _end(ctx: HubContext, actor: TableActor, station: str, msgid: str, pending: Pending) -> None:
    """A pairing that will not be granted: one line on the station and on the hub
    display, and the seat cools down."""
    actor.pairing.pop(station, None)
    now = ctx.clock()
    guard(actor, now).cool_until[station] = now + SEAT_COOLDOWN
    _restage(actor, now)
    reason = _REASONS.get(msgid, "Refused")
    _reply(ctx, actor, station, pair.Reply("refused", pending.session, reason=reason))
    log.info("%s: %s: %s", actor.config.name, station, reason.lower())
    ctx.out.note(actor, msgid, {"station": station})
    ctx.out.all(actor)


def _reply(ctx: HubContext, actor: TableActor, station: str, reply: pair.Reply) -> None:
    ctx.out.send(actor, pair.enrol_topic(actor.config.name, station, "reply"), pair.encode(reply))
