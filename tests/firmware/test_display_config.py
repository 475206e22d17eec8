"""``display.toml``: the display's own language (until a hub says its table's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.display.config import load_display
from firmware.link.config import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "display.toml"
    path.write_text('tables = ["main"]\n' + text, encoding="utf-8")
    return path


def test_the_language_is_read_and_english_without_one(tmp_path: Path) -> None:
    assert load_display(write(tmp_path, 'language = "fr"\n')).language == "fr"
    assert load_display(write(tmp_path, "")).language == "en"


def test_an_unknown_language_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_display(write(tmp_path, 'language = "de"\n'))
    assert "language must be one of en, fr" in str(err.value) and "\n" not in str(err.value)


def test_a_language_under_http_says_where_it_belongs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="top-level key"):
        load_display(write(tmp_path, '[http]\nlanguage = "fr"\n'))
