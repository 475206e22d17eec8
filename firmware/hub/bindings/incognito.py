"""Incognito at a physical table (RULES.md §2, table binding).

- Drawing: your place is on the public part of your screen, your secret word
  only under the flap (or while peek is held). A knob press says "done drawing".
- Vote cards are the default key set's vote keys of your colour numbered 1-6
  (keys 7 and 8 are refused): tap one on a drawer's station to lay it on that
  drawing. The numbered list of six words is on every screen; the knob scrolls it.
- The "5... stop" countdowns (option ``countdown``) show on every screen and the
  hub display; when one runs out the binding's timer sends the engine's ``timeout``.
- After each round the results are on every screen (yours first; the knob pages
  through every other drawing: word, finders, points); the host's "next" deals
  the next round (during a countdown, "next" ends it at once).
"""

from __future__ import annotations

import math
from typing import Any

from firmware.hub.table import Table
from firmware.link.protocol import Input, Screen, Secret
from firmware.link.render import glass
from firmware.link.render import wrap as _wrap
from rules.core import IllegalAction

IDLE_LED = (0, 0, 0)
ACT_LED = (255, 160, 0)
#: Words of the list shown at once on a station (the knob scrolls the rest).
LIST_WINDOW = 3
WIDTH = 21


class IncognitoBinding:
    """Inputs to Incognito actions; views to station and hub screens."""

    # --- inputs ----------------------------------------------------------------

    def translate(self, table: Table, seat: int, inp: Input) -> dict[str, Any]:
        pub = table.view(None)
        phase = pub["phase"]
        if inp.kind == "tag":
            key = table.key(inp.uid)
            if key.kind != "vote":
                raise IllegalAction("That card is not for this game")
            voter = table.seating.seat_of_colour(key.colour)
            if voter is None or voter >= table.players:
                raise IllegalAction(f"Nobody plays {key.colour}")
            if phase != "vote":
                raise IllegalAction("Not voting time")
            return {"rules": {"type": "vote", "seat": voter, "drawer": seat, "number": key.number}}
        if inp.kind == "press":
            if phase == "draw":
                return {"rules": {"type": "done", "seat": seat}}
            if phase == "vote":
                raise IllegalAction("Tap your vote cards on drawings")
            raise IllegalAction("The host starts the next round")
        if inp.kind == "knob":
            if phase == "vote":
                top = max(0, len(pub["list"]) - LIST_WINDOW)
            elif phase == "reveal":
                top = table.players - 1  # page 0: your results; then each other drawing
            else:
                raise IllegalAction("Nothing to choose now")
            new = max(0, min(top, self.scroll(table, seat) + (inp.step or 0)))
            return {"ui": {"seat": seat, "round": pub["round"], "phase": phase, "scroll": new}}
        raise IllegalAction("That button does nothing here")

    def apply_ui(self, table: Table, ui: dict[str, Any]) -> None:
        table.ui[f"scroll:{ui['seat']}"] = (int(ui["round"]), str(ui["phase"]), int(ui["scroll"]))

    def scroll(self, table: Table, seat: int) -> int:
        """The knob's position for a seat: first list word shown while voting, results
        page after the round (both start afresh with each round and phase)."""
        rnd, phase, value = table.ui.get(f"scroll:{seat}", (0, "", 0))
        pub = table.view(None)
        return int(value) if (rnd, phase) == (pub["round"], pub["phase"]) else 0

    # --- host and timers ---------------------------------------------------------

    def advance(self, table: Table) -> dict[str, Any] | None:
        pub = table.view(None)
        if pub["phase"] == "reveal":
            return {"rules": {"type": "next"}}
        if pub["countdown"]["running"]:
            return {"rules": {"type": "timeout"}}
        return None

    def timer(self, table: Table) -> tuple[float, dict[str, Any]] | None:
        countdown = table.view(None)["countdown"]
        if countdown["running"]:
            return float(countdown["seconds"]), {"rules": {"type": "timeout"}}
        return None

    # --- screens ----------------------------------------------------------------

    @staticmethod
    def seconds_left(table: Table) -> int | None:
        """The countdown's seconds as shown (None when none runs)."""
        countdown = table.view(None)["countdown"]
        if not countdown["running"]:
            return None
        left = table.timer_left
        return int(countdown["seconds"]) if left is None else max(0, math.ceil(left))

    def station_screen(self, table: Table, seat: int) -> Screen:
        me = table.view(seat)
        pub = me["table"]
        phase = pub["phase"]
        left = self.seconds_left(table)
        clock = "" if left is None else f" {left}s"
        label = {"draw": "Draw", "vote": "Vote", "reveal": "Results", "over": "Over"}[phase]
        title = f"{table.seating.name(seat)} R{pub['round']}/{pub['rounds']} {label}{clock}"
        led = IDLE_LED
        if phase == "draw":
            lines, busy = self._draw_lines(table, pub, seat, left)
        elif phase == "vote":
            lines, busy = self._vote_lines(table, pub, seat)
        elif phase == "reveal":
            page = self.scroll(table, seat)
            if page == 0:
                lines = [*self._reveal_lines(table, pub, seat), "Knob: each drawing"]
            else:
                lines = self._drawing_lines(table, pub, (seat + page) % table.players)
            busy = False
        else:
            lines, busy = self._final_lines(table, pub, seat), False
        if busy:
            led = ACT_LED
        secret = self._secret(table, me, clock)
        return Screen(
            rev=0,
            title=glass(title),
            lines=tuple(glass(line) for line in lines),
            secret=Secret(title=glass(secret.title), lines=tuple(glass(x) for x in secret.lines)),
            led=led,
        )

    def _draw_lines(
        self, table: Table, pub: dict[str, Any], seat: int, left: int | None
    ) -> tuple[list[str], bool]:
        lines = ["Draw your word in:", *_wrap(pub["places"][seat], 2)]
        done = pub["done"][seat]
        if not done:
            lines.append(f"STOP in {left}s! Press" if left is not None else "Press knob when done")
        else:
            waiting = pub["done"].count(False)
            lines.append(f"Done. Stop in {left}s" if left is not None else f"Done; {waiting} left")
        return lines, not done

    def _vote_lines(self, table: Table, pub: dict[str, Any], seat: int) -> tuple[list[str], bool]:
        others = table.players - 1
        laid = len(pub["voted"][seat])
        start = self.scroll(table, seat)
        words = [f"{i + 1} {w}" for i, w in enumerate(pub["list"])]
        if laid < others:
            head = f"Cards laid {laid}/{others}"
        else:
            late = sum(1 for row in pub["voted"] if len(row) < others)
            head = f"All laid; {late} voting"
        return [head, *words[start : start + LIST_WINDOW]], laid < others

    def _reveal_lines(self, table: Table, pub: dict[str, Any], seat: int) -> list[str]:
        reveal = pub["reveal"]
        others = table.players - 1
        drawing = reveal["drawings"][seat]
        found = sum(1 for d in reveal["drawings"] if seat in d["finders"])
        lines = [
            f"Round +{reveal['points'][seat]}, total {pub['scores'][seat]}",
            f"#{drawing['number']} {drawing['word']}",
            f"Found by {len(drawing['finders'])}/{others}, you {found}/{others}",
        ]
        return lines

    def _drawing_lines(self, table: Table, pub: dict[str, Any], drawer: int) -> list[str]:
        """One drawing's results: its word, who found it, its drawer's points."""
        name = table.seating.name
        reveal = pub["reveal"]
        drawing = reveal["drawings"][drawer]
        found = "Found: " + (" ".join(name(v)[:3] for v in drawing["finders"]) or "nobody")
        if len(found) > WIDTH:
            found = f"Found by {len(drawing['finders'])} of {table.players - 1}"
        return [
            f"{name(drawer)} drew #{drawing['number']}",
            drawing["word"],
            found,
            f"{name(drawer)} +{reveal['points'][drawer]}, total {pub['scores'][drawer]}",
        ]

    def _final_lines(self, table: Table, pub: dict[str, Any], seat: int) -> list[str]:
        ranking = pub["ranking"] or []
        mine = next(i for i, g in enumerate(ranking, start=1) if seat in g)
        points = pub["reveal"]["points"][seat]
        lines = [f"You: #{mine} (round +{points})"]
        for place, group in enumerate(ranking, start=1):
            for s in group:
                lines.append(f"{place}. {table.seating.name(s):<7}{pub['scores'][s]:>3}")
        return lines[:4]

    def _secret(self, table: Table, me: dict[str, Any], clock: str) -> Secret:
        pub = me["table"]
        rows = [me["word"]]
        if me["number"] is not None:
            rows.append(f"Number {me['number']} on the list")
        if pub["phase"] == "vote":
            name = table.seating.name
            cards = [f"{name(d)[:3]} {n}" for d, n in enumerate(me["votes"]) if n is not None]
            laid = [" ".join(cards[i : i + 3]) for i in range(0, len(cards), 3)]
            rows += laid or ["No card laid"]
        return Secret(title=f"Your secret word{clock}", lines=tuple(rows[:4]))

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)
        name = table.seating.name
        left = self.seconds_left(table)
        clock = "" if left is None else f" STOP {left}s"
        title = f"R{pub['round']}/{pub['rounds']} {pub['phase']}{clock}"
        phase = pub["phase"]
        if phase == "draw":
            waiting = [name(s)[:3] for s, d in enumerate(pub["done"]) if not d]
            still = "Drawing: " + " ".join(waiting)
            if len(still) > WIDTH:
                still = f"Still drawing: {len(waiting)}"
            return title, [f"Done drawing: {pub['done'].count(True)}/{table.players}", still]
        if phase == "vote":
            words = [f"{i + 1} {w}"[:10] for i, w in enumerate(pub["list"])]
            rows = [f"{words[i]:<10} {words[i + 1]}" for i in range(0, len(words) - 1, 2)]
            others = table.players - 1
            complete = sum(1 for row in pub["voted"] if len(row) == others)
            return title, [glass(r) for r in [*rows[:3], f"Voted: {complete}/{table.players}"]]
        points = pub["reveal"]["points"]
        cells = [f"{name(s)[:3]} +{points[s]}={pub['scores'][s]}" for s in range(table.players)]
        pairs = [cells[i : i + 2] for i in range(0, len(cells), 2)]
        rows = [" ".join(f"{c:<10}" for c in pair).rstrip() for pair in pairs]
        if phase == "reveal":
            rows.append("Next: new round")
        return title, [glass(row) for row in rows[:4]]


def make_binding(**settings: Any) -> IncognitoBinding:
    """The binding (Incognito's countdown length is the game option ``countdown``)."""
    return IncognitoBinding()
