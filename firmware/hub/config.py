"""The hub's configuration file (TOML).

Hub (``/etc/coffre/hub.toml``)::

    [broker]
    host = "127.0.0.1"        # a name or address on the broker's certificate
    port = 8883               # default: 8883 with ca_file, 1883 without
    username = "hub"
    password_file = "/etc/coffre/hub.password"   # or: password = "..."
    ca_file = "/etc/mosquitto/coffre/ca.crt"     # TLS; leave out only for a plain broker

    [store]
    path = "/var/lib/coffre/hub.sqlite3"

    [panel]
    backend = "real"          # real | mock | none

    [[table]]
    name = "main"
    stations = ["p1", "p2", "p3", "p4", "p5"]
    # colours = ["red", "yellow", ...]   # seat colours, default the key set's order
    # reveal_delay = 3.0                  # seconds between safes; 0 = host presses next
    # card_sets = "/etc/coffre/card-sets" # Identités cryptées: a group's own card sets
    language = "fr"                       # what stations and the hub display speak: fr | en

    keyset = "/etc/coffre/keys.toml"      # optional; default: the virtual key set
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from firmware.hub.table import Seating
from firmware.link import protocol as proto
from firmware.link.config import ConfigError, broker_section
from firmware.link.lang import LANGUAGES
from firmware.link.mqtt import BrokerConfig
from hardware.keys import COLOURS


@dataclass
class TableConfig:
    """One physical table: its name and its stations in seat order."""

    name: str
    stations: list[str]
    colours: list[str] | None = None
    #: Seconds between safe openings once voting is over (0: the host says next).
    reveal_delay: float = 0.0
    #: Fixed seed for every game (reproducible simulations and tests); None: random.
    seed: int | None = None
    #: A directory of Identités cryptées card sets (``<name>.json``): the host picks one.
    card_sets: Path | None = None
    #: What the stations and the hub display speak (``fr``, ``en``); the host may change it.
    language: str = LANGUAGES[0]

    def __post_init__(self) -> None:
        """Refuse at start what would break the table mid-game (a typo in hub.toml)."""
        proto.check_name(self.name, "table")
        for station in self.stations:
            proto.check_name(station, "station")
        if len(set(self.stations)) != len(self.stations):
            raise ValueError(f"table {self.name}: a station is listed twice")
        if self.colours is not None:
            if len(self.colours) < len(self.stations):
                raise ValueError(f"table {self.name}: fewer colours than stations")
            if len(set(self.colours)) != len(self.colours):
                raise ValueError(f"table {self.name}: a colour is listed twice")
        if self.seed is not None and (
            not isinstance(self.seed, int) or isinstance(self.seed, bool)
        ):
            raise ValueError(f"table {self.name}: seed must be a whole number")
        if self.seed is not None and not 0 <= self.seed < 2**63:
            raise ValueError(f"table {self.name}: seed must be 0 to 2**63-1")
        if self.language not in LANGUAGES:
            raise ValueError(f"table {self.name}: language must be one of {', '.join(LANGUAGES)}")

    def seating(self) -> Seating:
        # Past the 8 colours of a box (Identités cryptées seats 16), seats go by number.
        default = [*COLOURS, *(f"seat{i + 1}" for i in range(len(COLOURS), len(self.stations)))]
        colours = self.colours or default[: len(self.stations)]
        return Seating(list(self.stations), colours)


@dataclass
class HubSettings:
    broker: BrokerConfig
    store: Path
    tables: list[TableConfig]
    panel: str
    keyset: Path | None


def load_hub(path: str | Path) -> HubSettings:
    path = Path(path)
    data = tomllib.loads(path.read_text())
    tables = data.get("table")
    if not tables:
        raise ConfigError(f"{path}: at least one [[table]] is needed")
    configs = []
    for t in tables:
        try:
            configs.append(
                TableConfig(
                    name=str(t["name"]),
                    stations=[str(s) for s in t["stations"]],
                    colours=t.get("colours"),
                    reveal_delay=float(t.get("reveal_delay", 0.0)),
                    seed=t.get("seed"),
                    card_sets=Path(t["card_sets"]) if t.get("card_sets") else None,
                    language=str(t.get("language", LANGUAGES[0])),
                )
            )
        except KeyError as exc:
            raise ConfigError(f"{path}: [[table]] needs {exc.args[0]}") from None
        except ValueError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    keyset = data.get("keyset")
    return HubSettings(
        broker=broker_section(data, path),
        store=Path(data.get("store", {}).get("path", "coffre-hub.sqlite3")),
        tables=configs,
        panel=str(data.get("panel", {}).get("backend", "none")),
        keyset=Path(keyset) if keyset else None,
    )
