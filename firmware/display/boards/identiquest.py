"""Identiquest on the table display: its board and its log, from ``public`` only."""

from __future__ import annotations

from typing import Any

from firmware.display.parts import Names, Narration, Public, esc, whole
from firmware.link.lang import N_, _, colour, label, plural

#: How an Identiquest game ended (the engine's ``end``).
IQ_ENDS = {
    "deck": N_("the deck ran out"),
    "all-out": N_("every thief was unmasked or escaped"),
}


def board(public: Public, view: dict[str, Any], names: Names) -> str:
    colours = view.get("colours") or []
    suspects = view.get("suspects") or []
    unmasked = view.get("unmasked") or []
    escaped = view.get("escaped") or []
    identities = view.get("identities") or []
    head = "".join(f"<th>{_gem(c)}</th>" for c in colours)
    rows = []
    for i in range(len(names)):
        marks = suspects[i] if i < len(suspects) else []
        mask = unmasked[i] if i < len(unmasked) else None
        truth = identities[i] if i < len(identities) else None
        cells = []
        for j, gem in enumerate(colours):
            mark = marks[j] if j < len(marks) else "?"
            said = f' data-label="{esc(colour(str(gem)))}"'  # a phone's card names each gem
            if gem in (mask, truth):
                word = _("UNMASKED") if gem == mask else _("it was")
                cells.append(f'<td class="unmasked c-{esc(gem)}"{said}>{esc(word)}</td>')
            elif mark == "x":
                cells.append(f'<td class="crossed"{said}>✗</td>')
            else:
                cells.append(f"<td{said}>?</td>")
        fled = esc(_("escaped"))
        state = f" <em>{fled}</em>" if i < len(escaped) and escaped[i] else ""
        rows.append(f'<tr><td class="who">{names.chip(i)}{state}</td>{"".join(cells)}</tr>')
    suspect = esc(_("suspect"))
    board_html = f'<table class="suspects"><tr><th>{suspect}</th>{head}</tr>{"".join(rows)}</table>'
    market = " ".join(_gem(c) for c in view.get("market") or []) or esc(_("empty"))
    loot = "".join(_loot(names, i, p) for i, p in enumerate(view.get("loot") or []))
    deck = _("Market: {gems} · deck {n}", gems=market, n=esc(view.get("deck", 0)))
    return board_html + f'<p class="big">{deck}</p><ul class="loot">{loot}</ul>'


def _loot(names: Names, seat: int, pile: dict[str, Any]) -> str:
    """A seat's loot pile: its size and the gem on top."""
    size = esc(plural("{n} gem", "{n} gems", int(pile.get("size") or 0)))
    top = ", " + _("top {gem}", gem=_gem(pile["top"])) if pile.get("top") else ""
    return f"<li>{names.chip(seat)} {size}{top}</li>"


def _gem(gem: Any) -> str:
    return f'<span class="chip gem c-{esc(gem)}"><i></i>{esc(colour(str(gem)))}</span>'


def verdict(public: Public, view: dict[str, Any], names: Names) -> str:
    """Why the game ended."""
    end = view.get("end")
    return _("The game ended: {why}", why=esc(label(IQ_ENDS, str(end)))) if end else ""


def log(view: dict[str, Any], names: Names) -> list[str]:
    lines = []
    for i, gem in enumerate(view.get("unmasked") or []):
        if gem:
            lines.append(_("{seat} was unmasked: {gem}", seat=names.chip(i), gem=_gem(gem)))
    pending = view.get("pending")
    if isinstance(pending, dict) and pending:
        lines.append(
            plural(
                "Waiting: {giver} gives {receiver} {n} gem",
                "Waiting: {giver} gives {receiver} {n} gems",
                int(pending.get("left") or 0),
                giver=names.chip(whole(pending.get("giver"))),
                receiver=names.chip(whole(pending.get("receiver"))),
            )
        )
    if view.get("end"):
        lines.append(_("The game ended: {why}", why=esc(label(IQ_ENDS, str(view["end"])))))
    return lines


# --- the feed: each public event of the game in words ---------------------------------------


def _gems(gems: Any) -> str:
    return " ".join(_gem(g) for g in gems or []) or esc(_("nothing"))


def _steal(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    line = _(
        "{seat} steals {gems} from the market",
        seat=names.chip(whole(data.get("seat"))),
        gems=_gems(data.get("gems")),
    )
    if data.get("refill"):
        line += " · " + _("the market refills with {gems}", gems=_gems(data.get("refill")))
    return [line]


def _accuse(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    template = (
        N_("{seat} accuses {target} of being {gem}: right!")
        if data.get("right")
        else N_("{seat} accuses {target} of being {gem}: wrong")
    )
    verdict = "won" if data.get("right") else "lost"
    said = _(
        template,
        seat=names.chip(whole(data.get("seat"))),
        target=names.chip(whole(data.get("target"))),
        gem=_gem(data.get("colour")),
    )
    return [f'<span class="{verdict}">{said}</span>']


NARRATE: dict[str, Narration] = {
    "steal": _steal,
    "turn": lambda d, v, n: [_("{seat}'s turn", seat=n.chip(whole(d.get("seat"))))],
    "accuse": _accuse,
    # How many, not which: the public table shows a loot pile's size and top gem only.
    "give": lambda d, v, n: [
        plural(
            "{giver} gives {receiver} {n} gem",
            "{giver} gives {receiver} {n} gems",
            len(d.get("gems") or []),
            giver=n.chip(whole(d.get("from"))),
            receiver=n.chip(whole(d.get("to"))),
        )
    ],
    "unmasked": lambda d, v, n: [
        _(
            "{seat} was unmasked: {gem}",
            seat=n.chip(whole(d.get("seat"))),
            gem=_gem(d.get("colour")),
        )
    ],
    "escaped": lambda d, v, n: [
        _("{seat} escapes with the loot", seat=n.chip(whole(d.get("seat"))))
    ],
    "over": lambda d, v, n: [
        "<b>" + _("The game ended: {why}", why=esc(label(IQ_ENDS, str(d.get("reason"))))) + "</b>"
    ],
}
