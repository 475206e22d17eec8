"""The host's panel menu: five buttons (prev, next, ok, back, stop) and a small screen.

Idle, the menu picks a game and a player count, then starts. During a game,
``next`` is the host's "next" (close the vote, open the next safe), ``back``
undoes the last move and ``stop`` aborts; ``back`` and ``stop`` ask for a
second press within a few seconds so a stray press costs nothing.

A hub with several tables has one panel: the menu's last row, "Table", switches it to
the next table (``ok``) or the previous one (``back``); during a game, ``prev`` does.
The hub display's title then starts with the table's name.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any

from firmware.link.lang import LANGUAGES, N_, _, label
from firmware.link.protocol import HostCommand
from firmware.link.render import scroll_title

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


#: What the host reads for each game and option (ids stay in the code and the store).
GAME_NAMES = {
    "secret-identity": N_("Secret Identity"),
    "incognito": N_("Incognito"),
    "identiquest": N_("Identiquest"),
    "ultra-secret": N_("Ultra Secret"),
    "identites-cryptees": N_("Identités cryptées"),
}
OPTION_NAMES = {
    "mode": N_("Mode"),
    "mystery": N_("Numbers"),
    "lang": N_("Words"),
    "countdown": N_("Countdown"),
    "give": N_("Gift"),
    "dial": N_("Dial"),
    "interrupt_window": N_("Window"),
}
VALUE_NAMES = {
    "competitive": N_("competitive"),
    "coop": N_("co-op"),
    "keys": N_("keys"),
    "dealt": N_("dealt"),
    "fr": N_("French"),
    "en": N_("English"),
    "top": N_("top gem"),
    "choose": N_("chosen"),
    "strict": N_("strict"),
    "free": N_("free"),
}


def game_name(game_id: str) -> str:
    """A game's name as the table reads it."""
    return label(GAME_NAMES, game_id)


def option_text(name: str, value: Any) -> str:
    """One option as the host reads it ("Countdown: 5 s", "Window: off")."""
    if isinstance(value, int) and not isinstance(value, bool):
        shown = _("off") if value == 0 else _("{n} s", n=value)
    else:
        shown = label(VALUE_NAMES, str(value))
    return _("{option}: {value}", option=_(OPTION_NAMES.get(name, name)), value=shown)


@dataclass(frozen=True)
class SwitchTable:
    """A press that moves the panel to another of the hub's tables (``step``: +1 or -1)."""

    step: int


@dataclass
class HostMenu:
    """Menu state; ``press`` returns the command a button press makes, if any.

    Rows: the game, the number of players, the game's options, the table's language,
    Start, and on a hub with several tables, the table the panel drives.
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
    #: What the table speaks (hub.toml's ``language`` until the host changes it).
    language: str = LANGUAGES[0]
    #: Identités cryptées card sets the host may pick (shipped ones and the table's own).
    card_sets: list[str] = field(default_factory=lambda: ["generic"])
    #: Each command the panel makes has an id ``panel<boot>:<n>``, new at every hub
    #: start, so the hub remembers its answer and never applies it twice.
    boot: str = field(default_factory=lambda: os.urandom(4).hex())
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    #: The hub's tables (in hub.toml's order) and this menu's.
    tables: list[str] = field(default_factory=list)
    table: str = ""

    def __post_init__(self) -> None:
        # A table of fewer stations than the default count starts within what it seats.
        if self.games:
            lo, hi = self._range()
            self.players = max(lo, min(hi, self.players))

    def _command(self, cmd: str, **fields: Any) -> HostCommand:
        return HostCommand(cmd=cmd, id=f"panel{self.boot}:{next(self._seq)}", **fields)  # type: ignore[arg-type]

    @property
    def game_id(self) -> str:
        return self.games[self.game]

    @property
    def option_rows(self) -> list[tuple[str, list[Any]]]:
        rows = list(GAME_OPTIONS.get(self.game_id, []))
        if self.game_id == "identites-cryptees":  # identites-cryptees.md, Options: by the host
            rows.append(("first", list(range(self.players))))
            rows.append(("cards", list(self.card_sets)))
            if self.players >= LEGION_FROM:
                rows.append(("legion_loyalty", [False, True]))
        return rows

    @property
    def language_row(self) -> int:
        return 2 + len(self.option_rows)

    @property
    def start_row(self) -> int:
        return self.language_row + 1

    @property
    def several(self) -> bool:
        return len(self.tables) > 1

    @property
    def table_row(self) -> int:
        """The "Table" row (last; only on a hub with several tables)."""
        return self.start_row + 1

    def options(self) -> dict[str, Any]:
        """The options the host chose for the current game."""
        picks = self.chosen.get(self.game_id, {})
        # Modulo: a row's values may shrink (the first player when fewer play).
        return {name: values[picks.get(name, 0) % len(values)] for name, values in self.option_rows}

    def _range(self) -> tuple[int, int]:
        lo, hi = self.limits.get(self.game_id, (1, self.max_players))
        return lo, min(hi, self.max_players)

    def press(self, button: str, *, playing: bool, now: float) -> HostCommand | SwitchTable | None:
        """Handle one button press."""
        if playing:
            return self._in_game(button, now)
        rows = self.table_row + 1 if self.several else self.start_row + 1
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
            elif self.row == self.language_row:
                i = (LANGUAGES.index(self.language) + step) % len(LANGUAGES)
                self.language = LANGUAGES[i]
            elif self.row < self.start_row:
                name, values = self.option_rows[self.row - 2]
                picks = self.chosen.setdefault(self.game_id, {})
                picks[name] = (picks.get(name, 0) + step) % len(values)
            elif self.row == self.table_row:
                return SwitchTable(step)
            elif button == "ok":
                return self._command(
                    "start", game=self.game_id, players=self.players, options=self.options()
                )
        return None

    def _in_game(self, button: str, now: float) -> HostCommand | SwitchTable | None:
        if button == "prev" and self.several:
            self.armed = None
            return SwitchTable(1)
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
        marked = [("> " if i == self.row else "  ") + r for i, r in enumerate(self._rows())]
        return marked[self._top() : self._top() + VISIBLE_ROWS]

    def title(self) -> str:
        """The idle title, with a scroll marker when rows lie above or below the screen."""
        title = f"{self.table[:8]}: {_('New game')}" if self.several else _("New game")
        return scroll_title(title, self._top(), VISIBLE_ROWS, len(self._rows()))

    def _rows(self) -> list[str]:
        rows = [game_name(self.game_id), _("Players: {n}", n=self.players)]
        rows += [option_text(name, value) for name, value in self.options().items()]
        rows.append(_("Language: {name}", name=_(VALUE_NAMES[self.language])))
        rows.append(_("Start"))
        if self.several:
            n = self.tables.index(self.table) + 1 if self.table in self.tables else 0
            rows.append(
                _("Table: {name} {n}/{count}", name=self.table, n=n, count=len(self.tables))
            )
        return rows

    def _top(self) -> int:
        rows = len(self._rows())
        return min(max(0, self.row - VISIBLE_ROWS + 1), max(0, rows - VISIBLE_ROWS))

    def prompt(self, now: float) -> str | None:
        """A confirmation prompt while a destructive press waits for its second press."""
        if self.armed and now - self.armed_at <= CONFIRM_SECONDS:
            return _("Again to undo") if self.armed == "back" else _("Again to abort game")
        return None

    def state(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "players": self.players,
            "row": self.row,
            "options": self.options(),
            "language": self.language,
        }
