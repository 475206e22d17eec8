"""Red team, the host's hub.toml: a typo must be refused at start, not found mid-game."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.hub.config import load_hub
from firmware.hub.service import Hub
from hardware.keys import load_keyset

HEAD = '[broker]\nhost = "127.0.0.1"\nport = 1883\n[[table]]\nname = "main"\n'

#: What each typo would do if the hub started with it.
TYPOS = {
    "upper-case station": (
        'stations = ["P1", "p2", "p3"]',
        "the hub never publishes a screen or 'ready' (ValueError on every publish)",
    ),
    "station listed twice": (
        'stations = ["p1", "p1", "p2"]',
        "seat 1 is unreachable: the game never leaves prepare",
    ),
    "colour the key set lacks": (
        'stations = ["p1", "p2", "p3"]\ncolours = ["rouge", "jaune", "vert"]',
        "every vote key says 'Nobody plays red': the game never leaves the vote",
    ),
    "colour listed twice": (
        'stations = ["p1", "p2", "p3"]\ncolours = ["red", "red", "green"]',
        "seat 1 can never vote",
    ),
    "fewer colours than stations": (
        'stations = ["p1", "p2", "p3"]\ncolours = ["red", "yellow"]',
        "IndexError on every publish: no screens, no 'ready'",
    ),
    "seed that is not an integer": (
        'stations = ["p1", "p2", "p3"]\nseed = "abc"',
        "the game starts, then the hub cannot restart: int('abc') in the store",
    ),
}


def write(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "hub.toml"
    path.write_text(HEAD + table + "\n")
    return path


def test_a_good_table_loads(tmp_path: Path) -> None:
    """The docs' example table (docs/config.md) loads as written."""
    settings = load_hub(write(tmp_path, 'stations = ["p1", "p2", "p3", "p4", "p5"]'))
    assert settings.tables[0].stations == ["p1", "p2", "p3", "p4", "p5"]


@pytest.mark.parametrize("typo", list(TYPOS))
def test_hub_config_typo_is_refused_at_start(tmp_path: Path, typo: str) -> None:
    """A hub.toml typo that would break the table mid-game is refused when the hub starts."""
    with pytest.raises(ValueError):  # ConfigError is one; from loading or from Hub()
        settings = load_hub(write(tmp_path, TYPOS[typo][0]))
        hub = Hub(settings.broker, settings.tables, tmp_path / "hub.db", keys=load_keyset())
        hub.store.close()
