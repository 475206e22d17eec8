"""The console's new-game form comes from the games the hub offers, each with every
option its declaration has: a new game appears by itself, and a form's values become the
options ``coffre host -o`` would send."""

from __future__ import annotations

import re

import pytest

from firmware.display.console_game import PREFIX, BadStart, start_command, start_form
from firmware.hub.publish import game_menu
from firmware.tools.scenario import parse_options
from rules import GAMES, all_info

MENU = game_menu(list(GAMES))


def test_every_game_and_every_declared_option_is_on_the_form() -> None:
    form = start_form(MENU)
    games = all_info()
    assert re.findall(r'<fieldset data-game="([^"]+)"', form) == [g.id for g in games]
    for game in games:
        fieldset = form.split(f'data-game="{game.id}"', 1)[1].split("</fieldset>", 1)[0]
        names = re.findall(r'name="o\.([^"]+)"', fieldset)
        assert names == [o.name for o in game.options], game.id
        players = re.findall(r'<option value="(\d+)"', fieldset.split("</select>", 1)[0])
        assert players == [str(n) for n in range(game.min_players, game.max_players + 1)]


def test_each_offered_value_starts_the_game_as_dash_o_would() -> None:
    """Every value the form offers for every option is one ``-o name=value`` gives, and
    the game's declaration takes it."""
    for game in all_info():
        for option in game.options:
            offered = next(
                o
                for g in MENU
                if g["id"] == game.id
                for o in g["options"]
                if o["name"] == option.name
            )
            for raw, *_text in offered["values"]:
                fields = {
                    "game": game.id,
                    "players": str(game.max_players),
                    PREFIX + option.name: raw,
                }
                cmd = start_command(fields, "console-x", MENU)
                assert cmd.options == parse_options([f"{option.name}={raw}"], game.id)
                game.parse(cmd.options, game.max_players)  # BadOptions if it were not
                assert (cmd.cmd, cmd.game, cmd.players) == ("start", game.id, game.max_players)


def test_a_bad_form_is_one_line_and_no_command() -> None:
    game = all_info()[0]
    cases = {
        "no such game": ({"game": "chess", "players": "4"}, MENU),
        "players": ({"game": game.id, "players": "many"}, MENU),
        "too many": ({"game": game.id, "players": str(game.max_players + 1)}, MENU),
        "undeclared": ({"game": game.id, "players": str(game.max_players), "o.nope": "1"}, MENU),
        "a game running": ({"game": game.id, "players": str(game.max_players)}, []),
    }
    for case, (fields, menu) in cases.items():
        with pytest.raises(BadStart) as err:
            start_command(fields, "console-x", menu)
        assert "\n" not in str(err.value) and len(str(err.value)) < 64, case


def test_hostile_menu_text_is_escaped() -> None:
    menu = [
        {
            "id": "x",
            "name": "<b>x</b>",
            "min": 1,
            "max": 2,
            "options": [{"name": "o", "label": "<script>", "values": [["1", "<i>"]]}],
        }
    ]
    form = start_form(menu)
    assert "<script>" not in form and "<b>" not in form and "<i>" not in form
