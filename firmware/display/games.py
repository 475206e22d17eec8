"""Each game's board on the table display: headline, board and log, from ``public`` only.

Every word is the table's language (:mod:`firmware.link.lang`; the page is rendered while
speaking it): engine ids (phases, outcomes, card places) go through the label maps below,
card names and texts written per language (Identités cryptées) through ``in_language``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from firmware.display.render import Names, esc, seat_table
from firmware.link.lang import N_, _, colour, in_language, label, plural
from firmware.link.phases import ULTRA_SECRET_PHASES

Public = dict[str, Any]

TRACK = 30

#: Every game's phases, as the headline says them.
PHASES = {
    "prepare": N_("Prepare|phase"),
    "vote": N_("Vote"),
    "reveal": N_("Reveal|phase"),
    "answer": N_("Answer"),
    "over": N_("Over"),
    "draw": N_("Draw"),
    "play": N_("Play"),
    "give": N_("Give gems"),
    **ULTRA_SECRET_PHASES,
    "turn": N_("Turn"),
    "window": N_("Interrupt window"),
    "respond": N_("Hit"),
    "reaim": N_("Re-aim"),
    "discard": N_("Discard"),
    "ability": N_("ID ability"),
}


def headline(public: Public, names: Names) -> str:
    view = public.get("view") or {}
    game = public.get("game")
    if game == "identites-cryptees":
        view = view.get("table") or {}
    phase = str(view.get("phase") or "")
    bits = [f"<b>{esc(label(PHASES, phase))}</b>"] if phase else []
    if "round" in view and "rounds" in view:
        bits.append(esc(_("round {n} of {of}", n=view["round"], of=view["rounds"])))
    turn = _whose_turn(game, view)
    if turn is not None and not public.get("over"):
        bits.append(_("{seat} to play", seat=names.chip(turn)))
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
            esc(
                _(
                    "{placed} placed, {left} left",
                    placed=s.get("pictos_placed", 0),
                    left=s.get("pictos_left", 0),
                )
            ),
            yes(s.get("mystery_locked")),
            esc(_("{n} in / {cast} cast", n=s.get("votes_in", 0), cast=s.get("votes_cast", 0))),
            yes(s.get("ready")),
        ]
        for s in seats
    ]
    header = [_("score"), _("track"), _("picto cards"), _("key in"), _("votes"), _("ready")]
    out = [seat_table(names, header, rows)]
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
        out.append(track([(_("Team"), "team", score)]))
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


#: The co-op result, by the lowest score of its band (the engine's bands, in words).
BANDS = {
    0: N_("Locked out: the safes kept their secrets."),
    3: N_("Warming up: a few safes cracked open."),
    6: N_("Fine crew: most safes gave way."),
    9: N_("Master safecrackers: nothing hides from you."),
}


def secret_identity_log(view: dict[str, Any], names: Names) -> list[str]:
    if view.get("mode") == "coop":
        lines = [turn_line(turn, names) for turn in view.get("history") or []]
    else:
        lines = [safe_line(safe, names) for safe in view.get("revealed") or []]
    result = view.get("result")
    if isinstance(result, dict) and result.get("text"):
        band = (result.get("band") or [None])[0]
        text = _(BANDS[band]) if band in BANDS else str(result["text"])
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
    return _("{seat}'s safe opens: key {key} — {who}", seat=names.chip(owner), key=key, who=who)


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
    header = [_("score"), _("place"), _("drawing done"), _("voted on it")]
    out = [seat_table(names, header, rows)]
    if words:  # the list is on the table from the vote on
        heading = esc(_("The words"))
        out.append(f'<div class="words"><h2>{heading}</h2><ol class="wordlist">{words}</ol></div>')
    return "".join(out)


def incognito_log(view: dict[str, Any], names: Names) -> list[str]:
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
                "Round {n}: {seat} drew {word} — {found}",
                n=esc(reveal.get("round", "")),
                seat=names.chip(d.get("drawer")),
                word=f"<b>{esc(number)}. {esc(word)}</b>",
                found=found,
            )
        )
    return lines


# --- Identiquest ----------------------------------------------------------------------------

#: How an Identiquest game ended (the engine's ``end``).
IQ_ENDS = {
    "deck": N_("the deck ran out"),
    "all-out": N_("every thief was unmasked or escaped"),
}


def identiquest(public: Public, view: dict[str, Any], names: Names) -> str:
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
            if gem in (mask, truth):
                word = _("UNMASKED") if gem == mask else _("it was")
                cells.append(f'<td class="unmasked c-{esc(gem)}">{esc(word)}</td>')
            elif mark == "x":
                cells.append('<td class="crossed">✗</td>')
            else:
                cells.append("<td>?</td>")
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
    return f'<span class="chip c-{esc(gem)}"><i></i>{esc(colour(str(gem)))}</span>'


def identiquest_log(view: dict[str, Any], names: Names) -> list[str]:
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
                giver=names.chip(_int(pending.get("giver"))),
                receiver=names.chip(_int(pending.get("receiver"))),
            )
        )
    if view.get("end"):
        lines.append(_("The game ended: {why}", why=esc(label(IQ_ENDS, str(view["end"])))))
    return lines


# --- Ultra Secret ---------------------------------------------------------------------------

#: The five filing places (the engine's ``places``), in words.
US_PLACES = {
    "G1": N_("lab safe"),
    "G2": N_("bar"),
    "G3": N_("park monument"),
    "G4": N_("embassy files"),
    "G5": N_("library"),
}
#: Words in the engine's notes (what a search turned up).
US_WORDS = {"suitcase": N_("suitcase"), "briefcase": N_("briefcase")}


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
        seat=names.chip(_int(note.get("seat"))),
        act=esc(act),
        square=esc(note.get("square") or "?"),
        detail=esc(detail),
    )


def ultra_secret_log(view: dict[str, Any], names: Names) -> list[str]:
    lines = [us_note(n, names) for n in view.get("notes") or [] if isinstance(n, dict)]
    for i, place in enumerate(view.get("revealed") or []):
        if place:
            lines.append(_("{seat}'s dial shows {place}", seat=names.chip(i), place=esc(place)))
    return lines


# --- Identités cryptées ----------------------------------------------------------------------

#: The sides of Identités cryptées (a victory's ``winning_side``).
IC_SIDES = {
    "human": N_("Humans"),
    "machine": N_("Machines"),
    "outlaw": N_("Outlaws"),
    "legion": N_("the Legion"),
    "fallen": N_("the Fallen"),
    "nobody": N_("nobody"),
}
#: What the table waits for (``pending.kind``), after "Waiting for Red:".
IC_WAITS = {
    "respond": N_("reveal a card or lose HP"),
    "reaim": N_("re-aim a weapon"),
    "ability": N_("use an ID ability"),
    "discard": N_("discard down to the hand limit"),
    "window": N_("the interrupt window"),
}


def identites_cryptees(public: Public, view: dict[str, Any], names: Names) -> str:
    table = view.get("table") or {}
    weapons = table.get("weapons") or []
    held = {w.get("holder"): w for w in weapons if w.get("holder") is not None}
    rows = []
    for i, s in enumerate(table.get("seats") or []):
        weapon = held.get(i)
        aim = ""
        if weapon:
            aim = esc(in_language(weapon.get("name"))) + (
                " → " + names.list(weapon.get("targets") or []) if weapon.get("targets") else ""
            )
        loyalty = s.get("loyalty") or {}
        face_up = [_card(s.get("id"))] + [_card(loyalty.get(k)) for k in ("left", "right")]
        programs = ", ".join(
            esc(in_language(p.get("name", p))) if isinstance(p, dict) else esc(p)
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
    header = [
        _("HP"),
        _("weapon → targets"),
        _("face-up cards"),
        _("programs in hand"),
        _("played programs"),
    ]
    out = [seat_table(names, header, rows)]
    free = [w for w in weapons if w.get("holder") is None]
    if free:
        locked = " (" + esc(_("locked")) + ")"
        shown = ", ".join(
            esc(in_language(w.get("name"))) + (locked if w.get("locked") else "") for w in free
        )
        lying = _("Weapons on the table: {weapons}", weapons=shown)
        out.append(f"<p>{lying}</p>")
    declared = table.get("declared")
    if isinstance(declared, dict):
        said = _("Declared: {action}", action=_action(declared, weapons, names))
        out.append(f"<p class=big>{said}</p>")
    return "".join(out)


def _card(card: Any) -> str:
    if not isinstance(card, dict):
        return ""
    return f'<span class="card-up">{esc(in_language(card.get("name")) or "?")}</span>'


#: A declared action (the interrupt window's), in words.
IC_ACTIONS = {
    "investigate": N_("{seat} investigates {target}"),
    "equip": N_("{seat} takes the {weapon}"),
    "aim": N_("{seat} aims at {targets}"),
    "fire": N_("{seat} fires"),
    "heal": N_("{seat} heals with the {weapon}"),
    "draw": N_("{seat} draws a program"),
    "drop": N_("{seat} drops the {weapon}"),
}


def _action(action: dict[str, Any], weapons: list[dict[str, Any]], names: Names) -> str:
    seat = _int(action.get("seat"))
    key = action.get("weapon")
    if key is None:  # fire, heal, drop: the weapon the actor holds
        key = next((w.get("key") for w in weapons if w.get("holder") == seat), None)
    weapon = next((w.get("name") for w in weapons if w.get("key") == key), key)
    kind = str(action.get("type", "?"))
    targets = [int(t) for t in action.get("targets") or []]
    if action.get("target") is not None:
        targets.append(int(action["target"]))
    template = _(IC_ACTIONS[kind]) if kind in IC_ACTIONS else "{seat}: {kind}"
    text = template.format(
        seat=names.chip(seat),
        kind=esc(kind),
        target=names.list(targets),
        targets=names.list(targets),
        weapon=esc(in_language(weapon)),
    )
    if targets and kind in ("equip", "fire", "heal"):
        text += " → " + names.list(targets)
    return text


def identites_cryptees_log(view: dict[str, Any], names: Names) -> list[str]:
    table = view.get("table") or {}
    lines = []
    pending = table.get("pending") or {}
    kind = pending.get("kind")
    if kind not in (None, "over", "turn"):
        lines.append(
            _(
                "Waiting for {seat}: {what}",
                seat=names.chip(pending.get("seat")),
                what=esc(label(IC_WAITS, str(kind))),
            )
        )
    window = table.get("window")
    if isinstance(window, dict):
        waiting = names.list(window.get("waiting") or [])
        lines.append(_("Interrupt window: waiting for {seats}", seats=waiting))
    if table.get("winners"):
        side = table.get("winning_side")
        winners = names.list(table["winners"])
        if side:
            lines.append(
                _("Victory: {seats} ({side})", seats=winners, side=esc(label(IC_SIDES, side)))
            )
        else:
            lines.append(_("Victory: {seats}", seats=winners))
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
