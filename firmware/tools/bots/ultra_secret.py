"""Bots that play Ultra Secret at a simulated table, through the knobs and flaps only.

Every choice is a knob menu under the flap: a bot turns its knob once (so its
station has every screen the hub sent before), lifts its flap, reads the menu,
turns to the option it wants (reading the four options the screen shows at a
time), presses, and lowers the flap. Bots know only the public table and what
their own station shows.

Strategy (light but purposeful): once a turn, in phase 1, a bot reads the first
two pages of its sheet (who is who, fakes, formula; its own mole cards). It
declares when the sheet says ALL SET, or once the game has run ``max_turns``
turns (the host starts the game with ``declare=any`` so that a capped game still
ends). It dials a square where it can learn something it does not know yet (an
enemy hotel or locker station while that colour's pseudonym is unknown, a secret
place whose fake is unknown when it holds a usable mole card, a mole square when
it holds fewer than two), else any open square. Bugs and informants are placed
now and then at random, searches always done (both bags / first lockers / a
read). The fugitive files what its sheet says (the cursor starts there) and
runs for F1; pursuers dial flight squares at random.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware.hub.bindings.identites_cryptees import CARDS
from firmware.hub.bindings.ultra_secret import BACK, COLOURS, SHEET, short
from firmware.link.lang import _ as text
from firmware.link.lang import speaking
from firmware.link.protocol import Screen, Secret
from firmware.link.render import MENU_INDENT
from firmware.tools.bots.host_bot import host_starts
from firmware.tools.simtable import PublicWatcher, SimTable

GAME = "ultra-secret"
_TITLE = re.compile(r"^(.*) (\d+)/(\d+)$")


@dataclass
class Known:
    """What a bot remembers of its own sheet (read under its flap)."""

    pseudonyms: dict[str, str] = field(default_factory=dict)
    fakes: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    moles: list[str] = field(default_factory=list)


@dataclass
class KnobBot:
    """Hands on the stations' knobs and flaps, reading knob menus under the flap.

    A menu under the flap has a title ``<heading> <cursor>/<size>`` and shows up to four
    options, the cursor's marked ``> ``, a long one wrapped onto indented rows (shared by
    the Ultra Secret and Identités cryptées bindings).
    """

    sim: SimTable
    watcher: PublicWatcher
    rng: random.Random
    say: Callable[[str], None] = print
    #: Counts of what the bots did (``press``, ``turn``, per phase or action kind).
    counts: dict[str, int] = field(default_factory=dict)

    # --- devices --------------------------------------------------------------------

    def _station(self, seat: int) -> str:
        return self.sim.names[seat]

    def _count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    def _turn(self, seat: int, steps: int) -> None:
        """Turn the knob ``steps`` detents and wait until the hub answered each."""
        if steps == 0:
            return
        name = self._station(seat)
        station = self.sim.stations[name]
        before = station.sent
        self.sim.controls(name).turn(steps)
        if not station.wait_settled(before + abs(steps) - 1, 15):
            raise TimeoutError(f"{name}: no answer from the hub")
        self._count("detent", abs(steps))

    def _press(self, seat: int) -> None:
        ack = self.sim.gesture(self._station(seat), lambda c: c.press())
        self._count("press")
        if ack is None or not ack.ok:
            raise RuntimeError(f"seat {seat}: press refused: {ack.message if ack else '?'}")

    def _flap(self, seat: int, is_open: bool) -> None:
        self.sim.move_flap(self._station(seat), is_open)

    def _secret(self, seat: int) -> Secret:
        """What the seat's glass shows under the open flap."""
        name = self._station(seat)
        assert self.sim.controls(name).flap_open, "a bot reads secrets only under its flap"
        screen: Screen | None = self.sim.stations[name].screen
        assert screen is not None and screen.secret is not None
        return screen.secret

    def _menu(self, seat: int) -> tuple[str, int, int, dict[int, str]]:
        """(heading, cursor, size, visible labels by index) of the menu under the flap."""
        secret = self._secret(seat)
        match = _TITLE.match(secret.title)
        assert match, secret.title
        heading, cur, size = match.group(1), int(match.group(2)) - 1, int(match.group(3))
        # Options start "> " or "  "; a line of news above them ("*T3 ...") is not one; a
        # long option goes on over indented lines.
        rows: list[str] = []
        for line in secret.lines:
            if line.startswith(MENU_INDENT) and rows:
                rows[-1] += " " + line.removeprefix(MENU_INDENT)
            elif line[:2] in ("> ", "  "):
                rows.append(line)
        row = next(i for i, line in enumerate(rows) if line.startswith("> "))
        start = cur - row
        return heading, cur, size, {start + i: ln[2:] for i, ln in enumerate(rows)}

    def _scan(self, seat: int) -> tuple[str, int, list[str]]:
        """Read the whole menu by turning through it: (heading, cursor, labels)."""
        heading, cur, size, seen = self._menu(seat)
        labels = dict(seen)
        while len(labels) < size:
            missing = min(i for i in range(size) if i not in labels)
            # The screen shows the cursor's option and the one before it (and the next
            # ones while they fit).
            target = min(missing + 1, size - 1)
            if target == cur:  # two long options do not fit together: go to it
                target = missing
            self._turn(seat, min(8, (target - cur) % size or 1))
            heading, cur, size, seen = self._menu(seat)
            labels.update(seen)
        return heading, cur, [labels[i] for i in range(size)]

    def _choose(self, seat: int, want: Callable[[list[str]], int]) -> str:
        """Scan the menu, let ``want`` pick an index, turn there and press."""
        _, cur, labels = self._scan(seat)
        target = want(labels)
        size = len(labels)
        delta = (target - cur) % size
        if delta > size // 2:
            delta -= size
        while delta:
            step = max(-8, min(8, delta))
            self._turn(seat, step)
            delta -= step
        _, cur, _, seen = self._menu(seat)
        assert seen[cur] == labels[target], (seen, labels[target])
        self._press(seat)
        return labels[target]

    def _pick(self, seat: int, *wishes: Callable[[str], bool]) -> str:
        """Press a random option the first wish that any option meets likes."""

        def want(labels: list[str]) -> int:
            for ok in (*wishes, _real):
                good = [i for i, lb in enumerate(labels) if ok(lb)]
                if good:
                    return self.rng.choice(good)
            raise AssertionError(labels)

        return self._choose(seat, want)


@dataclass
class Bot(KnobBot):
    """The players of an Ultra Secret table plus its host."""

    #: Options the host starts the game with.
    options: dict[str, Any] = field(default_factory=lambda: {"declare": "any"})
    #: Declare (under ``declare=any``) once the game has run this many turns.
    max_turns: int = 12
    bug_rate: float = 0.3
    informant_rate: float = 0.3
    known: dict[int, Known] = field(default_factory=dict)
    #: How often an agent dials its own square (impossible before the flight): with
    #: ``dial=free`` the knob offers it and the agent sits the turn out; strict never does.
    misdial_rate: float = 0.0
    #: Every declaration pressed: (seat, turn, whether its sheet said ALL SET).
    declared: list[tuple[int, int, bool]] = field(default_factory=list)

    # --- host -----------------------------------------------------------------------

    def start_game(self, players: int) -> None:
        """The host starts the game (with the bots' options), then the bots wait for its view."""
        host_starts(self.sim, self.watcher, GAME, players, self.options)
        self.watcher.wait(lambda p: p.get("game") == GAME and bool(p.get("view")))

    def play(self) -> dict[str, Any]:
        """Play until the game is over; returns the final public table."""
        with speaking(self.sim.language):  # the bots read the table's language
            return self._play()

    def _play(self) -> dict[str, Any]:
        while True:
            pub = self.watcher.wait(lambda p: p.get("game") == GAME and bool(p.get("view")))
            view, version = pub["view"], pub["version"]
            if pub["over"]:
                self._say_end(pub)
                return pub
            for seat in list(view["waiting"]):
                self._act(seat, view)
                self.watcher.wait(functools.partial(_moved_on, seat=seat, before=view))
            self.watcher.wait(functools.partial(_newer, version=version))

    # --- a seat's move --------------------------------------------------------------

    def _act(self, seat: int, view: dict[str, Any]) -> None:
        # There and back: the hub's answers prove the station has every screen sent before.
        self._turn(seat, 1)
        self._turn(seat, -1)
        self._flap(seat, True)
        phase = view["phase"]
        if phase == "bug":
            self._read_sheet(seat)
        chosen = getattr(self, f"_{phase}")(seat, view)
        self._flap(seat, False)
        self._count(phase)
        self.say(f"{COLOURS[seat]}: {chosen}")

    def _hide(self, seat: int, view: dict[str, Any]) -> str:
        picks = [self._pick(seat, _real) for _ in range(3)]
        return " / ".join(picks)

    def _read_sheet(self, seat: int) -> None:
        """Open the sheet (last menu item), read pages 1-2, go back to the menu."""
        _, cur, _, _ = self._menu(seat)
        self._turn(seat, -1 - cur)  # the cursor wraps round to "Sheet >"
        self._press(seat)
        summary = self._secret(seat)
        self._turn(seat, 1)
        mine = self._secret(seat)
        self._press(seat)  # back to the menu
        know = self.known.setdefault(seat, Known())
        cells = " ".join(summary.lines[:2]).split()
        for colour3, code in zip(cells[::2], cells[1::2], strict=True):
            colour = next(c for c in COLOURS if short(c) == colour3)
            if code != "?":
                know.pseudonyms[colour] = code
        fakes = summary.lines[2].split()[1:]
        know.fakes = {f"G{i + 1}": x for i, x in enumerate(fakes) if x != "?"}
        know.complete = text("  ALL SET").strip() in summary.lines[3]
        moles = mine.lines[3].split()[1:]
        know.moles = [] if moles == [text("none")] else moles
        self._count("sheet")

    def _bug(self, seat: int, view: dict[str, Any]) -> str:
        know = self.known[seat]
        if know.complete or view["turn"] >= self.max_turns:
            declare = text("Declare: I know!")
            chosen = self._pick(seat, _starts(declare), _starts(text("Pass")))
            if chosen.startswith(declare):
                self.declared.append((seat, view["turn"], know.complete))
            return chosen
        passing = _starts(text("Pass"))
        if self.rng.random() < self.bug_rate:
            return self._pick(seat, _starts(text("Bug {square}", square="")), passing)
        return self._pick(seat, passing)

    def _dial(self, seat: int, view: dict[str, Any]) -> str:
        useful = self._useful(seat, view)
        wishes: list[Callable[[str], bool]] = [lambda lb: lb.split()[0] in useful]
        here = view["agents"][seat]
        if self.misdial_rate and here and self.rng.random() < self.misdial_rate:
            wishes.insert(0, lambda lb: lb.split()[0] == here)
        return self._pick(seat, *wishes)

    def _useful(self, seat: int, view: dict[str, Any]) -> set[str]:
        """Squares where this seat's agent could learn something it does not know."""
        know = self.known.get(seat, Known())
        here = view["agents"][seat]
        out: set[str] = set()
        for i, colour in enumerate(view["colours"]):
            if colour != COLOURS[seat] and colour not in know.pseudonyms:
                out.add(f"H{i + 1}")
                out.add(view["lockers"].get(colour, ""))
        for g in ("G1", "G2", "G3", "G4", "G5"):
            if g not in know.fakes and (g in know.moles or len(know.moles) >= 2):
                out.add(g)
        if len(know.moles) < 2 and len(know.fakes) < 5:
            out.update({"V1", "V2", "V3"})
        out.discard("")
        out.discard(here or "")
        return out

    def _informant(self, seat: int, view: dict[str, Any]) -> str:
        if self.rng.random() < self.informant_rate:
            return self._pick(seat, _starts(text("At {square}", square="")))
        return self._pick(seat, _starts(text("Pass")))

    def _search(self, seat: int, view: dict[str, Any]) -> str:
        return self._pick(seat, lambda lb: _real(lb) and lb != text("Pass"))

    def _file(self, seat: int, view: dict[str, Any]) -> str:
        """Press through: each step's cursor starts on the sheet's answer."""
        steps = []
        for _ in range(len(view["colours"])):  # each enemy, the formula
            _, cur, _, seen = self._menu(seat)
            steps.append(seen[cur].split()[0])
            self._press(seat)
        self._choose(seat, lambda labels: labels.index(text("File it!")))
        return "filed " + " ".join(steps)

    def _flight(self, seat: int, view: dict[str, Any]) -> str:
        if view["fugitive"] == seat:
            return self._pick(seat, _starts("F1"))
        return self._pick(seat, _real)

    def _say_end(self, pub: dict[str, Any]) -> None:
        view = pub["view"]
        self.say(f"game over after {view['turn']} turns: {view['outcome']}")


def _real(label: str) -> bool:
    """A menu option that does something (not the sheet or cards, not a step back)."""
    return label not in (text(SHEET), text(BACK), text(CARDS))


def _prefix(msgid: str, name: str) -> str:
    """What a menu label with a ``{name}`` field starts with, in the table's language."""
    return text(msgid, **{name: "\x00"}).split("\x00")[0]


def _starts(prefix: str) -> Callable[[str], bool]:
    return lambda label: label.startswith(prefix)


def _newer(pub: dict[str, Any], version: int) -> bool:
    return int(pub.get("version", 0)) > version


def _moved_on(pub: dict[str, Any], seat: int, before: dict[str, Any]) -> bool:
    """The public table shows that ``seat`` acted (or the game moved past that step)."""
    view = pub.get("view") or {}
    if pub.get("over"):
        return True
    same = (view.get("phase"), view.get("turn")) == (before["phase"], before["turn"])
    return not same or seat not in view.get("waiting", [])
