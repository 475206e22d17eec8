"""The table display as HTML: a pure function of a table's ``public`` and ``hub/status``.

The same snapshot always gives the same bytes (no clock, no randomness), so a reloaded
page shows at once what a live one shows, and the no-leak tests can compare pages.
Every text is in the table's language (the ``language`` of its ``hub/status``, else the
display's own), through :mod:`firmware.link.lang`.
The page and the overview are here, the shared pieces (seats, countdown, ranking) in
:mod:`firmware.display.parts`, each game's board in :mod:`firmware.display.boards`.
"""

from __future__ import annotations

from collections.abc import Sequence

from firmware.display.boards import board, headline, log_lines, phase_text
from firmware.display.feed import Snapshot
from firmware.display.parts import Names, countdown, esc, ranking
from firmware.link.lang import N_, _, label, speaking

#: The hub's states other than ready, on the offline banner.
HUB_STATES = {
    "lost": N_("lost"),
    "disconnected": N_("disconnected"),
}


# --- the page ------------------------------------------------------------------------------


def table_fragment(snap: Snapshot) -> str:
    """The live part of a table's page (what the server pushes on every change)."""
    with speaking(snap.language):
        return _table_fragment(snap)


def _table_fragment(snap: Snapshot) -> str:
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
    names = Names(public, snap.status)
    where = esc(_("table {name}", name=snap.table))
    title = f"{esc(game_name(public))} <small>{where}</small>"
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
        state = esc(phase_text(public))
    scores = public.get("scores") or []
    seats = " ".join(
        f"{names.chip(i)} <b>{esc(scores[i])}</b>"
        if i < len(scores) and scores[i] is not None
        else names.chip(i)
        for i in range(len(names))
    )
    name = game_name(public) if game else _("no game")
    return (
        f'<a class="card" href="/table/{esc(snap.table)}" lang="{snap.language}" '
        f'data-version="{esc(public.get("version", 0))}">'
        f"<h2>{esc(snap.table)} · {esc(name)}</h2>"
        f"<p>{state}</p><p class=seats-line>{seats}</p></a>"
    )


def game_name(public: dict[str, object]) -> str:
    """The game's name in the table's language (the hub sends its message id)."""
    labels = public.get("labels")
    name = labels.get("game") if isinstance(labels, dict) else None
    return _(str(name)) if name else str(public.get("game"))
