"""Bots that play Incognito at a simulated table, through the stations' devices only.

A bot peeks under its own station's flap to learn its secret word, presses the
knob when its drawing is "done", reads the numbered list on the public table and
taps its colour's vote keys (numbered 1-6) on the other stations. It never votes
its own number (it knows its word); otherwise it guesses at random. The host's
"next" deals the next round. What each bot knew and did is kept in ``record`` so
tests can score the game independently of the hub.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware.link.lang import _ as text
from firmware.link.lang import speaking
from firmware.link.protocol import Screen
from firmware.link.render import glass
from firmware.tools.bots.host_bot import host_starts, until
from firmware.tools.simtable import PublicWatcher, SimTable

GAME = "incognito"


@dataclass
class Bot:
    """The players of an Incognito table plus its host."""

    sim: SimTable
    watcher: PublicWatcher
    rng: random.Random
    say: Callable[[str], None] = print
    #: Game options the host starts with (``lang``, ``countdown``).
    options: dict[str, Any] = field(default_factory=dict)
    #: The last drawer and the last voter of each round let the countdown run out.
    late: bool = False
    #: Stop before this phase of this round (tests that interrupt a game).
    stop_at: tuple[int, str] | None = None
    #: Per round: each seat's word and list number as its bot learned them, the cards
    #: the bots laid and the public results:
    #: ``{"word": {seat: w}, "number": {seat: n}, "votes": {(v, d): n}, "reveal": {...}}``.
    record: dict[int, dict[str, Any]] = field(default_factory=dict)

    # --- the host ------------------------------------------------------------------

    def start_game(self, players: int) -> None:
        """The host starts the game on the panel (options it offers), else by command."""
        host_starts(self.sim, self.watcher, GAME, players, self.options)
        self.watcher.wait(
            lambda p: p.get("game") == GAME and (p.get("view") or {}).get("round") == 1
        )

    def play(self) -> dict[str, Any]:
        """Play until the game is over; returns the final public table."""
        with speaking(self.sim.language):  # the bots read the table's language
            return self._play()

    def _play(self) -> dict[str, Any]:
        while True:
            pub = self.watcher.wait(lambda p: p.get("game") == GAME and bool(p.get("view")))
            view = pub["view"]
            if pub["over"]:
                self._results(view)
                return pub
            phase, rnd, version = view["phase"], view["round"], pub["version"]
            if self.stop_at == (rnd, phase):
                return pub
            if phase == "draw":
                self.say(f"-- round {rnd} of {view['rounds']}")
                self._draw(view)
            elif phase == "vote":
                self._vote(view)
            elif phase == "reveal":
                self._reveal(view)
            self.watcher.wait(
                _moved_on(version, rnd, phase),
                timeout=30 + 2 * int(view["countdown"]["seconds"]),
            )

    # --- the players ------------------------------------------------------------------

    def _station(self, seat: int) -> str:
        return self.sim.names[seat]

    def _colour(self, seat: int) -> str:
        return self.sim.table_config.seating().colours[seat]

    def _round(self, rnd: int) -> dict[str, Any]:
        return self.record.setdefault(rnd, {"word": {}, "number": {}, "votes": {}})

    def peek(self, seat: int, ready: Callable[[Screen], bool]) -> Screen:
        """Wait until the station shows a screen ``ready`` accepts, lift the flap, read, close."""
        name = self._station(seat)
        station = self.sim.stations[name]
        until(lambda: station.screen is not None and ready(station.screen), 10)
        return self.sim.peek(name)

    def _learn_word(self, seat: int, rnd: int, phase: str) -> None:
        """Peek under the seat's flap once a round: the secret part's first line is the word."""
        record = self._round(rnd)
        if seat not in record["word"]:
            screen = self.peek(seat, _showing(rnd, phase))
            assert screen.secret is not None
            record["word"][seat] = screen.secret.lines[0]

    def _draw(self, view: dict[str, Any]) -> None:
        rnd = view["round"]
        order = [s for s in range(view["players"]) if not view["done"][s]]
        self.rng.shuffle(order)
        for seat in order:
            self._learn_word(seat, rnd, "Draw")
        for i, seat in enumerate(order):
            if self.late and i == len(order) - 1:
                self.say(f"{self._colour(seat)} draws on: the countdown will stop them")
                return
            self.sim.gesture(self._station(seat), lambda c: c.press())
            self.say(f"{self._colour(seat)} is done drawing")

    def _vote(self, view: dict[str, Any]) -> None:
        record = self._round(view["round"])
        n = view["players"]
        words = view["list"]
        self.say("the list: " + ", ".join(f"{i + 1} {w}" for i, w in enumerate(words)))
        for seat in range(n):
            # The station spells the list as the glass can (glass()); so does the bot's eye.
            self._learn_word(seat, view["round"], "Vote")
            record["number"][seat] = [glass(w) for w in words].index(record["word"][seat]) + 1
        voters = [v for v in range(n) if len(view["voted"][v]) < n - 1]
        self.rng.shuffle(voters)
        for i, voter in enumerate(voters):
            own = record["number"][voter]
            drawers = [d for d in range(n) if d != voter]
            guesses = self.rng.sample([k for k in range(1, 7) if k != own], n - 1)
            if self.late and i == len(voters) - 1:
                drawers, guesses = drawers[:-1], guesses[:-1]
            for drawer, number in zip(drawers, guesses, strict=True):
                uid = self.sim.keys.uid_for("vote", self._colour(voter), number)
                ack = self.sim.tap(self._station(drawer), uid)
                if ack is not None and ack.ok:
                    record["votes"][(voter, drawer)] = number

    def _results(self, view: dict[str, Any]) -> None:
        """Read the round's results off the public table (and keep them in ``record``)."""
        reveal = view["reveal"]
        self._round(reveal["round"])["reveal"] = reveal
        for d in reveal["drawings"]:
            found = ", ".join(self._colour(v) for v in d["finders"]) or "nobody"
            self.say(f"{self._colour(d['drawer'])} drew #{d['number']} {d['word']}: {found}")

    def _reveal(self, view: dict[str, Any]) -> None:
        self._results(view)
        self.sim.next()


def _moved_on(version: int, rnd: int, phase: str) -> Callable[[dict[str, Any]], bool]:
    """A predicate on ``public``: a newer version in another round or phase."""
    return lambda p: (
        p.get("version", 0) > version
        and (
            p["view"]["round"],
            p["view"]["phase"],
        )
        != (rnd, phase)
    )


def _showing(rnd: int, phase: str) -> Callable[[Screen], bool]:
    """A predicate on a station's screen: round ``rnd`` ("Round 1/3" or, where the title
    is short of room, "R1/3"), phase label ``phase`` (the English word; the screen says it
    in the table's language)."""
    heads = [
        text(said, n=rnd, of="\x00").split("\x00")[0] for said in ("R{n}/{of}", "Round {n}/{of}")
    ]
    label = f" {text(phase)}"
    return lambda s: any(f" {head}" in s.title for head in heads) and label in s.title
