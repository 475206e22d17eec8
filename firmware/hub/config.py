"""The hub's configuration file (TOML).

Hub (``/etc/coffre/hub.toml``); top-level keys come before the first ``[section]``::

    keyset = "/etc/coffre/keys.toml"      # optional; default: the virtual key set

    [broker]
    host = "127.0.0.1"        # a name or address on the broker's certificate
    port = 8883               # default: 8883 with ca_file, 1883 without
    username = "hub"
    password_file = "/etc/coffre/hub.password"   # or: password = "..."
    ca_file = "/etc/mosquitto/coffre/ca.crt"     # TLS; leave out only for a plain broker

    [store]
    path = "/var/lib/coffre/hub.sqlite3"

    [panel]
    backend = "real"          # real | mock | emulated | none
    # pins = "/etc/coffre/hub-pins.toml"   # your own panel pin map (see hardware/hub.toml)

    [pairing]
    broker_dir = "/etc/mosquitto/coffre"  # stations pair (docs/pairing.md); leave out: no pairing

    [backup]
    dir = "/var/lib/coffre/backups"  # the console asks for sealed backups (docs/backup.md)

    [[table]]
    name = "main"
    stations = ["p1", "p2", "p3", "p4", "p5"]
    # colours = ["red", "yellow", ...]   # seat colours, default the key set's order
    # reveal_delay = 3.0                  # seconds between safes; 0 = host presses next
    # card_sets = "/etc/coffre/card-sets" # Identités cryptées: a group's own card sets
    language = "fr"                       # what stations and the hub display speak: fr | en

Unknown keys are refused with their place (TOML puts every key written after
``[[table]]`` into that table: a ``keyset`` there is refused, not ignored).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from firmware.hub.table import Seating
from firmware.link import protocol as proto
from firmware.link.config import BrokerSection, ConfigError, broker_config, decode, read_toml
from firmware.link.lang import LANGUAGES
from firmware.link.mqtt import BrokerConfig
from hardware.keys import COLOURS

#: The longest pause between safes a host may ask for (an hour: far above any table's).
MAX_REVEAL_DELAY = 3600.0


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
    #: Seats never seen count as not ready (the hub display lists them, ``start`` asks
    #: to confirm: firmware.hub.health). hub.toml's tables do; a table built in code
    #: (a test's hub with no station at all) does not unless told.
    watch_seats: bool = False

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
        if not (
            isinstance(self.reveal_delay, int | float)
            and math.isfinite(self.reveal_delay)
            and 0 <= self.reveal_delay <= MAX_REVEAL_DELAY
        ):
            # inf or nan would kill the table's thread at the first reveal.
            raise ValueError(
                f"table {self.name}: reveal_delay must be 0 to {MAX_REVEAL_DELAY:g} seconds"
            )
        if self.language not in LANGUAGES:
            raise ValueError(f"table {self.name}: language must be one of {', '.join(LANGUAGES)}")

    def seating(self) -> Seating:
        # Past the 8 colours of a box (Identités cryptées seats 16), seats go by number.
        default = [*COLOURS, *(f"seat{i + 1}" for i in range(len(COLOURS), len(self.stations)))]
        colours = self.colours or default[: len(self.stations)]
        return Seating(list(self.stations), colours)


PanelBackend = Literal["real", "mock", "emulated", "none"]


class _Table(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    name: str
    stations: list[str]
    colours: list[str] | None = None
    reveal_delay: float = 0.0
    seed: int | None = None
    card_sets: str | None = None
    language: str = LANGUAGES[0]
    watch_seats: bool = True


class _Store(msgspec.Struct, forbid_unknown_fields=True):
    path: str = "coffre-hub.sqlite3"


class _Panel(msgspec.Struct, forbid_unknown_fields=True):
    backend: PanelBackend = "none"
    pins: str | None = None


class _Pairing(msgspec.Struct, forbid_unknown_fields=True):
    #: broker-config's folder: where a paired station's user goes (None: no pairing).
    broker_dir: str | None = None


class _Backup(msgspec.Struct, forbid_unknown_fields=True):
    #: Where the hub asks root for a sealed backup, and root writes it (None: no asking).
    dir: str | None = None


class _HubFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    table: list[_Table]
    keyset: str | None = None
    broker: BrokerSection = msgspec.field(default_factory=BrokerSection)
    store: _Store = msgspec.field(default_factory=_Store)
    panel: _Panel = msgspec.field(default_factory=_Panel)
    pairing: _Pairing = msgspec.field(default_factory=_Pairing)
    backup: _Backup = msgspec.field(default_factory=_Backup)


#: Advice for keys that are valid somewhere else in the file.
_HINTS = {
    "=backend": "choose real, mock, emulated or none",
    "keyset": "keyset is a top-level key: write it above [broker], before any [section]",
    "pins": "pins belongs under [panel]",
    "backend": "backend belongs under [panel]",
}


@dataclass
class HubSettings:
    broker: BrokerConfig
    store: Path
    tables: list[TableConfig]
    panel: PanelBackend
    keyset: Path | None
    panel_pins: Path | None = None
    #: broker-config's folder, for pairing (docs/pairing.md); None: stations cannot pair.
    pairing_dir: Path | None = None
    #: Where the console's backups are asked for and made (docs/backup.md); None: not at all.
    backup_dir: Path | None = None


def load_hub(path: str | Path) -> HubSettings:
    """Read and check ``hub.toml``; any mistake is a one-line :class:`ConfigError`."""
    path = Path(path)
    data = read_toml(path, "hub config")
    if not data.get("table"):
        raise ConfigError(f"{path}: at least one [[table]] is needed")
    hub = decode(data, _HubFile, path, _HINTS)
    configs = []
    for n, t in enumerate(hub.table, start=1):
        try:
            card_sets = Path(t.card_sets) if t.card_sets else None
            configs.append(
                TableConfig(
                    t.name,
                    t.stations,
                    t.colours,
                    t.reveal_delay,
                    t.seed,
                    card_sets=card_sets,
                    language=t.language,
                    watch_seats=t.watch_seats,
                )
            )
        except ValueError as exc:
            raise ConfigError(f"{path}: [[table]] {n}: {exc}") from None
    first: dict[str, int] = {}
    for n, table in enumerate(configs, start=1):
        if table.name in first:
            # Two tables on one name share every topic: the later one would take the
            # earlier one's stations, which then get no hub and no error.
            raise ConfigError(
                f"{path}: [[table]] {n}: name {table.name!r} is already "
                f"[[table]] {first[table.name]}'s "
                "(every table needs its own name)"
            )
        first[table.name] = n
    return HubSettings(
        broker=broker_config(hub.broker, path),
        store=Path(hub.store.path),
        tables=configs,
        panel=hub.panel.backend,
        keyset=Path(hub.keyset) if hub.keyset else None,
        panel_pins=Path(hub.panel.pins) if hub.panel.pins else None,
        pairing_dir=Path(hub.pairing.broker_dir) if hub.pairing.broker_dir else None,
        backup_dir=Path(hub.backup.dir) if hub.backup.dir else None,
    )
