"""``display.toml``: which broker, which tables, where to listen.

```toml
tables = ["main", "side"]        # the tables this display follows
[broker]                          # as in hub.toml / station.toml; user "spectator"
host = "coffre-hub.local"
username = "spectator"
password_file = "/etc/coffre/spectator.password"
ca_file = "/etc/coffre/ca.crt"
[http]
host = "0.0.0.0"                  # every interface: TVs and phones on the venue's network
port = 8080
```
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from firmware.link.config import ConfigError, broker_section
from firmware.link.mqtt import BrokerConfig
from firmware.link.protocol import check_name


@dataclass(frozen=True)
class DisplaySettings:
    broker: BrokerConfig
    tables: list[str]
    host: str = "0.0.0.0"
    port: int = 8080


def load_display(path: str | Path) -> DisplaySettings:
    """Read a display config file; a bad value is a one-line ConfigError."""
    where = Path(path)
    try:
        data = tomllib.loads(where.read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{where}: {err}") from None
    tables = data.get("tables")
    if not isinstance(tables, list) or not tables:
        raise ConfigError(f'{where}: tables must list the tables to show, e.g. ["main"]')
    try:
        names = [check_name(str(t), "table") for t in tables]
    except ValueError as err:
        raise ConfigError(f"{where}: {err}") from None
    http = data.get("http", {})
    port = http.get("port", 8080)
    if not isinstance(port, int) or not 0 <= port < 65536:
        raise ConfigError(f"{where}: [http] port must be a port number")
    return DisplaySettings(
        broker_section(data, where), names, str(http.get("host", "0.0.0.0")), port
    )
