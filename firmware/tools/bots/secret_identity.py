"""Secret Identity bots: they play through the stations' devices and the host's panel.

Competitive: the mystery key goes on the own station (with ``mystery: dealt`` the bot
lifts its flap and reads the number it was dealt), vote keys on the others', the knob
counts the picto cards placed and a press says ready; the host's "next" opens the safes.
Co-op: the active player taps the team's mystery key on its own station (or reads the
dealt one), places its pictos; the others tap answer keys on the active station (the
last one tapped is the team's answer) and the active player presses to open.
What the bots did is kept in :attr:`Director.record`, so tests recount the scores on
their own.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware.link.protocol import Screen
from firmware.tools.bots.host_bot import host_starts, until
from firmware.tools.simtable import PublicWatcher, SimTable

GAME = "secret-identity"


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
    #: Game options the host starts with (``mode``, ``mystery``).
    options: dict[str, Any] = field(default_factory=dict)
    #: Applied to every key number a bot picks in co-op (the team's key and answers):
    #: the no-leak test replays a game with the secrets relabelled.
    relabel: Callable[[int], int] = lambda n: n

    def view(self) -> dict[str, Any]:
        return self.watcher.public.get("view") or {}

    def start_game(self, players: int) -> None:
        """The host starts the game on the panel (or by command if the hub runs elsewhere)."""
        host_starts(self.sim, self.watcher, GAME, players, self.options)
        self.watcher.wait(lambda p: p.get("game") == GAME and p.get("view", {}).get("round") == 1)

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
                unit = "turn" if view["mode"] == "coop" else "round"
                self.say(f"-- {unit} {last_round} of {view['rounds']}")
            phase = view["phase"]
            version = pub["version"]
            if self.stop_at == (view["round"], phase):
                return pub
            if view["mode"] == "coop":
                self._coop(view)
            elif phase == "prepare":
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
            elif view["mystery"] == "dealt" and seat not in record["mystery"]:
                record["mystery"][seat] = self.read_key(
                    seat, f"R{view['round']}/", f"Round {view['round']}/"
                )
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
        self.sim.peek(station)

    def read_key(self, seat: int, *heads: str) -> int:
        """Lift the flap and read the mystery number on the glass (dealt numbers), once the
        title says one of ``heads`` ("Round 2/" or, short of room, "R2/")."""
        station = self.sim.stations[self._station(seat)]

        def showing(screen: Screen | None) -> bool:
            secret = screen.secret if screen is not None else None
            shown = screen is not None and any(f" {h}" in screen.title for h in heads)
            return shown and bool(secret and secret.big)

        until(lambda: showing(station.screen), 10)
        screen = self.sim.peek(station.id)
        assert screen.secret is not None
        return int(screen.secret.big or 0)

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

    # --- co-op ------------------------------------------------------------------------

    def _coop(self, view: dict[str, Any]) -> None:
        turn, active = view["round"], view["active"]
        record = self.record.setdefault(
            turn, {"active": active, "mystery": None, "answers": [], "answer": None}
        )
        station = self._station(active)
        if view["phase"] == "prepare":
            if view["mystery"] == "dealt":
                if record["mystery"] is None:
                    record["mystery"] = self.read_key(active, f"T{turn}/", f"Turn {turn}/")
            elif not view["seats"][active]["mystery_locked"]:
                number = self.relabel(self.rng.randint(1, 8))
                ack = self.sim.tap(station, self.sim.keys.uid_for("mystery", None, number))
                if ack is not None and ack.ok:
                    record["mystery"] = number
                self.peek(station)
            if not view["seats"][active]["ready"]:
                count = self.rng.randint(1, min(3, view["seats"][active]["pictos_left"]))
                for _ in range(count - 1):
                    self.sim.gesture(station, lambda c: c.turn(1))
                ack = self.sim.gesture(station, lambda c: c.press())
                if ack is not None and ack.ok:
                    record["pictos"] = count
                self.say(f"turn {turn}: {self._colour(active)} is ready ({count} pictos)")
            return
        # The answer: one or two guessers tap a key on the active safe (the last one
        # stands), then the active player presses to open.
        guessers = [s for s in range(len(view["seats"])) if s != active]
        said = 0  # nobody taps again the key that already stands
        for _ in range(self.rng.randint(1, 2)):
            guesser = self.rng.choice(guessers)
            said = self.rng.choice([n for n in range(1, 9) if n != said])
            number = self.relabel(said)
            uid = self.sim.keys.uid_for("vote", self._colour(guesser), number)
            ack = self.sim.tap(station, uid)
            if ack is not None and ack.ok:
                record["answers"].append((guesser, number))
                record["answer"] = number
        self.sim.gesture(station, lambda c: c.press())
        right = "right" if record["answer"] == record["mystery"] else "wrong"
        self.say(
            f"turn {turn}: {self._colour(active)}'s key {record['mystery']}, "
            f"the team said {record['answer']}: {right}"
        )


#: The Secret Identity bots, as :mod:`firmware.tools.bots` finds them.
Bot = Director
