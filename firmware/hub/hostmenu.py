"""The host's panel menu: five buttons (prev, next, ok, back, stop) and a small screen.

Idle, the menu picks a game and a player count, then starts. During a game,
``next`` is the host's "next" (close the vote, open the next safe), ``back``
undoes the last move and ``stop`` aborts; ``back`` and ``stop`` ask for a
second press within a few seconds so a stray press costs nothing.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any

from firmware.link.protocol import HostCommand

CONFIRM_SECONDS = 4.0
#: The screen shows this many menu rows at a time (it scrolls with the cursor).
VISIBLE_ROWS = 4

#: Options a host may set on the panel, per game: (option, values; the first is the default).
GAME_OPTIONS: dict[str, list[tuple[str, list[Any]]]] = {
    "secret-identity": [("mode", ["competitive", "coop"]), ("mystery", ["keys", "dealt"])],
    "incognito": [("lang", ["fr", "en"]), ("countdown", [5, 10, 20])],
    "identiquest": [("give", ["top", "choose"])],
    "ultra-secret": [("dial", ["strict", "free"])],
    "identites-cryptees": [("interrupt_window", [5, 10, 0])],
}
#: Identités cryptées: the Legion extension is for this many players or more.
LEGION_FROM = 6


@dataclass
class HostMenu:
    """Menu state; ``press`` returns the command a button press makes, if any.

    Rows: the game, the number of players, the game's options, Start.
    """

    games: list[str]
    max_players: int
    game: int = 0
    players: int = 5
    row: int = 0
    armed: str | None = None
    armed_at: float = 0.0
    limits: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Chosen option values per game (index into GAME_OPTIONS' values).
    chosen: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Identités cryptées card sets the host may pick (shipped ones and the table's own).
    card_sets: list[str] = field(default_factory=lambda: ["generic"])
    #: Each command the panel makes has an id ``panel<boot>:<n>``, new at every hub
    #: start, so the hub remembers its answer and never applies it twice.
    boot: str = field(default_factory=lambda: os.urandom(4).hex())
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def _command(self, cmd: str, **fields: Any) -> HostCommand:
        return HostCommand(cmd=cmd, id=f"panel{self.boot}:{next(self._seq)}", **fields)  # type: ignore[arg-type]

    @property
    def game_id(self) -> str:
        return self.games[self.game]

    @property
    def option_rows(self) -> list[tuple[str, list[Any]]]:
        rows = list(GAME_OPTIONS.get(self.game_id, []))
        if self.game_id == "identites-cryptees":  # RULES.md §5: chosen by the host
            rows.append(("first", list(range(self.players))))
            rows.append(("cards", list(self.card_sets)))
            if self.players >= LEGION_FROM:
                rows.append(("legion_loyalty", [False, True]))
        return rows

    @property
    def start_row(self) -> int:
        return 2 + len(self.option_rows)

    def options(self) -> dict[str, Any]:
        """The options the host chose for the current game."""
        picks = self.chosen.get(self.game_id, {})
        # Modulo: a row's values may shrink (the first player when fewer play).
        return {name: values[picks.get(name, 0) % len(values)] for name, values in self.option_rows}

    def _range(self) -> tuple[int, int]:
        lo, hi = self.limits.get(self.game_id, (1, self.max_players))
        return lo, min(hi, self.max_players)

    def press(self, button: str, *, playing: bool, now: float) -> HostCommand | None:
        """Handle one button press."""
        if playing:
            return self._in_game(button, now)
        rows = self.start_row + 1
        if button == "prev":
            self.row = (self.row - 1) % rows
        elif button == "next":
            self.row = (self.row + 1) % rows
        elif button in ("ok", "back"):
            step = 1 if button == "ok" else -1
            if self.row == 0:
                self.game = (self.game + step) % len(self.games)
                lo, hi = self._range()
                self.players = max(lo, min(hi, self.players))
            elif self.row == 1:
                lo, hi = self._range()
                self.players = lo + (self.players - lo + step) % (hi - lo + 1)
            elif self.row < self.start_row:
                name, values = self.option_rows[self.row - 2]
                picks = self.chosen.setdefault(self.game_id, {})
                picks[name] = (picks.get(name, 0) + step) % len(values)
            elif button == "ok":
                return self._command(
                    "start", game=self.game_id, players=self.players, options=self.options()
                )
        return None

    def _in_game(self, button: str, now: float) -> HostCommand | None:
        if button == "next":
            self.armed = None
            return self._command("next")
        if button in ("back", "stop"):
            if self.armed == button and now - self.armed_at <= CONFIRM_SECONDS:
                self.armed = None
                return self._command("undo" if button == "back" else "abort")
            self.armed, self.armed_at = button, now
            return None
        self.armed = None
        return None

    def lines(self, now: float) -> list[str]:
        """The idle menu's visible lines (cursor marked with '>'; scrolls past 4 rows)."""
        rows = [f"Game: {self.game_id}", f"Players: {self.players}"]
        rows += [f"{name}: {value}" for name, value in self.options().items()]
        rows.append("Start")
        marked = [("> " if i == self.row else "  ") + r for i, r in enumerate(rows)]
        top = min(max(0, self.row - VISIBLE_ROWS + 1), max(0, len(rows) - VISIBLE_ROWS))
        return marked[top : top + VISIBLE_ROWS]

    def prompt(self, now: float) -> str | None:
        """A confirmation prompt while a destructive press waits for its second press."""
        if self.armed and now - self.armed_at <= CONFIRM_SECONDS:
            return "Again to undo" if self.armed == "back" else "Again to abort game"
        return None

    def state(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "players": self.players,
            "row": self.row,
            "options": self.options(),
        }
