"""Bots that play Identités cryptées 2.0 at a simulated table, by knob and flap only.

Each bot first lifts its flap to read its own cards. Then, whenever the table
waits on one of them (its turn, an interrupt window, a hit to answer, a re-aim,
an ID ability, a discard), that bot turns its knob once there and back (so its
station has every screen sent before), lifts its flap, reads the knob menu four
options at a time, turns to its choice, presses (again inside a sub-menu), and
lowers the flap. Bots know only the public table and their own station's screen.

Play is random but aggressive so that games end: an armed bot fires most of the
time, an unarmed one takes a weapon half the time (else investigates or draws),
programs are played now and then, windows are passed (an anytime program is
sometimes played instead), hits are revealed or taken at random.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from firmware.link.lang import _ as text
from firmware.link.lang import speaking
from firmware.tools.bots.host_bot import host_starts
from firmware.tools.bots.ultra_secret import KnobBot, _prefix, _real, _starts

GAME = "identites-cryptees"


@dataclass
class Bot(KnobBot):
    """The players of an Identités cryptées table plus its host."""

    #: Options the host starts the game with.
    options: dict[str, Any] = field(default_factory=dict)
    fire_rate: float = 0.8
    program_rate: float = 0.1
    #: Each seat's own cards page as its bot read it under the flap.
    cards: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: Stop after this many actions (None: play to the end).
    max_moves: int | None = None
    moves: int = 0

    def start_game(self, players: int) -> None:
        """The host starts the game (with the bots' options), then the bots wait for its view."""
        host_starts(self.sim, self.watcher, GAME, players, self.options)
        self.watcher.wait(lambda p: p.get("game") == GAME and bool(p.get("view")))

    def play(self) -> dict[str, Any]:
        """Play until the game is over; returns the final public table."""
        with speaking(self.sim.language):  # the bots read the table's language
            return self._play()

    def _play(self) -> dict[str, Any]:
        pub = self.watcher.wait(_ready)
        for seat in range(pub["view"]["table"]["players"]):
            self._peek_cards(seat)
        while True:
            pub = self.watcher.wait(_ready)
            table, version = pub["view"]["table"], pub["version"]
            if pub["over"] or (self.max_moves is not None and self.moves >= self.max_moves):
                if pub["over"]:
                    self.say(f"game over: {(table['check'] or {}).get('message')}")
                return pub
            who = _waited_on(table)
            if who is None:  # nothing for a player to do: only the window's timer
                self.watcher.wait(functools.partial(_newer, version=version), timeout=30)
                continue
            self._act(who, table)
            self.moves += 1
            self.watcher.wait(functools.partial(_newer, version=version))

    def choose(self, seat: int, prefix: str) -> str:
        """Make one seat press the option starting with ``prefix`` (tests, demos)."""
        self._turn(seat, 1)
        self._turn(seat, -1)
        self._flap(seat, True)
        chosen = self._pick(seat, _starts(prefix))
        self._flap(seat, False)
        return chosen

    def _peek_cards(self, seat: int) -> None:
        """Lift the flap and read the first cards page (through "Cards >" from a menu)."""
        self._turn(seat, 1)  # there and back: the station has its game screen
        self._turn(seat, -1)
        self._flap(seat, True)
        secret = self._secret(seat)
        if not secret.title.startswith(text("Your cards")):
            _, cur, _, _ = self._menu(seat)
            self._turn(seat, -1 - cur)  # the cursor wraps round to "Cards >"
            self._press(seat)
            secret = self._secret(seat)
            self._press(seat)  # back to the menu
        self.cards[seat] = secret.lines
        self._flap(seat, False)
        self._count("peek")

    def _act(self, seat: int, table: dict[str, Any]) -> None:
        self._turn(seat, 1)
        self._turn(seat, -1)
        self._flap(seat, True)
        kind = table["pending"]["kind"]
        chosen = [self._top(seat, kind, table)]
        while chosen[-1].endswith(">"):
            chosen.append(self._pick(seat, _real))
        self._flap(seat, False)
        self._count(kind)
        self.say(f"{self.sim.table_config.seating().colours[seat]}: {' / '.join(chosen)}")

    def _top(self, seat: int, kind: str, table: dict[str, Any]) -> str:
        """The first choice in the top menu."""
        roll = self.rng.random()
        play = _prefix("Play {card} >", "card")
        if kind == "window":
            if roll < self.program_rate:
                return self._pick(seat, _starts(play), _starts(text("Pass")))
            return self._pick(seat, _starts(text("Pass")))
        if kind != "turn":
            return self._pick(seat, _real)
        if roll < self.program_rate:
            return self._pick(seat, _starts(play), _real)
        armed = table["seats"][seat]["weapon"] is not None
        if armed:
            if roll < self.fire_rate:
                return self._pick(seat, _starts(text("Fire >").rstrip(" >")), _real)
            return self._pick(seat, _real)
        if roll < 0.55:
            return self._pick(seat, _starts(_prefix("Take {weapon} >", "weapon")), _real)
        look = (text("Investigate >").rstrip(" >"), text("Draw a program"))
        return self._pick(seat, lambda lb: lb.startswith(look), _real)


def _ready(pub: dict[str, Any]) -> bool:
    return pub.get("game") == GAME and bool(pub.get("view"))


def _newer(pub: dict[str, Any], version: int) -> bool:
    return bool(pub.get("over")) or int(pub.get("version", 0)) > version


def _waited_on(table: dict[str, Any]) -> int | None:
    """The seat the table waits on (the first one still to answer in a window)."""
    if table["phase"] == "window":
        waiting = (table["window"] or {}).get("waiting") or []
        return waiting[0] if waiting else None
    seat = table["pending"].get("seat")
    return seat if isinstance(seat, int) else None
