"""The station's configuration file (TOML).

Station (``/etc/coffre/station.toml``)::

    [broker]
    host = "hub.local"        # must be on the broker's certificate (broker-config --hostname)
    port = 8883
    username = "main.p1"
    password_file = "/etc/coffre/station.password"
    ca_file = "/etc/coffre/ca.crt"   # the table's CA, copied from the hub

    [station]
    table = "main"
    id = "p1"
    backend = "real"          # real | mock | emulated (or env COFFRE_DEVICE_BACKEND)
    # pins = "/etc/coffre/station-pins.toml"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from firmware.link.config import ConfigError, broker_section
from firmware.link.mqtt import BrokerConfig


@dataclass
class StationSettings:
    broker: BrokerConfig
    table: str
    id: str
    backend: str | None
    pins: Path | None


def load_station(path: str | Path) -> StationSettings:
    path = Path(path)
    data = tomllib.loads(path.read_text())
    st = data.get("station", {})
    try:
        table, ident = str(st["table"]), str(st["id"])
    except KeyError as exc:
        raise ConfigError(f"{path}: [station] needs {exc.args[0]}") from None
    pins = st.get("pins")
    return StationSettings(
        broker=broker_section(data, path),
        table=table,
        id=ident,
        backend=st.get("backend"),
        pins=Path(pins) if pins else None,
    )
