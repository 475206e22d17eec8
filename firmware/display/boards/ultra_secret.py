"""Ultra Secret on the table display: its board and its log, from ``public`` only."""

from __future__ import annotations

from typing import Any

from firmware.display.parts import (
    Names,
    Narration,
    Public,
    esc,
    seat_table,
    waiting_for,
    whole,
    yes,
)
from firmware.link.lang import N_, _, label, plural

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


def board(public: Public, view: dict[str, Any], names: Names) -> str:
    def at(key: str, i: int) -> str:
        values = view.get(key) or []
        value = values[i] if i < len(values) else None
        return esc(value) if value is not None else "·"

    rows = [
        [
            at("agents", i),
            at("informants", i),
            at("bugs", i),
            at("moles", i),
            yes(i in (view.get("declared") or [])),
            "✔" if i not in (view.get("waiting") or []) else "…",
        ]
        for i in range(len(names))
    ]
    places = view.get("places") or {}
    opened = view.get("open") or []
    header = [_("agent at"), _("informant"), _("bug"), _("mole cards"), _("declared"), _("acted")]
    out = [seat_table(names, header, rows)]
    where = ", ".join(f"{p} {label(US_PLACES, p)}" if p in places else p for p in opened)
    out.append(
        "<p class=big>"
        + esc(
            _(
                "Open: {places} · deck {deck}, discard {discard}",
                places=where,
                deck=view.get("deck", 0),
                discard=view.get("discard", 0),
            )
        )
        + "</p>"
    )
    sums = view.get("sums") or {}
    if sums:
        declared = ", ".join(f"{names.chip(int(s))} {esc(v)}" for s, v in sums.items())
        said = _("Declared (digit sums): {sums}", sums=declared)
        out.append(f"<p class=big>{said}</p>")
    if view.get("fugitive") is not None:
        fugitive = _("The fugitive: {seat}", seat=names.chip(view["fugitive"]))
        out.append(f"<p class=big>{fugitive}</p>")
    if view.get("outcome"):
        outcome = f"<b>{esc(label(US_OUTCOMES, str(view['outcome'])))}</b>"
        ended = _("Outcome: {outcome}", outcome=outcome)
        out.append(f"<p class=big>{ended}</p>")
    out.append(recap(view, names))
    return "".join(out)


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
    """At the end, the secrets revealed: who each agent was, the fugitive's filing beside
    the truth (right or wrong), the true formula."""
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
    for seat, colour in enumerate(colours[: len(names)]):
        truth = identity_of(stashes.get(colour) or {})
        said = filed.get(colour)
        verdict = ""
        if said:
            mark, sign = ("won", "✔") if said == truth else ("lost", "✗")
            verdict = f'<span class="{mark}">{esc(pseudonyms.get(said, said))} {sign}</span>'
        rows.append(
            f"<tr><td>{names.chip(seat)}</td><td>{esc(pseudonyms.get(truth, truth or '?'))}</td>"
            f"<td>{verdict or '·'}</td></tr>"
        )
    head = "".join(f"<th>{esc(h)}</th>" for h in ("", _("was really"), _("the fugitive filed")))
    out = [f'<table class="recap"><tr>{head}</tr>{"".join(rows)}</table>']
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
        out.append(f"<p>{said}</p>")
    elif formula:
        out.append("<p>" + esc(_("The true formula: {formula}", formula=formula)) + "</p>")
    return "".join(out)


#: The end of an Ultra Secret game, in words.
US_OUTCOMES = {
    "escaped": N_("the fugitive escaped with everything right and wins"),
    "escaped-wrong": N_("the fugitive escaped with a wrong filing: nobody wins"),
    "caught": N_("the fugitive was caught: the others win together"),
}

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
    return esc(label(US_OUTCOMES, str(outcome))) if outcome else ""


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
    "over": lambda d, v, n: ["<b>" + esc(label(US_OUTCOMES, str(d.get("outcome")))) + "</b>"],
}
#: Runs of these seat-only events read as one line.
MERGE = {
    "acted": lambda k, seats: plural("{seats} has acted", "{seats} have acted", k, seats=seats),
    "filed": lambda k, seats: plural(
        "{seats} files the formula", "{seats} file the formula", k, seats=seats
    ),
}
