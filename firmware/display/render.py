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

from firmware.display.address import qr_svg
from firmware.display.boards import (
    board,
    board_side,
    board_wide,
    headline,
    log_lines,
    now_line,
    seat_scores,
    verdict,
)
from firmware.display.parts import Names, countdown, esc, french_spaces, ranking, whole
from firmware.display.sound import cue_sheet
from firmware.display.spectator import Snapshot
from firmware.link.lang import N_, _, label, speaking

#: The hub's states other than ready, on the offline banner.
HUB_STATES = {
    "lost": N_("it stopped answering"),
    "disconnected": N_("it was switched off"),
}


# --- the page ------------------------------------------------------------------------------


def table_fragment(snap: Snapshot) -> str:
    """The live part of a table's page (what the server pushes on every change)."""
    with speaking(snap.language):
        fragment = _table_fragment(snap)
    return french_spaces(fragment) if snap.language == "fr" else fragment


def _table_fragment(snap: Snapshot) -> str:
    public = snap.public
    game = public.get("game")
    parts = [
        f'<section class="table" lang="{snap.language}" '
        f'data-version="{esc(public.get("version", 0))}">'
    ]
    parts.append(_banner(snap))
    names = Names(public, snap.status)
    if not game:
        parts.append(_idle(snap))
        parts.append(cue_sheet(public, snap.moments, names, snap.language))
        return "".join(parts) + "</section>"
    where = esc(snap.name or _("table {name}", name=snap.table))
    title = f"{esc(game_name(public))} <small>{where}</small>"
    parts.append(f'<header><div class="title"><h1>{title}</h1>')
    parts.append(f'<p class="state">{headline(public, names)}</p></div>')
    parts.append(countdown(public))
    parts.append("</header>")
    said = now_line(public, names)
    if said:  # the one thing that matters now, in large type
        parts.append(f'<p class="now" role="status">{said}</p>')
    # Wide screens: the board left, the result and the feed in a column on the right.
    side = [ranking(public, names, verdict(public, names))] if public.get("over") else []
    extra = board_side(public, names)
    if extra:
        side.append(extra)
    lines = log_lines(public, names)
    if lines:
        items = "".join(f"<li>{line}</li>" for line in lines[-FEED_LINES:])
        heading = esc(_("What happened"))
        side.append(f'<div class="log"><h2>{heading}</h2><ol>{items}</ol></div>')
    cols = "cols side" if side else "cols"
    if board_wide(public) and not public.get("over"):  # at the end, the end box needs room
        cols += " wide"
    parts.append(f'<div class="{cols}"><div class="board">{board(public, names)}</div>')
    parts.append(f"<aside>{''.join(side)}</aside></div>")
    parts.append(cue_sheet(public, snap.moments, names, snap.language))
    parts.append("</section>")
    return "".join(parts)


#: How many lines of the feed the page shows (the newest; a TV has no scroll bar).
FEED_LINES = 8


def _idle(snap: Snapshot) -> str:
    """Between games: the table's name, the games the host may start (the hub's idle
    ``public`` lists them from their declarations) and, on one card, the rules of the game
    the host has picked on the panel (``hub/status``'s ``selected``); with no pick known,
    each game's card in the menu."""
    waiting = esc(_("Waiting for the host to start a game."))
    hint = esc(_("The host picks a game on the hub's panel; this screen follows it."))
    games = menu_games(snap.public)
    picked = snap.status.get("selected")
    chosen = next((g for g in games if g["id"] == picked), None)
    items = []
    for game in games:
        mark = ' class="picked" aria-current="true"' if game is chosen else ""
        card = "" if chosen else f"<p>{esc(_(game['summary']))}</p>"
        items.append(
            f"<li{mark}><b>{esc(_(game['name']))}</b> "
            f'<span class="range">{esc(players_range(game))}</span>{card}</li>'
        )
    join = _join(snap, "div" if chosen or not items else "li")
    if not chosen and items:  # the address is one more card among the games'
        items.append(join)
        join = ""
    menu = ""
    if items:
        heading = esc(_("Games on this table"))
        menu = f'<div class="menu"><h2>{heading}</h2><ul>{"".join(items)}</ul></div>'
    rules = _rules_card(chosen, snap.status) if chosen else ""
    wide = " picked" if chosen else ""
    # The table's name for guests (its id under it, as the hub's panel says it).
    tag = f" <small>{esc(_('table {name}', name=snap.table))}</small>" if snap.name else ""
    return (
        f'<div class="idle{wide}"><h1>{esc(snap.title)}{tag}</h1><p class="big">{waiting}</p>'
        f'<div class="idle-cols">{menu}{rules}{join}</div>'
        f'<p class="note">{hint}</p></div>'
    )


def _join(snap: Snapshot, tag: str = "div") -> str:
    """The page's own address and its QR code (in a ``tag`` box): a guest's phone follows
    the table too."""
    if not snap.address:
        return ""
    said = esc(_("Follow this table on your phone: scan the code or open"))
    alt = esc(_("QR code of {address}", address=snap.address))
    return (
        f'<{tag} class="join"><div class="qr" role="img" aria-label="{alt}">'
        f"{qr_svg(snap.address)}</div><p>{said}</p>"
        f'<p class="address">{esc(snap.address).replace("/", "/<wbr>")}</p></{tag}>'
    )


def _rules_card(game: dict[str, str], status: dict[str, object]) -> str:
    """The picked game's rules on one card: its name, player range and summary."""
    players = status.get("selected_players")
    count = ""
    if isinstance(players, int) and not isinstance(players, bool):
        said = _("Picked on the panel, for {n} players", n=players)
        count = f'<p class="note">{esc(said)}</p>'
    return (
        f'<div class="rules-card"><h2>{esc(_(game["name"]))}</h2>'
        f'<p class="range">{esc(players_range(game))}</p>'
        f'<p class="summary">{esc(_(game["summary"]))}</p>{count}</div>'
    )


def menu_games(public: dict[str, object]) -> list[dict[str, str]]:
    """The idle table's game menu (``public["menu"]``), each entry checked: an id, a name,
    a summary (message ids) and the player range as text-safe values."""
    raw = public.get("menu")
    games = []
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        lo, hi = whole(entry.get("min")), whole(entry.get("max"))
        games.append(
            {
                "id": str(entry["id"]),
                "name": str(entry.get("name") or entry["id"]),
                "summary": str(entry.get("summary") or ""),
                "min": "" if lo is None else str(lo),
                "max": "" if hi is None else str(hi),
            }
        )
    return games


def players_range(game: dict[str, str]) -> str:
    """ "3–6 players" (empty when the hub did not say)."""
    if not game["min"] or not game["max"]:
        return ""
    return _("{lo}–{hi} players", lo=game["min"], hi=game["max"])


def _banner(snap: Snapshot) -> str:
    if not snap.broker:
        why = _("this screen lost the network, reconnecting…")
    elif snap.status.get("state") != "ready":
        state = snap.status.get("state")
        why = label(HUB_STATES, str(state)) if state else _("no news from it yet")
    else:
        return ""
    banner = esc(_("Hub offline: {why}", why=why))
    return f'<p class="offline" role="alert">{banner}</p>'


# --- whole documents ---------------------------------------------------------------------------


def page(title: str, body: str, *, stream: str | None = None, language: str = "en") -> str:
    """A whole HTML document; with ``stream`` the page follows that SSE URL, and says so in
    words when it loses it (the script shows the hidden banner while it reconnects)."""
    data = f' data-stream="{esc(stream)}"' if stream else ""
    with speaking(language):
        lost = esc(_("Connection to the hub lost: reconnecting…"))
    return (
        f"<!doctype html><html lang={esc(language)}><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title>"
        '<link rel="stylesheet" href="/static/display.css">'
        '<link rel="stylesheet" href="/static/sound.css">'
        '<script src="/static/display.js" defer></script>'
        '<script src="/static/sound.js" defer></script>'
        f'</head><body><p id="lost" class="reconnecting" role="alert" hidden>{lost}</p>'
        f'<main id="live"{data}>{body}</main></body></html>'
    )


def overview_fragment(snaps: Sequence[Snapshot], language: str = "en") -> str:
    """Every table the display follows, one card each (in its table's language), linking to
    its page; the heading in the display's ``language``."""
    cards = []
    for snap in snaps:
        with speaking(snap.language):
            card = _overview_card(snap)
        cards.append(french_spaces(card) if snap.language == "fr" else card)
    with speaking(language):
        heading = esc(_("coffre tables"))
    return f'<section class="overview"><h1>{heading}</h1>{"".join(cards)}</section>'


def _overview_card(snap: Snapshot) -> str:
    """One table for a host walking the room: its game, phase and round, who it waits for,
    the leader and every seat's score (where the table shows scores)."""
    public = snap.public
    game = public.get("game")
    names = Names(public, snap.status)  # hub/status: a seat whose station is offline
    lines = []
    if not snap.hub_online:
        lines.append(f'<p class="alert">{esc(_("hub offline"))}</p>')
    if not game:
        idle = esc(_("waiting for a game"))
        lines.append(f"<p>{idle}</p>")
        picked = next(
            (g for g in menu_games(public) if g["id"] == snap.status.get("selected")), None
        )
        if picked:
            name_id = picked["name"]  # a message id from the hub
            said = esc(_("picked on the panel: {game}", game=_(name_id)))
            lines.append(f"<p>{said}</p>")
    elif public.get("over"):
        first = (public.get("ranking") or [[]])[0]
        said = _("game over — {seats} won", seats=names.list(first))
        lines.append(f"<p>{said}</p>")
    else:
        lines.append(f"<p>{headline(public, names)}</p>")
        waiting = now_line(public, names)
        if waiting:
            lines.append(f"<p>{waiting}</p>")
    scores = seat_scores(public) if game else None
    if scores and not public.get("over"):
        best = max(scores)
        leaders = [i for i, v in enumerate(scores) if v == best]
        if best > 0:
            said = _("Leader: {seats} ({score})", seats=names.list(leaders), score=esc(best))
            lines.append(f"<p>{said}</p>")
    seats = " ".join(
        f"{names.chip(i)} <b>{esc(scores[i])}</b>"
        if scores and i < len(scores) and scores[i] is not None
        else names.chip(i)
        for i in range(len(names))
    )
    name = game_name(public) if game else _("no game")
    return (
        f'<a class="card" href="/table/{esc(snap.table)}" lang="{snap.language}" '
        f'data-version="{esc(public.get("version", 0))}">'
        f"<h2>{esc(snap.title)} · {esc(name)}</h2>"
        f"{''.join(lines)}<p class=seats-line>{seats}</p></a>"
    )


def game_name(public: dict[str, object]) -> str:
    """The game's name in the table's language (the hub sends its message id)."""
    labels = public.get("labels")
    name = labels.get("game") if isinstance(labels, dict) else None
    return _(str(name)) if name else str(public.get("game"))
