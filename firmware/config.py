"""Hub and station configuration files (TOML).

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

    keyset = "/etc/coffre/keys.toml"      # optional; default: the virtual key set

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
from typing import Any

from firmware.hub import TableConfig
from firmware.mqtt import BrokerConfig


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the key."""


def _broker(data: dict[str, Any], where: Path) -> BrokerConfig:
    section = data.get("broker", {})
    password = section.get("password")
    if "password_file" in section:
        password = Path(section["password_file"]).read_text().strip()
    ca_file = section.get("ca_file")
    if ca_file is not None and not Path(str(ca_file)).is_file():
        raise ConfigError(f"{where}: [broker] ca_file {ca_file} is not a file")
    return BrokerConfig(
        host=str(section.get("host", "127.0.0.1")),
        port=int(section.get("port", 8883 if ca_file else 1883)),
        username=section.get("username"),
        password=password,
        tls_ca=str(ca_file) if ca_file is not None else None,
    )


@dataclass
class HubSettings:
    broker: BrokerConfig
    store: Path
    tables: list[TableConfig]
    panel: str
    keyset: Path | None


@dataclass
class StationSettings:
    broker: BrokerConfig
    table: str
    id: str
    backend: str | None
    pins: Path | None


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
                )
            )
        except KeyError as exc:
            raise ConfigError(f"{path}: [[table]] needs {exc.args[0]}") from None
        except ValueError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    keyset = data.get("keyset")
    return HubSettings(
        broker=_broker(data, path),
        store=Path(data.get("store", {}).get("path", "coffre-hub.sqlite3")),
        tables=configs,
        panel=str(data.get("panel", {}).get("backend", "none")),
        keyset=Path(keyset) if keyset else None,
    )


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
        broker=_broker(data, path),
        table=table,
        id=ident,
        backend=st.get("backend"),
        pins=Path(pins) if pins else None,
    )
