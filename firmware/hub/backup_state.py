"""The backup the host asked for, as the hub holds it: its key (in memory only), who asked
and when, and whether the glass shows the key. Data only; firmware/hub/backup_ask.py
answers the ``backup`` command and the panel's ok."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from firmware.hub.sealed import shown
from firmware.link import protocol as proto


@dataclass
class Asked:
    """One ask: the key (memory only), who asked, when (the hub's clock and the wall's, as
    root's stamp says it), and since when the glass shows the key (None: not yet)."""

    key: str
    table: str
    cmd_id: str
    at: float
    wall: float
    shown_at: float | None = None

    def made(self, stamp: proto.BackupStamp | None) -> bool:
        """Whether ``stamp`` is of a sealed backup made since this ask."""
        return stamp is not None and stamp.sealed and stamp.at >= int(self.wall)

    def __repr__(self) -> str:  # never the key, in a log or a traceback
        return f"Asked(table={self.table!r}, at={self.at})"


@dataclass
class Backups:
    """The hub's backups: its folder (None: none configured, nobody may ask), the ask that
    waits or whose key is on the glass, and when the last ask was taken."""

    folder: Path | None = None
    asked: Asked | None = None
    last: float | None = None

    def glass(self, code_waits: Callable[[], bool]) -> list[str] | None:
        """The key's two lines for the panel while it shows, unless a code the host must
        answer first (a pairing's, a phone's) has the glass: ``code_waits`` is asked only
        then (the host screen is drawn at every input; a key shows once in a while)."""
        if self.asked is None or self.asked.shown_at is None or code_waits():
            return None
        return shown(self.asked.key)
