"""The table display's shared pieces: seats and their chips, tables, the countdown, the
ranking. The page (:mod:`firmware.display.render`) and every game's board
(:mod:`firmware.display.boards`) build on these; none of them knows a game by its id.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from firmware.link.lang import _, colour, label, plural

Public = dict[str, Any]
#: How a board says one public event: (its data, the public view, names) -> HTML lines.
Narration = Callable[[dict[str, Any], dict[str, Any], "Names"], list[str]]


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


#: A space before French high punctuation (" :", " ?", " !", " ;", " »") or after "«".
_LOOSE = re.compile(r"[ \u00a0]([:;!?»])|(«)[ \u00a0]")
#: The text between two tags of an HTML fragment (never inside a tag).
_TEXT = re.compile(r">[^<]+<")


def french_spaces(fragment: str) -> str:
    """French typography on screen: the space before ":", ";", "!", "?" and "»" (and after
    "«") does not break, so a colon never wraps alone onto a line."""

    def tie(match: re.Match[str]) -> str:
        if match.group(1):
            return "\u00a0" + match.group(1)
        return match.group(2) + "\u00a0"

    return _TEXT.sub(lambda m: _LOOSE.sub(tie, m.group(0)), fragment)


def seat_colour(name: str) -> str:
    """A seat's colour in words ("red" -> "Rouge"; a second box's "red-2" -> "Rouge 2")."""
    base, _dash, rest = name.partition("-")
    return f"{colour(base)} {rest}" if rest else colour(name)


#: A seat name longer than this may wrap inside its chip (a custom name from the config).
LONG_NAME = 14


def numbered(colour: str) -> int | None:
    """The number of a seat named by number (``seat9`` -> 9), else None."""
    digits = colour[4:] if colour.startswith("seat") else ""
    return int(digits) if digits.isdigit() else None


class Names:
    """Seat -> a player's name and colour chip, as the table calls them."""

    def __init__(self, public: dict[str, Any], status: dict[str, Any] | None = None) -> None:
        # The hub resolves each seat's colour (a game's own, as Ultra Secret's agents).
        seats = public.get("seats") or []
        self.colours = [str(s.get("colour", f"seat {i + 1}")) for i, s in enumerate(seats)]
        labels = public.get("labels")
        #: The game's declared words the hub put in ``public``'s labels ("outcomes", "sides").
        self.labels: dict[str, Any] = labels if isinstance(labels, dict) else {}
        # hub/status's health (firmware.hub.health): a seat whose station is not online.
        health = (status or {}).get("stations") or {}
        self.off = {
            i
            for i, s in enumerate(seats)
            if health.get(s.get("station"), {}).get("state", "online") != "online"
        }

    def __len__(self) -> int:
        return len(self.colours)

    def said(self, kind: str, key: object) -> str:
        """How the game's declaration words ``key`` of ``kind`` ("outcomes", "sides"), in
        the table's language; an undeclared key reads as itself."""
        words = self.labels.get(kind)
        return label(words if isinstance(words, dict) else {}, str(key))

    def text(self, seat: int | None) -> str:
        if seat is None or not 0 <= seat < len(self.colours):
            return "—" if seat is None else _("Seat {n}", n=seat + 1)
        number = numbered(self.colours[seat])
        if number is not None:  # past a box's colours: "Seat 9", its swatch a number
            return _("Seat {n}", n=number)
        return seat_colour(self.colours[seat])

    def chip(self, seat: int | None) -> str:
        """A name with its colour swatch, the seat's number in the swatch: colour is never
        the only cue (a colour-blind player reads the number or the name, and two colours
        that look alike to a deuteranope still differ by their number).

        Seats past a box's colours (``seat9``..``seat16``) get a swatch of their own
        colour, so no two of sixteen chips look alike."""
        if seat is None or not 0 <= seat < len(self.colours):
            return esc(self.text(seat))
        colour = self.colours[seat]
        mark = self.number(seat)
        name = self.text(seat)
        long = " long" if len(name) > LONG_NAME else ""  # wraps inside its chip
        off = ""
        if seat in self.off:  # hub/status says its station is not online
            off = f' <em class="off">{esc(_("station offline"))}</em>'
        # The number is drawn by the stylesheet (``data-n``): the text stays the name.
        swatch = f'<i data-n="{esc(mark)}"></i>'
        return f'<span class="chip{long} c-{esc(colour)}">{swatch}{esc(name)}</span>{off}'

    def number(self, seat: int) -> str:
        """The seat's number as its swatch and its tokens show it (1 for the first seat; a
        seat named by number keeps it)."""
        number = numbered(self.colours[seat]) if 0 <= seat < len(self.colours) else None
        return str(seat + 1 if number is None else number)

    def list(self, seats: Iterable[int]) -> str:
        """Chips separated by commas; a comma stays on its chip's line."""
        chips = [self.chip(s) for s in seats]
        if not chips:
            return esc(_("nobody"))
        kept = [f'<span class="nw">{chip},</span>' for chip in chips[:-1]]
        return " ".join([*kept, chips[-1]])


#: The countdown ring's circle (its circumference is 100: the arc is a percentage).
RING = (
    '<svg class="ring" viewBox="0 0 36 36" aria-hidden="true">'
    '<circle class="ring-bg" cx="18" cy="18" r="15.9155"/>'
    '<circle class="ring-arc" cx="18" cy="18" r="15.9155" pathLength="100" '
    'stroke-dasharray="100 100" transform="rotate(-90 18 18)"/></svg>'
)


def countdown(public: dict[str, Any]) -> str:
    """A running countdown, a ring round the seconds left: the hub republishes each second,
    the page ticks in between and empties the ring (an SVG of the package, no emoji font)."""
    left = public.get("timer")
    if not isinstance(left, int | float) or left <= 0:
        return ""
    said = esc(plural("{n} second left", "{n} seconds left", int(left)))
    return (
        f'<div class="countdown" data-left="{int(left)}" role="timer" aria-label="{said}">'
        f"{RING}<b>{int(left)}</b></div>"
    )


def ranking(public: dict[str, Any], names: Names, verdict: str = "") -> str:
    """The end box: how the game ended (``verdict``, a board's words, large), then the
    places, ties together, scores and how ties were broken. A co-op team is one result:
    no list of "winners" above a band that says the team lost."""
    groups: Sequence[Sequence[int]] = public.get("ranking") or []
    scores = public.get("scores") or []
    band = f'<p class="band">{verdict}</p>' if verdict else ""
    if (public.get("view") or {}).get("mode") == "coop":
        heading = esc(_("Game over"))
        rule = esc(_("co-op: the team scores together"))
        return f'<div class="ranking"><h2>{heading}</h2>{band}<p class=note>{rule}</p></div>'
    rows = []
    place = 1
    for group in groups:
        # Tied seats share one row: their place and "tie" said once, then every seat.
        said = [scores[seat] if seat < len(scores) else "" for seat in group]
        win = ' class="winner"' if place == 1 else ""
        if len(group) > 1:
            tie = "<em>" + esc(_("tie")) + "</em>"
            if len(set(map(str, said))) == 1:
                who, score = f"{tie} {names.list(group)}", esc(said[0])
            else:
                pairs = (f"{names.chip(s)} {esc(v)}" for s, v in zip(group, said, strict=True))
                who, score = f"{tie} {', '.join(pairs)}", ""
        else:
            who, score = names.chip(group[0]), esc(said[0])
        rows.append(f"<tr{win}><td>{place}.</td><td>{who}</td><td class=num>{score}</td></tr>")
        place += len(group)
    won = bool(groups) and not nobody_won(groups, scores)
    tie_break = (public.get("labels") or {}).get("tie_break")
    rule = esc(_(str(tie_break))) if tie_break and won else ""
    if won:
        count = len(groups[0])
        heading = plural(
            "Game over — winner: {seats}",
            "Game over — winners: {seats}",
            count,
            seats=names.list(groups[0]),
        )
    else:  # everyone together on no points: no rows of ties, the seats on one line
        heading = plural(
            "Game over — winner: {seats}",
            "Game over — winners: {seats}",
            1,
            seats=esc(_("nobody")),
        )
        everyone = [s for group in groups for s in group]
        band += f'<p class="note">{names.list(everyone)}</p>'
        rows = []
    # A long ranking (Identités cryptées seats 16) runs in two columns on a wide screen.
    half = (len(rows) + 1) // 2 if len(rows) > RANKING_ROWS else len(rows)
    tables = "".join(
        f"<table>{''.join(part)}</table>" for part in (rows[:half], rows[half:]) if part
    )
    note = f"<p class=note>{rule}</p>" if rule else ""
    places = f'<div class="places">{tables}</div>'
    return f'<div class="ranking"><h2>{heading}</h2>{band}{places}{note}</div>'


#: A ranking longer than this is split in two columns.
RANKING_ROWS = 8


def nobody_won(groups: Sequence[Sequence[int]], scores: Sequence[Any]) -> bool:
    """Everyone together on no points (e.g. Ultra Secret's fugitive got away): no winner."""
    return len(groups) == 1 and not any(scores)


def waiting_for(seats: Sequence[int], names: Names) -> str:
    """ "Waiting for Blue" (the hold-up named), for several seats, or for everyone."""
    if not seats:
        return ""
    if len(seats) > 1 and len(set(seats)) >= len(names):
        return esc(_("Waiting for everyone"))
    return _("Waiting for {seats}", seats=names.list(seats))


def seat_table(
    names: Names,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric: Collection[int] = (),
) -> str:
    """A table with one row per seat (cells are HTML already); the columns in ``numeric``
    (counting the seat's as 0) are numbers, right-aligned."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    seat = esc(_("seat"))
    # On a phone each row is a card and each cell says what it is (``data-label``).
    labels = [esc(h) for h in header]
    body = "".join(
        f'<tr><td class="who">{names.chip(i)}</td>'
        + "".join(
            f"<td{' class=num' if k + 1 in numeric else ''} "
            f'data-label="{labels[k] if k < len(labels) else ""}">{c}</td>'
            for k, c in enumerate(row)
        )
        + "</tr>"
        for i, row in enumerate(rows)
    )
    return f'<table class="seats"><tr><th>{seat}</th>{head}</tr>{body}</table>'


def yes(flag: Any) -> str:
    return "✔" if flag else "·"


def whole(value: Any) -> int | None:
    """An integer from a payload, or None (a bool is not a seat number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
