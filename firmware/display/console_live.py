"""The console's live part: every seat's health and the evening's game, re-read every
couple of seconds by the page (``GET /host/<table>/live``, a session's read).

Seats come from the hub's retained ``hub/status`` (:class:`firmware.link.protocol.SeatHealth`:
never seen, pairing, online, offline, or the station's own trouble), in the table's seat
order. A seat with a pairing request gets a field for the code the host reads on that
station's glass and its two answers: ``pair`` grants the seat's request only if its code
is that one, as ``coffre host pair p6 4721`` does. The game is the table display's own
fragment (the public table only: the game's feed while it runs, the recap after).
"""

from __future__ import annotations

import html
from typing import Any

from firmware.display.render import table_fragment
from firmware.display.spectator import Snapshot

#: How each health state reads on the console.
STATES = {
    "never-seen": "never seen",
    "pairing": "pairing",
    "online": "online",
    "offline": "offline",
    "error": "trouble",
}


def seats_fragment(snap: Snapshot) -> str:
    """The seats' list (an empty hub status: the hub has said nothing yet)."""
    esc = html.escape
    stations: dict[str, Any] = snap.status.get("stations") or {}
    if not snap.hub_online:
        state = snap.status.get("state") or "not heard"
        head = f'<p class="alert" role="alert">Hub offline ({esc(str(state))})</p>'
    else:
        head = ""
    rows = []
    for seat, health in stations.items():
        if not isinstance(health, dict):
            continue
        state = str(health.get("state", ""))
        reason = str(health.get("reason", ""))
        asking = bool(health.get("asking")) or state == "pairing"
        said = STATES.get(state, state)
        if reason:
            said = f"{said}: {reason}"
        answer = ""
        if asking:
            answer = (
                f'<form class="pair" data-station="{esc(seat)}">'
                '<input name="code" inputmode="numeric" pattern="[0-9]{4}" maxlength="4" '
                'placeholder="code" aria-label="the code on the station\'s screen">'
                '<button type="submit">Pair</button>'
                '<button type="button" class="refuse">Refuse</button></form>'
            )
        rows.append(
            f'<li class="seat {esc(state)}"><span class="name">{esc(seat)}</span>'
            f'<span class="state">{esc(said)}{" · asks to pair" if asking else ""}</span>'
            f"{answer}</li>"
        )
    return f'{head}<ul class="seats">{"".join(rows)}</ul>'


def live_fragment(snap: Snapshot) -> str:
    """What the page swaps in: the seats, then the game as the table display shows it."""
    return (
        f'<section class="seats-part"><h2>Seats</h2>{seats_fragment(snap)}</section>'
        f'<section class="evening"><h2>The game</h2>{table_fragment(snap)}</section>'
    )
