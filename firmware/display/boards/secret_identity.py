"""Secret Identity on the table display: its board and its log, from ``public`` only."""

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


def board(public: Public, view: dict[str, Any], names: Names) -> str:
    seats = view.get("seats") or []
    over = bool(public.get("over"))
    # Each finished round's points, as columns of the seats' table (co-op's history is
    # its turns: the team scores, not the seats).
    coop = view.get("mode") == "coop"
    rounds = [r for r in view.get("history") or [] if isinstance(r, dict) and not coop]
    per_round = [round_points(r.get("safes") or [], len(names)) for r in rounds]
    round_heads = [_("round {n}", n=r.get("round", k + 1)) for k, r in enumerate(rounds)]
    rows = []
    for i, s in enumerate(seats):
        row = [f'<b class="score">{esc(s.get("score", 0))}</b>']
        if not over:  # what the round in play waits for; nothing once the game is over
            row += [
                esc(
                    plural("{n} placed", "{n} placed", int(s.get("pictos_placed") or 0))
                    + ", "
                    + plural("{n} in hand", "{n} in hand", int(s.get("pictos_left") or 0))
                ),
                yes(s.get("mystery_locked")),
                esc(_("{n} in / {cast} cast", n=s.get("votes_in", 0), cast=s.get("votes_cast", 0))),
                yes(s.get("ready")),
            ]
        row += [str(points[i]) if i < len(points) else "" for points in per_round]
        rows.append(row)
    header = [_("score")]
    if not over:
        header += [_("picto cards"), _("key in"), _("votes"), _("ready")]
    header += round_heads
    numeric = {1 + len(header) - len(round_heads) + k for k in range(len(round_heads))}
    out = [seat_table(names, header, rows, numeric=numeric)]
    team = view.get("team")
    if isinstance(team, dict):
        by = ""
        if view.get("answered"):
            by = " · " + _("answer given by {seat}", seat=names.chip(view.get("answered_by")))
        score = int(team.get("score") or 0)
        position = f"{esc(team.get('position', 0))}{'*' * int(team.get('markers') or 0)}"
        points = plural(
            "Team: {points} point ({position} on the track)",
            "Team: {points} points ({position} on the track)",
            score,
            points=f"<b>{score}</b>",
            position=position,
        )
        out.append(f'<p class="big">{points}{by}</p>')
        # The co-op score is the right answers, one a turn: the track is as long as the game.
        squares = int(view.get("rounds") or TRACK)
        # The team's token: a star (the line above says whose it is; a word would not fit
        # a square).
        out.append(track([(_("Team"), "★", "team", score)], squares))
    else:
        out.append(
            track(
                [
                    (names.text(i), names.number(i), names.colours[i], int(s.get("score") or 0))
                    for i, s in enumerate(seats)
                    if i < len(names)
                ]
            )
        )
    return "".join(out)


TRACK = 30


def round_points(safes: list[dict[str, Any]], players: int) -> list[int]:
    """Each seat's points in one round: its safe's right guessers, and one per right guess."""
    points = [0] * players
    for safe in safes:
        owner, right = safe.get("safe"), [int(s) for s in safe.get("right") or []]
        if isinstance(owner, int) and 0 <= owner < players:
            points[owner] += len(right)
        for seat in right:
            if 0 <= seat < players:
                points[seat] += 1
    return points


def track(tokens: list[tuple[str, str, str, int]], squares: int = TRACK) -> str:
    """The 0–30 score track (co-op: 0 to the number of turns): a token per seat on its
    square (its number on its colour, the name in its tooltip), a star per lap."""
    cells = []
    for square in range(squares + 1):
        here = "".join(
            f'<span class="tok c-{esc(colour)}" title="{esc(name)}" data-n="{esc(mark)}">'
            f"{'*' * (score // (squares + 1))}</span>"
            for name, mark, colour, score in tokens
            if score % (squares + 1) == square
        )
        cells.append(f"<li><small>{square}</small>{here}</li>")
    size = f' style="--squares: {squares + 1}"' if squares != TRACK else ""
    return f'<ol class="track"{size}>{"".join(cells)}</ol>'


def now(public: Public, view: dict[str, Any], names: Names) -> str:
    """While the safes are prepared and voted: the seats not ready yet; while they open:
    the safe that opens next (the host's next press, or the hub's own pace)."""
    if view.get("mode") == "coop":
        return ""
    if view.get("phase") == "reveal":
        safe = whole(view.get("next_safe"))
        return _("Next: {seat}'s safe opens", seat=names.chip(safe)) if safe is not None else ""
    if view.get("phase") not in ("prepare", "vote"):
        return ""
    seats = view.get("seats") or []
    return waiting_for([i for i, s in enumerate(seats) if not s.get("ready")], names)


def scores(view: dict[str, Any]) -> list[int] | None:
    """Each seat's score on the track (co-op: none per seat, the team scores)."""
    if view.get("mode") == "coop":
        return None
    return [int(s.get("score") or 0) for s in view.get("seats") or []] or None


def rounds_text(public: Public, view: dict[str, Any]) -> str:
    """Co-op plays turns, not rounds: "turn 6 of 10"."""
    if view.get("mode") != "coop" or public.get("round") is None:
        return ""
    return _("turn {n} of {of}", n=public.get("round"), of=public.get("rounds"))


def verdict(public: Public, view: dict[str, Any], names: Names) -> str:
    """Co-op: the team's band ("Locked out: the safes kept their secrets.") and its score."""
    result = view.get("result")
    if not isinstance(result, dict) or not result.get("text"):
        return ""
    right = int(result.get("right") or 0)
    said = plural("{n} right answer", "{n} right answers", right)
    return f"{esc(_(str(result['text'])))} <small>({esc(said)})</small>"


def log(view: dict[str, Any], names: Names) -> list[str]:
    if view.get("mode") == "coop":
        lines = [turn_line(turn, names) for turn in view.get("history") or []]
    else:
        # The rounds before (their safes and points) stay in the feed; the page shows the
        # newest lines, so a new round never wipes what the last one said.
        lines = []
        for done in view.get("history") or []:
            lines += [safe_line(safe, names) for safe in done.get("safes") or []]
            points = round_points(done.get("safes") or [], len(names))
            lines.append(round_line(done.get("round"), points, names))
        done = view.get("history") or []
        if not done or done[-1].get("round") != view.get("round"):  # not yet in the history
            lines += [safe_line(safe, names) for safe in view.get("revealed") or []]
    result = view.get("result")
    if isinstance(result, dict) and result.get("text"):
        text = _(str(result["text"]))  # the band's words, from the game's declaration
        lines.append(f"<b>{esc(text)}</b>")
    return lines


def turn_line(turn: dict[str, Any], names: Names) -> str:
    """A co-op turn: whose safe, its key, the team's answer and whether it was right."""
    verdict = _("right, +1 for the team") if turn.get("right") else _("wrong")
    return _(
        "Turn {n}: {seat}'s safe opens: key {key} — the team said {answer} ({verdict})",
        n=esc(turn.get("turn", "?")),
        seat=names.chip(turn.get("active")),
        key=esc(turn.get("mystery", "?")),
        answer=esc(turn.get("answer", "?")),
        verdict=verdict,
    )


def safe_line(safe: dict[str, Any], names: Names) -> str:
    owner = safe.get("safe")
    key = esc(safe.get("mystery", safe.get("number", "?")))
    right = [int(s) for s in safe.get("right") or []]
    who = (
        plural("{seats} was right", "{seats} were right", len(right), seats=names.list(right))
        if right
        else _("nobody was right")
    )
    if owner is None:
        return _("The safe opens: key {key} — {who}", key=key, who=who)
    line = _("{seat}'s safe opens: key {key} — {who}", seat=names.chip(owner), key=key, who=who)
    if right:  # who scored for it: the owner one a right guess, each right guesser one
        line += " · " + plural(
            "+{n} for {seat}, +1 per right guess",
            "+{n} for {seat}, +1 per right guess",
            len(right),
            seat=names.chip(owner),
        )
    return line


def round_line(number: Any, points: list[int], names: Names) -> str:
    """A finished round's result: each seat's points in it."""
    scored = ", ".join(f"{names.chip(i)} +{p}" for i, p in enumerate(points) if p)
    return "<b>" + _("Round {n} over: {scores}", n=esc(number), scores=scored or "—") + "</b>"


# --- the feed: each public event of the game in words ---------------------------------------

#: The phases a ``phase`` event announces.
SI_PHASES = {
    "prepare": N_("Everyone prepares their safe"),
    "vote": N_("Time to vote: lay your keys in the others' safes"),
    "reveal": N_("The safes open one by one"),
    "answer": N_("The team agrees on an answer"),
}


def _safe_opened(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    return [turn_line(data, names) if "turn" in data else safe_line(data, names)]


def _vote(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    template = (
        N_("{seat} moves a vote key to {owner}'s safe")
        if data.get("replaced") or data.get("from") is not None
        else N_("{seat} lays a vote key in {owner}'s safe")
    )
    return [
        _(
            template,
            seat=names.chip(whole(data.get("voter"))),
            owner=names.chip(whole(data.get("safe"))),
        )
    ]


def _round_over(data: dict[str, Any], view: dict[str, Any], names: Names) -> list[str]:
    scores = data.get("scores") or []
    said = ", ".join(f"{names.chip(i)} {esc(s)}" for i, s in enumerate(scores))
    return [
        "<b>"
        + _("Round {n} over — scores: {scores}", n=esc(data.get("round")), scores=said)
        + "</b>"
    ]


NARRATE: dict[str, Narration] = {
    "mystery_locked": lambda d, v, n: [
        _("{seat} locks a mystery key in", seat=n.chip(whole(d.get("seat"))))
    ],
    "pictos_placed": lambda d, v, n: [
        plural(
            "{seat} places {n} picto card",
            "{seat} places {n} picto cards",
            int(d.get("count") or 0),
            seat=n.chip(whole(d.get("seat"))),
        )
    ],
    "phase": lambda d, v, n: [esc(label(SI_PHASES, str(d.get("phase"))))],
    "vote": _vote,
    "safe_opened": _safe_opened,
    "round_over": _round_over,
    "round_started": lambda d, v, n: [_("Round {n} begins", n=esc(d.get("round")))],
    "game_over": lambda d, v, n: ["<b>" + esc(_("Game over")) + "</b>"],
    "answered": lambda d, v, n: [
        _("{seat} gives the team's answer", seat=n.chip(whole(d.get("seat"))))
    ],
    "turn_started": lambda d, v, n: [
        _("Turn {n}: {seat}'s safe", n=esc(d.get("turn")), seat=n.chip(whole(d.get("active"))))
    ],
}
#: Runs of these seat-only events read as one line.
MERGE = {
    "mystery_locked": lambda k, seats: plural(
        "{seats} locks a mystery key in", "{seats} lock their mystery keys in", k, seats=seats
    ),
}
