"""``display.toml``: which broker, which tables, where to listen.

```toml
tables = ["main", "side"]        # the tables this display follows
language = "fr"                   # spoken until a table's hub says its own language: fr | en
[names]                           # what guests read on each table's page (default: its id)
main = "La grande table"
[broker]                          # as in hub.toml / station.toml; user "spectator"
host = "coffre-hub.local"
username = "spectator"
password_file = "/etc/coffre/spectator.password"
ca_file = "/etc/coffre/ca.crt"
[http]
host = "0.0.0.0"                  # every interface: TVs and phones on the venue's network
port = 8080
address = "http://coffre-hub.local:8080/"  # what a phone opens (its QR code is on the
                                  # idle page); default: this machine's address on the
                                  # venue's network
[console]                         # optional: the host's console under /host (docs/host-guide.md)
username = "host"                 # a host user: host-<table> for one table, host for all
password_file = "/etc/coffre/host.password"
backups = "/var/lib/coffre/backups"  # optional: the sealed backups a phone may download
```

Without ``[console]`` the display serves no ``/host``: the spectator user may send nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from firmware.link.config import BrokerSection, ConfigError, broker_config, decode, read_toml
from firmware.link.lang import LANGUAGES, check_language
from firmware.link.mqtt import BrokerConfig
from firmware.link.protocol import check_name


class _Http(msgspec.Struct, forbid_unknown_fields=True):
    host: str = "0.0.0.0"
    port: int = 8080
    address: str = ""


class _Console(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    username: str
    password_file: str
    #: The hub's [backup] dir: the console offers its newest sealed backup to download.
    backups: str | None = None


class _DisplayFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    tables: list[str]
    language: str = LANGUAGES[0]
    names: dict[str, str] = msgspec.field(default_factory=dict)
    broker: BrokerSection = msgspec.field(default_factory=BrokerSection)
    http: _Http = msgspec.field(default_factory=_Http)
    console: _Console | None = None


_HINTS = {
    "tables": "tables is a top-level key: write it above [broker]",
    "language": "language is a top-level key: write it above [broker]",
}
#: The longest table name a page shows (it is the idle page's title).
NAME_CHARS = 40


@dataclass(frozen=True)
class DisplaySettings:
    broker: BrokerConfig
    tables: list[str]
    host: str = "0.0.0.0"
    port: int = 8080
    language: str = LANGUAGES[0]
    #: Each table's name as guests read it (a table not listed goes by its id).
    names: dict[str, str] = field(default_factory=dict)
    #: The address a phone opens ("http://coffre-hub.local:8080/"); empty: found at start.
    address: str = ""
    #: The host user the console sends host commands as (None: no console).
    console: BrokerConfig | None = None
    #: Where the sealed backups the console serves are (None: none to download).
    backups: Path | None = None


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
    for table, name in settings.names.items():
        if table not in names:
            raise ConfigError(f"{where}: [names] {table} is not one of the tables")
        if not name.strip() or len(name) > NAME_CHARS or not name.isprintable():
            raise ConfigError(
                f"{where}: [names] {table} must be 1 to {NAME_CHARS} printable characters"
            )
    address = settings.http.address
    if address and not (address.startswith(("http://", "https://")) and address.isprintable()):
        raise ConfigError(f'{where}: [http] address must start with http://, e.g. "{EXAMPLE}"')
    return DisplaySettings(
        broker_config(settings.broker, where),
        names,
        settings.http.host,
        settings.http.port,
        language,
        {t: n.strip() for t, n in settings.names.items()},
        address if not address or address.endswith("/") else address + "/",
        console,
        Path(settings.console.backups) if settings.console and settings.console.backups else None,
    )


#: An address as the config writes it.
EXAMPLE = "http://coffre-hub.local:8080/"
