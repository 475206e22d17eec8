"""Secret Identity at a physical table (RULES.md §1, table binding).

- A mystery key tapped on your own station locks it in your safe.
- A vote key tapped on an opponent's station puts it in that safe (the key's
  colour says whose vote it is; the station says whose safe).
- The knob chooses how many picto cards you placed; a press confirms ("ready").
- Co-op: the team's answer is one vote key tapped on the active station; the
  active player presses the knob to open the safe.
- The flap (or peek button) shows your own key and votes, on your station only.
"""

from __future__ import annotations

from typing import Any

from firmware.hub.table import Table
from firmware.link.protocol import Input, Screen, Secret
from firmware.link.render import wrap as _wrap
from rules.core import IllegalAction

READY_LED = (0, 0, 0)
ACT_LED = (255, 160, 0)


class SecretIdentityBinding:
    """Inputs to Secret Identity actions; views to station and hub screens."""

    def __init__(self, reveal_delay: float = 0.0) -> None:
        #: Seconds between safe openings once voting is over; 0: the host says next.
        self.reveal_delay = reveal_delay

    # --- inputs ----------------------------------------------------------------

    def translate(self, table: Table, seat: int, inp: Input) -> dict[str, Any]:
        if inp.kind == "tag":
            return self._tag(table, seat, inp.uid)
        pub = table.view(None)
        coop = pub["mode"] == "coop"
        if inp.kind == "knob":
            lo, hi = self._picto_range(table, seat)
            if hi == 0:
                raise IllegalAction("Nothing to choose now")
            cur = self.cursor(table, seat)
            new = max(lo, min(hi, cur + (inp.step or 0)))
            return {"ui": {"seat": seat, "round": pub["round"], "cursor": new}}
        if inp.kind == "press":
            if coop and pub["phase"] == "answer" and seat == pub["active"]:
                return {"rules": {"type": "open", "seat": seat}}
            lo, hi = self._picto_range(table, seat)
            if hi == 0:
                raise IllegalAction("Nothing to confirm now")
            return {"rules": {"type": "pictos", "seat": seat, "count": self.cursor(table, seat)}}
        raise IllegalAction("That button does nothing here")

    def _tag(self, table: Table, seat: int, uid: str | None) -> dict[str, Any]:
        key = table.key(uid)
        coop = table.view(None)["mode"] == "coop"
        if key.kind == "mystery":
            return {"rules": {"type": "mystery", "seat": seat, "number": key.number}}
        if key.kind != "vote":
            raise IllegalAction("That card is not for this game")
        if coop:
            return {
                "rules": {
                    "type": "answer",
                    "seat": self._coop_voter(table, seat, key.colour),
                    "number": key.number,
                }
            }
        voter = table.seating.seat_of_colour(key.colour)
        if voter is None or voter >= table.players:
            raise IllegalAction(f"Nobody plays {key.colour}")
        if voter == seat:
            raise IllegalAction("That's your own safe")
        return {"rules": {"type": "vote", "seat": voter, "safe": seat, "number": key.number}}

    @staticmethod
    def _coop_voter(table: Table, seat: int, colour: str | None) -> int:
        """Co-op: the answer is the team's, tapped on the active safe; it is credited to the
        guesser whose colour the key has (any other key: the seat after the active one)."""
        pub = table.view(None)
        active = pub["active"]
        if seat != active:
            raise IllegalAction("Tap the answer on the active safe")
        owner = table.seating.seat_of_colour(colour) if colour else None
        if owner is not None and owner < table.players and owner != active:
            return owner
        return (int(active) + 1) % table.players

    def apply_ui(self, table: Table, ui: dict[str, Any]) -> None:
        # One cursor per round (turn, in co-op): each round starts again at 1 picto.
        prefix = f"cursor:{ui['round']}:"
        kept = {k: v for k, v in table.ui.items() if k.startswith(prefix)}  # drop old rounds
        table.ui = kept | {f"{prefix}{ui['seat']}": int(ui["cursor"])}

    def cursor(self, table: Table, seat: int) -> int:
        lo, hi = self._picto_range(table, seat)
        rnd = table.view(None)["round"]
        value = int(table.ui.get(f"cursor:{rnd}:{seat}", lo))
        return max(lo, min(hi, value))

    def _picto_range(self, table: Table, seat: int) -> tuple[int, int]:
        """(1, max) while this seat still has to confirm its pictos, else (0, 0)."""
        me = table.view(seat)
        pub = me["table"]
        if pub["phase"] != "prepare" or me["ready"]:
            return 0, 0
        if pub["mode"] == "coop" and seat != pub["active"]:
            return 0, 0
        hi = min(3, me["pictos_left"])
        return (1, hi) if hi else (0, 0)

    # --- host --------------------------------------------------------------------

    def advance(self, table: Table) -> dict[str, Any] | None:
        phase = table.view(None)["phase"]
        if phase in ("vote", "reveal", "answer"):
            return {"rules": {"type": "advance"}}
        return None

    def timer(self, table: Table) -> tuple[float, dict[str, Any]] | None:
        pub = table.view(None)
        if self.reveal_delay > 0 and pub["phase"] == "reveal":
            # Named after the safe it opens, so a safe the host opens by hand restarts the
            # delay: every safe gets its full time on the screens.
            safe = f"r{pub['round']}s{len(pub['revealed'])}"
            return self.reveal_delay, {"rules": {"type": "advance"}, "timer": safe}
        return None

    # --- screens ----------------------------------------------------------------

    def station_screen(self, table: Table, seat: int) -> Screen:
        me = table.view(seat)
        pub = me["table"]
        name = table.seating.name
        coop = pub["mode"] == "coop"
        phase = pub["phase"]
        head = f"T{pub['round']}/{pub['rounds']}" if coop else f"R{pub['round']}/{pub['rounds']}"
        title = f"{name(seat)} {head} {phase.capitalize()}"
        lines: list[str]
        led: tuple[int, int, int] = READY_LED
        if phase == "over":
            lines = self._final_lines(table, pub, seat)
        elif coop:
            lines, led = self._coop_lines(table, me, pub, seat)
        elif phase == "prepare":
            lines, led = self._prepare_lines(table, me, pub, seat)
        elif phase == "vote":
            cast = pub["seats"][seat]["votes_cast"]
            others = table.players - 1
            waiting = [name(s["seat"]) for s in pub["seats"] if s["votes_cast"] < others]
            lines = [
                f"Your votes: {cast}/{others}",
                f"In your safe: {pub['seats'][seat]['votes_in']}/{others}",
                "Waiting: " + (" ".join(w[:3] for w in waiting) or "-"),
                "Tap keys on others",
            ]
            led = ACT_LED if cast < others else READY_LED
        else:  # reveal
            lines = self._reveal_lines(table, pub, seat)
        return Screen(
            rev=0, title=title, lines=tuple(lines), secret=self._secret(table, me), led=led
        )

    def _prepare_lines(
        self, table: Table, me: dict[str, Any], pub: dict[str, Any], seat: int
    ) -> tuple[list[str], tuple[int, int, int]]:
        lines: list[str] = []
        need_key = pub["mystery"] == "keys" and not me["my_mystery"]
        if need_key:
            lines.append("Tap a mystery key")
        if not me["ready"]:
            lines.append(f"Pictos placed: < {self.cursor(table, seat)} >")
            lines.append("Turn knob, press = ok")
        else:
            waiting = sum(1 for s in pub["seats"] if not s["ready"] or not s["mystery_locked"])
            lines.append(f"Ready ({me['pictos_placed']} pictos)")
            lines.append(f"Waiting for {waiting} more")
        lines.append(f"Pictos in hand: {me['pictos_left']}")
        busy = need_key or not me["ready"]
        return lines, ACT_LED if busy else READY_LED

    def _reveal_lines(self, table: Table, pub: dict[str, Any], seat: int) -> list[str]:
        name = table.seating.name
        opened = pub["revealed"]
        lines: list[str] = []
        if opened:
            last = opened[-1]
            right = [name(v)[:3] for v in last["right"]]
            lines.append(f"{name(last['safe'])}'s key: {last['mystery']}")
            lines.append("Right: " + (" ".join(right) or "nobody"))
            lines.append(f"{name(last['safe'])} +{last['points']}")
        else:
            lines.append("Safes open in order")
        me = pub["seats"][seat]
        lines.append(f"Your score: {me['score']}")
        return lines

    def _coop_lines(
        self, table: Table, me: dict[str, Any], pub: dict[str, Any], seat: int
    ) -> tuple[list[str], tuple[int, int, int]]:
        active = pub["active"]
        team = pub["team"]["score"]
        if seat == active and pub["phase"] == "prepare":
            lines, led = self._prepare_lines(table, me, pub, seat)
            return [*lines[:3], f"Team: {team}"], led
        if pub["phase"] == "answer":
            if seat == active:
                return [
                    "Team: tap one key",
                    "here, then press",
                    "to open the safe",
                    f"Team: {team}",
                ], ACT_LED
            return [
                f"Guess {table.seating.name(active)}'s key",
                "Agree, then tap it",
                "on the active safe",
                f"Team: {team}",
            ], READY_LED
        return [f"{table.seating.name(active)} is preparing", f"Team: {team}"], READY_LED

    def _final_lines(self, table: Table, pub: dict[str, Any], seat: int) -> list[str]:
        if pub["mode"] == "coop":
            result = pub["result"] or {}
            text = str(result.get("text", ""))
            return [f"Right answers: {result.get('right', 0)}", *_wrap(text, 3)]
        lines = []
        for place, group in enumerate(pub["ranking"] or [], start=1):
            for s in group:
                lines.append(f"{place}. {table.seating.name(s):<7}{pub['seats'][s]['score']:>3}")
        mine = next(i for i, g in enumerate(pub["ranking"], start=1) if seat in g)
        me = f"You: #{mine} {table.seating.name(seat)} {pub['seats'][seat]['score']} pts"
        return [me, *lines][:4]

    def _secret(self, table: Table, me: dict[str, Any]) -> Secret | None:
        pub = me["table"]
        if pub["mode"] == "coop":
            if me["active"] and me["my_mystery"]:
                return Secret(title="Your mystery key", big=str(me["my_mystery"]))
            return None
        number = me["my_mystery"]
        if pub["phase"] == "vote" and me["my_votes"]:
            name = table.seating.name
            votes = [f"{name(v['safe'])[:3]} {v['number']}" for v in me["my_votes"]]
            rows = [" ".join(votes[i : i + 3]) for i in range(0, len(votes), 3)]
            return Secret(title=f"Your key: {number or '?'}", lines=("Your votes:", *rows))
        if number:
            return Secret(title="Your mystery key", big=str(number))
        return Secret(title="Your mystery key", lines=("No key yet",))

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)
        name = table.seating.name
        title = f"R{pub['round']}/{pub['rounds']} {pub['phase']}"
        if pub["mode"] == "coop":
            team = pub["team"]
            return title, [f"Team track: {team['position']}" + ("+30" * team["markers"])]
        cells = []
        for s in pub["seats"]:
            laps = "*" * s["markers"]
            cells.append(f"{name(s['seat'])[:5]:<5}{s['position']:>2}{laps}")
        rows = ["  ".join(cells[i : i + 2]) for i in range(0, len(cells), 2)]
        return title, rows[:4]


def make_binding(**settings: Any) -> SecretIdentityBinding:
    """The binding with a table's settings (``reveal_delay`` seconds, 0 = host says next)."""
    return SecretIdentityBinding(reveal_delay=float(settings.get("reveal_delay", 0.0)))
