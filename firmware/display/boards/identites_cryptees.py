"""Identités cryptées on the table display: its board and its log, from ``public`` only."""

from __future__ import annotations

from typing import Any

from firmware.display.parts import Names, Narration, Public, esc, seat_table, whole
from firmware.link.lang import N_, _, in_language, label, plural

#: What the table waits for (``pending.kind``), after "Waiting for Red:".
IC_WAITS = {
    "respond": N_("reveal a card or lose HP"),
    "reaim": N_("re-aim a weapon"),
    "ability": N_("use an ID ability"),
    "discard": N_("discard down to the hand limit"),
    "window": N_("the interrupt window"),
}


#: Sixteen seats' face-up cards on one line each: the board takes more of a TV's width.
WIDE = True


def board(public: Public, view: dict[str, Any], names: Names) -> str:
    table = view.get("table") or {}
    weapons = table.get("weapons") or []
    held = {w.get("holder"): w for w in weapons if w.get("holder") is not None}
    over = bool(public.get("over"))
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
        side = s.get("faction")  # said at game over: the seat's side, coloured by team
        if isinstance(side, str):
            face_up.insert(
                0, f'<b class="card-up side-{esc(side)}">{esc(names.said("sides", side))}</b>'
            )
        programs = ", ".join(
            esc(in_language(p.get("name", p))) if isinstance(p, dict) else esc(p)
            for p in s.get("permanent") or []
        )
        hp = "<b class=score>" + ("♥" * int(s.get("hp") or 0) or "✝") + "</b>"
        cards = " ".join(c for c in face_up if c) or "·"
        if over:  # aims and hands mean nothing once the game is over: the sides and cards do
            rows.append([hp, cards, programs or "·"])
        else:
            count = int(s.get("programs") or 0)
            hand = (
                '<span class="nw">' + esc(plural("{n} in hand", "{n} in hand", count)) + "</span>"
            )
            rows.append([hp, aim or "·", cards, f"{hand}{' · ' + programs if programs else ''}"])
    if over:
        header = [_("HP"), _("face-up cards"), _("played programs")]
    else:
        header = [_("HP"), _("weapon → targets"), _("face-up cards"), _("programs")]
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
    if isinstance(declared, dict) and not isinstance(table.get("window"), dict):
        said = _("Declared: {action}", action=_action(declared, weapons, names))
        out.append(f"<p class=big>{said}</p>")
    return "".join(out)


def _card(card: Any) -> str:
    """A face-up card, its border the colour of the side it counts for."""
    if not isinstance(card, dict):
        return ""
    side = esc(card.get("colour") or "")
    return f'<span class="card-up side-{side}">{esc(in_language(card.get("name")) or "?")}</span>'


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
    seat = whole(action.get("seat"))
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


def now(public: Public, view: dict[str, Any], names: Names) -> str:
    """One line: the declared action and who the interrupt window waits for, or who must
    answer a hit, re-aim, discard... (one hold-up, never two contradictory lines)."""
    table = view.get("table") or {}
    weapons = table.get("weapons") or []
    declared = table.get("declared")
    window = table.get("window")
    if isinstance(window, dict) and isinstance(declared, dict):
        return _(
            "{action} — interrupt window: waiting for {seats}",
            action=_action(declared, weapons, names),
            seats=names.list(window.get("waiting") or []),
        )
    pending = table.get("pending") or {}
    kind = pending.get("kind")
    if kind not in (None, "over", "turn", "window"):
        return _(
            "Waiting for {seat}: {what}",
            seat=names.chip(whole(pending.get("seat"))),
            what=esc(label(IC_WAITS, str(kind))),
        )
    return ""


def verdict(public: Public, view: dict[str, Any], names: Names) -> str:
    """The winning side and its seats, said in the end box (not only in the log)."""
    table = view.get("table") or {}
    side = table.get("winning_side")
    if not side:
        return ""
    word = esc(names.said("sides", side))
    winners = names.list(table.get("winners") or [])
    return _(
        "Victory: {seats} ({side})", seats=winners, side=f'<b class="side-{esc(side)}">{word}</b>'
    )


def log(view: dict[str, Any], names: Names) -> list[str]:
    table = view.get("table") or {}
    lines = []
    if table.get("winners"):
        side = table.get("winning_side")
        winners = names.list(table["winners"])
        if side:
            lines.append(
                _("Victory: {seats} ({side})", seats=winners, side=esc(names.said("sides", side)))
            )
        else:
            lines.append(_("Victory: {seats}", seats=winners))
    return lines


# --- the feed: each public event of the game in words ---------------------------------------

#: A seat's cards by their slot (what a reveal or an investigation is about).
IC_SLOTS = {"id": N_("ID card"), "left": N_("left loyalty card"), "right": N_("right loyalty card")}


def _weapon(view: dict[str, Any], key: Any) -> str:
    """A weapon's name in the table's language, from its key."""
    weapons = (view.get("table") or {}).get("weapons") or []
    name = next((w.get("name") for w in weapons if w.get("key") == key), key)
    return esc(in_language(name) or "?")


def _seat(data: dict[str, Any], names: Names, key: str = "seat") -> str:
    return names.chip(whole(data.get(key)))


def _targets(data: dict[str, Any], names: Names) -> str:
    return names.list(int(t) for t in data.get("targets") or [])


def _program(d: dict[str, Any], v: dict[str, Any], n: Names) -> list[str]:
    name = esc(in_language(d.get("name")) or d.get("key") or "?")
    if whole(d.get("target")) is not None:
        return [
            _(
                "{seat} plays {program} on {target}",
                seat=_seat(d, n),
                program=name,
                target=_seat(d, n, "target"),
            )
        ]
    return [_("{seat} plays {program}", seat=_seat(d, n), program=name)]


def _damage(d: dict[str, Any], v: dict[str, Any], n: Names) -> list[str]:
    said = plural(
        "{seat} loses {n} HP ({hp} left)",
        "{seat} loses {n} HP ({hp} left)",
        int(d.get("amount") or 0),
        seat=_seat(d, n),
        hp=esc(d.get("hp")),
    )
    return [f'<span class="lost">{said}</span>']


def _steal(d: dict[str, Any], v: dict[str, Any], n: Names) -> list[str]:
    if not d.get("count"):
        return [
            _(
                "{seat} tries to steal from {target}: empty hand",
                seat=_seat(d, n),
                target=_seat(d, n, "target"),
            )
        ]
    return [
        _("{seat} steals a program from {target}", seat=_seat(d, n), target=_seat(d, n, "target"))
    ]


def _check(d: dict[str, Any], v: dict[str, Any], n: Names) -> list[str]:
    if d.get("result") == "won":
        winners = n.list(int(s) for s in d.get("winners") or [])
        return ["<b>" + _("Victory check: {seats} win", seats=winners) + "</b>"]
    return [esc(_("Victory check: the game goes on"))]


def _ability(d: dict[str, Any], v: dict[str, Any], n: Names) -> list[str]:
    if whole(d.get("target")) is not None:
        return [
            _(
                "{seat} uses their ID's ability on {target}",
                seat=_seat(d, n),
                target=_seat(d, n, "target"),
            )
        ]
    return [_("{seat} uses their ID's ability", seat=_seat(d, n))]


NARRATE: dict[str, Narration] = {
    "declare": lambda d, v, n: [
        _(
            "{action}: anyone may react",
            action=_action(d.get("action") or {}, (v.get("table") or {}).get("weapons") or [], n),
        )
    ],
    "window": lambda d, v, n: [
        plural(
            "Interrupt window: {n} second to react",
            "Interrupt window: {n} seconds to react",
            int(d.get("seconds") or 0),
        )
    ],
    "pass": lambda d, v, n: [_("{seat} lets it go", seat=_seat(d, n))],
    "window_closed": lambda d, v, n: [esc(_("The interrupt window closes"))],
    "interrupted": lambda d, v, n: [_("{seat}'s action is cancelled", seat=_seat(d, n))],
    "program": _program,
    "equip": lambda d, v, n: [
        _(
            "{seat} takes the {weapon}, aimed at {targets}",
            seat=_seat(d, n),
            weapon=_weapon(v, d.get("weapon")),
            targets=_targets(d, n),
        )
    ],
    "aim": lambda d, v, n: [
        _(
            "{seat} aims the {weapon} at {targets}",
            seat=_seat(d, n),
            weapon=_weapon(v, d.get("weapon")),
            targets=_targets(d, n),
        )
    ],
    "fire": lambda d, v, n: [
        "<b>"
        + _(
            "{seat} fires the {weapon} at {targets}",
            seat=_seat(d, n),
            weapon=_weapon(v, d.get("weapon")),
            targets=_targets(d, n),
        )
        + "</b>"
    ],
    "drop": lambda d, v, n: [
        _("{seat} drops the {weapon}", seat=_seat(d, n), weapon=_weapon(v, d.get("weapon")))
    ],
    "unlock": lambda d, v, n: [_("The {weapon} is unlocked", weapon=_weapon(v, d.get("weapon")))],
    "damage": _damage,
    "heal": lambda d, v, n: [_("{seat} is healed: {hp} HP", seat=_seat(d, n), hp=esc(d.get("hp")))],
    "revive": lambda d, v, n: [
        _("{seat} is back in the game: {hp} HP", seat=_seat(d, n), hp=esc(d.get("hp")))
    ],
    "reveal": lambda d, v, n: [
        _(
            "{seat} reveals their {card}",
            seat=_seat(d, n),
            card=esc(label(IC_SLOTS, str(d.get("card")))),
        )
    ],
    "investigate": lambda d, v, n: [
        _(
            "{seat} investigates {target}'s {card}",
            seat=_seat(d, n),
            target=_seat(d, n, "target"),
            card=esc(label(IC_SLOTS, str(d.get("card")))),
        )
    ],
    "draw": lambda d, v, n: [
        plural(
            "{seat} draws {n} program",
            "{seat} draws {n} programs",
            int(d.get("count") or 0),
            seat=_seat(d, n),
        )
    ],
    "discard": lambda d, v, n: [_("{seat} discards a program", seat=_seat(d, n))],
    "steal": _steal,
    "swap": lambda d, v, n: [esc(_("Two loyalty cards swap places"))],
    "eliminated": lambda d, v, n: ["<b>" + _("{seat} is eliminated", seat=_seat(d, n)) + "</b>"],
    "check": _check,
    "ability": _ability,
    "change_faction": lambda d, v, n: [
        _(
            "{seat} changes sides: {side}",
            seat=_seat(d, n),
            side=esc(n.said("sides", d.get("to"))),
        )
    ],
    "skip_next": lambda d, v, n: [_("{seat} will skip their next turn", seat=_seat(d, n))],
    "skip": lambda d, v, n: [_("{seat} skips this turn", seat=_seat(d, n))],
    "turn": lambda d, v, n: [_("{seat}'s turn", seat=_seat(d, n))],
}
#: Runs of these seat-only events read as one line (a window's passes).
MERGE = {
    "pass": lambda k, seats: plural("{seats} lets it go", "{seats} let it go", k, seats=seats),
}
