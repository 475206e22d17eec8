"""What every game's table binding shares: the station LED's two colours, a phase's
short label and the hub display's hint line."""

from __future__ import annotations

from firmware.link.lang import N_, _
from firmware.link.render import CHARS, glass
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
