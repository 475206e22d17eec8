"""The host's panel menu: five buttons (prev, next, ok, back, stop) and a small screen.

Idle, the menu picks a game and a player count, then starts. During a game,
``next`` is the host's "next" (close the vote, open the next safe), ``back``
undoes the last move and ``stop`` aborts; ``back`` and ``stop`` ask for a
second press within a few seconds so a stray press costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from firmware.protocol import HostCommand

#: Games the hub can referee at a table (those with a table binding).
CONFIRM_SECONDS = 4.0


@dataclass
class HostMenu:
    """Menu state; ``press`` returns the command a button press makes, if any."""

    games: list[str]
    max_players: int
    game: int = 0
    players: int = 5
    row: int = 0  # 0 game, 1 players, 2 start
    armed: str | None = None
    armed_at: float = 0.0
    limits: dict[str, tuple[int, int]] = field(default_factory=dict)

    def _range(self) -> tuple[int, int]:
        lo, hi = self.limits.get(self.games[self.game], (1, self.max_players))
        return lo, min(hi, self.max_players)

    def press(self, button: str, *, playing: bool, now: float) -> HostCommand | None:
        """Handle one button press."""
        if playing:
            return self._in_game(button, now)
        if button == "prev":
            self.row = (self.row - 1) % 3
        elif button == "next":
            self.row = (self.row + 1) % 3
        elif button in ("ok", "back"):
            step = 1 if button == "ok" else -1
            if self.row == 0:
                self.game = (self.game + step) % len(self.games)
                lo, hi = self._range()
                self.players = max(lo, min(hi, self.players))
            elif self.row == 1:
                lo, hi = self._range()
                self.players = lo + (self.players - lo + step) % (hi - lo + 1)
            elif button == "ok":
                return HostCommand(cmd="start", game=self.games[self.game], players=self.players)
        return None

    def _in_game(self, button: str, now: float) -> HostCommand | None:
        if button == "next":
            self.armed = None
            return HostCommand(cmd="next")
        if button in ("back", "stop"):
            if self.armed == button and now - self.armed_at <= CONFIRM_SECONDS:
                self.armed = None
                return HostCommand(cmd="undo" if button == "back" else "abort")
            self.armed, self.armed_at = button, now
            return None
        self.armed = None
        return None

    def lines(self, now: float) -> list[str]:
        """The idle menu's lines (cursor marked with '>')."""
        rows = [
            f"Game: {self.games[self.game]}",
            f"Players: {self.players}",
            "Start",
        ]
        return [("> " if i == self.row else "  ") + r for i, r in enumerate(rows)]

    def prompt(self, now: float) -> str | None:
        """A confirmation prompt while a destructive press waits for its second press."""
        if self.armed and now - self.armed_at <= CONFIRM_SECONDS:
            return "Again to undo" if self.armed == "back" else "Again to abort game"
        return None

    def state(self) -> dict[str, Any]:
        return {"game": self.games[self.game], "players": self.players, "row": self.row}
