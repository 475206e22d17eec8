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


def test_table_names_and_the_address_are_read(tmp_path: Path) -> None:
    """``[names]``: what guests read as each table's title; ``[http] address``: what a
    phone opens (a missing trailing slash is added)."""
    got = load_display(
        write(
            tmp_path,
            '[names]\nmain = " La grande table "\n[http]\naddress = "http://coffre-tv.local:8080"\n',
        )
    )
    assert got.names == {"main": "La grande table"}
    assert got.address == "http://coffre-tv.local:8080/"
    bare = load_display(write(tmp_path, ""))
    assert bare.names == {} and bare.address == ""


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[names]\nside = "Salon"\n', "[names] side is not one of the tables"),
        (f'[names]\nmain = "{"x" * 41}"\n', "[names] main must be 1 to 40 printable characters"),
        ('[names]\nmain = "a\\nb"\n', "[names] main must be 1 to 40 printable characters"),
        ('[http]\naddress = "coffre.local:8080"\n', "[http] address must start with http://"),
    ],
)
def test_a_bad_name_or_address_is_one_clear_line(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_display(write(tmp_path, text))
    assert said in str(err.value) and "\n" not in str(err.value)
