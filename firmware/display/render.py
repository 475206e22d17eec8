"""The table display as HTML: a pure function of a table's ``public`` and ``hub/status``.

The same snapshot always gives the same bytes (no clock, no randomness), so a reloaded
page shows at once what a live one shows, and the no-leak tests can compare pages.
Shared pieces (header, seats, countdown, log, ranking) are here; each game's board is
in :mod:`firmware.display.games`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from firmware.display.feed import Snapshot

GAME_NAMES = {
    "secret-identity": "Secret Identity",
    "incognito": "Incognito",
    "identiquest": "Identiquest",
    "ultra-secret": "Ultra Secret",
    "identites-cryptees": "Identités cryptées",
}

#: How each game breaks ties, as the final ranking says it.
TIE_BREAKS = {
    "secret-identity": "ties broken by most picto cards left",
    "incognito": "ties stay ties",
    "identiquest": "ties stay ties",
    "ultra-secret": "one side wins together",
    "identites-cryptees": "the winning side wins together",
}


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def name_of(colour: str) -> str:
    return colour.replace("-", " ").capitalize()


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
            return "—" if seat is None else f"Seat {seat + 1}"
        return name_of(self.colours[seat])

    def chip(self, seat: int | None) -> str:
        """A name with its colour swatch (colour is never the only cue: the name is there)."""
        if seat is None or not 0 <= seat < len(self.colours):
            return esc(self.text(seat))
        colour = esc(self.colours[seat])
        return f'<span class="chip c-{colour}"><i></i>{esc(self.text(seat))}</span>'

    def list(self, seats: Iterable[int]) -> str:
        chips = [self.chip(s) for s in seats]
        return ", ".join(chips) if chips else "nobody"


# --- the page ------------------------------------------------------------------------------


def table_fragment(snap: Snapshot) -> str:
    """The live part of a table's page (what the server pushes on every change)."""
    from firmware.display.games import board, headline, log_lines

    public = snap.public
    game = public.get("game")
    parts = [f'<section class="table" data-version="{esc(public.get("version", 0))}">']
    parts.append(_banner(snap))
    if not game:
        parts.append(
            f"<h1>{esc(snap.table)}</h1><p class=big>Waiting for the host to start a game.</p>"
        )
        return "".join(parts) + "</section>"
    names = Names(public)
    title = f"{esc(GAME_NAMES.get(game, game))} <small>table {esc(snap.table)}</small>"
    parts.append(f'<header><h1>{title}</h1><p class="state">{headline(public, names)}</p>')
    parts.append(countdown(public))
    parts.append("</header>")
    # Wide screens: the board left, the ranking and the log in a column on the right.
    side = [ranking(public, names)] if public.get("over") else []
    lines = log_lines(public, names)
    if lines:
        items = "".join(f"<li>{line}</li>" for line in lines[-8:])
        side.append(f'<div class="log"><h2>What happened</h2><ol>{items}</ol></div>')
    cols = "cols side" if side else "cols"
    parts.append(f'<div class="{cols}"><div class="board">{board(public, names)}</div>')
    parts.append(f"<aside>{''.join(side)}</aside></div>")
    parts.append("</section>")
    return "".join(parts)


OFFLINE = '<p class="offline" role="alert">Hub offline: {}</p>'


def _banner(snap: Snapshot) -> str:
    if not snap.broker:
        return OFFLINE.format("the display lost the broker, reconnecting…")
    state = snap.status.get("state")
    if state != "ready":
        return OFFLINE.format(esc(state or "not seen yet"))
    return ""


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
            tie = " <em>tie</em>" if len(group) > 1 else ""
            win = ' class="winner"' if place == 1 else ""
            rows.append(
                f"<tr{win}><td>{place}.</td><td>{names.chip(seat)}{tie}</td>"
                f"<td class=num>{esc(score)}</td></tr>"
            )
        place += len(group)
    winners = names.list(groups[0]) if groups and not nobody_won(groups, scores) else "nobody"
    rule = TIE_BREAKS.get(str(public.get("game")), "")
    if (public.get("view") or {}).get("mode") == "coop":
        rule = "co-op: the team scores together"
    plural = "s" if groups and len(groups[0]) > 1 and winners != "nobody" else ""
    return (
        f'<div class="ranking"><h2>Game over — winner{plural}: '
        f"{winners}</h2><table>{''.join(rows)}</table><p class=note>{esc(rule)}</p></div>"
    )


def nobody_won(groups: Sequence[Sequence[int]], scores: Sequence[Any]) -> bool:
    """Everyone together on no points (e.g. Ultra Secret's fugitive got away): no winner."""
    return len(groups) == 1 and not any(scores)


def seat_table(names: Names, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table with one row per seat (cells are HTML already)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        f'<tr><td class="who">{names.chip(i)}</td>'
        + "".join(f"<td>{c}</td>" for c in row)
        + "</tr>"
        for i, row in enumerate(rows)
    )
    return f'<table class="seats"><tr><th>seat</th>{head}</tr>{body}</table>'


# --- whole documents ---------------------------------------------------------------------------


def page(title: str, body: str, *, stream: str | None = None) -> str:
    """A whole HTML document; with ``stream`` the page follows that SSE URL."""
    data = f' data-stream="{esc(stream)}"' if stream else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title>"
        '<link rel="stylesheet" href="/static/display.css">'
        '<script src="/static/display.js" defer></script>'
        f'</head><body><main id="live"{data}>{body}</main></body></html>'
    )


def overview_fragment(snaps: Sequence[Snapshot]) -> str:
    """Every table the display follows, one card each, linking to its page."""
    cards = []
    for snap in snaps:
        public = snap.public
        game = public.get("game")
        names = Names(public)
        if not snap.hub_online:
            state = "hub offline"
        elif not game:
            state = "waiting for a game"
        elif public.get("over"):
            first = (public.get("ranking") or [[]])[0]
            state = f"game over — {names.list(first)} won"
        else:
            view = public.get("view") or {}
            phase = view.get("phase") or (view.get("table") or {}).get("phase") or ""
            state = esc(phase)
        scores = public.get("scores") or []
        seats = " ".join(
            f"{names.chip(i)} <b>{esc(scores[i])}</b>"
            if i < len(scores) and scores[i] is not None
            else names.chip(i)
            for i in range(len(names))
        )
        cards.append(
            f'<a class="card" href="/table/{esc(snap.table)}" '
            f'data-version="{esc(public.get("version", 0))}">'
            f"<h2>{esc(snap.table)} · {esc(GAME_NAMES.get(game or '', 'no game'))}</h2>"
            f"<p>{state}</p><p class=seats-line>{seats}</p></a>"
        )
    return f'<section class="overview"><h1>coffre tables</h1>{"".join(cards)}</section>'
