"""Each game's board on the table display: headline, board and log, from ``public`` only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from firmware.display.render import Names, esc, name_of, seat_table

Public = dict[str, Any]

TRACK = 30


def headline(public: Public, names: Names) -> str:
    view = public.get("view") or {}
    game = public.get("game")
    if game == "identites-cryptees":
        view = view.get("table") or {}
    phase = str(view.get("phase") or "")
    bits = [f"<b>{esc(phase.replace('_', ' '))}</b>"] if phase else []
    if "round" in view and "rounds" in view:
        bits.append(f"round {esc(view['round'])} of {esc(view['rounds'])}")
    turn = _whose_turn(game, view)
    if turn is not None and not public.get("over"):
        bits.append(f"{names.chip(turn)} to play")
    return " · ".join(bits)


def _whose_turn(game: Any, view: dict[str, Any]) -> int | None:
    if game == "identiquest" and view.get("phase") == "play":
        return _int(view.get("turn"))
    if game in ("secret-identity", "identites-cryptees"):
        return _int(view.get("active"))
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def board(public: Public, names: Names) -> str:
    view = public.get("view") or {}
    draw = BOARDS.get(str(public.get("game")))
    return draw(public, view, names) if draw else ""


def log_lines(public: Public, names: Names) -> list[str]:
    view = public.get("view") or {}
    lines = LOGS.get(str(public.get("game")))
    return lines(view, names) if lines else []


def yes(flag: Any) -> str:
    return "✔" if flag else "·"


# --- Secret Identity ----------------------------------------------------------------------


def secret_identity(public: Public, view: dict[str, Any], names: Names) -> str:
    seats = view.get("seats") or []
    rows = [
        [
            f'<b class="score">{esc(s.get("score", 0))}</b>',
            f"{esc(s.get('position', 0))}{'*' * int(s.get('markers') or 0)}",
            f"{esc(s.get('pictos_placed', 0))} placed, {esc(s.get('pictos_left', 0))} left",
            yes(s.get("mystery_locked")),
            f"{esc(s.get('votes_in', 0))} in / {esc(s.get('votes_cast', 0))} cast",
            yes(s.get("ready")),
        ]
        for s in seats
    ]
    out = [seat_table(names, ["score", "track", "picto cards", "key in", "votes", "ready"], rows)]
    team = view.get("team")
    if isinstance(team, dict):
        by = ""
        if view.get("answered"):
            by = " · answer given by " + names.chip(view.get("answered_by"))
        out.append(
            f'<p class="big">Team: <b>{esc(team.get("score", 0))}</b> points'
            f" ({esc(team.get('position', 0))}{'*' * int(team.get('markers') or 0)} on the track)"
            f"{by}</p>"
        )
        out.append(track([("Team", "team", int(team.get("score") or 0))]))
    else:
        out.append(
            track(
                [
                    (names.text(i), names.colours[i], int(s.get("score") or 0))
                    for i, s in enumerate(seats)
                    if i < len(names)
                ]
            )
        )
    return "".join(out)


def track(tokens: list[tuple[str, str, int]]) -> str:
    """The 0–30 score track: a token per seat on its square, a star per lap."""
    cells = []
    for square in range(TRACK + 1):
        here = "".join(
            f'<span class="tok c-{esc(colour)}" title="{esc(name)}">{esc(name[:2])}'
            f"{'*' * (score // (TRACK + 1))}</span>"
            for name, colour, score in tokens
            if score % (TRACK + 1) == square
        )
        cells.append(f"<li><small>{square}</small>{here}</li>")
    return f'<ol class="track">{"".join(cells)}</ol>'


def secret_identity_log(view: dict[str, Any], names: Names) -> list[str]:
    if view.get("mode") == "coop":
        lines = [turn_line(turn, names) for turn in view.get("history") or []]
    else:
        lines = [safe_line(safe, names) for safe in view.get("revealed") or []]
    result = view.get("result")
    if isinstance(result, dict) and result.get("text"):
        lines.append(f"<b>{esc(result['text'])}</b>")
    return lines


def turn_line(turn: dict[str, Any], names: Names) -> str:
    """A co-op turn: whose safe, its key, the team's answer and whether it was right."""
    verdict = "right, +1 for the team" if turn.get("right") else "wrong"
    return (
        f"Turn {esc(turn.get('turn', '?'))}: {names.chip(turn.get('active'))}'s safe opens: "
        f"key {esc(turn.get('mystery', '?'))} — the team said {esc(turn.get('answer', '?'))}"
        f" ({verdict})"
    )


def safe_line(safe: dict[str, Any], names: Names) -> str:
    owner = safe.get("safe")
    key = safe.get("mystery", safe.get("number", "?"))
    right = [int(s) for s in safe.get("right") or []]
    who = (
        f"{names.list(right)} {'was' if len(right) == 1 else 'were'} right"
        if right
        else "nobody was right"
    )
    if owner is None:
        return f"The safe opens: key {esc(key)} — {who}"
    return f"{names.chip(owner)}'s safe opens: key {esc(key)} — {who}"


# --- Incognito ------------------------------------------------------------------------------


def incognito(public: Public, view: dict[str, Any], names: Names) -> str:
    places = view.get("places") or []
    done = view.get("done") or []
    voted = view.get("voted") or []
    scores = view.get("scores") or []
    rows = []
    for i in range(len(names)):
        voters = voted[i] if i < len(voted) else []
        rows.append(
            [
                f'<b class="score">{esc(scores[i] if i < len(scores) else 0)}</b>',
                esc(places[i] if i < len(places) else ""),
                yes(done[i] if i < len(done) else False),
                names.list(voters) if voters else "·",
            ]
        )
    words = "".join(
        f"<li><b>{n}</b> {esc(w)}</li>" for n, w in enumerate(view.get("list") or [], 1)
    )
    out = [seat_table(names, ["score", "place", "drawing done", "voted on it"], rows)]
    if words:  # the list is on the table from the vote on
        out.append(f'<div class="words"><h2>The words</h2><ol class="wordlist">{words}</ol></div>')
    return "".join(out)


def incognito_log(view: dict[str, Any], names: Names) -> list[str]:
    reveal = view.get("reveal") or {}
    words = view.get("list") or []
    lines = []
    for d in reveal.get("drawings") or []:
        finders = [int(s) for s in d.get("finders") or []]
        found = f"found by {names.list(finders)}" if finders else "nobody found it"
        number = d.get("number")
        word = d.get("word") or (
            words[number - 1] if isinstance(number, int) and 0 < number <= len(words) else "?"
        )
        lines.append(
            f"Round {esc(reveal.get('round', ''))}: {names.chip(d.get('drawer'))} drew "
            f"<b>{esc(number)}. {esc(word)}</b> — {found}"
        )
    return lines


# --- Identiquest ----------------------------------------------------------------------------


def identiquest(public: Public, view: dict[str, Any], names: Names) -> str:
    colours = view.get("colours") or []
    suspects = view.get("suspects") or []
    unmasked = view.get("unmasked") or []
    escaped = view.get("escaped") or []
    identities = view.get("identities") or []
    head = "".join(
        f'<th><span class="chip c-{esc(c)}"><i></i>{esc(name_of(c))}</span></th>' for c in colours
    )
    rows = []
    for i in range(len(names)):
        marks = suspects[i] if i < len(suspects) else []
        mask = unmasked[i] if i < len(unmasked) else None
        truth = identities[i] if i < len(identities) else None
        cells = []
        for j, colour in enumerate(colours):
            mark = marks[j] if j < len(marks) else "?"
            if colour in (mask, truth):
                cells.append(
                    f'<td class="unmasked c-{esc(colour)}">'
                    f"{'UNMASKED' if colour == mask else 'it was'}</td>"
                )
            elif mark == "x":
                cells.append('<td class="crossed">✗</td>')
            else:
                cells.append("<td>?</td>")
        state = " <em>escaped</em>" if i < len(escaped) and escaped[i] else ""
        rows.append(f'<tr><td class="who">{names.chip(i)}{state}</td>{"".join(cells)}</tr>')
    board_html = f'<table class="suspects"><tr><th>suspect</th>{head}</tr>{"".join(rows)}</table>'
    market = " ".join(_gem(c) for c in view.get("market") or [])
    loot = "".join(
        f"<li>{names.chip(i)} {esc(p.get('size', 0))} cards"
        f"{', top ' + _gem(p['top']) if p.get('top') else ''}</li>"
        for i, p in enumerate(view.get("loot") or [])
    )
    return (
        board_html
        + f'<p class="big">Market: {market or "empty"} · deck {esc(view.get("deck", 0))}</p>'
        + f'<ul class="loot">{loot}</ul>'
    )


def _gem(colour: Any) -> str:
    return f'<span class="chip c-{esc(colour)}"><i></i>{esc(name_of(str(colour)))}</span>'


def identiquest_log(view: dict[str, Any], names: Names) -> list[str]:
    lines = []
    for i, colour in enumerate(view.get("unmasked") or []):
        if colour:
            lines.append(f"{names.chip(i)} was unmasked: {_gem(colour)}")
    pending = view.get("pending")
    if isinstance(pending, dict) and pending:
        lines.append("Waiting: " + esc(", ".join(f"{k} {v}" for k, v in pending.items())))
    if view.get("end"):
        lines.append(f"The game ended: {esc(view['end'])}")
    return lines


# --- Ultra Secret ---------------------------------------------------------------------------


def ultra_secret(public: Public, view: dict[str, Any], names: Names) -> str:
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
    out = [
        seat_table(names, ["agent at", "informant", "bug", "mole cards", "declared", "acted"], rows)
    ]
    out.append(
        "<p class=big>Open: "
        + esc(", ".join(f"{p} {places[p]}" if p in places else p for p in opened))
        + f" · deck {esc(view.get('deck', 0))}, discard {esc(view.get('discard', 0))}</p>"
    )
    sums = view.get("sums") or {}
    if sums:
        declared = ", ".join(f"{names.chip(int(s))} {esc(v)}" for s, v in sums.items())
        out.append(f"<p class=big>Declared (digit sums): {declared}</p>")
    if view.get("fugitive") is not None:
        out.append(f"<p class=big>The fugitive: {names.chip(view['fugitive'])}</p>")
    if view.get("outcome"):
        outcome = US_OUTCOMES.get(view["outcome"], str(view["outcome"]))
        out.append(f"<p class=big>Outcome: <b>{esc(outcome)}</b></p>")
    return "".join(out)


#: The end of an Ultra Secret game, in words.
US_OUTCOMES = {
    "escaped": "the fugitive escaped with everything right and wins",
    "escaped-wrong": "the fugitive escaped with a wrong filing: nobody wins",
    "caught": "the fugitive was caught: the others win together",
}

#: What an agent did on the board this turn (the engine's public notes), in words.
US_ACTS = {
    "searched": "searched the luggage at {square}: {detail}",
    "opened": "opened lockers at {square}: {detail}",
    "read": "read the fake formula at {square} ({detail} mole cards)",
    "drew": "drew a mole card at {square}",
    "deck-empty": "found the mole deck empty at {square}",
    "crowded": "met other agents at {square}: nothing happens",
    "sat-out": "dialled an impossible square ({detail}) and sits out",
    "passed": "did nothing at {square}",
}


def us_note(note: dict[str, Any], names: Names) -> str:
    """One public note ("Red searched the luggage at H2: suitcase")."""
    text = US_ACTS.get(str(note.get("act")), "{act} at {square}").format(
        act=note.get("act"),
        square=note.get("square") or "?",
        detail=", ".join(str(d) for d in note.get("detail") or ()),
    )
    return f"{names.chip(_int(note.get('seat')))} {esc(text)}"


def ultra_secret_log(view: dict[str, Any], names: Names) -> list[str]:
    lines = [us_note(n, names) for n in view.get("notes") or [] if isinstance(n, dict)]
    for i, place in enumerate(view.get("revealed") or []):
        if place:
            lines.append(f"{names.chip(i)}'s dial shows {esc(place)}")
    return lines


# --- Identités cryptées ----------------------------------------------------------------------


def identites_cryptees(public: Public, view: dict[str, Any], names: Names) -> str:
    table = view.get("table") or {}
    weapons = table.get("weapons") or []
    held = {w.get("holder"): w for w in weapons if w.get("holder") is not None}
    rows = []
    for i, s in enumerate(table.get("seats") or []):
        weapon = held.get(i)
        aim = ""
        if weapon:
            aim = esc(weapon.get("name")) + (
                " → " + names.list(weapon.get("targets") or []) if weapon.get("targets") else ""
            )
        loyalty = s.get("loyalty") or {}
        face_up = [_card(s.get("id"))] + [_card(loyalty.get(k)) for k in ("left", "right")]
        programs = ", ".join(
            esc(p.get("name", p)) if isinstance(p, dict) else esc(p)
            for p in s.get("permanent") or []
        )
        rows.append(
            [
                "<b class=score>" + ("♥" * int(s.get("hp") or 0) or "✝") + "</b>",
                aim or "·",
                " ".join(c for c in face_up if c) or "·",
                esc(s.get("programs", 0)),
                programs or "·",
            ]
        )
    out = [
        seat_table(
            names,
            ["HP", "weapon → targets", "face-up cards", "programs in hand", "played programs"],
            rows,
        )
    ]
    free = [w for w in weapons if w.get("holder") is None]
    if free:
        out.append(
            "<p>Weapons on the table: "
            + ", ".join(esc(w.get("name")) + (" (locked)" if w.get("locked") else "") for w in free)
            + "</p>"
        )
    declared = table.get("declared")
    if isinstance(declared, dict):
        out.append(f"<p class=big>Declared: {_action(declared, names)}</p>")
    return "".join(out)


def _card(card: Any) -> str:
    if not isinstance(card, dict):
        return ""
    return f'<span class="card-up">{esc(card.get("name", "?"))}</span>'


def _action(action: dict[str, Any], names: Names) -> str:
    who = names.chip(action.get("seat"))
    rest = ", ".join(
        f"{esc(k)} {names.list(v) if k == 'targets' else esc(v)}"
        for k, v in action.items()
        if k not in ("type", "seat")
    )
    return f"{who} — {esc(action.get('type', '?'))}{' (' + rest + ')' if rest else ''}"


def identites_cryptees_log(view: dict[str, Any], names: Names) -> list[str]:
    table = view.get("table") or {}
    lines = []
    pending = table.get("pending") or {}
    if pending.get("kind") not in (None, "over", "turn"):
        lines.append(f"Waiting for {names.chip(pending.get('seat'))}: {esc(pending['kind'])}")
    window = table.get("window")
    if isinstance(window, dict):
        lines.append("Interrupt window: waiting for " + names.list(window.get("waiting") or []))
    if table.get("winners"):
        side = table.get("winning_side")
        lines.append(
            f"Victory: {names.list(table['winners'])}" + (f" ({esc(side)})" if side else "")
        )
    return lines


BOARDS: dict[str, Callable[[Public, dict[str, Any], Names], str]] = {
    "secret-identity": secret_identity,
    "incognito": incognito,
    "identiquest": identiquest,
    "ultra-secret": ultra_secret,
    "identites-cryptees": identites_cryptees,
}

LOGS: dict[str, Callable[[dict[str, Any], Names], list[str]]] = {
    "secret-identity": secret_identity_log,
    "incognito": incognito_log,
    "identiquest": identiquest_log,
    "ultra-secret": ultra_secret_log,
    "identites-cryptees": identites_cryptees_log,
}
