"""``display.toml``: which broker, which tables, where to listen.

```toml
tables = ["main", "side"]        # the tables this display follows
language = "fr"                   # spoken until a table's hub says its own language: fr | en
[broker]                          # as in hub.toml / station.toml; user "spectator"
host = "coffre-hub.local"
username = "spectator"
password_file = "/etc/coffre/spectator.password"
ca_file = "/etc/coffre/ca.crt"
[http]
host = "0.0.0.0"                  # every interface: TVs and phones on the venue's network
port = 8080
[console]                         # optional: the host's console under /host (docs/host-guide.md)
username = "host"                 # a host user: host-<table> for one table, host for all
password_file = "/etc/coffre/host.password"
```

Without ``[console]`` the display serves no ``/host``: the spectator user may send nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import msgspec

from firmware.link.config import BrokerSection, ConfigError, broker_config, decode, read_toml
from firmware.link.lang import LANGUAGES, check_language
from firmware.link.mqtt import BrokerConfig
from firmware.link.protocol import check_name


class _Http(msgspec.Struct, forbid_unknown_fields=True):
    host: str = "0.0.0.0"
    port: int = 8080


class _Console(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    username: str
    password_file: str


class _DisplayFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    tables: list[str]
    language: str = LANGUAGES[0]
    broker: BrokerSection = msgspec.field(default_factory=BrokerSection)
    http: _Http = msgspec.field(default_factory=_Http)
    console: _Console | None = None


_HINTS = {
    "tables": "tables is a top-level key: write it above [broker]",
    "language": "language is a top-level key: write it above [broker]",
}


@dataclass(frozen=True)
class DisplaySettings:
    broker: BrokerConfig
    tables: list[str]
    host: str = "0.0.0.0"
    port: int = 8080
    language: str = LANGUAGES[0]
    #: The host user the console sends host commands as (None: no console).
    console: BrokerConfig | None = None


def load_display(path: str | Path) -> DisplaySettings:
    """Read a display config file; any mistake is a one-line :class:`ConfigError`."""
    where = Path(path)
    data = read_toml(where, "display config")
    if not data.get("tables"):
        raise ConfigError(f'{where}: tables must list the tables to show, e.g. ["main"]')
    settings = decode(data, _DisplayFile, where, _HINTS)
    try:
        names = [check_name(t, "table") for t in settings.tables]
        language = check_language(settings.language)
    except ValueError as err:
        raise ConfigError(f"{where}: {err}") from None
    if not 0 < settings.http.port < 65536:
        raise ConfigError(f"{where}: [http] port must be a port number")
    console = None
    if settings.console is not None:
        section = msgspec.structs.replace(
            settings.broker,
            username=settings.console.username,
            password=None,
            password_file=settings.console.password_file,
        )
        console = broker_config(section, where)
    return DisplaySettings(
        broker_config(settings.broker, where),
        names,
        settings.http.host,
        settings.http.port,
        language,
        console,
    )
