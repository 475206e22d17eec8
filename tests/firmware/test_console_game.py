"""The console's new-game form comes from the games' declarations: every game and every
option it declares is there, and a form's values become the options ``coffre host -o``
would send."""

from __future__ import annotations

import re

import pytest

from firmware.display.console_game import PREFIX, start_command, start_form
from firmware.tools.play import parse_options
from rules import all_info
from rules.errors import BadOptions


def test_every_game_and_every_declared_option_is_on_the_form() -> None:
    form = start_form()
    games = all_info()
    assert re.findall(r'<fieldset data-game="([^"]+)"', form) == [g.id for g in games]
    for game in games:
        fieldset = form.split(f'data-game="{game.id}"', 1)[1].split("</fieldset>", 1)[0]
        names = re.findall(r'name="o\.([^"]+)"', fieldset)
        assert names == [o.name for o in game.options], game.id
        players = re.findall(r'<option value="(\d+)"', fieldset.split("</select>", 1)[0])
        assert players == [str(n) for n in range(game.min_players, game.max_players + 1)]


def test_each_offered_value_starts_the_game_as_dash_o_would() -> None:
    """Every value the form offers for every option parses, and as ``-o name=value`` does."""
    form = start_form()
    for game in all_info():
        fieldset = form.split(f'data-game="{game.id}"', 1)[1].split("</fieldset>", 1)[0]
        for option in game.options:
            select = re.search(
                rf'name="{re.escape(PREFIX + option.name)}">(.*?)</select>', fieldset
            )
            if select is None:
                continue  # a free field (a number, a card set's name)
            for raw in re.findall(r'<option value="([^"]+)"', select.group(1)):
                fields = {
                    "game": game.id,
                    "players": str(game.max_players),
                    PREFIX + option.name: raw,
                }
                cmd = start_command(fields, "console-x")
                assert cmd.options == parse_options([f"{option.name}={raw}"], game.id)
                assert (cmd.cmd, cmd.game, cmd.players) == ("start", game.id, game.max_players)


def test_a_bad_form_is_one_line_and_no_command() -> None:
    game = all_info()[0]
    cases = {
        "no such game": {"game": "chess", "players": "4"},
        "players": {"game": game.id, "players": "many"},
        "too many": {"game": game.id, "players": str(game.max_players + 1)},
        "undeclared": {"game": game.id, "players": str(game.max_players), "o.nope": "1"},
    }
    for case, fields in cases.items():
        with pytest.raises(BadOptions) as err:
            start_command(fields, "console-x")
        assert "\n" not in str(err.value) and len(str(err.value)) < 64, case
