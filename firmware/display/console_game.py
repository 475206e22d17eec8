"""The console's "new game" form, from the games the hub offers, and the start it sends.

Between games the hub's ``public`` lists the games the host may start (``menu``), each
with its player range and every option it declares, as the panel offers them
(``firmware/hub/publish.py``, ``option_menu``): the values as ``-o`` reads them (JSON)
with how each reads, or a range for a free number. So a new game appears here by itself,
and the display never holds the rules. Its texts (names, labels, how a value reads) are
message ids, said here in the language spoken now, as the panel says them. An option
left at "default" is not sent: the hub fills it as it does for ``-o`` (a language option
follows the table). The hub checks the start (a game running, too few stations, a bad
option): its one-line answer is what the phone shows.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from firmware.link import protocol as proto
from firmware.link.lang import N_, _, refusal

#: Form fields of an option are named this, then the option's name.
PREFIX = "o."
#: The form's words (marked here: a ``_()`` inside an f-string is not extracted).
T = {
    "default": N_("default"),
    "players": N_("Players"),
    "game": N_("Game"),
    "start": N_("Start"),
}


class BadStart(ValueError):
    """A form that is no start: one line, a message id with ``{fields}`` that ``params``
    fill (said in the console's language; ``str()`` is the English line)."""

    def __init__(self, msgid: str, /, **params: Any) -> None:
        super().__init__(msgid.format(**params) if params else msgid)
        self.msgid = msgid
        self.params = params


def said(text: Any, params: Any = None) -> str:
    """A text of the hub's menu (a message id, its fields in ``params``) in the language
    spoken now; a text no catalogue has reads as itself."""
    return refusal(str(text), params if isinstance(params, dict) else None)


def _values(option: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The values an option offers: each as the form sends it and as the host reads it
    (``[raw, text]``, or ``[raw, text, fields]`` for a text with fields such as ``{n} s``)."""
    out = []
    for value in option.get("values") or []:
        if isinstance(value, list) and len(value) in (2, 3):
            out.append((str(value[0]), said(value[1], value[2] if len(value) == 3 else None)))
    return out


def _option_field(option: Mapping[str, Any]) -> str:
    esc = html.escape
    name = esc(f"{PREFIX}{option.get('name', '')}")
    label = esc(said(option.get("label", option.get("name", ""))))
    values = _values(option)
    if values:
        choices = "".join(
            f'<option value="{esc(raw)}">{esc(text)}</option>' for raw, text in values
        )
        control = (
            f'<select name="{name}"><option value="" selected>{esc(_(T["default"]))}</option>'
            f"{choices}</select>"
        )
    elif option.get("kind") in ("number", "seconds"):
        lo, hi = option.get("lo"), option.get("hi")
        bounds = (f' min="{esc(str(lo))}"' if lo is not None else "") + (
            f' max="{esc(str(hi))}"' if hi is not None else ""
        )
        control = (
            f'<input name="{name}" type="number" inputmode="numeric"{bounds} '
            f'placeholder="{esc(_(T["default"]))}">'
        )
    else:
        control = f'<input name="{name}" type="text" placeholder="{esc(_(T["default"]))}">'
    return f"<label><span>{label}</span>{control}</label>"


def games(public: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The games the hub offers now (none while a game runs)."""
    menu = public.get("menu")
    if not isinstance(menu, list):
        return []
    return [g for g in menu if isinstance(g, dict) and isinstance(g.get("id"), str)]


def start_form(menu: Sequence[Mapping[str, Any]]) -> str:
    """The form: a game picker, then one fieldset per game (only the picked one shows)."""
    esc = html.escape
    if not menu:
        note = _("A game is running (or the hub has not said its games yet).")
        return f'<p class="note">{esc(note)}</p>'
    picker = "".join(
        f'<option value="{esc(g["id"])}">{esc(said(g.get("name", g["id"])))}</option>' for g in menu
    )
    sets = []
    for index, game in enumerate(menu):
        lo, hi = int(game.get("min", 1)), int(game.get("max", 1))
        seats = "".join(
            f'<option value="{n}"{" selected" if n == hi else ""}>{n}</option>'
            for n in range(lo, hi + 1)
        )
        fields = "".join(_option_field(o) for o in game.get("options") or [] if isinstance(o, dict))
        hidden = "" if index == 0 else " hidden"
        sets.append(
            f'<fieldset data-game="{esc(game["id"])}"{hidden}>'
            f"<label><span>{esc(_(T['players']))}</span>"
            f'<select name="players">{seats}</select></label>'
            f"{fields}</fieldset>"
        )
    return (
        '<form id="start" class="start">'
        f'<label><span>{esc(_(T["game"]))}</span><select name="game">{picker}</select></label>'
        f'{"".join(sets)}<button class="big" type="submit">{esc(_(T["start"]))}</button></form>'
    )


def _value(option: Mapping[str, Any], raw: str) -> Any:
    """A form's value as ``-o`` reads it: JSON where it parses, else the text."""
    if option.get("kind") == "flag" and raw.strip().lower() in ("yes", "no", "on", "off"):
        return raw.strip().lower() in ("yes", "on")
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def start_command(
    form: Mapping[str, str], command_id: str, menu: Sequence[Mapping[str, Any]]
) -> proto.HostCommand:
    """The ``start`` a form asks for, or :class:`BadStart` (one line). The hub checks
    each option's value itself (its answer names what it must be)."""
    if not menu:
        # The hub lists its games only between games (public's menu).
        raise BadStart(N_("A game is running: abort it first"))
    game = next((g for g in menu if g["id"] == form.get("game")), None)
    if game is None:
        raise BadStart(N_("That game is not on offer now"))
    try:
        players = int(form.get("players", ""))
    except ValueError:
        raise BadStart(N_("Players must be a number")) from None
    lo, hi = int(game.get("min", 1)), int(game.get("max", 1))
    if not lo <= players <= hi:
        name = str(game.get("name", game["id"]))  # a message id: said with the line
        raise BadStart(N_("{game} is for {lo}-{hi} players"), game=name, lo=lo, hi=hi)
    declared = {str(o.get("name")): o for o in game.get("options") or [] if isinstance(o, dict)}
    options: dict[str, Any] = {}
    for key, raw in form.items():
        if not key.startswith(PREFIX) or raw == "":
            continue
        name = key.removeprefix(PREFIX)
        if name not in declared:
            raise BadStart(N_("No option {name}"), name=name[:50])
        options[name] = _value(declared[name], raw)
    return proto.HostCommand(
        cmd="start", id=command_id, game=str(game["id"]), players=players, options=options
    )
