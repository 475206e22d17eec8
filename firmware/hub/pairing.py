"""Pairing on the hub: a station asks, the host compares the code and confirms, the
station gets its own broker password and the table's CA (docs/pairing.md).

The exchange (see :mod:`firmware.link.pairing`) runs on the hub's thread like any other
message: a ``hello`` gets a ``challenge``, a ``reveal`` makes the code, which the hub
display and ``coffre host`` show ("Pair p6? 4721"); the host's ok (the panel, or
``coffre host pair p6``) grants, back (or ``coffre host refuse p6``) refuses. A pairing
expires :data:`~firmware.link.pairing.PAIR_SECONDS` after its hello. Two stations asking
to be the same seat at once are both refused (one of them is a stranger).

Granting writes the station's new password into the broker's password file (and its
user into the ACL if the venue did not list it), keeps it in ``credentials/`` like
``broker-config`` does, and reloads the broker (SIGHUP: nobody is disconnected). The CA
certificate is public and goes in the sealed box; ``ca.key`` is never read here.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from firmware.hub.actor import TableActor
from firmware.hub.brokerconf import CREDENTIALS, Venue, hash_password, station_user
from firmware.hub.certs import write_private
from firmware.link import pairing as pair
from firmware.link import protocol as proto
from firmware.link.lang import N_
from firmware.link.tls import CA_FILE

if TYPE_CHECKING:
    from firmware.hub.service import Hub

log = logging.getLogger(__name__)

#: Most pairings waiting at once on a table (a flood of hellos gets no more answers).
MAX_PENDING = 8


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

    def grant(self, table: str, station: str) -> tuple[str, str]:
        """A new password for the station's user (the old one stops working); returns
        ``(user, password)`` once the broker has been asked to reload."""
        user = station_user(table, station)
        password = secrets.token_urlsafe(16)
        passwd = self.conf_dir / "passwd"
        kept = [ln for ln in _lines(passwd) if ln and not ln.startswith(f"{user}:")]
        # Written in place: the file keeps its owner and mode (mosquitto must read it).
        passwd.write_text("".join(f"{ln}\n" for ln in [*kept, f"{user}:{hash_password(password)}"]))
        acl = self.conf_dir / "acl"
        text = acl.read_text() if acl.is_file() else ""
        if f"user {user}\n" not in text:
            block = Venue({"hub": [table]}, {table: [station]}).acl()
            start = block.index(f"user {user}\n")
            acl.write_text(text + block[start:].split("\n\n")[0] + "\n\n")
        folder = self.conf_dir / CREDENTIALS
        folder.mkdir(mode=0o700, exist_ok=True)
        (folder / f"{user}.password").unlink(missing_ok=True)
        write_private(folder / f"{user}.password", (password + "\n").encode())
        self.reload()
        return user, password


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.is_file() else []


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


def request(hub: Hub, actor: TableActor, station: str, payload: bytes) -> None:
    """A station's ``hello`` or ``reveal``."""
    try:
        req = pair.decode_request(payload)
    except proto.ProtocolError as exc:
        hub.throttle.warning(("enrol", actor.config.name), f"hub: pairing {station}: {exc}")
        return
    now = hub.clock()
    pending = actor.pairing.get(station)
    if req.step == "hello":
        _hello(hub, actor, station, req, pending, now)
    elif pending is not None and pending.session == req.session and pending.code is None:
        try:
            nonce = pair.unb64(req.nonce, 16)
        except proto.ProtocolError:
            nonce = b""
        if pair.commitment(pending.public, nonce) != pending.commit:
            _end(hub, actor, station, N_("{station}: pairing failed"), pending)
            return
        pending.code = pair.pair_code(pending.public, pending.ca, nonce, pending.hub_nonce)
        log.info("%s: %s asks to pair, code %s", actor.config.name, station, pending.code)
        hub.out.host(actor)


def _hello(
    hub: Hub,
    actor: TableActor,
    station: str,
    req: pair.Request,
    pending: Pending | None,
    now: float,
) -> None:
    name = actor.config.name
    if station not in actor.config.stations:
        _reply(hub, actor, station, pair.Reply("refused", req.session, reason="Not a seat here"))
        return
    if pending is not None and pending.session != req.session and pending.code is None:
        # Not revealed yet: most likely a hello the broker kept for the hub while it was
        # down, from a station that gave up on it since. The newer one replaces it (a
        # stranger doing this only makes the codes differ, and the host refuses).
        del actor.pairing[station]
        pending = None
    if pending is not None and pending.session != req.session:
        # Two keys for one seat with a code up: one of them is not the station.
        log.warning("%s: two pairing requests for %s: both refused", name, station)
        _end(hub, actor, station, N_("{station}: two requests, refused"), pending)
        _reply(hub, actor, station, pair.Reply("refused", req.session, reason="Two requests"))
        return
    door = hub.pairing
    if pending is not None:  # the same hello again (the station did not hear the challenge)
        if pending.code is None and door is not None:
            _reply(hub, actor, station, _challenge(pending))
        return
    if len(actor.pairing) >= MAX_PENDING:
        return  # a flood: no more answers until some pairings end
    if req.suite != pair.SUITE:  # an older station: its box is not one we seal any more
        _reply(
            hub, actor, station, pair.Reply("refused", req.session, reason="Update this station")
        )
        hub.out.note(actor, N_("{station}: pairing failed"), {"station": station})
        hub.out.all(actor)
        return
    if door is None:
        reason = "Hub cannot pair"
        _reply(hub, actor, station, pair.Reply("refused", req.session, reason=reason))
        hub.out.note(actor, N_("{station}: hub cannot pair"), {"station": station})
        return
    try:
        public = pair.unb64(req.pub, 32)
    except proto.ProtocolError:
        return
    nonce = os.urandom(16)
    pending = Pending(
        req.session, public, req.commit, nonce, now + pair.PAIR_SECONDS, door.ca_pem()
    )
    actor.pairing[station] = pending
    _reply(hub, actor, station, _challenge(pending))
    hub.out.all(actor)  # the seat is "pairing" in hub/status


def _challenge(pending: Pending) -> pair.Reply:
    return pair.Reply(
        "challenge",
        pending.session,
        nonce=pair.b64(pending.hub_nonce),
        ca=pending.ca,
        expires_in=pair.PAIR_SECONDS,
    )


def confirm(hub: Hub, actor: TableActor, station: str | None) -> tuple[bool, str]:
    """The host's yes: grant the station (the first one waiting when ``station`` is None)."""
    station = station or _first(actor)
    pending = actor.pairing.get(station or "")
    if station is None or pending is None or pending.code is None:
        return False, f"No pairing waits for {station}" if station else "No pairing waits"
    assert hub.pairing is not None
    try:
        user, password = hub.pairing.grant(actor.config.name, station)
    except OSError as exc:
        log.error(
            "%s: pairing %s: cannot write the broker's users: %s", actor.config.name, station, exc
        )
        _end(hub, actor, station, N_("{station}: pairing failed"), pending)
        return False, f"Cannot write the broker's users: {exc}"[:63]
    grant = pair.encode(pair.Grant(user, password, pending.ca))
    try:
        box = pair.b64(pair.seal(pending.public, grant))
    except pair.BoxError:  # a key no box can be sealed to (a low-order point): not a station
        _end(hub, actor, station, N_("{station}: pairing failed"), pending)
        return False, f"{station}: pairing failed (bad key)"
    _reply(hub, actor, station, pair.Reply("granted", pending.session, box=box))
    del actor.pairing[station]
    actor.station_states.pop(station, None)  # its old status (if any) is history
    log.info("%s: %s paired (user %s)", actor.config.name, station, user)
    hub.out.note(actor, N_("{station} paired"), {"station": station})
    hub.out.all(actor)
    return True, f"{station} paired"


def refuse(hub: Hub, actor: TableActor, station: str | None) -> tuple[bool, str]:
    """The host's no."""
    station = station or _first(actor)
    pending = actor.pairing.get(station or "")
    if station is None or pending is None:
        return False, f"No pairing waits for {station}" if station else "No pairing waits"
    _end(hub, actor, station, N_("{station}: pairing refused"), pending)
    return True, f"{station}: pairing refused"


def tick(hub: Hub, actor: TableActor, now: float) -> None:
    """Pairings past their time end, on both screens."""
    for station, pending in list(actor.pairing.items()):
        if now >= pending.expires:
            _end(hub, actor, station, N_("{station}: pairing expired"), pending)


def next_due(actor: TableActor) -> float | None:
    return min((p.expires for p in actor.pairing.values()), default=None)


def title(actor: TableActor) -> tuple[str, dict[str, str]] | None:
    """The hub display's title while a code waits for the host: ("Pair {station}? {code}")."""
    station = _first(actor)
    if station is None:
        return None
    code = actor.pairing[station].code or ""
    return N_("Pair {station}? {code}"), {"station": station, "code": code}


def panel(hub: Hub, actor: TableActor, button: str) -> bool:
    """The panel's ok confirms and back refuses the pairing shown; True if it was one."""
    if _first(actor) is None or button not in ("ok", "back"):
        return False
    (confirm if button == "ok" else refuse)(hub, actor, None)
    return True


def _first(actor: TableActor) -> str | None:
    """The first seat (in seat order) whose code waits for the host."""
    ready = [s for s in actor.config.stations if (p := actor.pairing.get(s)) and p.code]
    return ready[0] if ready else None


_REASONS = {
    "{station}: pairing refused": "Refused by the host",
    "{station}: pairing expired": "Pairing expired",
    "{station}: two requests, refused": "Two requests",
    "{station}: pairing failed": "Pairing failed",
}


def _end(hub: Hub, actor: TableActor, station: str, msgid: str, pending: Pending) -> None:
    """A pairing that will not be granted: one line on the station and on the hub display."""
    actor.pairing.pop(station, None)
    reason = _REASONS.get(msgid, "Refused")
    _reply(hub, actor, station, pair.Reply("refused", pending.session, reason=reason))
    log.info("%s: %s: %s", actor.config.name, station, reason.lower())
    hub.out.note(actor, msgid, {"station": station})
    hub.out.all(actor)


def _reply(hub: Hub, actor: TableActor, station: str, reply: pair.Reply) -> None:
    hub.out.send(actor, pair.enrol_topic(actor.config.name, station, "reply"), pair.encode(reply))
