"""What every game's table binding shares: the station LED's two colours, a phase's
short label, the hub display's hint line and its countdown clock."""

from __future__ import annotations

import math

from firmware.link.lang import N_, _
from firmware.link.render import BODY_LINES, CHARS, glass
from rules.declare import GameInfo

#: The station LED when the seat has nothing to do, and when the table waits on it.
IDLE_LED = (0, 0, 0)
ACT_LED = (255, 160, 0)


def phase_label(info: GameInfo, phase: str) -> str:
    """A phase's short label (the game's declaration), in the table's language."""
    said = info.phase(phase)
    return _(said.short) if said else phase


#: The hub display's last line during a game: what the host's next press does, and that
#: ok leads to the help page (back twice undoes, stop twice ends the game), in one glass
#: line: what next does is said in a word or two ("close vote", "round 2", "open Red1").
HINT = N_("next:{what} ok:?|hub hint line")


def host_hint(what: str) -> str:
    """The hub display's hint line for ``what`` the host's next press does now."""
    line = _(HINT, what=what)
    return line if len(glass(line)) <= CHARS else glass(line)[: CHARS - 1] + "."


#: A countdown's last seconds: the hub display's title starts with LAST_MARK while a
#: running timer shows LAST_SECONDS or fewer (firmware.hub.publish.game_screen), so the
#: host sees the end coming at a glance; a binding's hub title keeps room for it.
LAST_SECONDS = 5
LAST_MARK = "!"


def hub_title_room(lines: list[str]) -> int:
    """What a hub title with a clock may take above ``lines``: the hub adds the mark in
    the last seconds, and the page count (" 1/2") when they take more than a page (the
    last line is the host's hint)."""
    paged = len(lines) > BODY_LINES - 1
    return CHARS - len(LAST_MARK) - (len(" 1/2") if paged else 0)


def seconds_shown(left: float | None, full: float) -> int:
    """A running timer's seconds as the screens show them (``full`` before the hub has
    set ``table.timer_left``): 4.2 s left shows 5, so 0 shows only once it ran out."""
    return max(0, math.ceil(full if left is None else left))
