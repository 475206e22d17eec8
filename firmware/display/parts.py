"""The table display's shared pieces: seats and their chips, tables, the countdown, the
ranking. The page (:mod:`firmware.display.render`) and every game's board
(:mod:`firmware.display.boards`) build on these; none of them knows a game by its id.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from firmware.link.lang import _, colour, plural

Public = dict[str, Any]


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def seat_colour(name: str) -> str:
    """A seat's colour in words ("red" -> "Rouge"; a second box's "red-2" -> "Rouge 2")."""
    base, _dash, rest = name.partition("-")
    return f"{colour(base)} {rest}" if rest else colour(name)


class Names:
    """Seat -> a player's name and colour chip, as the table calls them."""

    def __init__(self, public: dict[str, Any], status: dict[str, Any] | None = None) -> None:
        # The hub resolves each seat's colour (a game's own, as Ultra Secret's agents).
        seats = public.get("seats") or []
        self.colours = [str(s.get("colour", f"seat {i + 1}")) for i, s in enumerate(seats)]
        # hub/status's health (firmware.hub.health): a seat whose station is not online.
        health = (status or {}).get("stations") or {}
        self.off = {
            i
            for i, s in enumerate(seats)
            if health.get(s.get("station"), {}).get("state", "online") != "online"
        }

    def __len__(self) -> int:
        return len(self.colours)

    def text(self, seat: int | None) -> str:
        if seat is None or not 0 <= seat < len(self.colours):
            return "—" if seat is None else _("Seat {n}", n=seat + 1)
        return seat_colour(self.colours[seat])

    def chip(self, seat: int | None) -> str:
        """A name with its colour swatch (colour is never the only cue: the name is there)."""
        if seat is None or not 0 <= seat < len(self.colours):
            return esc(self.text(seat))
        colour = esc(self.colours[seat])
        mark = _("station offline")  # hub/status says its station is not online
        off = f' <em class="off">{esc(mark)}</em>' if seat in self.off else ""
        return f'<span class="chip c-{colour}"><i></i>{esc(self.text(seat))}</span>{off}'

    def list(self, seats: Iterable[int]) -> str:
        chips = [self.chip(s) for s in seats]
        return ", ".join(chips) if chips else esc(_("nobody"))


def countdown(public: dict[str, Any]) -> str:
    """A running countdown: the hub republishes each second, the page ticks in between."""
    left = public.get("timer")
    if not isinstance(left, int | float) or left <= 0:
        return ""
    return f'<p class="countdown" data-left="{int(left)}">⏱ <b>{int(left)}</b> s</p>'


def ranking(public: dict[str, Any], names: Names) -> str:
    """The final ranking: places, ties together, scores and how ties were broken."""
    groups: Sequence[Sequence[int]] = public.get("ranking") or []
    scores = public.get("scores") or []
    rows = []
    place = 1
    for group in groups:
        for seat in group:
            score = scores[seat] if seat < len(scores) else ""
            tie = " <em>" + esc(_("tie")) + "</em>" if len(group) > 1 else ""
            win = ' class="winner"' if place == 1 else ""
            rows.append(
                f"<tr{win}><td>{place}.</td><td>{names.chip(seat)}{tie}</td>"
                f"<td class=num>{esc(score)}</td></tr>"
            )
        place += len(group)
    won = bool(groups) and not nobody_won(groups, scores)
    winners = names.list(groups[0]) if won else esc(_("nobody"))
    tie_break = (public.get("labels") or {}).get("tie_break")
    rule = _(str(tie_break)) if tie_break else ""
    if (public.get("view") or {}).get("mode") == "coop":
        rule = _("co-op: the team scores together")
    count = len(groups[0]) if won else 1
    heading = plural(
        "Game over — winner: {seats}", "Game over — winners: {seats}", count, seats=winners
    )
    return (
        f'<div class="ranking"><h2>{heading}</h2>'
        f"<table>{''.join(rows)}</table><p class=note>{esc(rule)}</p></div>"
    )


def nobody_won(groups: Sequence[Sequence[int]], scores: Sequence[Any]) -> bool:
    """Everyone together on no points (e.g. Ultra Secret's fugitive got away): no winner."""
    return len(groups) == 1 and not any(scores)


def seat_table(names: Names, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table with one row per seat (cells are HTML already)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    seat = esc(_("seat"))
    body = "".join(
        f'<tr><td class="who">{names.chip(i)}</td>'
        + "".join(f"<td>{c}</td>" for c in row)
        + "</tr>"
        for i, row in enumerate(rows)
    )
    return f'<table class="seats"><tr><th>{seat}</th>{head}</tr>{body}</table>'


def yes(flag: Any) -> str:
    return "✔" if flag else "·"


def whole(value: Any) -> int | None:
    """An integer from a payload, or None (a bool is not a seat number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
