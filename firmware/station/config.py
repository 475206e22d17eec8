"""The station's configuration file (TOML).

Station (``/etc/coffre/station.toml``)::

    [broker]
    host = "coffre-hub.local" # must be on the broker's certificate (broker-config --hostname)
    port = 8883
    username = "main.p1"
    password_file = "/var/lib/coffre-station/station.password"  # 0600, written by pairing
    ca_file = "/var/lib/coffre-station/ca.crt"   # the table's CA, written by pairing

Both files missing (a new station): ``coffre station --retry`` pairs with the hub
(docs/pairing.md) and writes them; copied by hand they work just as well.

    [station]
    table = "main"
    id = "p1"
    backend = "real"          # real | mock | emulated (or env COFFRE_DEVICE_BACKEND)
    # pins = "/etc/coffre/station-pins.toml"   # your own pin map (see hardware/station.toml)

Unknown keys are refused with their place; so are a bad table or station name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from firmware.link import protocol as proto
from firmware.link.config import BrokerSection, ConfigError, broker_config, decode, read_toml
from firmware.link.mqtt import BrokerConfig

Backend = Literal["real", "mock", "emulated"]


class _Station(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    table: str
    id: str
    backend: Backend | None = None
    pins: str | None = None


class _StationFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    station: _Station
    broker: BrokerSection = msgspec.field(default_factory=BrokerSection)


_HINTS = {
    "=backend": "choose real, mock or emulated",
    "table": "table belongs under [station]",
    "id": "id belongs under [station]",
    "backend": "backend belongs under [station]",
    "pins": "pins belongs under [station]",
}


@dataclass
class StationSettings:
    broker: BrokerConfig
    table: str
    id: str
    backend: Backend | None
    pins: Path | None


def load_station(path: str | Path) -> StationSettings:
    """Read and check ``station.toml``; any mistake is a one-line :class:`ConfigError`."""
    path = Path(path)
    data = read_toml(path, "station config")
    st = decode(data, _StationFile, path, _HINTS)
    try:
        proto.check_name(st.station.table, "table")
        proto.check_name(st.station.id, "station")
    except ValueError as exc:
        raise ConfigError(f"{path}: [station] {exc}") from None
    return StationSettings(
        broker=broker_config(st.broker, path),
        table=st.station.table,
        id=st.station.id,
        backend=st.station.backend,
        pins=Path(st.station.pins) if st.station.pins else None,
    )
