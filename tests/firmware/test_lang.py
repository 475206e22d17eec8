"""The language layer: catalogues, table language, refusals, ranks, scroll markers."""

from __future__ import annotations

import gettext
import itertools
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo

from firmware.hub.bindings import ultra_secret
from firmware.link import lang
from firmware.link.lang import LANGUAGES, _, plural, refusal, speaking
from firmware.link.render import render_lines, scroll_marker, scroll_title
from firmware.tools import catalogue
from hardware.keys import load_keyset
from rules.core import IllegalAction

KEYSETS = Path(__file__).parents[2] / "hardware" / "keysets"


def test_every_message_id_has_french_and_english_and_none_is_unused() -> None:
    """Each id the code uses has both texts; no catalogue holds an id the code dropped."""
    assert catalogue.problems() == []


def test_update_keeps_each_catalogues_plural_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``update`` on an up-to-date catalogue keeps its plural rule and every text, whatever
    plural rule the running Babel's locale data gives the language."""
    before = {code: catalogue.load(code) for code in LANGUAGES}
    copies = {code: tmp_path / code / "coffre.po" for code in LANGUAGES}
    for code, path in copies.items():
        path.parent.mkdir()
        path.write_bytes(catalogue.po_path(code).read_bytes())
    monkeypatch.setattr(catalogue, "po_path", lambda code: copies[code])
    catalogue.update()
    for code in LANGUAGES:
        assert catalogue.load(code).plural_forms == before[code].plural_forms, code
    assert catalogue.problems() == []


def test_shipped_mo_files_match_their_po() -> None:
    """The compiled catalogues the package ships say what their .po files say."""
    for code in lang.LANGUAGES:
        po = {_key(m.id): _key(m.string) for m in catalogue.load(code) if m.id}
        with catalogue.po_path(code).with_suffix(".mo").open("rb") as f:
            mo = {_key(m.id): _key(m.string) for m in read_mo(f) if m.id}
        assert mo == po, f"{code}: run python -m firmware.tools.catalogue compile"


def _key(text: object) -> object:
    return tuple(text) if isinstance(text, list | tuple) else text


def test_the_table_language_chooses_the_text() -> None:
    """The same id reads in English or French depending on the language spoken."""
    with speaking("en"):
        assert _("Not your turn") == "Not your turn"
    with speaking("fr"):
        assert _("Not your turn") == "Pas ton tour"
        assert plural("Ready ({n} picto)", "Ready ({n} pictos)", 1) == "Prêt (1 picto)"
        assert plural("Ready ({n} picto)", "Ready ({n} pictos)", 2) == "Prêt (2 pictos)"
    assert lang.current() == "en"


def test_unknown_language_is_refused_in_one_line() -> None:
    """A table cannot speak a language with no catalogue."""
    with pytest.raises(ValueError, match="language must be one of en, fr"):
        lang.check_language("de")


def test_engine_refusals_keep_an_id_and_parameters() -> None:
    """IllegalAction keeps its English message and carries id and parameters for the table."""
    exc = IllegalAction("Place 1 to {n} pictos", n=3)
    assert exc.message == str(exc) == "Place 1 to 3 pictos"
    assert (exc.msgid, exc.params) == ("Place 1 to {n} pictos", {"n": 3})
    with speaking("fr"):
        assert refusal(exc.msgid, exc.params) == "Pose 1 à 3 pictos"
        assert refusal("Nobody plays {colour}", {"colour": "blue"}) == "Personne ne joue bleu"


def colour_sets() -> list[list[str]]:
    """Every set of seat colours a table may have: each shipped key set's, with numbered
    seats up to 16, every colour the language layer names, Ultra Secret's hotels."""
    sets = [list(load_keyset(path).colours) for path in sorted(KEYSETS.glob("*.toml"))]
    sets = [[*c, *(f"seat{n}" for n in range(len(c) + 1, 17))] for c in sets]
    return [*sets, list(lang.COLOUR_NAMES), list(ultra_secret.COLOUR_SHORT)]


def differing_letters(a: str, b: str) -> int:
    longer = max(len(a), len(b))
    return sum(x != y for x, y in zip(a.ljust(longer), b.ljust(longer), strict=True))


@pytest.mark.parametrize("code", lang.LANGUAGES)
def test_short_colours_at_one_table_differ_in_two_letters_or_are_whole_words(code: str) -> None:
    """No two short forms at one table differ in a single letter ("Blu"/"Blk", "Blu"/"Blc",
    "Rou"/"Ros" did), in either language and every colour set; numbered seats differ by
    their number and go by one name ("S9"/"P9", long "Seat 9"/"Place 9")."""
    with speaking(code):
        for colours in colour_sets():
            shorts = lang.short_colours(colours)
            words = [lang.colour(c) for c in colours]
            assert len(set(shorts)) == len(shorts), shorts
            for i, j in itertools.combinations(range(len(colours)), 2):
                a, b = shorts[i], shorts[j]
                whole = a == words[i] and b == words[j]
                numbers = a[1:].isdigit() and b[1:].isdigit()
                assert whole or numbers or differing_letters(a, b) >= 2, (a, b)
            assert all(len(s) <= lang.WHOLE_WORD for s in shorts), shorts
    with speaking("fr"):
        assert lang.colour("purple") == "Violet" and lang.colour("seat9") == "Place 9"
        assert lang.short_colour("seat9") == "P9" == lang.seat_number(9, short=True)
    with speaking("en"):
        assert lang.colour("seat12") == "Seat 12" == lang.seat_label(11, ["red"] * 8)
        assert lang.seat_label(11, ["red"] * 8, short=True) == "S12"


def test_names_alike_get_forms_apart() -> None:
    """A box's own names that begin alike ("Marie", "Marc") get short forms at least two
    letters apart."""
    with speaking("en"):
        shorts = lang.short_colours(["marie", "marc", "bartholomew", "bart", "bard"])
    for a, b in itertools.combinations(shorts, 2):
        assert differing_letters(a, b) >= 2, shorts


def test_ranks_are_standard_competition_ranks() -> None:
    """Two seats tied for second are both 2nd and the next is 4th ("1, 2, 2, 4")."""
    assert lang.ranks([[3], [0, 2], [1]]) == {3: 1, 0: 2, 2: 2, 1: 4}


def test_scroll_marker_says_where_the_list_is() -> None:
    """A list longer than the screen gets "1-3/6 ▼"; its end "4-6/6 ▲"; a page "3/4 ▼"."""
    assert scroll_marker(0, 3, 3) == ""
    assert scroll_marker(0, 3, 6) == "1-3/6 ▼"
    assert scroll_marker(3, 3, 6) == "4-6/6 ▲"
    assert scroll_marker(2, 1, 4) == "3/4 ▼"
    title = scroll_title("A long title that does not fit", 0, 3, 6)
    assert len(title) == 21 and title.endswith("~ 1-3/6 ▼")


def test_the_arrows_are_drawn() -> None:
    """The font has no arrow: the renderer draws one instead of a '?'."""
    with_arrow = render_lines("t", ["x ▼"])
    without = render_lines("t", ["x  "])
    question = render_lines("t", ["x ?"])
    assert with_arrow.tobytes() != without.tobytes()
    assert with_arrow.tobytes() != question.tobytes()


def test_catalogues_load_with_the_standard_library() -> None:
    """A station or table display needs only gettext to read the shipped catalogues."""
    t = gettext.translation("coffre", localedir=lang.LOCALE_DIR, languages=["fr"])
    assert t.gettext("Start") == "Lancer"
