"""The console's live part: every seat's health and the evening's game, re-read every
couple of seconds by the page (``GET /host/<table>/live``, a session's read).

Seats come from the hub's retained ``hub/status`` (:class:`firmware.link.protocol.SeatHealth`:
never seen, pairing, online, offline, or the station's own trouble), in the table's seat
order. A seat with a pairing request shows the code the hub shows for it (the hub's host
screen carries every waiting request's code, see
:class:`firmware.display.console_link.MqttHubLink`), large, asks whether the station's
glass shows the same, and gives the two answers: *Pair* sends ``pair`` with that seat and
that code, which the hub grants only if its request still has that code (as ``coffre host
pair p6 4721``: a request replaced since the page showed it is not paired), *Refuse*
sends ``refuse``. With no code known (an older hub, or the station has not revealed its
yet) the seat gets a field for the code the host reads on the station's glass instead.
The game is the table display's own fragment (the public table only: the game's feed
while it runs, the recap after).

A seat's "last seen" is the display's own: the hub's status says only how each seat
stands (it changes with a seat's state, never with its heartbeats, so every station need
not hear it at every tap), and :class:`LastSeen` notes, each time the console looks, the
seats the hub calls online. A seat that is not online then reads "last seen 12 min ago";
one that went away before this display started reads without it.
"""

from __future__ import annotations

import html
import threading
from typing import Any

from firmware.display.render import table_fragment
from firmware.display.spectator import Snapshot
from firmware.link.lang import N_, _, plural

#: How each health state reads on the console.
STATES = {
    "never-seen": N_("never seen"),
    "pairing": N_("pairing"),
    "online": N_("online"),
    "offline": N_("offline"),
    "error": N_("trouble"),
}
#: The seats' words (marked here: a ``_()`` inside an f-string is not extracted).
T = {
    "offline": N_("Hub offline ({state})"),
    "code": N_("code"),
    "pair": N_("Pair"),
    "refuse": N_("Refuse"),
    "asks": N_("asks to pair"),
    "same": N_("Same code on {station}'s screen?"),
    "seats": N_("Seats"),
    "game": N_("The game"),
}


def ago(seconds: float) -> str:
    """How long ago, in words a phone shows: just now, 12 min ago, 3 h ago."""
    if seconds < 60:
        return _("just now")
    if seconds < 3600:
        return plural("{n} min ago", "{n} min ago", int(seconds // 60))
    return plural("{n} h ago", "{n} h ago", int(seconds // 3600))


class LastSeen:
    """When the console last saw each table's seats online (its own clock's seconds)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def observe(self, snap: Snapshot, now: float) -> None:
        """Note the seats the hub calls online now (nothing while the hub is not heard:
        its last status no longer says how the seats stand)."""
        if not snap.hub_online:
            return
        stations = snap.status.get("stations") or {}
        with self._lock:
            for seat, health in stations.items():
                if isinstance(health, dict) and health.get("state") == "online":
                    self._seen[(snap.table, str(seat))] = now

    def last(self, table: str, seat: str) -> float | None:
        with self._lock:
            return self._seen.get((table, seat))


def seats_fragment(
    snap: Snapshot,
    seen: LastSeen | None = None,
    now: float = 0.0,
    codes: dict[str, str] | None = None,
) -> str:
    """The seats' list (an empty hub status: the hub has said nothing yet); ``codes``:
    the waiting pairing codes by seat, as the hub's host screen says them."""
    esc = html.escape
    stations: dict[str, Any] = snap.status.get("stations") or {}
    if not snap.hub_online:
        state = str(snap.status.get("state") or _("not heard"))
        head = f'<p class="alert" role="alert">{esc(_(T["offline"], state=state))}</p>'
    else:
        head = ""
    rows = []
    for seat, health in stations.items():
        if not isinstance(health, dict):
            continue
        state = str(health.get("state", ""))
        reason = str(health.get("reason", ""))
        asking = bool(health.get("asking")) or state == "pairing"
        said = _(STATES[state]) if state in STATES else state
        if reason:
            said = f"{said}: {reason}"
        when = seen.last(snap.table, seat) if seen is not None else None
        if state != "online" and when is not None:
            said = _("{state}, last seen {ago}", state=said, ago=ago(now - when))
        answer = ""
        code = (codes or {}).get(seat) if asking else None
        if code:
            answer = pair_form(seat, code)
        elif asking:
            what = _("the code on the station's screen")
            answer = (
                f'<form class="pair" data-station="{esc(seat)}">'
                '<input name="code" inputmode="numeric" pattern="[0-9]{4}" maxlength="4" '
                f'placeholder="{esc(_(T["code"]))}" '
                f'aria-label="{esc(what)}">'
                f'<button type="submit">{esc(_(T["pair"]))}</button>'
                f'<button type="button" class="refuse">{esc(_(T["refuse"]))}</button></form>'
            )
        rows.append(
            f'<li class="seat {esc(state)}"><span class="name">{esc(seat)}</span>'
            f'<span class="state">{esc(said)}{" · " + esc(_(T["asks"])) if asking else ""}'
            "</span>"
            f"{answer}</li>"
        )
    return f'{head}<ul class="seats">{"".join(rows)}</ul>'


def pair_form(seat: str, code: str) -> str:
    """A seat's request with the hub's code: the code, the question, Pair and Refuse. The
    code rides in the form (``data-code`` too: the page's script holds back a Pair that
    appeared under the host's finger), so Pair sends the code the host looked at."""
    esc = html.escape
    return (
        f'<form class="pair known" data-station="{esc(seat)}" data-code="{esc(code)}">'
        f'<p class="hub-code">{esc(code)}</p>'
        f'<p class="same">{esc(_(T["same"], station=seat))}</p>'
        f'<input type="hidden" name="code" value="{esc(code)}">'
        f'<div class="choice"><button type="submit" class="big">{esc(_(T["pair"]))}</button>'
        f'<button type="button" class="refuse big">{esc(_(T["refuse"]))}</button></div></form>'
    )


def live_fragment(
    snap: Snapshot,
    seen: LastSeen | None = None,
    now: float = 0.0,
    codes: dict[str, str] | None = None,
) -> str:
    """What the page swaps in: the seats, then the game as the table display shows it."""
    seats = seats_fragment(snap, seen, now, codes)
    return (
        f'<section class="seats-part"><h2>{_(T["seats"])}</h2>{seats}'
        f'</section><section class="evening"><h2>{_(T["game"])}</h2>{table_fragment(snap)}'
        "</section>"
    )
