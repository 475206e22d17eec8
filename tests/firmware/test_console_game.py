"""The console's new-game form comes from the games the hub offers, each with every
option its declaration has: a new game appears by itself, and a form's values become the
options ``coffre host -o`` would send."""

from __future__ import annotations

import html
import json
import re

import pytest

from firmware.display.console_game import PREFIX, BadStart, start_command, start_form
from firmware.hub.hostmenu import option_text
from firmware.hub.publish import game_menu
from firmware.link.lang import LANGUAGES, _, catalogue, refusal, speaking
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


def _choices(form: str, game: str, option: str) -> tuple[str, list[tuple[str, str]]]:
    """An option's label and its offered values (as sent, as read) on the form."""
    fieldset = form.split(f'data-game="{game}"', 1)[1].split("</fieldset>", 1)[0]
    found = re.search(
        rf'<label><span>([^<]*)</span><select name="{re.escape(PREFIX + option)}">(.*?)</select>',
        fieldset,
    )
    assert found, (game, option)
    values = re.findall(r'<option value="([^"]+)">([^<]*)</option>', found.group(2))
    return html.unescape(found.group(1)), [(html.unescape(r), html.unescape(t)) for r, t in values]


@pytest.mark.parametrize("code", LANGUAGES)
def test_the_form_names_each_option_and_value_as_the_panel_does(code: str) -> None:
    """In the language spoken, every option the form offers a choice for reads as the
    hub's panel says it ("Fenêtre : 5 s", "Départ : Place 1"): its label and each value."""
    with speaking(code):
        form = start_form(MENU)
        for game in all_info():
            for option in game.options:
                offered = [o for g in MENU if g["id"] == game.id for o in g["options"]]
                if not next(o for o in offered if o["name"] == option.name)["values"]:
                    continue  # a free text or number: no choices to read
                label, values = _choices(form, game.id, option.name)
                assert values, (game.id, option.name)
                for raw, text in values:
                    panel = option_text(option, json.loads(raw))
                    assert _("{option}: {value}", option=label, value=text) == panel


def test_a_french_form_is_french() -> None:
    with speaking("fr"):
        form = start_form(MENU)
    assert _choices(form, "secret-identity", "mystery") == (
        "Numéros",
        [('"keys"', "par clé"), ('"dealt"', "tirés")],
    )
    label, values = _choices(form, "identites-cryptees", "first")
    assert (label, values[0]) == ("Départ", ("0", "Place 1"))
    assert _choices(form, "identites-cryptees", "interrupt_window")[1][-1] == ("0", "non")
    assert "<span>Joueurs</span>" in form and ">Lancer</button>" in form


def test_every_text_the_menu_publishes_has_french_text() -> None:
    """The hub publishes its menu's texts as message ids: each game's name, each option's
    label and each value's text the game names (a choice without a label reads as itself)."""
    french = catalogue("fr")
    for game, published in zip(all_info(), MENU, strict=True):
        ids = [published["name"]]
        for option, offered in zip(game.options, published["options"], strict=True):
            ids.append(offered["label"])
            for raw, msgid, *_params in offered["values"]:
                plain = option.kind == "choice" and str(json.loads(raw)) not in option.values
                if not plain:
                    ids.append(msgid)
        untranslated = [m for m in ids if m not in french._catalog]  # type: ignore[attr-defined]
        assert not untranslated, (game.id, untranslated)


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("en", "Secret Identity is for 3-8 players"),
        ("fr", "Secret Identity se joue de 3 à 8 joueurs"),
    ],
)
def test_a_bad_form_is_said_in_the_language_spoken(code: str, said: str) -> None:
    fields = {"game": "secret-identity", "players": "9"}
    with pytest.raises(BadStart) as err:
        start_command(fields, "console-x", MENU)
    assert str(err.value) == "Secret Identity is for 3-8 players"  # the English line
    with speaking(code):
        assert refusal(err.value.msgid, err.value.params) == said
