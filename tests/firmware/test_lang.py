"""The language layer: catalogues, table language, refusals, ranks, scroll markers."""

from __future__ import annotations

import gettext
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo

from firmware.link import lang
from firmware.link.lang import LANGUAGES, _, plural, refusal, speaking
from firmware.link.render import render_lines, scroll_marker, scroll_title
from firmware.tools import catalogue
from rules.core import IllegalAction


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


def test_colours_have_distinct_short_forms_in_both_languages() -> None:
    """Three-letter seat names never repeat (the old Blu/Bla pair), in either language."""
    for code in lang.LANGUAGES:
        with speaking(code):
            shorts = [lang.short_colour(c) for c in lang.COLOUR_NAMES]
            assert len(set(shorts)) == len(shorts) and all(len(s) == 3 for s in shorts)
    with speaking("fr"):
        assert lang.colour("purple") == "Violet" and lang.colour("seat9") == "S9"


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
