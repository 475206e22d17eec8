"""`python -m firmware.tools.catalogue update` on code and catalogues that agree: no change."""

from __future__ import annotations

import shutil
from pathlib import Path

import babel
import pytest
from babel.messages.pofile import read_po

from firmware.link import lang
from firmware.tools import catalogue


@pytest.fixture
def locale_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped catalogues, copied: ``update`` writes into the copy."""
    copy = tmp_path / "locale"
    shutil.copytree(lang.LOCALE_DIR, copy)
    monkeypatch.setattr(catalogue, "LOCALE_DIR", copy)
    return copy


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.[pm]o"))}


def test_update_changes_nothing_when_code_and_catalogues_agree(locale_copy: Path) -> None:
    """Whatever Babel runs it (a fresh install gets the newest), ``update`` rewrites no
    byte of a catalogue that matches the code, and finds nothing to report."""
    before = _files(locale_copy)
    assert catalogue.main(["update"]) == 0, f"Babel {babel.__version__}"
    assert _files(locale_copy) == before, f"Babel {babel.__version__} rewrote a catalogue"


def test_french_keeps_two_plural_forms(locale_copy: Path) -> None:
    """A new id in French gets the project's two plural forms, not CLDR's three."""
    po = catalogue.po_path("fr")
    text = po.read_text().replace('msgid "{n} gem"\n', 'msgid "{n} gemstone"\n', 1)
    po.write_text(text)  # an id the code does not use: update drops it, adds "{n} gem" back
    catalogue.update()
    with po.open("rb") as f:
        cat = read_po(f, locale="fr")
    assert cat.plural_forms == "nplurals=2; plural=(n > 1);"
    gem = cat.get("{n} gem")
    assert gem is not None and len(gem.string) == 2, gem
    assert "msgstr[2]" not in po.read_text()
    assert catalogue.problems() == ["fr: '{n} gem' is not translated"]
