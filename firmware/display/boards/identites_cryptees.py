"""Identités cryptées on the table display: its board and its log, from ``public`` only."""

from __future__ import annotations

from typing import Any

from firmware.display.parts import Names, Public, esc, seat_table, whole
from firmware.link.lang import N_, _, in_language, label

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


def board(public: Public, view: dict[str, Any], names: Names) -> str:
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
        side = s.get("faction")  # said at game over: the seat's side, coloured by team
        if isinstance(side, str):
            face_up.insert(
                0, f'<b class="card-up side-{esc(side)}">{esc(label(IC_SIDES, side))}</b>'
            )
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
    word = esc(label(IC_SIDES, str(side)))
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
                _("Victory: {seats} ({side})", seats=winners, side=esc(label(IC_SIDES, side)))
            )
        else:
            lines.append(_("Victory: {seats}", seats=winners))
    return lines
