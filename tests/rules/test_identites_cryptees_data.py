"""Identités cryptées 2.0 card data: the schema checks and the generic default set."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from firmware.tools.play import run_scenario
from rules._ic_data import CardSet, DataError, card_sets, check, load

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
