"""Secret Identity at a physical table (table binding; rules in rules/docs/secret-identity.md).

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

from firmware.hub.bindings import ranking
from firmware.hub.bindings.common import ACT_LED, hub_title_room, phase_label, seconds_shown
from firmware.hub.bindings.numbered import numbered
from firmware.hub.table import Table
from firmware.link import lang
from firmware.link.lang import N_, _, plural
from firmware.link.protocol import Input, Screen, Secret
from firmware.link.render import CHARS, first_fitting, fit_list, glass, shrink
from firmware.link.render import wrap as _wrap
from rules.core import IllegalAction
from rules.secret_identity import INFO

READY_LED = (0, 0, 0)


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
        if inp.kind == "knob" and pub["phase"] == "over":  # the knob scrolls the ranking
            return ranking.scroll(table, seat, len(self._ranking_rows(table, pub)), inp.step)
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
            raise IllegalAction("Nobody plays {colour}", colour=key.colour)
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
        if ranking.apply(table, ui):  # the final ranking's first row shown
            return
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
        # "Red Round 2/4 Vote" where every phase's title fits so (a long name cut to no
        # less than six letters), else "Red R2/4 Vote" in every phase: the title keeps
        # one shape all game.
        words = self._words_fit(table, seat, pub)
        title = _title(name(seat), _head(pub, words), phase_label(INFO, phase))
        lines: list[str]
        led: tuple[int, int, int] = READY_LED
        if phase == "over" and not coop:
            title, lines = self._final_screen(table, pub, seat)
        elif phase == "over":
            lines = self._coop_final_lines(table, pub)
        elif coop:
            lines, led = self._coop_lines(table, me, pub, seat)
        elif phase == "prepare":
            lines, led = self._prepare_lines(table, me, pub, seat)
        elif phase == "vote":
            cast = pub["seats"][seat]["votes_cast"]
            others = table.players - 1
            waiting = [s["seat"] for s in pub["seats"] if s["votes_cast"] < others]
            lines = [
                _("Your votes: {n}/{of}", n=cast, of=others),
                _("In your safe: {n}/{of}", n=pub["seats"][seat]["votes_in"], of=others),
                _waiting(table, waiting, seat),
                _("Vote on others' safes") if cast < others else _("Votes done: wait"),
            ]
            led = ACT_LED if cast < others else READY_LED
        else:  # reveal
            lines = self._reveal_lines(table, pub, seat)
        return Screen(
            rev=0, title=title, lines=tuple(lines), secret=self._secret(table, me), led=led
        )

    @staticmethod
    def _words_fit(table: Table, seat: int, pub: dict[str, Any]) -> bool:
        """Whether the seat's title says the round in words in every phase of the game."""
        head, name = _head(pub, True), table.seating.name(seat)
        for phase in TITLE_PHASES:
            title = _title(name, head, phase_label(INFO, phase))
            if len(glass(title)) > CHARS or not title.startswith(name[:6]):
                return False
        return True

    def _prepare_lines(
        self,
        table: Table,
        me: dict[str, Any],
        pub: dict[str, Any],
        seat: int,
        *,
        steady: bool = True,
    ) -> tuple[list[str], tuple[int, int, int]]:
        """``steady``: the first line stays all through the phase, so a tap or a press
        changes lines in place and none moves. The player sees the tap was taken, and on a
        station the glass gets a quarter of the bytes (an SSD1306 takes ~20 ms of I2C for a
        whole new screen at 400 kHz; see docs/benchmarks.md). Co-op fits its team line
        under these lines instead."""
        lines: list[str] = []
        need_key = pub["mystery"] == "keys" and not me["my_mystery"]
        if need_key:
            lines.append(_("Tap a mystery key"))
        elif steady and pub["mystery"] == "keys":
            lines.append(_("Mystery key locked"))
        elif pub["mystery"] == "dealt" and (steady or not me["ready"]):
            lines.append(_("Lift flap: your number"))
        if not me["ready"]:
            lines.append(_("Pictos placed: < {n} >", n=self.cursor(table, seat)))
            lines.append(_("Turn knob, press = ok"))
        else:
            waiting = [s["seat"] for s in pub["seats"] if not s["ready"] or not s["mystery_locked"]]
            lines.append(plural("Ready ({n} picto)", "Ready ({n} pictos)", me["pictos_placed"]))
            lines.append(_waiting(table, waiting, seat))
        lines.append(_("Pictos in hand: {n}", n=me["pictos_left"]))
        busy = need_key or not me["ready"]
        return lines, ACT_LED if busy else READY_LED

    def _reveal_lines(self, table: Table, pub: dict[str, Any], seat: int) -> list[str]:
        name = table.seating.name
        opened = pub["revealed"]
        lines: list[str] = []
        if opened:
            last = opened[-1]
            right = [v["voter"] for v in last["votes"] if v["right"]]
            lines.append(
                shrink(
                    lambda who: plural(
                        "{seat}: key {key}, {n} pt",
                        "{seat}: key {key}, {n} pts",
                        last["points"],
                        seat=who,
                        key=last["mystery"],
                    ),
                    name(last["safe"]),
                )
            )
            shown = [table.seating.short(v) for v in right] or [_("nobody")]
            lines.append(fit_list(_("Right:"), shown))  # "+2" for those that do not fit
            # Every safe opened this round keeps its points in sight, the newest first.
            earlier = [f"{table.seating.short(o['safe'])} {o['points']}" for o in opened[-2::-1]]
            if earlier:
                lines.append(_points_line(earlier))
        else:
            lines.append(_("Safes open in order"))
        score = pub["seats"][seat]["score"]
        if self.timer(table) is not None:
            # The reveal delay runs: every seat sees what comes next and when, as the hub's
            # title counts it ("Round 1/4 Reveal 7s"); the screen changes once a second.
            left = seconds_shown(table.timer_left, self.reveal_delay)
            if len(lines) < 3:
                return [*lines, self._coming(pub, left), _("Your score: {n}", n=score)]
            return [*lines, _("You {n} pts, next {s}s", n=score, s=left)]
        if pub["next_safe"] is not None and not self.reveal_delay:
            if len(lines) < 3:
                return [*lines, _("Wait for the host"), _("Your score: {n}", n=score)]
            # The earlier safes' points stay: the score and the wait share the last line.
            return [*lines, _("You {n} pts, host next", n=score)]
        return [*lines, _("Your score: {n}", n=score)]

    @staticmethod
    def _coming(pub: dict[str, Any], left: int) -> str:
        """What the reveal delay opens when it runs out, and in how many seconds."""
        if pub["next_safe"] is not None:
            return _("Next safe in {s}s", s=left)
        if pub["round"] < pub["rounds"]:
            return _("Round {n} in {s}s", n=pub["round"] + 1, s=left)
        return _("Final scores in {s}s", s=left)

    def _coop_lines(
        self, table: Table, me: dict[str, Any], pub: dict[str, Any], seat: int
    ) -> tuple[list[str], tuple[int, int, int]]:
        active = pub["active"]
        team = _("Team: {n}", n=pub["team"]["score"])
        if seat == active and pub["phase"] == "prepare":
            lines, led = self._prepare_lines(table, me, pub, seat, steady=False)
            if me["ready"] and not pub["seats"][seat]["mystery_locked"]:
                lines[-2] = _("Waiting for your key")
            return [*lines[:3], team], led
        last = _last_turn(table, pub)
        if pub["phase"] == "answer":
            if seat == active:
                if pub["answered"]:
                    return [_("Team answered"), _("Press to open"), last, team], ACT_LED
                return [_("Team: tap one key"), _("here, then press"), last, team], ACT_LED
            # The team's answer itself is under the flap (the active player must not read it
            # on a neighbour's glass).
            answered = bool(me["answer"])
            return [
                _("Guess {seat}'s key", seat=table.seating.name(active)),
                _("Answered: lift flap") if answered else _("Agree, tap it on"),
                _("Tap again to change") if answered else _("the active safe"),
                team,
            ], READY_LED
        return [_("{seat} is preparing", seat=table.seating.name(active)), last, team], READY_LED

    @staticmethod
    def _coop_final_lines(table: Table, pub: dict[str, Any]) -> list[str]:
        result = pub["result"] or {}
        right = int(result.get("right", 0))
        said = INFO.band(int(result.get("band", [0])[0]))
        band = _(said.short) if said else ""
        return [
            plural("{n} right answer", "{n} right answers", right),
            _last_turn(table, pub),
            *_wrap(band, 2),
        ]

    def _final_screen(self, table: Table, pub: dict[str, Any], seat: int) -> tuple[str, list[str]]:
        """The seat's own rank, then the ranking, which the knob scrolls ("1-3/8 ▼")."""
        ranks = lang.ranks(pub["ranking"] or [])
        me = _(
            "You: #{rank} {seat} {n} pts",
            rank=ranks[seat],
            seat=table.seating.name(seat),
            n=pub["seats"][seat]["score"],
        )
        title = shrink(lambda who: f"{who} {phase_label(INFO, 'over')}", table.seating.name(seat))
        return ranking.screen(title, me, self._ranking_rows(table, pub), table, seat)

    @staticmethod
    def _ranking_rows(table: Table, pub: dict[str, Any]) -> list[str]:
        ranks = lang.ranks(pub["ranking"] or [])
        return [
            f"{ranks[s]}. {table.seating.name(s):<8}{pub['seats'][s]['score']:>3}"
            for group in pub["ranking"] or []
            for s in group
        ]

    def _secret(self, table: Table, me: dict[str, Any]) -> Secret | None:
        pub = me["table"]
        if pub["mode"] == "coop":
            if me["active"] and me["my_mystery"]:
                return Secret(title=_("Your mystery key"), big=str(me["my_mystery"]))
            if me["answer"]:
                return Secret(title=_("Team answer"), big=str(me["answer"]))
            return None
        number = me["my_mystery"]
        if pub["phase"] == "vote" and me["my_votes"]:
            short = table.seating.short
            votes = [f"{short(v['safe'])} {v['number']}" for v in me["my_votes"]]
            rows = [" ".join(votes[i : i + 3]) for i in range(0, len(votes), 3)]
            title = _("Your key: {n}", n=number or "?")
            return Secret(title=title, lines=(_("Your votes:"), *rows))
        if number:
            return Secret(title=_("Your mystery key"), big=str(number))
        return Secret(title=_("Your mystery key"), lines=(_("No key yet"),))

    def next_hint(self, table: Table) -> str | None:
        """What the host's next press does now, for the hub display's last line."""
        pub = table.view(None)
        phase = pub["phase"]
        if phase == "vote":
            return _("close vote")
        if phase == "answer":
            return _("open safe")
        if phase == "reveal":
            if pub["next_safe"] is not None:
                safe = pub["next_safe"]
                return _("open {seat}", seat=numbered(table.seating.short(safe), safe))
            if pub["round"] < pub["rounds"]:
                return _("round {n}", n=pub["round"] + 1)
            return _("scores|final")
        return None

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)
        lines = self._host_lines(table, pub)
        phase = phase_label(INFO, pub["phase"])
        forms = [_("{head} {phase}", head=_head(pub, w), phase=phase) for w in (True, False)]
        if self.timer(table) is not None:
            # The reveal delay's seconds end the title ("Round 1/4 Reveal 7s"), the wording
            # chosen with the delay's own count so it keeps one shape while they run down.
            clock = f" {seconds_shown(table.timer_left, self.reveal_delay)}s"
            widest = f" {seconds_shown(None, self.reveal_delay)}s"
            title = first_fitting([f + widest for f in forms], hub_title_room(lines))
            return title.removesuffix(widest) + clock, lines
        title = first_fitting(forms, CHARS - len(" 1/2"))  # the hub's page count
        if pub["phase"] == "reveal" and pub["next_safe"] is not None and not self.reveal_delay:
            # The stations say "Wait for the host": the host reads what the press does.
            safe = pub["next_safe"]
            title = first_fitting(
                [
                    _("Next opens {seat}", seat=numbered(name(safe), safe))
                    for name in (table.seating.name, table.seating.short)
                ]
            )
        return title, lines

    @staticmethod
    def _host_lines(table: Table, pub: dict[str, Any]) -> list[str]:
        """The hub display's lines: the team's track (co-op), else each seat's."""
        if pub["mode"] == "coop":
            team = pub["team"]
            track = _("Team track: {n}", n=team["position"]) + ("+30" * team["markers"])
            return [track, _last_turn(table, pub)]
        cells = []
        for s in pub["seats"]:
            laps = "*" * s["markers"]
            seat = numbered(table.seating.short(s["seat"]), s["seat"])  # "Red1": not colour alone
            cells.append(f"{seat} {s['position']:>2}{laps:<2}")
        return ["   ".join(cells[i : i + 2]).rstrip() for i in range(0, len(cells), 2)]


def _head(pub: dict[str, Any], words: bool = False) -> str:
    """ "Round 2/4" (rounds) or "Turn 3/8" (co-op turns) in ``words``, else "R2/4" or "T3/8",
    in the table's language."""
    n, of = pub["round"], pub["rounds"]
    if pub["mode"] == "coop":
        return _("Turn {n}/{of}", n=n, of=of) if words else _("T{n}/{of}", n=n, of=of)
    return _("Round {n}/{of}", n=n, of=of) if words else _("R{n}/{of}", n=n, of=of)


def _waiting(table: Table, seats: list[int], me: int) -> str:
    """Who the table waits for, in short colours ("+2" for those that do not fit); the
    seat reading it is "you", first."""
    names = [table.seating.short(s) for s in seats if s != me]
    if me in seats:
        names.insert(0, _(YOU))
    return fit_list(_("Waiting:"), names or ["-"])


#: The seat itself in a list of seats ("Waiting: you Yel +2").
YOU = N_("you|in a list of seats")
#: The phases a station's title names (the game's end has a title of its own).
TITLE_PHASES = ("prepare", "vote", "reveal", "answer")


def _points_line(items: list[str]) -> str:
    """ "Pts: Red 3, Grn 0": the points of the safes opened before the last, as many as
    fit, the newest first ("" before the second safe)."""
    if not items:
        return ""
    line = _("Pts: {list}", list=items[0])
    for k in range(2, len(items) + 1):
        longer = _("Pts: {list}", list=", ".join(items[:k]))
        if len(glass(longer)) > CHARS:
            break
        line = longer
    return line


def _title(name: str, head: str, phase: str) -> str:
    """ "Red Round 2/4 Vote": the seat's name cut (marked ".") until the title fits."""
    return shrink(lambda who: _("{seat} {head} {phase}", seat=who, head=head, phase=phase), name)


def _last_turn(table: Table, pub: dict[str, Any]) -> str:
    """What the last co-op turn showed: the right number, and whether the team had it."""
    history = pub["history"]
    if not history:
        return ""
    last = history[-1]
    n, key, answer = last["turn"], last["mystery"], last["answer"] or "-"
    if last["right"]:
        return first_fitting(
            [_("Turn {n}: {key} right!", n=n, key=key), _("T{n}: {key} right!", n=n, key=key)]
        )
    return first_fitting(
        [
            _("Turn {n}: was {key}, not {answer}", n=n, key=key, answer=answer),
            _("T{n}: was {key}, not {answer}", n=n, key=key, answer=answer),
        ]
    )


def make_binding(**settings: Any) -> SecretIdentityBinding:
    """The binding with a table's settings (``reveal_delay`` seconds, 0 = host says next)."""
    return SecretIdentityBinding(reveal_delay=float(settings.get("reveal_delay", 0.0)))
