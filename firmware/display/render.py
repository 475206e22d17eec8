"""The table display as HTML: a pure function of a table's ``public`` and ``hub/status``.

The same snapshot always gives the same bytes (no clock, no randomness), so a reloaded
page shows at once what a live one shows, and the no-leak tests can compare pages.
Every text is in the table's language (the ``language`` of its ``hub/status``, else the
display's own), through :mod:`firmware.link.lang`.
Shared pieces (header, seats, countdown, log, ranking) are here; each game's board is
in :mod:`firmware.display.games`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from firmware.display.feed import Snapshot
from firmware.link.lang import N_, _, colour, label, plural, speaking

#: The games by name (the host menu's words; the display may not import the hub).
GAME_NAMES = {
    "secret-identity": N_("Secret Identity"),
    "incognito": N_("Incognito"),
    "identiquest": N_("Identiquest"),
    "ultra-secret": N_("Ultra Secret"),
    "identites-cryptees": N_("Identités cryptées"),
}

#: How each game breaks ties, as the final ranking says it.
TIE_BREAKS = {
    "secret-identity": N_("ties broken by most picto cards left"),
    "incognito": N_("ties stay ties"),
    "identiquest": N_("ties stay ties"),
    "ultra-secret": N_("one side wins together"),
    "identites-cryptees": N_("the winning side wins together"),
}
#: The hub's states other than ready, on the offline banner.
HUB_STATES = {
    "lost": N_("lost"),
    "disconnected": N_("disconnected"),
}


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def seat_colour(name: str) -> str:
    """A seat's colour in words ("red" -> "Rouge"; a second box's "red-2" -> "Rouge 2")."""
    base, _dash, rest = name.partition("-")
    return f"{colour(base)} {rest}" if rest else colour(name)


class Names:
    """Seat -> a player's name and colour chip, as the table calls them."""

    def __init__(self, public: dict[str, Any]) -> None:
        seats = public.get("seats") or []
        view = public.get("view") or {}
        own = view.get("colours") if public.get("game") == "ultra-secret" else None
        self.colours = [s.get("colour", f"seat {i + 1}") for i, s in enumerate(seats)]
        if isinstance(own, list) and len(own) >= len(self.colours):
            self.colours = [str(c) for c in own[: len(self.colours)]]

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
        return f'<span class="chip c-{colour}"><i></i>{esc(self.text(seat))}</span>'

    def list(self, seats: Iterable[int]) -> str:
        chips = [self.chip(s) for s in seats]
        return ", ".join(chips) if chips else esc(_("nobody"))


# --- the page ------------------------------------------------------------------------------


def table_fragment(snap: Snapshot) -> str:
    """The live part of a table's page (what the server pushes on every change)."""
    with speaking(snap.language):
        return _table_fragment(snap)


def _table_fragment(snap: Snapshot) -> str:
    from firmware.display.games import board, headline, log_lines

    public = snap.public
    game = public.get("game")
    parts = [
        f'<section class="table" lang="{snap.language}" '
        f'data-version="{esc(public.get("version", 0))}">'
    ]
    parts.append(_banner(snap))
    if not game:
        waiting = esc(_("Waiting for the host to start a game."))
        parts.append(f"<h1>{esc(snap.table)}</h1><p class=big>{waiting}</p>")
        return "".join(parts) + "</section>"
    names = Names(public)
    where = esc(_("table {name}", name=snap.table))
    title = f"{esc(label(GAME_NAMES, game))} <small>{where}</small>"
    parts.append(f'<header><h1>{title}</h1><p class="state">{headline(public, names)}</p>')
    parts.append(countdown(public))
    parts.append("</header>")
    # Wide screens: the board left, the ranking and the log in a column on the right.
    side = [ranking(public, names)] if public.get("over") else []
    lines = log_lines(public, names)
    if lines:
        items = "".join(f"<li>{line}</li>" for line in lines[-8:])
        heading = esc(_("What happened"))
        side.append(f'<div class="log"><h2>{heading}</h2><ol>{items}</ol></div>')
    cols = "cols side" if side else "cols"
    parts.append(f'<div class="{cols}"><div class="board">{board(public, names)}</div>')
    parts.append(f"<aside>{''.join(side)}</aside></div>")
    parts.append("</section>")
    return "".join(parts)


def _banner(snap: Snapshot) -> str:
    if not snap.broker:
        why = _("the display lost the broker, reconnecting…")
    elif snap.status.get("state") != "ready":
        state = snap.status.get("state")
        why = label(HUB_STATES, str(state)) if state else _("not seen yet")
    else:
        return ""
    banner = esc(_("Hub offline: {why}", why=why))
    return f'<p class="offline" role="alert">{banner}</p>'


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
    game = str(public.get("game"))
    rule = _(TIE_BREAKS[game]) if game in TIE_BREAKS else ""
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


# --- whole documents ---------------------------------------------------------------------------


def page(title: str, body: str, *, stream: str | None = None, language: str = "en") -> str:
    """A whole HTML document; with ``stream`` the page follows that SSE URL."""
    data = f' data-stream="{esc(stream)}"' if stream else ""
    return (
        f"<!doctype html><html lang={esc(language)}><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title>"
        '<link rel="stylesheet" href="/static/display.css">'
        '<script src="/static/display.js" defer></script>'
        f'</head><body><main id="live"{data}>{body}</main></body></html>'
    )


def overview_fragment(snaps: Sequence[Snapshot], language: str = "en") -> str:
    """Every table the display follows, one card each (in its table's language), linking to
    its page; the heading in the display's ``language``."""
    cards = []
    for snap in snaps:
        with speaking(snap.language):
            cards.append(_overview_card(snap))
    with speaking(language):
        heading = esc(_("coffre tables"))
    return f'<section class="overview"><h1>{heading}</h1>{"".join(cards)}</section>'


def _overview_card(snap: Snapshot) -> str:
    from firmware.display.games import PHASES

    public = snap.public
    game = public.get("game")
    names = Names(public)
    if not snap.hub_online:
        state = esc(_("hub offline"))
    elif not game:
        state = esc(_("waiting for a game"))
    elif public.get("over"):
        first = (public.get("ranking") or [[]])[0]
        state = _("game over — {seats} won", seats=names.list(first))
    else:
        view = public.get("view") or {}
        phase = view.get("phase") or (view.get("table") or {}).get("phase") or ""
        state = esc(label(PHASES, str(phase)))
    scores = public.get("scores") or []
    seats = " ".join(
        f"{names.chip(i)} <b>{esc(scores[i])}</b>"
        if i < len(scores) and scores[i] is not None
        else names.chip(i)
        for i in range(len(names))
    )
    name = label(GAME_NAMES, game) if game else _("no game")
    return (
        f'<a class="card" href="/table/{esc(snap.table)}" lang="{snap.language}" '
        f'data-version="{esc(public.get("version", 0))}">'
        f"<h2>{esc(snap.table)} · {esc(name)}</h2>"
        f"<p>{state}</p><p class=seats-line>{seats}</p></a>"
    )
