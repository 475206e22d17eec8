"""Every seat's health, as the hub knows it: never seen, pairing, online, offline, error.

A station's retained status (``station/<id>/status``, its will says ``lost``) tells the
hub most of it: one that never connected has none (``never-seen``), one asking to pair
is ``pairing`` (see :mod:`firmware.hub.pairing`; a seat online stays online, with the
request shown beside it), and one whose service runs but lacks a part says ``error``
with its own one-line reason ("no reader"). The hub display's title
lists the seats not ready; ``hub/status`` carries every seat's health, so the table
display (which reads only ``public`` and ``hub/status``) marks a seat offline; and
``start`` with a seat of the game not online asks the host to confirm it by starting
again within :data:`CONFIRM_SECONDS` (docs/host-guide.md).
"""

from __future__ import annotations

from typing import Literal

from firmware.hub.actor import TableActor
from firmware.link import protocol as proto
from firmware.link.lang import N_

State = Literal["never-seen", "pairing", "online", "offline", "error"]
SeatHealth = proto.SeatHealth
#: How long a refused start waits for the host to start again (the confirmation).
CONFIRM_SECONDS = 30.0


def state(actor: TableActor, station: str) -> State:
    """A seat whose station is connected stays online (or error) whatever asks to pair
    as it: anyone on the Wi-Fi may send a hello (see ``SeatHealth.asking``)."""
    said = actor.station_states.get(station)
    if said in ("online", "error"):
        return said  # type: ignore[return-value]
    if station in actor.pairing:
        return "pairing"
    if said is None:
        return "never-seen"
    return "offline"


def report(actor: TableActor) -> dict[str, SeatHealth]:
    """Every station of the table, in seat order (asked at every publish: the cache key
    of ``public`` and ``hub/status``)."""
    out: dict[str, SeatHealth] = {}
    for station in actor.config.stations:
        now = state(actor, station)
        reason = actor.reasons.get(station, "") if now == "error" else ""
        waits = now != "pairing" and asking(actor, station)
        out[station] = SeatHealth(now, reason, waits)
    return out


def not_ready(actor: TableActor, stations: list[str] | None = None) -> list[str]:
    """The stations (of ``stations``, default all) that are not online (never seen
    counts only on a table that watches its seats: TableConfig.watch_seats)."""
    ok = {"online"} if actor.config.watch_seats else {"online", "never-seen"}
    return [s for s in stations or actor.config.stations if state(actor, s) not in ok]


def host_title(
    actor: TableActor, *, noted: bool, now: float | None = None
) -> tuple[str, dict[str, str]] | None:
    """The hub display's title when a seat needs the host: a pairing code first, then a
    phone's console request (from ``now`` on the glass), then (unless a note is up: "p6
    paired") the seats not ready (in a game, its seats only)."""
    shown = pairing_title(actor)
    if shown is not None:
        actor.console.hidden()  # the console's code waits behind the pairing's
    elif now is not None and actor.console.waiting is not None:
        shown = actor.console.title(now, lambda *_: None)  # expiry is the tick's
    if shown is not None or noted:
        return shown
    table = actor.table
    seats = table.seating.stations[: table.players] if table is not None else None
    missing = not_ready(actor, seats)
    if not missing:
        return None
    if len(missing) == 1 and state(actor, missing[0]) == "error":
        station = missing[0]
        return N_("{station}: {reason}"), {"station": station, "reason": actor.reasons[station]}
    return N_("Not ready: {stations}"), {"stations": " ".join(missing)}


def may_start(actor: TableActor, stations: list[str], now: float) -> list[str]:
    """The seats of a game about to start that are not online, unless the host already
    heard that and starts again within CONFIRM_SECONDS (then [])."""
    missing = not_ready(actor, stations) if actor.config.watch_seats else []
    asked = actor.start_asked
    if not missing or (asked is not None and now - asked <= CONFIRM_SECONDS):
        actor.start_asked = None
        return []
    actor.start_asked = now
    return missing


def asking(actor: TableActor, station: str) -> bool:
    """Whether a request for ``station`` waits (shown beside the seat in hub/status)."""
    pending = actor.pairing.get(station)
    return pending is not None and pending.granting is None


def waiting_codes(actor: TableActor) -> dict[str, str]:
    """Every seat whose pairing code waits for the host, in seat order, with its code
    (a request not yet revealed has none; one being granted waits no more). The host
    screen carries them: only host users read it (docs/pairing.md)."""
    return {
        s: p.code
        for s in actor.config.stations
        if (p := actor.pairing.get(s)) and p.code and p.granting is None
    }


def first_asking(actor: TableActor) -> str | None:
    """The first seat (in seat order) whose pairing code waits for the host."""
    return next(iter(waiting_codes(actor)), None)


def code_waits(actor: TableActor) -> bool:
    """Whether a code the host must answer (a pairing's, a phone's) has the glass."""
    return pairing_title(actor) is not None or actor.console.waiting is not None


def pairing_title(actor: TableActor) -> tuple[str, dict[str, str]] | None:
    """The hub display's title while a code waits for the host: ("Pair {station}? {code}")."""
    station = first_asking(actor)
    if station is None:
        return None
    code = actor.pairing[station].code or ""
    return N_("Pair {station}? {code}"), {"station": station, "code": code}


def status_reason(status: proto.StationStatus) -> str:
    return status.reason if status.state == "error" else ""
