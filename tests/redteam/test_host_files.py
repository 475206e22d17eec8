"""Red team, files a host loads: a card set or a deck out of all proportion is refused
when it is read, in one line naming the file and the field, before it costs the hub
anything (a count of millions stalled every table for 20-55 s; texts of 20,000
characters made ``public`` too big for the broker)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.cardsets import own_card_set
from firmware.hub.config import TableConfig
from rules._identites_cryptees_cards import (
    MAX_FILE_BYTES,
    DataError,
    package_set_json,
    read_card_set,
)
from rules.core import BadOptions, IllegalAction
from rules.identiquest import GAME as IDENTIQUEST
from rules.identiquest import check_deck

Breakage = Callable[[dict[str, Any]], None]

#: What a hostile or mistaken set does -> the field the refusal must name.
HUGE: dict[str, tuple[Breakage, str]] = {
    "a loyalty count of 4 million": (
        lambda d: d["loyalty"][0].update(count=4_000_000),
        "loyalty[0].count",
    ),
    "a program count of a million": (
        lambda d: d["programs"][3].update(count=1_000_000),
        "programs[3].count",
    ),
    "many entries of 32 copies": (
        lambda d: d["programs"].extend([dict(d["programs"][0], count=32)] * 20),
        "programs: ",
    ),
    "a text of 20,000 characters": (
        lambda d: d["programs"][2].update(text="x" * 20_000),
        "programs[2].text",
    ),
    "a French text of 20,000 characters": (
        lambda d: d["ids"][1].update(text={"en": "a", "fr": "x" * 20_000}),
        "ids[1].text.fr",
    ),
    "a name of 2,000 characters": (
        lambda d: d["weapons"][0].update(name="x" * 2_000),
        "weapons[0].name",
    ),
    "a notice of 100,000 characters": (lambda d: d.update(notice="x" * 100_000), "notice"),
    "an amount of a billion": (
        lambda d: d["ids"][5]["effects"][0].update(amount=10**9),
        "ids[5].effects[0].amount",
    ),
    "100 weapons": (lambda d: d["weapons"].extend([d["weapons"][0]] * 100), "weapons"),
}


@pytest.mark.parametrize("case", list(HUGE))
def test_an_outsized_card_set_is_refused_naming_file_and_field(tmp_path: Path, case: str) -> None:
    """read_card_set refuses an outsized set in one line: the file's name, then the field."""
    breakage, field = HUGE[case]
    data = package_set_json("generic")
    breakage(data)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as refused:
        read_card_set(path)
    message = str(refused.value)
    assert message.startswith(f"big.json: {field}"), message
    assert "\n" not in message and len(message) < 200


def test_an_outsized_card_set_is_refused_at_the_table(tmp_path: Path) -> None:
    """Picked on the panel, an outsized set of the table's directory is a refusal, not a stall."""
    data = package_set_json("generic")
    data["loyalty"][0]["count"] = 4_000_000
    (tmp_path / "big.json").write_text(json.dumps(data), encoding="utf-8")
    config = TableConfig("main", ["p1", "p2", "p3", "p4"], card_sets=tmp_path)
    with pytest.raises(IllegalAction):
        own_card_set(config, "identites-cryptees", {"cards": "big"})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b" " * (MAX_FILE_BYTES + 1), "more than 256 KiB"),
        (b"[" * 100_000 + b"]" * 100_000, "big.json: "),
    ],
)
def test_a_card_set_file_too_big_or_too_deep_is_refused(
    tmp_path: Path, content: bytes, message: str
) -> None:
    """A file past 256 KiB, or JSON nested past any card set, is one DataError line."""
    path = tmp_path / "big.json"
    path.write_bytes(content)
    with pytest.raises(DataError, match=re.escape(message)):
        read_card_set(path)


def test_the_shipped_set_is_far_inside_the_bounds() -> None:
    """The generic set loads, with its biggest count and text well under the limits."""
    path = Path(__file__).resolve().parents[2] / "rules/data/identites-cryptees/generic.json"
    assert read_card_set(path)["name"] == "generic"


@pytest.mark.parametrize(
    ("deck", "message"),
    [
        ({"red": 4_000_000, "blue": 8}, "Too many gems for red"),
        ({f"c{i}": 8 for i in range(1000)}, "colours, at most"),
        ({f"c{i}": 64 for i in range(16)}, "gems, at most"),
    ],
)
def test_an_outsized_identiquest_deck_is_refused(deck: dict[str, int], message: str) -> None:
    """A deck of millions of gems or of a thousand colours is refused before any shuffle."""
    with pytest.raises(BadOptions, match=re.escape(message)):
        check_deck(deck)
    with pytest.raises(BadOptions, match=re.escape(message)):
        IDENTIQUEST.setup(4, {"deck": deck}, 1)


def test_a_directory_of_thousands_of_sets_lists_a_bounded_menu(tmp_path: Path) -> None:
    """A card-set directory of 1,000 files (one with a 200-character name) lists at most
    100 sets, none with a name longer than 32 characters."""
    from rules._identites_cryptees_cards import card_sets_in

    for n in range(1000):
        (tmp_path / f"set{n:04}.json").write_text("{}", encoding="utf-8")
    (tmp_path / ("a" * 200 + ".json")).write_text("{}", encoding="utf-8")
    listed = card_sets_in(tmp_path)
    assert len(listed) == 100 and max(len(name) for name in listed) <= 32
