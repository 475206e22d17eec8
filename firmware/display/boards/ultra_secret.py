"""Ultra Secret on the table display: its board and its log, from ``public`` only."""

from __future__ import annotations

from typing import Any

from firmware.display.parts import (
    Names,
    Narration,
    Public,
    esc,
    seat_colour,
    seat_table,
    waiting_for,
    whole,
    yes,
)
from firmware.link.lang import N_, _, label, plural, seat_label, short_colour

#: The five filing places (the engine's ``places``), in words.
US_PLACES = {
    "G1": N_("lab safe"),
    "G2": N_("bar"),
    "G3": N_("park monument"),
    "G4": N_("embassy files"),
    "G5": N_("library"),
}
#: Words in the engine's notes (what a search turned up).
#: (the station says "p-doc" on its small screen; the TV has room for the whole word)
US_WORDS = {
    "suitcase": N_("suitcase"),
    "briefcase": N_("briefcase|long"),
    "locker": N_("locker"),
}


#: The board as drawn on the table display: each zone's squares, in the box's order (the
#: engine's ``open`` says which are in play now; the rest are drawn closed).
US_ZONES = (
    (N_("hotels"), ("H1", "H2", "H3", "H4", "H5", "H6")),
    (N_("stations and moles"), ("F1", "B1", "V1", "V2", "V3")),
    (N_("secret places"), ("G1", "G2", "G3", "G4", "G5")),
    (N_("flight"), ("VM1", "VM2", "VM3", "VM4", "VM5")),
)
#: Each hotel's colour (H1 red ... H6 blue; rules/docs/ultra-secret.md, "Seats and colours").
US_HOTELS = ("red", "yellow", "green", "black", "lilac", "blue")
#: What a square is, under its code.
US_KINDS = {
    "F": N_("station|square"),
    "B": N_("station|square"),
    "V": N_("mole card"),
    "VM": N_("escape route"),
}


def board(public: Public, view: dict[str, Any], names: Names) -> str:
    """The drawn board (every square with the agents, informants, bugs and lockers on it),
    then the declared sums and the fugitive; at the end, who each agent really was. The
    seats' table (while the game runs) or the facts (at the end) are in the side column
    (:func:`side`), beside the board."""
    if isinstance(view.get("end"), dict):
        return drawn_board(view, names) + recap(view, names)
    return drawn_board(view, names) + "".join(facts(public, view, names))


def facts(public: Public, view: dict[str, Any], names: Names) -> list[str]:
    """The declared sums, the fugitive, the outcome (while the game runs) and, at the end,
    the formula filed beside the true one."""
    out = []
    sums = view.get("sums") or {}
    if sums:
        # In seat order (the hub's object is in the order the seats declared).
        ordered = sorted(sums.items(), key=lambda item: whole_key(item[0]) or 0)
        declared_sums = ", ".join(f"{names.chip(whole_key(s))} {esc(v)}" for s, v in ordered)
        said = _("Declared (digit sums): {sums}", sums=declared_sums)
        out.append(f"<p class=big>{said}</p>")
    if view.get("fugitive") is not None:
        fugitive = _("The fugitive: {seat}", seat=names.chip(view["fugitive"]))
        out.append(f"<p class=big>{fugitive}</p>")
    if view.get("outcome") and not public.get("over"):  # at the end, the end box says it
        outcome = f"<b>{esc(names.said('outcomes', view['outcome']))}</b>"
        said = _("Outcome: {outcome}", outcome=outcome)
        out.append(f"<p class=big>{said}</p>")
    out.append(formula_line(view))
    return [line for line in out if line]


def side(public: Public, view: dict[str, Any], names: Names) -> str:
    """While the game runs, beside the drawn board: each seat's mole cards, whether it
    declared and acted, and the mole deck (the board shows where the agents stand); at the
    end, under the result, the declared sums, the fugitive and the formula."""
    if isinstance(view.get("end"), dict):
        return "".join(facts(public, view, names))
    declared = view.get("declared") or []
    waiting = view.get("waiting") or []
    rows = [
        [_at(view, "moles", i), yes(i in declared), "✔" if i not in waiting else "…"]
        for i in range(len(names))
    ]
    header = [_("mole cards"), _("declared"), _("acted")]
    deck = _(
        "Mole deck {deck}, discard {discard}",
        deck=view.get("deck", 0),
        discard=view.get("discard", 0),
    )
    return seat_table(names, header, rows, numeric={1}) + f"<p>{esc(deck)}</p>"


def _at(view: dict[str, Any], key: str, i: int) -> str:
    values = view.get(key) or []
    value = values[i] if i < len(values) else None
    return esc(value) if value is not None else "·"


def drawn_board(view: dict[str, Any], names: Names) -> str:
    """Every square of the board as a tile: its code and what it is, the agents on it as
    chips, informants and bugs as tokens that name their seat (never colour alone), a
    station's full lockers, the place the fugitive took the formula from; squares not in
    play now are drawn closed."""
    opened = set(view.get("open") or [])
    zones = []
    for zone, squares in US_ZONES:
        tiles = "".join(_tile(sq, sq in opened, view, names) for sq in squares)
        zones.append(f'<div class="zone"><h3>{esc(_(zone))}</h3>{tiles}</div>')
    return f'<div class="us-board">{"".join(zones)}</div>'


def _seats_on(view: dict[str, Any], key: str, square: str) -> list[int]:
    values = view.get(key) or []
    return [i for i, v in enumerate(values) if v == square]


def _tile(square: str, open_: bool, view: dict[str, Any], names: Names) -> str:
    places = view.get("places") or {}
    if square in US_PLACES or square in places:
        what = _(US_PLACES[square]) if square in US_PLACES else str(places[square])
    elif square.startswith("H") and square[1:].isdigit() and 0 < int(square[1:]) <= 6:
        what = _("hotel {colour}", colour=seat_colour(US_HOTELS[int(square[1:]) - 1]))
    else:
        what = _(US_KINDS.get(square.rstrip("0123456789"), ""))
    colour = ""
    if square.startswith("H") and square[1:].isdigit():
        colour = f" c-{US_HOTELS[int(square[1:]) - 1]}"
    # A square not in play says so on its first line (its tile is hatched too).
    closed = esc(_("closed|square"))
    shut = "" if open_ else f' <span class="shut">{closed}</span>'
    lines = [
        f'<p class="sq"><i class="hotel{colour}"></i><b>{esc(square)}</b> {esc(what)}{shut}</p>'
    ]
    fugitive = whole(view.get("fugitive"))
    agents = _seats_on(view, "agents", square)
    if agents:
        chips = []
        tag = esc(_("fugitive|tag"))
        for s in agents:
            flee = f' <em class="flee">{tag}</em>' if s == fugitive else ""
            chips.append(f"{names.chip(s)}{flee}")
        lines.append(f'<p class="agents">{" ".join(chips)}</p>')
    for key, said in (("informants", _("informant")), ("bugs", _("bug"))):
        seats = _seats_on(view, key, square)
        if seats:
            lines.append(f'<p class="marks"><small>{esc(said)}</small> {_tokens(seats, names)}</p>')
    lockers = view.get("lockers") or {}
    full = [c for c, at in lockers.items() if at == square]
    if full:
        toks = " ".join(
            f'<span class="tok c-{esc(c)}">{esc(short_colour(str(c)))}</span>' for c in full
        )
        lockers_said = esc(_("lockers"))
        lines.append(f'<p class="marks"><small>{lockers_said}</small> {toks}</p>')
    taken = view.get("taken")
    if isinstance(taken, dict) and taken.get("square") == square:
        where = label(US_WORDS, str(taken.get("container"))) if taken.get("container") else ""
        said = _("formula taken {where}", where=where).strip()
        lines.append(f'<p class="taken">{esc(said)}</p>')
    state = "" if open_ else " closed"
    busy = " busy" if agents else ""
    return f'<div class="tile{state}{busy}">{"".join(lines)}</div>'


def _tokens(seats: list[int], names: Names) -> str:
    """Seats as small tokens: their colour, their number and their short name, the one the
    stations and the hub use ("Yel", "Grn", "Blk"; "S9" past the colours): the number tells
    two seats apart when the colours do not."""
    return " ".join(
        f'<span class="tok c-{esc(names.colours[s])}" data-n="{esc(names.number(s))}">'
        f"{esc(seat_label(s, names.colours, short=True))}</span>"
        for s in seats
    )


def now(public: Public, view: dict[str, Any], names: Names) -> str:
    """The agents the turn still waits for."""
    if view.get("phase") == "over":
        return ""
    return waiting_for([int(s) for s in view.get("waiting") or []], names)


def rounds_text(public: Public, view: dict[str, Any]) -> str:
    """The turn the agents are on."""
    turn = whole(view.get("turn"))
    return _("turn {n}", n=turn) if turn else ""  # none before the first turn


def identity_of(stash: dict[str, Any]) -> str | None:
    """The pseudonym card an agent hid in its stash (its true identity)."""
    cards = [stash.get(k) for k in ("suitcase", "briefcase", "locker")]
    return next((c for c in cards if isinstance(c, str) and c.startswith("P")), None)


def recap(view: dict[str, Any], names: Names) -> str:
    """At the end, each seat's row: where its agent stands, its mole cards, who it really
    was, and the fugitive's filing of it beside the truth (right or wrong)."""
    end = view.get("end")
    if not isinstance(end, dict):
        return ""
    colours = [str(c) for c in view.get("colours") or []]
    pseudonyms = view.get("pseudonyms") or {}
    stashes = end.get("stashes") or {}
    raw = end.get("filing")
    filing: dict[str, Any] = raw if isinstance(raw, dict) else {}
    filed = filing.get("pseudonyms") or {}
    rows = []
    for seat in range(len(names)):
        colour = colours[seat] if seat < len(colours) else ""
        truth = identity_of(stashes.get(colour) or {})
        said = filed.get(colour)
        verdict = ""
        if said:
            mark, sign = ("won", "✔") if said == truth else ("lost", "✗")
            verdict = f'<span class="{mark}">{esc(pseudonyms.get(said, said))} {sign}</span>'
        rows.append(
            [
                _at(view, "agents", seat),
                _at(view, "moles", seat),
                esc(pseudonyms.get(truth, truth or "?")),
                verdict or "·",
            ]
        )
    header = [_("agent at"), _("mole cards"), _("was really"), _("the fugitive filed")]
    return seat_table(names, header, rows).replace('class="seats"', 'class="seats recap"', 1)


def formula_line(view: dict[str, Any]) -> str:
    """At the end, the formula the fugitive filed beside the true one."""
    end = view.get("end")
    if not isinstance(end, dict):
        return ""
    raw = end.get("filing")
    filing: dict[str, Any] = raw if isinstance(raw, dict) else {}
    formula = end.get("formula")
    if filing:
        right = filing.get("card") == formula
        mark = "won" if right else "lost"
        sign = "✔" if right else "✗"
        where = f"{esc(filing.get('square'))} {esc(label(US_WORDS, str(filing.get('container'))))}"
        said = _(
            "Formula filed from {where}: {card} (the true formula: {formula})",
            where=where,
            card=f'<span class="{mark}">{esc(filing.get("card"))} {sign}</span>',
            formula=esc(formula),
        )
        return f"<p>{said}</p>"
    if formula:
        return "<p>" + esc(_("The true formula: {formula}", formula=formula)) + "</p>"
    return ""


#: What an agent did on the board this turn (the engine's public notes), in words.
US_ACTS = {
    "searched": N_("{seat} searched the luggage at {square}: {detail}"),
    "opened": N_("{seat} opened lockers at {square}: {detail}"),
    "read": N_("{seat} read the fake formula at {square} ({detail} mole cards)"),
    "drew": N_("{seat} drew a mole card at {square}"),
    "deck-empty": N_("{seat} found the mole deck empty at {square}"),
    "crowded": N_("{seat} met other agents at {square}: nothing happens"),
    "sat-out": N_("{seat} dialled an impossible square ({detail}) and sits out"),
    "passed": N_("{seat} did nothing at {square}"),
}


def us_note(note: dict[str, Any], names: Names) -> str:
    """One public note ("Red searched the luggage at H2: suitcase")."""
    act = str(note.get("act"))
    detail = ", ".join(label(US_WORDS, str(d)) for d in note.get("detail") or ())
    template = _(US_ACTS[act]) if act in US_ACTS else "{seat} {act} {square}"
    return template.format(
        seat=names.chip(whole(note.get("seat"))),
        act=esc(act),
        square=esc(note.get("square") or "?"),
        detail=esc(detail),
    )


def verdict(public: Public, view: dict[str, Any], names: Names) -> str:
    """The fugitive's fate in words, in the end box."""
    outcome = view.get("outcome")
    return esc(names.said("outcomes", outcome)) if outcome else ""


def log(view: dict[str, Any], names: Names) -> list[str]:
    lines = [us_note(n, names) for n in view.get("notes") or [] if isinstance(n, dict)]
    for i, place in enumerate(view.get("revealed") or []):
        if place:
            lines.append(_("{seat}'s dial shows {place}", seat=names.chip(i), place=esc(place)))
    return lines


def notes(view: dict[str, Any], names: Names) -> list[str]:
    """What the agents did on the board this turn: shown under the feed while it lasts."""
    return [us_note(n, names) for n in view.get("notes") or [] if isinstance(n, dict)]


# --- the feed: each public event of the game in words ---------------------------------------


def _where(placed: Any, names: Names) -> str:
    """Seat -> square pairs ("Red G5, Blue H2")."""
    if not isinstance(placed, dict):
        return "—"
    return ", ".join(f"{names.chip(whole_key(s))} {esc(sq)}" for s, sq in placed.items()) or "—"


def whole_key(key: Any) -> int | None:
    """A seat from a JSON object's key ("3" -> 3)."""
    return int(key) if isinstance(key, str) and key.isdigit() else whole(key)


def _revealed(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    dials = data.get("dials") or []
    said = ", ".join(f"{names.chip(i)} {esc(d)}" for i, d in enumerate(dials) if d)
    return [_("The dials turn face up: {dials}", dials=said or "—")]


def _fugitive(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    seat = whole(data.get("fugitive"))
    if seat is None:
        return [esc(_("Nobody declared: no fugitive this turn"))]
    return [_("The fugitive is {seat}", seat=names.chip(seat))]


NARRATE: dict[str, Narration] = {
    "acted": lambda d, v, n: [_("{seat} has acted", seat=n.chip(whole(d.get("seat"))))],
    "lockers": lambda d, v, n: [esc(_("Every agent has chosen a locker"))],
    "bugs": lambda d, v, n: [_("Bugs planted: {places}", places=_where(d.get("placed"), n))],
    "informants": lambda d, v, n: [
        _("Informants move: {places}", places=_where(d.get("moved"), n))
    ],
    "revealed": _revealed,
    "fugitive": _fugitive,
    "filed": lambda d, v, n: [_("{seat} files the formula", seat=n.chip(whole(d.get("seat"))))],
    "flight": lambda d, v, n: [_("{seat} takes flight!", seat=n.chip(whole(d.get("fugitive"))))],
    "over": lambda d, v, n: ["<b>" + esc(n.said("outcomes", d.get("outcome"))) + "</b>"],
}
#: Runs of these seat-only events read as one line.
MERGE = {
    "acted": lambda k, seats: plural("{seats} has acted", "{seats} have acted", k, seats=seats),
    "filed": lambda k, seats: plural(
        "{seats} files the formula", "{seats} file the formula", k, seats=seats
    ),
}
