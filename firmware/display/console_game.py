"""The console's "new game" form, built from the games' declarations, and the start it sends.

Every registered game (:func:`rules.all_info`) gets its fieldset: its player range and
every option it declares, as the panel's menu and ``coffre host -o`` read them
(:class:`rules.declare.Option`), so a new game appears here by itself. An option left at
"default" is not sent: the hub fills it as it does for ``-o`` (a language option follows
the table). The hub validates the start (a game running, too few stations, a bad option):
its one-line answer is what the phone shows.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from firmware.link import protocol as proto
from rules import all_info, get_info
from rules.declare import GameInfo, Option
from rules.errors import BadOptions

#: Form fields of an option are named this, then the option's name.
PREFIX = "o."


def _value_text(option: Option, value: Any) -> str:
    if option.kind == "seconds":
        return "off" if value == 0 else f"{value} s"
    if option.kind == "flag":
        return "yes" if value else "no"
    if option.kind == "seat":
        return f"Seat {int(value) + 1}"
    return str(option.values.get(str(value), value))


def _raw(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _option_field(game: GameInfo, option: Option) -> str:
    name = html.escape(f"{PREFIX}{option.name}")
    label = html.escape(option.label)
    values: list[Any] = list(option.menu) or list(option.choices)
    if option.kind == "flag" and not values:
        values = [False, True]
    if option.kind == "seat":
        values = list(range(game.max_players))
    if values:
        choices = "".join(
            f'<option value="{html.escape(_raw(v))}">{html.escape(_value_text(option, v))}</option>'
            for v in values
        )
        control = (
            f'<select name="{name}"><option value="" selected>default</option>{choices}</select>'
        )
    elif option.kind in ("number", "seconds"):
        bounds = f' min="{option.lo:g}"' + (
            "" if option.hi == float("inf") else f' max="{option.hi:g}"'
        )
        control = (
            f'<input name="{name}" type="number" inputmode="numeric"{bounds} placeholder="default">'
        )
    else:
        control = f'<input name="{name}" type="text" placeholder="default">'
    return f"<label><span>{label}</span>{control}</label>"


def start_form() -> str:
    """The form: a game picker, then one fieldset per game (only the picked one shows)."""
    games = all_info()
    picker = "".join(
        f'<option value="{html.escape(g.id)}">{html.escape(g.name)}</option>' for g in games
    )
    sets = []
    for index, game in enumerate(games):
        seats = "".join(
            f'<option value="{n}"{" selected" if n == game.max_players else ""}>{n}</option>'
            for n in range(game.min_players, game.max_players + 1)
        )
        fields = "".join(_option_field(game, o) for o in game.options)
        hidden = "" if index == 0 else " hidden"
        sets.append(
            f'<fieldset data-game="{html.escape(game.id)}"{hidden}>'
            f'<label><span>Players</span><select name="players">{seats}</select></label>'
            f"{fields}</fieldset>"
        )
    return (
        '<form id="start" class="start">'
        f'<label><span>Game</span><select name="game">{picker}</select></label>'
        f'{"".join(sets)}<button class="big" type="submit">Start</button></form>'
    )


def start_command(form: Mapping[str, str], command_id: str) -> proto.HostCommand:
    """The ``start`` a form asks for; :class:`BadOptions` (one line) if it cannot be one."""
    game_id = form.get("game", "")
    info = get_info(game_id)  # BadOptions for a game this hub's rules do not know
    try:
        players = int(form.get("players", ""))
    except ValueError:
        raise BadOptions("Players must be a number") from None
    info.check_players(players)
    pairs = {
        key.removeprefix(PREFIX): value
        for key, value in form.items()
        if key.startswith(PREFIX) and value != ""
    }
    declared = {o.name for o in info.options}
    unknown = sorted(set(pairs) - declared)
    if unknown:
        raise BadOptions(f"{info.name} has no option {unknown[0]}")
    options = info.from_text(pairs)
    for name, value in options.items():
        info.option(name).parse(value, players)  # one line naming what it must be
    return proto.HostCommand(
        cmd="start", id=command_id, game=game_id, players=players, options=options
    )
