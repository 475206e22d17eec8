"""Hub and station configuration files."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.hub.config import load_hub
from firmware.link.config import ConfigError
from firmware.station.config import load_station


def test_hub_config(tmp_path: Path) -> None:
    """A hub file gives broker, store, panel and tables; the password comes from its file."""
    (tmp_path / "pw").write_text("s3cret\n")
    path = tmp_path / "hub.toml"
    path.write_text(f"""
[broker]
host = "10.0.0.2"
port = 1884
username = "hub"
password_file = "{tmp_path / "pw"}"
[store]
path = "/var/lib/coffre/x.db"
[panel]
backend = "mock"
[[table]]
name = "main"
stations = ["p1", "p2", "p3"]
reveal_delay = 2.5
""")
    hub = load_hub(path)
    assert (hub.broker.host, hub.broker.port, hub.broker.password) == ("10.0.0.2", 1884, "s3cret")
    assert hub.panel == "mock" and str(hub.store) == "/var/lib/coffre/x.db"
    assert hub.tables[0].stations == ["p1", "p2", "p3"] and hub.tables[0].reveal_delay == 2.5


def test_hub_config_needs_a_table(tmp_path: Path) -> None:
    """A hub with no [[table]] is refused, and so is a table without stations."""
    path = tmp_path / "hub.toml"
    path.write_text("[broker]\n")
    with pytest.raises(ConfigError, match="table"):
        load_hub(path)
    path.write_text('[[table]]\nname = "main"\n')
    with pytest.raises(ConfigError, match="stations"):
        load_hub(path)


def test_station_config(tmp_path: Path) -> None:
    """A station file names its table and id; missing ones are refused."""
    path = tmp_path / "station.toml"
    path.write_text('[broker]\nusername = "main.p1"\n[station]\ntable = "main"\nid = "p1"\n')
    station = load_station(path)
    assert (station.table, station.id, station.broker.username) == ("main", "p1", "main.p1")
    path.write_text('[station]\ntable = "main"\n')
    with pytest.raises(ConfigError, match="id"):
        load_station(path)


def test_table_names_a_card_set_directory(tmp_path: Path) -> None:
    """A table may name a directory of Identités cryptées card sets (a group's own box)."""
    cfg = tmp_path / "hub.toml"
    cfg.write_text(
        '[[table]]\nname = "main"\nstations = ["p1", "p2", "p3", "p4"]\n'
        'card_sets = "/etc/coffre/card-sets"\n'
    )
    (table,) = load_hub(cfg).tables
    assert table.card_sets == Path("/etc/coffre/card-sets")
    cfg.write_text('[[table]]\nname = "main"\nstations = ["p1"]\n')
    assert load_hub(cfg).tables[0].card_sets is None
