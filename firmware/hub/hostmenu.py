"""The host's panel menu: five buttons (prev, next, ok, back, stop) and a small screen.

Idle, the menu picks a game and a player count, then starts. During a game,
``next`` is the host's "next" (close the vote, open the next safe), ``back``
undoes the last move and ``stop`` aborts; ``back`` and ``stop`` ask for a
second press within a few seconds so a stray press costs nothing.

A hub with several tables has one panel: the menu's last row, "Table", switches it to
the next table (``ok``) or the previous one (``back``); during a game, ``prev`` does.
The hub display's title then starts with the table's name.

While phones are signed in to the host's console, a "Phones: N" row follows the others:
``ok`` opens their page (each phone's id, browser and minutes since it was last seen),
``prev``/``next`` move, ``ok`` asks "End a1b2? ok" and a second ``ok`` within a few seconds
sends ``console-end`` for it, as ``coffre host console-end`` does; ``back`` leaves.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any

from firmware.link.lang import LANGUAGES, N_, _
from firmware.link.protocol import SOUNDS, HostCommand
from firmware.link.render import CHARS, DOWN, UP, marked_title
from rules import get_info
from rules.declare import Option

CONFIRM_SECONDS = 4.0
#: A page the host stepped to with ``ok`` stays this long before the pages turn again.
HOLD_SECONDS = 30.0
#: The screen shows this many menu rows at a time (it scrolls with the cursor); the
#: glass's last line says what ok and next do on the row under the cursor.
VISIBLE_ROWS = 3

#: The table's languages, as the host reads them.
LANGUAGE_NAMES = {"fr": N_("French"), "en": N_("English")}
#: The table's sound settings (firmware.link.protocol.SOUNDS), as the host reads them.
SOUND_NAMES = {"off": N_("off|sound"), "cues": N_("cues"), "narration": N_("cues+speech")}
#: What a table hears until its host says otherwise: the TV's cues, the stations' turn
#: buzz; narration is the host's choice (a voice over the table is not for every room).
DEFAULT_SOUND = "cues"


def sound_key(table: str) -> str:
    """Where the store keeps a table's sound setting (among the hub's settings)."""
    return f"sound/{table}"


def language_key(table: str) -> str:
    """Where the store keeps the language the host chose for a table."""
    return f"language/{table}"


def language_setting(chosen: str, configured: str) -> str:
    """The stored choice: the language the host chose and the hub.toml language it
    overrode (``"en over fr"``), so that an owner who edits hub.toml's language later wins
    again (:func:`chosen_language`)."""
    return f"{chosen} over {configured}"


def chosen_language(stored: str | None, configured: str) -> str:
    """What a table speaks: the host's stored choice while hub.toml still says the language
    it overrode, else hub.toml's (``configured``)."""
    chosen, _sep, over = (stored or "").partition(" over ")
    return chosen if over == configured and chosen in LANGUAGES else configured


def game_name(game_id: str) -> str:
    """A game's name as the table reads it (from the game's declaration)."""
    return _(get_info(game_id).name)


def value_text(option: Option, value: Any) -> tuple[str, dict[str, Any]]:
    """How one option's value reads, as a message id and its fields ("{n} s", n=5): the
    panel says it at once, the console's menu carries it to say in its own language. A
    value the game does not name reads as itself."""
    if option.kind == "seconds":
        return (N_("off"), {}) if value == 0 else (N_("{n} s"), {"n": value})
    if option.kind == "flag":
        return (N_("yes") if value else N_("no")), {}
    if option.kind == "seat":
        return N_("Seat {n}"), {"n": int(value) + 1}
    return str(option.values.get(str(value), value)), {}


def option_text(option: Option, value: Any) -> str:
    """One option as the host reads it ("Countdown: 5 s", "Window: off", "Legion: yes")."""
    msgid, params = value_text(option, value)
    return _("{option}: {value}", option=_(option.label), value=_(msgid, **params))


def scroll(cursor: int, count: int) -> tuple[int, str]:
    """Of ``count`` rows with ``cursor`` on one: the first of the VISIBLE_ROWS shown, and
    the arrows saying that more lie above or below (the menu's and the phones' page)."""
    top = min(max(0, cursor - VISIBLE_ROWS + 1), max(0, count - VISIBLE_ROWS))
    return top, (UP if top > 0 else "") + (DOWN if top + VISIBLE_ROWS < count else "")


@dataclass(frozen=True)
class SignedIn:
    """One phone signed in to the host's console as the menu shows it (the hub's list is
    firmware.hub.console_state's): its session's id, browser, minutes since last seen."""

    id: str
    browser: str
    minutes: int


@dataclass(frozen=True)
class SwitchTable:
    """A press that moves the panel to another of the hub's tables (``step``: +1 or -1)."""

    step: int


@dataclass
class HostMenu:
    """Menu state; ``press`` returns the command a button press makes, if any.

    Rows: the game, the number of players, the game's options, the table's language,
    what the table hears, Start, and on a hub with several tables, the table the panel drives.
    """

    games: list[str]
    max_players: int
    game: int = 0
    players: int = 5
    row: int = 0
    armed: str | None = None
    armed_at: float = 0.0
    #: Chosen option values per game (index into GAME_OPTIONS' values).
    chosen: dict[str, dict[str, int]] = field(default_factory=dict)
    #: What the table speaks (hub.toml's ``language`` until the host changes it; the
    #: store keeps the host's choice, see firmware.hub.hostcmd.set_language): the row asks
    #: the hub for the next language, as the Sound row does.
    language: str = LANGUAGES[0]
    #: What the table hears (the store's, see firmware.hub.hostcmd.set_sound): the row
    #: asks the hub for the next setting, which it keeps before the row shows it.
    sound: str = DEFAULT_SOUND
    #: Identités cryptées card sets the host may pick (shipped ones and the table's own).
    card_sets: list[str] = field(default_factory=lambda: ["generic"])
    #: Each command the panel makes has an id ``panel<boot>:<n>``, new at every hub
    #: start, so the hub remembers its answer and never applies it twice.
    boot: str = field(default_factory=lambda: os.urandom(4).hex())
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    #: The hub's tables (in hub.toml's order) and this menu's.
    tables: list[str] = field(default_factory=list)
    table: str = ""
    #: ``ok`` presses during a game since the pages last turned by themselves, and when
    #: the last was: each steps to the next page and holds it, then the help page.
    stepped: int = 0
    stepped_at: float = 0.0
    #: The finished game whose final ranking the host has left for the menu (``ok``).
    dismissed: Any = None
    #: The console's signed-in phones as the hub last heard them (firmware.hub.console
    #: keeps this current).
    phones: list[SignedIn] = field(default_factory=list)
    #: The phones' page: the phone under the cursor (None: the menu shows), and the
    #: phone whose ``ok`` waits for its second press, and since when.
    phone_page: int | None = None
    ending: str | None = None
    ending_at: float = 0.0

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
    def option_rows(self) -> list[tuple[Option, list[Any]]]:
        """The game's options the panel shows now, each with the values it offers (the
        game's declaration says which; a seat is one of the players, a card set one of
        the table's)."""
        rows: list[tuple[Option, list[Any]]] = []
        for option in get_info(self.game_id).options:
            if not option.on_panel(self.players):
                continue
            if option.kind == "seat":
                values: list[Any] = list(range(self.players))
            elif option.kind == "cards":
                values = list(self.card_sets)
            else:
                values = list(option.menu)
            rows.append((option, values))
        return rows

    @property
    def language_row(self) -> int:
        return 2 + len(self.option_rows)

    @property
    def sound_row(self) -> int:
        """What the table hears (the table's, like its language, not the game's)."""
        return self.language_row + 1

    @property
    def start_row(self) -> int:
        return self.sound_row + 1

    @property
    def several(self) -> bool:
        return len(self.tables) > 1

    @property
    def table_row(self) -> int:
        """The "Table" row (last; only on a hub with several tables)."""
        return self.start_row + 1

    @property
    def phones_row(self) -> int:
        """The "Phones: N" row (after the others; only while a phone is signed in)."""
        return (self.table_row if self.several else self.start_row) + 1

    @property
    def row_count(self) -> int:
        return self.phones_row + 1 if self.phones else self.phones_row

    def show_phones(self, phones: list[SignedIn]) -> bool:
        """The phones the hub heard of; True if the menu's rows or page changed. A row or
        a page that went away leaves the cursor on the last row, the menu."""
        if phones == self.phones:
            return False
        self.phones = list(phones)
        self.row = min(self.row, self.row_count - 1)
        if not phones:
            self.phone_page = None
        elif self.phone_page is not None:
            self.phone_page = min(self.phone_page, len(phones) - 1)
        if self.ending not in {p.id for p in phones}:
            self.ending = None
        return True

    def options(self) -> dict[str, Any]:
        """The options the host chose for the current game."""
        return {
            option.name: values[self._pick(option, values)] for option, values in self.option_rows
        }

    def _pick(self, option: Option, values: list[Any]) -> int:
        """The index of the value the row shows: the host's pick, else the default (the
        table's language for an option that follows it, else the first value)."""
        picks = self.chosen.get(self.game_id, {})
        if option.name in picks:
            # Modulo: a row's values may shrink (the first player when fewer play).
            return picks[option.name] % len(values)
        if option.table_language and self.language in values:
            return values.index(self.language)
        return 0

    def _range(self) -> tuple[int, int]:
        """The game's player range (its declaration), within the table's stations."""
        info = get_info(self.game_id)
        return info.min_players, min(info.max_players, self.max_players)

    def press(self, button: str, *, playing: bool, now: float) -> HostCommand | SwitchTable | None:
        """Handle one button press."""
        if playing:
            self.phone_page, self.ending = None, None
            return self._in_game(button, now)
        if self.phone_page is not None:
            return self._on_phones(button, now)
        rows = self.row_count
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
                i = LANGUAGES.index(self.language) if self.language in LANGUAGES else 0
                return self._command("language", language=LANGUAGES[(i + step) % len(LANGUAGES)])
            elif self.row == self.sound_row:
                i = SOUNDS.index(self.sound) if self.sound in SOUNDS else 0
                return self._command("sound", sound=SOUNDS[(i + step) % len(SOUNDS)])
            elif self.phones and self.row == self.phones_row:
                if button == "ok":
                    self.phone_page = 0
            elif self.row < self.start_row:
                option, values = self.option_rows[self.row - 2]
                picks = self.chosen.setdefault(self.game_id, {})
                picks[option.name] = (self._pick(option, values) + step) % len(values)
            elif self.row == self.table_row:
                return SwitchTable(step)
            elif button == "ok":
                return self._command(
                    "start", game=self.game_id, players=self.players, options=self.options()
                )
        return None

    def _on_phones(self, button: str, now: float) -> HostCommand | None:
        """The phones' page: ``ok`` twice on a phone ends its session (the hub decides:
        the command is ``console-end``'s); ``back`` first takes back a pending ``ok``."""
        assert self.phone_page is not None
        armed = self.ending is not None and now - self.ending_at <= CONFIRM_SECONDS
        if button in ("next", "prev") and self.phones:
            step = 1 if button == "next" else -1
            self.phone_page = (self.phone_page + step) % len(self.phones)
            self.ending = None
        elif button in ("back", "stop"):
            if not armed:
                self.phone_page = None
            self.ending = None
        elif button == "ok" and self.phones:
            chosen = self.phones[self.phone_page % len(self.phones)].id
            if armed and self.ending == chosen:
                self.ending = None
                return self._command("console-end", station=chosen)
            self.ending, self.ending_at = chosen, now
        return None

    def _in_game(self, button: str, now: float) -> HostCommand | SwitchTable | None:
        if button == "prev" and self.several:
            self.armed = None
            return SwitchTable(1)
        if button == "next":
            self.armed = None
            return self._command("next")
        if button == "ok":
            self.armed = None
            if now - self.stepped_at > HOLD_SECONDS:
                self.stepped = 0
            self.stepped, self.stepped_at = self.stepped + 1, now
            return None
        if button in ("back", "stop"):
            if self.armed == button and now - self.armed_at <= CONFIRM_SECONDS:
                self.armed = None
                return self._command("undo" if button == "back" else "abort")
            self.armed, self.armed_at = button, now
            return None
        self.armed = None
        return None

    def held(self, pages: int, now: float) -> int | str | None:
        """The page ``ok`` holds (an index, or "help"), None while the pages turn alone.
        With one page, ``ok`` goes straight to the help page; a press past it lets go."""
        if not self.stepped or now - self.stepped_at > HOLD_SECONDS:
            return None
        cycle: list[int | str | None] = [*(range(pages) if pages > 1 else []), "help", None]
        return cycle[(self.stepped - 1) % len(cycle)]

    def lines(self, now: float) -> list[str]:
        """The idle menu's visible lines (cursor marked with '>'; scrolls past 4 rows)."""
        if self.phone_page is not None:
            return self._phone_lines()
        marked = [("> " if i == self.row else "  ") + r for i, r in enumerate(self._rows())]
        top, _arrows = scroll(self.row, len(marked))
        return [*marked[top : top + VISIBLE_ROWS], self.hint()]

    def _phone_lines(self) -> list[str]:
        """The phones' page: one phone a line, ``a1b2 iPhone 12 min`` (the id's first four
        characters tell the host's phones apart; the browser is cut to fit 21 characters)."""
        assert self.phone_page is not None
        rows = []
        for i, phone in enumerate(self.phones):
            minutes = _("{n} min", n=phone.minutes)
            room = max(1, CHARS - 2 - len(phone.id[:4]) - len(minutes) - 2)
            label = (phone.browser or "?")[:room]
            mark = "> " if i == self.phone_page else "  "
            rows.append(f"{mark}{phone.id[:4]} {label} {minutes}")
        top, _arrows = scroll(self.phone_page, len(rows))
        return [*rows[top : top + VISIBLE_ROWS], _("ok:end back:menu")]

    def hint(self) -> str:
        """What ok and next do on the row under the cursor."""
        if self.phones and self.row == self.phones_row:
            return _("ok: see the phones")
        if self.row == self.start_row:
            return _("ok: start the game")
        if self.several and self.row == self.table_row:
            return _("ok: next table")
        return _("ok:change next:down")

    def title(self) -> str:
        """The idle title, with an arrow where more rows lie (above, below): a row count
        ("1-3/6") meant nothing to a host."""
        if self.phone_page is not None:
            _top, arrows = scroll(self.phone_page, len(self.phones))
            return marked_title(_("Phones: {n}", n=len(self.phones)), arrows, cut=".")
        title = f"{self.table[:8]}: {_('New game')}" if self.several else _("New game")
        _top, arrows = scroll(self.row, self.row_count)
        return marked_title(title, arrows, cut=".")

    def _rows(self) -> list[str]:
        rows = [game_name(self.game_id), _("Players: {n}", n=self.players)]
        chosen = self.options()
        rows += [option_text(option, chosen[option.name]) for option, _values in self.option_rows]
        rows.append(_("Language: {name}", name=_(LANGUAGE_NAMES[self.language])))
        rows.append(_("Sound: {name}", name=_(SOUND_NAMES.get(self.sound, self.sound))))
        rows.append(_("Start"))
        if self.several:
            n = self.tables.index(self.table) + 1 if self.table in self.tables else 0
            rows.append(
                _("Table: {name} {n}/{count}", name=self.table, n=n, count=len(self.tables))
            )
        if self.phones:
            rows.append(_("Phones: {n}", n=len(self.phones)))
        return rows

    def prompt(self, now: float) -> str | None:
        """A confirmation prompt while a destructive press waits for its second press."""
        if self.armed and now - self.armed_at <= CONFIRM_SECONDS:
            return _("Again to undo") if self.armed == "back" else _("Again to abort game")
        if self.ending and now - self.ending_at <= CONFIRM_SECONDS:
            return _("End {id}? ok", id=self.ending[:4])
        return None

    def state(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "players": self.players,
            "row": self.row,
            "options": self.options(),
            "language": self.language,
            "sound": self.sound,
        }
