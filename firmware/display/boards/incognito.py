"""Incognito on the table display: its board and its log, from ``public`` only."""

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
from firmware.link.lang import _, plural


def board(public: Public, view: dict[str, Any], names: Names) -> str:
    places = view.get("places") or []
    done = view.get("done") or []
    voted = view.get("voted") or []
    scores = view.get("scores") or []
    over = bool(public.get("over"))
    rows = []
    for i in range(len(names)):
        voters = voted[i] if i < len(voted) else []
        row = [
            f'<b class="score">{esc(scores[i] if i < len(scores) else 0)}</b>',
            esc(places[i] if i < len(places) else ""),
        ]
        if not over:  # who is still drawing means nothing once the game is over
            row.append(yes(done[i] if i < len(done) else False))
        row.append(names.list(voters) if voters else "·")
        rows.append(row)
    words = "".join(
        f"<li><b>{n}</b> {esc(w)}</li>" for n, w in enumerate(view.get("list") or [], 1)
    )
    header = [_("score"), _("place")]
    header += [_("voted on it")] if over else [_("drawing done"), _("voted on it")]
    out = [seat_table(names, header, rows)]
    if words:  # the list is on the table from the vote on
        heading = esc(_("The words"))
        out.append(f'<div class="words"><h2>{heading}</h2><ol class="wordlist">{words}</ol></div>')
    return "".join(out)


def now(public: Public, view: dict[str, Any], names: Names) -> str:
    """Drawing: who has not finished; voting: who has not voted on every drawing."""
    players = len(names)
    if view.get("phase") == "draw":
        done = view.get("done") or []
        return waiting_for([i for i in range(players) if not (i < len(done) and done[i])], names)
    if view.get("phase") == "vote":
        voted = view.get("voted") or []
        cast = [sum(1 for row in voted if i in row) for i in range(players)]
        return waiting_for([i for i in range(players) if cast[i] < players - 1], names)
    return ""


def log(view: dict[str, Any], names: Names) -> list[str]:
    reveal = view.get("reveal") or {}
    words = view.get("list") or []
    lines = []
    for d in reveal.get("drawings") or []:
        finders = [int(s) for s in d.get("finders") or []]
        found = (
            _("found by {seats}", seats=names.list(finders)) if finders else _("nobody found it")
        )
        number = d.get("number")
        word = d.get("word") or (
            words[number - 1] if isinstance(number, int) and 0 < number <= len(words) else "?"
        )
        lines.append(
            _(
                "Round {n}: {seat} drew number {number}: {word} — {found}",
                n=esc(reveal.get("round", "")),
                seat=names.chip(d.get("drawer")),
                number=f"<b>{esc(number)}</b>",
                word=f"<b>{esc(word)}</b>",
                found=found,
            )
        )
    return lines


# --- the feed: each public event of the game in words ---------------------------------------


def _drawings(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    """A round's reveal: each drawing, its word and who found it."""
    return log({"reveal": data, "list": view.get("list") or []}, names)


def _countdown(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    seconds = int(data.get("seconds") or 0)
    if data.get("phase") == "vote":
        return [plural("{n} second left to vote", "{n} seconds left to vote", seconds)]
    return [
        plural("{n} second left to finish drawing", "{n} seconds left to finish drawing", seconds)
    ]


def _fill(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    drawers = [int(s) for s in data.get("drawers") or []]
    return [
        _(
            "Time is up: {seat} had no vote on {drawers}'s drawing",
            seat=names.chip(whole(data.get("seat"))),
            drawers=names.list(drawers),
        )
    ]


NARRATE: dict[str, Narration] = {
    "done": lambda d, v, n: [_("{seat} has finished drawing", seat=n.chip(whole(d.get("seat"))))],
    "countdown": _countdown,
    "countdown_stop": lambda d, v, n: [esc(_("The countdown stops"))],
    "list": lambda d, v, n: [esc(_("The list of words is on the table: vote!"))],
    "vote": lambda d, v, n: [
        _(
            "{seat} votes on {drawer}'s drawing",
            seat=n.chip(whole(d.get("seat"))),
            drawer=n.chip(whole(d.get("drawer"))),
        )
    ],
    "stop": lambda d, v, n: [_("Stop! {seat} runs out of time", seat=n.chip(whole(d.get("seat"))))],
    "fill": _fill,
    "reveal": _drawings,
    "round": lambda d, v, n: [_("Round {n} begins", n=esc(d.get("round")))],
    "over": lambda d, v, n: ["<b>" + esc(_("Game over")) + "</b>"],
}
#: Runs of these seat-only events read as one line.
MERGE = {
    "done": lambda k, seats: plural(
        "{seats} has finished drawing", "{seats} have finished drawing", k, seats=seats
    ),
}
