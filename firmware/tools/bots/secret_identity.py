"""Secret Identity bots: they play through the stations' devices and the host's panel.

The mystery key goes on the own station, vote keys on the others', the knob counts the
picto cards placed and a press says ready; the host's "next" opens the safes. What the
bots did is kept in :attr:`Director.record`, so tests recount the scores on their own.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware.tools.simtable import TABLE, PublicWatcher, SimTable


@dataclass
class Director:
    """Bots playing Secret Identity through the stations' devices, plus the host's panel."""

    sim: SimTable
    watcher: PublicWatcher
    rng: random.Random
    say: Callable[[str], None] = print
    reveal_pause: float = 0.0
    #: What the bots physically did, per round: the referee's work checked independently.
    record: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: Stop before this phase of this round (tests that interrupt a game mid-way).
    stop_at: tuple[int, str] | None = None

    def view(self) -> dict[str, Any]:
        return self.watcher.public.get("view") or {}

    def start_game(self, players: int) -> None:
        """Use the host panel (or a host command if the hub runs elsewhere)."""
        if self.sim.hub is None:
            self.sim.host({"cmd": "start", "game": "secret-identity", "players": players})
            self.watcher.wait(lambda p: p.get("game") == "secret-identity")
            return
        panel = self.sim.panel
        panel.press("next")  # row: players
        hub = self.sim.hub
        assert hub is not None
        menu = hub.actors[TABLE].menu
        deadline = time.monotonic() + 10
        while menu.players != players and time.monotonic() < deadline:
            panel.press("ok")
            time.sleep(0.02)
        panel.press("prev")  # row: the game
        panel.press("prev")  # the rows wrap: Start, after the game's options
        panel.press("ok")
        self.watcher.wait(
            lambda p: p.get("game") == "secret-identity" and p.get("view", {}).get("round") == 1
        )

    def play(self) -> dict[str, Any]:
        """Play until the game is over; returns the final public table."""
        last_round = 0
        while True:
            pub = self.watcher.wait(lambda p: bool(p.get("view")))
            view = pub["view"]
            if view.get("is_over"):
                return pub
            if view["round"] != last_round:
                last_round = view["round"]
                self.say(f"-- round {last_round} of {view['rounds']}")
            phase = view["phase"]
            version = pub["version"]
            if self.stop_at == (view["round"], phase):
                return pub
            if phase == "prepare":
                self._prepare(view)
            elif phase == "vote":
                self._vote(view)
            elif phase == "reveal":
                self._reveal(view)
            # Act on a fresh table only: wait until this phase is over (or, while safes
            # open one by one, until the next one is).
            rnd = view["round"]

            def moved_on(
                p: dict[str, Any], v: int = version, r: int = rnd, ph: str = phase
            ) -> bool:
                if p.get("version", 0) <= v:
                    return False
                return ph == "reveal" or (p["view"]["round"], p["view"]["phase"]) != (r, ph)

            self.watcher.wait(moved_on)

    def _station(self, seat: int) -> str:
        return self.sim.names[seat]

    def _colour(self, seat: int) -> str:
        return self.sim.table_config.seating().colours[seat]

    def _round_record(self, view: dict[str, Any]) -> dict[str, Any]:
        return self.record.setdefault(view["round"], {"mystery": {}, "votes": {}, "pictos": {}})

    def _prepare(self, view: dict[str, Any]) -> None:
        record = self._round_record(view)
        bag = [n for n in range(1, 9) if n not in record["mystery"].values()]
        self.rng.shuffle(bag)
        for entry in view["seats"]:
            seat = entry["seat"]
            station = self._station(seat)
            if view["mystery"] == "keys" and not entry["mystery_locked"]:
                while bag:
                    number = bag.pop()
                    ack = self.sim.tap(station, self.sim.keys.uid_for("mystery", None, number))
                    if ack is not None and ack.ok:
                        record["mystery"][seat] = number
                        break
                self.peek(station)
            if not entry["ready"]:
                left = entry["pictos_left"]
                count = self.rng.randint(1, min(3, left))
                for _ in range(count - 1):
                    self.sim.gesture(station, lambda c: c.turn(1))
                ack = self.sim.gesture(station, lambda c: c.press())
                if ack is not None and ack.ok:
                    record["pictos"][seat] = count
                self.say(f"{self._colour(seat)} is ready ({count} pictos)")

    def peek(self, station: str) -> None:
        """Lift the flap, look at the secret, close it (each waits for the redraw)."""
        controls = self.sim.controls(station)
        for act in (controls.open_flap, controls.close_flap):
            before = self.sim.frame_count(station)
            act()
            self.sim.wait_frames(station, before + 1)

    def _vote(self, view: dict[str, Any]) -> None:
        record = self._round_record(view)
        n = len(view["seats"])
        for voter in range(n):
            numbers = self.rng.sample(range(1, 9), n - 1)
            targets = [s for s in range(n) if s != voter]
            for safe, number in zip(targets, numbers, strict=True):
                uid = self.sim.keys.uid_for("vote", self._colour(voter), number)
                ack = self.sim.tap(self._station(safe), uid)
                if ack is not None and ack.ok:
                    record["votes"][(voter, safe)] = number
        self.say("all votes are in")

    def _reveal(self, view: dict[str, Any]) -> None:
        if self.reveal_pause:
            time.sleep(self.reveal_pause)
        before = self.watcher.public.get("version", 0)
        self.sim.next()
        pub = self.watcher.wait(lambda p: p.get("version", 0) > before)
        opened = pub["view"].get("revealed") or []
        if len(opened) > len(view.get("revealed") or []):
            safe = opened[-1]
            right = ", ".join(self._colour(v) for v in safe["right"]) or "nobody"
            self.say(f"{self._colour(safe['safe'])}'s safe: key {safe['mystery']}; right: {right}")


#: The Secret Identity bots, as :mod:`firmware.tools.bots` finds them.
Bot = Director
