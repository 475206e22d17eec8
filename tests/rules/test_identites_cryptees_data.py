"""Identités cryptées 2.0 card data: the schema checks and the generic default set."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from firmware.tools.scenario import run_scenario
from rules._identites_cryptees_cards import CardSet, DataError, card_sets, check, load

DATA = Path(__file__).parents[2] / "rules" / "data" / "identites-cryptees"
DOC = Path(__file__).parents[2] / "rules" / "docs" / "identites-cryptees.md"
#: Names printed in the French rulebook: the generic set must not reuse them.
PUBLISHER_NAMES = (
    "Photographe",
    "Dénonciateur",
    "Voleur",
    "Voyant",
    "Ocul-R",
    "MDR",
    "Insomniaque",
    "Assassin",
    "Infiltré",
    "Sauvegarde",
    "Porte-Mort",
    "Sauveur",
    "Dévoreur",
    "Pourriel",
    "Photographer",
    "Mind Eater",
    "Deathbringer",
)


def raw() -> dict[str, Any]:
    """The generic set as plain JSON, to break on purpose."""
    data: dict[str, Any] = json.loads((DATA / "generic.json").read_text(encoding="utf-8"))
    return data


def checked(data: dict[str, Any]) -> None:
    """Decode and check a card set given as plain JSON."""
    check(msgspec.convert(data, type=CardSet))


def test_generic_set_loads_and_says_it_is_generic() -> None:
    """The default set loads, is labelled generic and covers 4-16 players."""
    assert "generic" in card_sets()
    cards = load("generic")
    assert cards.generic and "Generic" in cards.label and "not the publisher" in cards.label
    assert sorted(cards.rows) == list(range(4, 17))
    assert "not a transcription" in raw()["notice"]


def test_generic_set_uses_its_own_names() -> None:
    """No card of the generic set borrows a name from the published game."""
    text = (DATA / "generic.json").read_text(encoding="utf-8")
    for name in PUBLISHER_NAMES:
        assert name.lower() not in text.lower()


def test_generic_set_exercises_the_vocabulary() -> None:
    """The default cards use every effect of the vocabulary and every faction rule."""
    cards = load("generic")
    used = {e.do for c in cards.programs for e in c.effects}
    used |= {e.do for c in cards.ids for e in c.effects}
    assert used == {
        "peek", "reveal", "hit", "damage", "heal", "draw", "steal", "swap",
        "unlock", "change_faction", "skip_turn", "disarm", "armor",
    }  # fmt: skip
    assert {c.always for c in cards.ids} >= {"human", "machine", "outlaw", "legion", "fallen"}
    assert any(c.weight == 2 for c in cards.loyalty)
    assert {c.loyalty for c in cards.programs} >= {"human", "machine", "outlaw"}
    assert any(c.boss for c in cards.ids) and any(c.red_dot for c in cards.programs)
    hidden = sum(1 for c in cards.programs if c.loyalty)
    assert 0.05 <= hidden / len(cards.programs) <= 0.15


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda d: d["setup"].pop(), "no row for 16"),
        (lambda d: d["setup"][0]["ids"].update(human=9), "ID cards"),
        (lambda d: d["setup"][0]["loyalty"].update(human=9), "loyalty cards"),
        (lambda d: d["ids"][5]["effects"][0].update(who="other"), "acts on its owner"),
        (lambda d: d["ids"][4]["effects"].append(d["ids"][4]["effects"][0]), "at most one"),
        (lambda d: d["programs"][0]["effects"][0].update(who="self"), "needs who"),
        (lambda d: d["programs"][9]["effects"][0].update(who="other"), "acts on its owner"),
        (lambda d: d["programs"][10]["effects"][0].update(weapon="bazooka"), "unlock names"),
        (lambda d: d["programs"][15].update(timing="turn"), "hidden loyalty"),
        (lambda d: d["programs"][12]["effects"][0].pop("to"), "needs 'to'"),
        (lambda d: d["weapons"].append(d["weapons"][0]), "unique"),
    ],
)
def test_bad_card_data_is_refused(breakage: Any, message: str) -> None:
    """Data that breaks the schema or the rules raises DataError naming the problem."""
    data = raw()
    breakage(data)
    with pytest.raises(DataError, match=re.escape(message)):
        checked(data)


def test_unknown_keys_are_refused() -> None:
    """A misspelt key in a card is a validation error, not silently ignored."""
    data = raw()
    data["programs"][0]["timming"] = "anytime"
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(data, type=CardSet)


def all_cards(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [card for pile in ("ids", "loyalty", "programs", "weapons") for card in data[pile]]


def test_generic_set_speaks_english_and_french_and_its_names_fit_the_glass() -> None:
    """Every card of the generic set has a name (and its text, if any) in both languages,
    different words in each, and a French name short enough for a station's line."""
    from firmware.link.render import glass

    for card in all_cards(raw()):
        for field in ("name", "text"):
            words = card.get(field)
            if words is None:
                continue
            assert set(words) == {"en", "fr"} and all(words.values()), (card["key"], field)
        assert len(glass(card["name"]["fr"])) <= 15, card["name"]
    names = [c["name"] for c in all_cards(raw())]
    assert sum(n["en"] != n["fr"] for n in names) > len(names) * 3 // 4  # really translated


def test_a_set_in_one_language_loads_and_views_keep_its_words() -> None:
    """Plain strings (an owner's set in one language) load; views carry them as written."""
    from rules._identites_cryptees_view import id_json

    data = raw()
    for card in all_cards(data):
        card["name"] = card["name"]["fr"]
        if "text" in card:
            card["text"] = card["text"]["fr"]
    cards = check(msgspec.convert(data, type=CardSet))
    medic = next(i for i, c in enumerate(cards.ids) if c.key == "medic")
    assert id_json(cards, medic)["name"] == "Infirmier"
    assert id_json(load("generic"), medic)["name"] == {"en": "Medic", "fr": "Infirmier"}


@pytest.mark.parametrize(
    ("words", "error"),
    [({"de": "Pistole"}, msgspec.ValidationError), ({}, DataError), ("", DataError)],
)
def test_card_words_in_an_unknown_language_or_none_are_refused(words: Any, error: Any) -> None:
    """A language coffre does not speak, or a name with no words at all, is refused."""
    data = raw()
    data["weapons"][0]["name"] = words
    with pytest.raises(error, match=r"`de`|no words"):
        checked(data)


def test_unknown_set_is_refused() -> None:
    """Loading a set that does not exist says so."""
    with pytest.raises(DataError, match="Unknown card set"):
        load("no-such-box")


def test_documented_example_runs() -> None:
    """The example scenario in the notation doc plays as the doc says."""
    blocks = re.findall(r"```\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    example = next(b for b in blocks if b.startswith('{"type"') and "take" in b)
    out = io.StringIO()
    code = run_scenario("identites-cryptees", 5, 11, {"first": 2}, example.splitlines(), out)
    result = json.loads(out.getvalue())
    assert code == 0 and result["version"] == 46
    assert result["public"]["table"]["check"] == {
        "eliminated": 4,
        "result": "continues",
        "message": "The game goes on",
    }


# --- a group's own card set (issue 15) ----------------------------------------


def _own_set(folder: Path, name: str = "mybox") -> Path:
    """Write an owner's card set (the generic one relabelled) into ``folder``."""
    data = raw()
    data.update(name=name, label="Our box", generic=False, notice="transcribed by us")
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_card_sets_load_from_a_directory(tmp_path: Path) -> None:
    """An owner's directory lists its sets; one read in sets up a game with its label."""
    from rules.identites_cryptees import GAME, card_sets_in, read_card_set

    path = _own_set(tmp_path)
    (tmp_path / "notes.txt").write_text("not a set", encoding="utf-8")
    assert card_sets_in(tmp_path) == {"mybox": path}
    assert card_sets_in(tmp_path / "missing") == {}
    cards = read_card_set(path)
    st = GAME.setup(6, {"cards": cards}, 3)
    assert GAME.view(st, None)["table"]["cards"] == {
        "set": "mybox",
        "label": "Our box",
        "generic": False,
    }


def test_a_game_on_an_own_set_replays_without_the_file(tmp_path: Path) -> None:
    """The state and the options carry the cards: deleting the file changes nothing."""
    from rules.core import decode_state, encode, replay
    from rules.identites_cryptees import GAME, read_card_set
    from tests.support.games.identites_cryptees import bot

    path = _own_set(tmp_path)
    options = {"cards": read_card_set(path), "interrupt_window": 0}
    st = GAME.setup(5, options, 8)
    actions = []
    r = random.Random(8)
    for _ in range(40):
        action = bot(st, r)
        st, _ = GAME.apply(st, action)
        actions.append(action)
    path.unlink()
    assert replay(GAME, 5, json.loads(json.dumps(options)), 8, actions) == st
    assert decode_state(GAME, encode(st)) == st


def test_a_bad_own_set_is_refused(tmp_path: Path) -> None:
    """A broken file in the directory is refused when read, naming the file."""
    from rules.core import BadOptions
    from rules.identites_cryptees import GAME, read_card_set

    data = raw()
    data["setup"] = data["setup"][:-1]
    bad = tmp_path / "broken.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError, match=re.escape("broken.json: setup table has no row for 16")):
        read_card_set(bad)
    (tmp_path / "junk.json").write_text("{", encoding="utf-8")
    with pytest.raises(DataError, match=re.escape("junk.json")):
        read_card_set(tmp_path / "junk.json")
    with pytest.raises(BadOptions, match="no row for 16"):
        GAME.setup(5, {"cards": data}, 1)
    with pytest.raises(BadOptions):
        GAME.setup(5, {"cards": 3}, 1)


def test_pinned_options_carry_the_shipped_set() -> None:
    """pin_options puts the shipped set's cards in the options: same game, no file."""
    from rules.identites_cryptees import GAME

    pinned = GAME.pin_options({"first": 1})
    assert pinned["cards"] == raw() and pinned["first"] == 1
    a, b = GAME.setup(7, {"first": 1}, 5), GAME.setup(7, pinned, 5)
    assert GAME.view(a, 2) == GAME.view(b, 2)
    assert a.seats == b.seats and a.loyalty == b.loyalty and a.deck == b.deck
