"""Bots that play Identiquest at a simulated table, through the stations' knobs only.

Each bot lifts its own flap once to learn its identity colour, then on its turn
walks the knob menu: mostly it steals (gems of its own colour first), sometimes it
accuses a player of a colour that is neither its own nor crossed out. With the
option ``give: choose`` a bot that owes gems lifts its flap and gives away other
colours before its own. Bots read only the public table and their own station.

``piles`` follows every loot pile from what happened in the open (the market
before each steal, the gems handed over), so tests can score the game
independently of the hub.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware.hub.bindings.identiquest import gem_name
from firmware.link import lang
from firmware.link.lang import _ as text
from firmware.link.lang import plural, speaking
from firmware.link.protocol import Screen
from firmware.link.render import CHARS
from firmware.tools.bots.host_bot import host_starts, until
from firmware.tools.simtable import PublicWatcher, SimTable

GAME = "identiquest"


@dataclass
class Bot:
    """The players of an Identiquest table plus its host."""

    sim: SimTable
    watcher: PublicWatcher
    rng: random.Random
    say: Callable[[str], None] = print
    #: Game options the host starts with (``give``, ``deck``).
    options: dict[str, Any] = field(default_factory=dict)
    #: How often a bot with 2 gems or more accuses instead of stealing.
    accuse_rate: float = 0.3
    #: Stop after this many moves (tests that interrupt a game).
    stop_after: int | None = None
    #: Each seat's identity as its own bot read it under the flap.
    identity: dict[int, str] = field(default_factory=dict)
    #: Every loot pile (bottom first) as followed from the open table.
    piles: list[list[str]] = field(default_factory=list)
    moves: int = 0
    #: What the bots did: ``{"steal": n, "accuse": n, "right": n, "give": n}``.
    counts: dict[str, int] = field(default_factory=dict)

    def start_game(self, players: int) -> None:
        """The host panel with default options, else a host command."""
        host_starts(self.sim, self.watcher, GAME, players, self.options)
        self.piles = [[] for _ in range(players)]

    def play(self) -> dict[str, Any]:
        """Play until the game is over; returns the final public table."""
        with speaking(self.sim.language):  # the bots read the table's language
            return self._play()

    def _play(self) -> dict[str, Any]:
        pub = self.watcher.wait(lambda p: p.get("game") == GAME and bool(p.get("view")))
        colours = pub["view"]["colours"]
        for seat in range(pub["view"]["players"]):
            seen = self._peek(seat)
            self.identity[seat] = next(
                c for c in colours if seen == text("You are {colour}", colour=gem_name(c))
            )
        while True:
            pub = self.watcher.wait(lambda p: p.get("game") == GAME and bool(p.get("view")))
            view, version = pub["view"], pub["version"]
            if pub["over"] or (self.stop_after is not None and self.moves >= self.stop_after):
                if pub["over"]:
                    self._say_end(view)
                return pub
            if view["phase"] == "give":
                self._give(view)
            else:
                self._turn(view)
            self.moves += 1
            self.watcher.wait(_newer(version))

    # --- devices ---------------------------------------------------------------------

    def _station(self, seat: int) -> str:
        return self.sim.names[seat]

    def _name(self, seat: int) -> str:
        return self.sim.table_config.seating().colours[seat]

    def _seat(self, seat: int) -> str:
        """The seat's name as its station writes it."""
        return lang.colour(self._name(seat))

    def _screen(self, seat: int) -> Screen:
        screen = self.sim.stations[self._station(seat)].screen
        assert screen is not None
        return screen

    def _peek(self, seat: int) -> str:
        """Lift the flap, read the first secret line, lower it."""
        name = self._station(seat)
        sep = text("{seat}: YOUR TURN", seat="\x00").split("\x00")[1].split(":")[0] + ": "
        self._wait_title(seat, self._seat(seat) + sep)  # the game's screen
        secret = self.sim.peek(name).secret
        assert secret is not None
        return secret.lines[0]

    def _wait_title(self, seat: int, text: str) -> None:
        """Wait until the station shows what the public table says it should."""
        station = self.sim.stations[self._station(seat)]
        until(lambda: station.screen is not None and text in station.screen.title, 10)

    def _knob(self, seat: int, steps: int) -> None:
        if steps:
            ack = self.sim.gesture(self._station(seat), lambda c: c.turn(steps))
            assert ack is not None and ack.ok, ack

    def _press(self, seat: int) -> None:
        ack = self.sim.gesture(self._station(seat), lambda c: c.press())
        assert ack is not None and ack.ok, ack

    def _choose(self, seat: int, cursor: int, index: int, label: str) -> None:
        """Turn from ``cursor`` to menu line ``index``, check it reads ``label``, press."""
        self._knob(seat, index - cursor)
        lines = self._screen(seat).lines
        chosen = next((line[2:] for line in lines if line.startswith("> ")), None)
        if chosen is None or not chosen.startswith(label):
            raise RuntimeError(f"{self._name(seat)}: menu shows {lines}, wanted {label!r}")
        self._press(seat)

    # --- play ------------------------------------------------------------------------

    def _turn(self, view: dict[str, Any]) -> None:
        seat = view["turn"]
        mine = self.identity[seat]
        targets = [
            p
            for p in range(view["players"])
            if p != seat and view["unmasked"][p] is None and not view["escaped"][p]
        ]
        if targets and view["loot"][seat]["size"] >= 2 and self.rng.random() < self.accuse_rate:
            self._accuse(view, seat, self.rng.choice(targets), mine)
            return
        market = view["market"]
        slots = list(range(len(market)))
        self.rng.shuffle(slots)
        slots.sort(key=lambda s: market[s] != mine)  # own colour first (stable)
        a, b = slots[:2]
        self._wait_title(seat, text("{seat}: YOUR TURN", seat=self._seat(seat)))
        self._choose(seat, 0, 0, text("Steal 2 gems"))
        self._choose(seat, 0, a, f"{a + 1} {gem_name(market[a])}")
        self._choose(seat, a, b, f"{b + 1} {gem_name(market[b])}")
        self.piles[seat] += [market[a], market[b]]
        self._count("steal")
        self.say(f"{self._name(seat)} steals {market[a]} and {market[b]}")

    def _accuse(self, view: dict[str, Any], seat: int, target: int, mine: str) -> None:
        colours = view["colours"]
        taken = {c for c in view["unmasked"] if c is not None}
        row = view["suspects"][target]
        guesses = [
            c for i, c in enumerate(colours) if row[i] == "?" and c != mine and c not in taken
        ]
        if not guesses:  # only our own colour is left: a bot would not; steal instead
            guesses = [c for i, c in enumerate(colours) if row[i] == "?"]
        colour = self.rng.choice(guesses)
        line = (target - seat - 1) % view["players"]
        version = self.watcher.public["version"]
        self._wait_title(seat, text("{seat}: YOUR TURN", seat=self._seat(seat)))
        self._choose(seat, 0, 1, text("Accuse a player"))
        self._choose(seat, 0, line, self._seat(target))
        self._choose(seat, 0, colours.index(colour), gem_name(colour))
        pub = self.watcher.wait(_newer(version))["view"]
        right = pub["unmasked"][target] == colour
        self.say(
            f"{self._name(seat)} accuses {self._name(target)} of {colour}: "
            + ("right!" if right else "wrong")
        )
        self._count("accuse")
        if right:
            self._count("right")
        giver, receiver, owed = (target, seat, 4) if right else (seat, target, 2)
        pile = self.piles[giver]
        count = min(owed, len(pile))
        if pub["phase"] != "give":  # given at once, from the top
            for _ in range(count):
                self.piles[receiver].append(pile.pop())

    def _give(self, view: dict[str, Any]) -> None:
        """Lift the flap, walk the colour menu to one that is not ours, press."""
        pending = view["pending"]
        seat = pending["giver"]
        mine = self.identity[seat]
        name = self._station(seat)
        title = plural(
            "{seat}: give {n} gem", "{seat}: give {n} gems", pending["left"], seat=self._seat(seat)
        )
        self._wait_title(seat, title[:CHARS])
        self.sim.move_flap(name, True)
        try:
            while True:
                secret = self._screen(seat).secret
                assert secret is not None
                current = next(line[2:] for line in secret.lines if line.startswith("> "))
                word = current.split(" (")[0]
                colour = next(c for c in view["colours"] if gem_name(c) == word)
                if colour != mine:
                    break
                self._knob(seat, 1)
                after = self._screen(seat).secret
                assert after is not None
                if after == secret:  # the last colour: ours, then
                    break
            self._press(seat)
        finally:
            self.sim.move_flap(name, False)
        pile = self.piles[seat]
        at = len(pile) - 1 - pile[::-1].index(colour)
        self.piles[pending["receiver"]].append(pile.pop(at))
        self._count("give")
        self.say(f"{self._name(seat)} gives a {colour} gem to {self._name(pending['receiver'])}")

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def _say_end(self, view: dict[str, Any]) -> None:
        for seat, colour in enumerate(view["identities"] or []):
            n = view["scores"][seat]
            self.say(f"{self._name(seat)} was {colour}: {n} gem{'' if n == 1 else 's'}")


def _newer(version: int) -> Callable[[dict[str, Any]], bool]:
    """A predicate on ``public``: a version after ``version``."""
    return lambda p: p.get("version", 0) > version
