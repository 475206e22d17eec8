"""What every game's table binding shares: the station LED's two colours and a phase's
short label."""

from __future__ import annotations

from firmware.link.lang import _
from rules.declare import GameInfo

#: The station LED when the seat has nothing to do, and when the table waits on it.
IDLE_LED = (0, 0, 0)
ACT_LED = (255, 160, 0)


def phase_label(info: GameInfo, phase: str) -> str:
    """A phase's short label (the game's declaration), in the table's language."""
    said = info.phase(phase)
    return _(said.short) if said else phase
