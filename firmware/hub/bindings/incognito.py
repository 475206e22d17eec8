"""Incognito at a physical table (table binding; rules in rules/docs/incognito.md).

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

from typing import Any

from firmware.hub.bindings.common import (
    ACT_LED,
    IDLE_LED,
    hub_title_room,
    phase_label,
    seconds_shown,
)
from firmware.hub.bindings.numbered import numbered
from firmware.hub.table import Table
from firmware.link import lang
from firmware.link.lang import _, plural
from firmware.link.protocol import Input, Screen, Secret
from firmware.link.render import (
    CHARS,
    fit,
    glass,
    packed,
    scroll_room,
    scroll_title,
    scrolled,
    shrink,
    window,
)
from firmware.link.render import wrap as _wrap
from rules.core import IllegalAction
from rules.incognito import INFO

#: Words of the list shown at once on a station (the knob scrolls the rest).
LIST_WINDOW = 3


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
                raise IllegalAction("Nobody plays {colour}", colour=key.colour)
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
                top = max(0, len(pub["list"]) - self.list_window(table, seat))
            elif phase == "reveal":
                top = table.players - 1  # page 0: your results; then each other drawing
            elif phase == "over":
                top = scroll_room(1, table.players)  # the ranking under your own line
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

    @staticmethod
    def list_window(table: Table, seat: int) -> int:
        """Words shown at once while voting: the last line says where to lay cards, or,
        once they are laid, how many still vote."""
        return LIST_WINDOW - 1

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
        return seconds_shown(table.timer_left, countdown["seconds"])

    @staticmethod
    def _station_title(table: Table, pub: dict[str, Any], seat: int, clock: str) -> str:
        """ "Red Round 1/3 Vote" where it fits with the widest clock of the phase (a long name
        cut to no less than six letters); else "Red R1/3 Draw 45s", a long name cut first."""
        phase = phase_label(INFO, pub["phase"])
        n, of = pub["round"], pub["rounds"]
        name = table.seating.name(seat)
        widest = f" {int(pub['countdown']['seconds'])}s" if clock else ""
        said = shrink(
            lambda who: (
                _("{seat} Round {n}/{of} {phase}", seat=who, n=n, of=of, phase=phase) + widest
            ),
            name,
        )
        if len(glass(said)) <= CHARS and said.startswith(name[:6]):  # a name keeps 6 letters
            return said.removesuffix(widest) + clock
        return shrink(
            lambda who: _("{seat} R{n}/{of} {phase}", seat=who, n=n, of=of, phase=phase) + clock,
            name,
        )

    def station_screen(self, table: Table, seat: int) -> Screen:
        me = table.view(seat)
        pub = me["table"]
        phase = pub["phase"]
        left = self.seconds_left(table)
        clock = "" if left is None else f" {left}s"
        title = self._station_title(table, pub, seat, clock)
        led = IDLE_LED
        if phase == "draw":
            lines, busy = self._draw_lines(table, pub, seat, left)
        elif phase == "vote":
            lines, busy = self._vote_lines(table, pub, seat)
        elif phase == "reveal":
            page = self.scroll(table, seat)
            if page == 0:
                lines = [*self._reveal_lines(table, pub, seat), _("Knob: each drawing")]
            else:
                lines = self._drawing_lines(table, pub, (seat + page) % table.players)
                lines[0] = scroll_title(lines[0], page, 1, table.players)
            busy = False
        else:
            title, lines = self._final_screen(table, pub, seat)
            busy = False
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
        lines = [_("Draw your word in:"), *_wrap(pub["places"][seat], 2)]
        done = pub["done"][seat]
        if not done:
            lines.append(
                _("STOP in {n}s! Press", n=left) if left is not None else _("Press knob when done")
            )
        else:
            waiting = pub["done"].count(False)
            lines.append(
                _("Done. Stop in {n}s", n=left)
                if left is not None
                else _("Done; {n} drawing", n=waiting)
            )
        return lines, not done

    def _vote_lines(self, table: Table, pub: dict[str, Any], seat: int) -> tuple[list[str], bool]:
        others = table.players - 1
        laid = len(pub["voted"][seat])
        words = [f"{i + 1} {w}" for i, w in enumerate(pub["list"])]
        shown, top = window(words, self.scroll(table, seat), self.list_window(table, seat))
        head = scroll_title(_("Laid {n}/{of}", n=laid, of=others), top, len(shown), len(words))
        if laid < others:
            return [head, *shown, _("Tap cards on others")], True
        # Who is still voting, in words: a bare count read as seconds.
        late = sum(1 for row in pub["voted"] if len(row) < others)
        status = plural("Done; {n} still voting", "Done; {n} still voting", late)
        return [head, *shown, status], False

    def _reveal_lines(self, table: Table, pub: dict[str, Any], seat: int) -> list[str]:
        reveal = pub["reveal"]
        others = table.players - 1
        drawing = reveal["drawings"][seat]
        # Who found the seat's own drawing, in words ("Found by 1 of 2"): which drawings the
        # seat found are on the knob's pages, one a drawing.
        return [
            _("Round +{n}, total {total}", n=reveal["points"][seat], total=pub["scores"][seat]),
            f"#{drawing['number']} {drawing['word']}",
            _("Found by {n} of {of}", n=len(drawing["finders"]), of=others),
        ]

    def _drawing_lines(self, table: Table, pub: dict[str, Any], drawer: int) -> list[str]:
        """One drawing's results: its word, who found it, its drawer's points."""
        name = table.seating.name
        reveal = pub["reveal"]
        drawing = reveal["drawings"][drawer]
        finders = " ".join(table.seating.short(v) for v in drawing["finders"])
        found = _("Found: {who}", who=finders or _("nobody"))
        if len(found) > CHARS:
            found = _("Found by {n} of {of}", n=len(drawing["finders"]), of=table.players - 1)
        return [
            _("{seat} drew #{n}", seat=name(drawer), n=drawing["number"]),
            drawing["word"],
            found,
            _(
                "{seat} +{n}, total {total}",
                seat=name(drawer),
                n=reveal["points"][drawer],
                total=pub["scores"][drawer],
            ),
        ]

    def _final_screen(self, table: Table, pub: dict[str, Any], seat: int) -> tuple[str, list[str]]:
        """The seat's own rank, then the ranking, which the knob scrolls ("1-3/6 ▼")."""
        ranking = pub["ranking"] or []
        ranks = lang.ranks(ranking)
        points = pub["reveal"]["points"][seat]
        me = _("You: #{rank} (round +{n})", rank=ranks[seat], n=points)
        rows = [
            f"{ranks[s]}. {table.seating.name(s):<8}{pub['scores'][s]:>3}"
            for group in ranking
            for s in group
        ]
        title = shrink(lambda who: f"{who} {phase_label(INFO, 'over')}", table.seating.name(seat))
        return scrolled(title, [me], rows, self.scroll(table, seat))

    def _secret(self, table: Table, me: dict[str, Any], clock: str) -> Secret:
        pub = me["table"]
        rows = [me["word"]]
        if me["number"] is not None:
            rows.append(_("Number {n} on the list", n=me["number"]))
        if pub["phase"] == "vote":
            # Each card laid as its drawing and the list number: "Votes: Grn #1 Blu #5"
            # (a bare "Grn 1" read as a count).
            short = table.seating.short
            cards = [f"{short(d)} #{n}" for d, n in enumerate(me["votes"]) if n is not None]
            rows += packed(_("Votes:"), cards) if cards else [_("No card laid")]
        return Secret(title=_("Your secret word") + clock, lines=tuple(rows[:4]))

    def next_hint(self, table: Table) -> str | None:
        """What the host's next press does now, for the hub display's last line."""
        pub = table.view(None)
        if pub["phase"] == "reveal":
            if pub["round"] < pub["rounds"]:
                return _("round {n}", n=pub["round"] + 1)
            return _("scores|final")
        if pub["countdown"]["running"]:
            return _("stop clock")
        return None

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)
        lines = self._host_lines(table, pub)
        left = self.seconds_left(table)
        n, of = pub["round"], pub["rounds"]
        label = phase_label(INFO, pub["phase"])
        # The first wording that leaves room (the page count, and with a clock the last
        # seconds' mark) with the countdown's widest clock ("R1/3 Vote STOP 20s", else
        # "R1/3 Vote 20s"), so the title keeps one shape while the seconds run down.
        heads = [_("Round {n}/{of} {phase}", n=n, of=of, phase=label)]
        heads.append(_("R{n}/{of} {phase}", n=n, of=of, phase=label))
        clocks = [""] if left is None else [_(" STOP {n}s", n=left), f" {left}s"]
        full = int(pub["countdown"]["seconds"])
        widest = [""] if left is None else [_(" STOP {n}s", n=full), f" {full}s"]
        forms = [(h, c, w) for c, w in zip(clocks, widest, strict=True) for h in heads]
        room = CHARS - len(" 1/2") if left is None else hub_title_room(lines)
        head, clock, _widest = next(
            (f for f in forms if len(glass(f[0] + f[2])) <= room), forms[-1]
        )
        return head + clock, lines

    @staticmethod
    def _host_lines(table: Table, pub: dict[str, Any]) -> list[str]:
        """The hub display's lines: who still draws, the list and the votes, each seat's
        points."""

        def short(seat: int) -> str:  # "Red1": a seat is never its colour alone
            return numbered(table.seating.short(seat), seat)

        phase = pub["phase"]
        if phase == "draw":
            waiting = [short(s) for s, d in enumerate(pub["done"]) if not d]
            still = _("Drawing: {who}", who=" ".join(waiting))
            if len(still) > CHARS:
                still = _("Still drawing: {n}", n=len(waiting))
            done = _("Done drawing: {n}/{of}", n=pub["done"].count(True), of=table.players)
            return [done, still]
        if phase == "vote":
            words = [glass(f"{i + 1} {w}") for i, w in enumerate(pub["list"])]
            others = table.players - 1
            complete = sum(1 for row in pub["voted"] if len(row) == others)
            voted = _("Voted: {n}/{of}", n=complete, of=table.players)
            return [*_two_a_row(words), glass(voted)]  # more than 4 lines: pages
        # A seat a row, its points said in words ("Grn3 +2, total 6 pts"): the hub pages
        # the rows; its last line says what next does ("next: round 2").
        points = pub["reveal"]["points"]
        rows = [
            fit(
                plural(
                    "{seat} +{gain}, total {n} pt",
                    "{seat} +{gain}, total {n} pts",
                    pub["scores"][s],
                    seat=short(s),
                    gain=points[s],
                )
            )
            for s in range(table.players)
        ]
        return [glass(row) for row in rows]


def _two_a_row(words: list[str]) -> list[str]:
    """The list's words in two aligned columns where every row fits whole ("1 arbre  2 ..."),
    else one word a row: a second column that starts anywhere reads as one long word."""
    left, right = words[::2], words[1::2]
    column = max((len(w) for w in left), default=0) + 1
    if column + max((len(w) for w in right), default=0) > CHARS:
        return list(words)
    rows = [f"{a:<{column}}{b}".rstrip() for a, b in zip(left, right, strict=False)]
    return rows + left[len(right) :]


def make_binding(**settings: Any) -> IncognitoBinding:
    """The binding (Incognito's countdown length is the game option ``countdown``)."""
    return IncognitoBinding()
