"""Broker set-up for a venue: mosquitto's users, password file, ACL and listener.

The ACL is the wall that keeps secrets apart: a station's user may write only
its own ``input`` and ``status`` and read only its own ``screen`` and ``ack``,
``public`` and the hub's status. Only a hub's user writes screens and ``public``, and
only on its own tables. Anonymous clients are refused. With TLS (the default of
``coffre broker-config``) the listener also carries the venue's CA, the broker's
certificate and key (see :mod:`firmware.hub.certs`), so passwords and screens never
cross the Wi-Fi in clear.

A venue is described in one TOML file (example: ``deploy/venue.toml``)::

    venue_host = true        # optional (default false): a `host` user for every table

    [[hub]]
    name = "bar"             # a-z, 0-9 and '-', like table and station names

    [[table]]
    name = "t1"
    hub = "bar"              # the one hub that plays this table
    stations = ["p1", "p2", "p3", "p4", "p5"]

and written with::

    coffre broker-config --venue venue.toml --out /etc/mosquitto/coffre [--hostname …]

The one-table options (``--table main --stations p1,p2,p3``, or ``--table main,side``
for several tables with the same stations) describe tables of the hub named ``hub``
with a venue host: the tables of other hubs already in the folder stay.

The broker users (only a station's user has a dot, so no two kinds can collide):

- ``<table>.<station>``: one station (see above);
- ``hub-<hub>``: one hub, ``readwrite coffre/<table>/#`` on its own tables only; the hub
  named ``hub`` is ``hub`` (the user of every install before venues);
- ``host-<table>``: the host of one table: writes its ``host/command``, reads its
  ``host/screen``, ``host/ack``, ``public`` and ``hub/status`` (``coffre host --table T``
  takes this user by default);
- ``host``: the venue host (``venue_host = true``): the same on every table;
- ``spectator``: the table display: reads every table's ``public`` and ``hub/status``.

Re-runnable: ``<out>/venue.toml`` keeps the description last written (a folder written
before venues is read from its password files: its tables belong to the hub ``hub``,
its ``host`` is the venue host). A user that exists keeps its password
(``<out>/credentials/<user>.password``) and the CA is kept (``ca.key``); tables and
stations no longer described lose their users and password files. Every mistake in the
description is one line and changes nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from firmware.hub.certs import TlsFiles, listener_lines, write_private, write_tls_files
from firmware.link.config import ConfigError, decode, read_toml
from firmware.link.protocol import Topics, check_name

CONF_D_FILE = "coffre.conf"
CREDENTIALS = "credentials"
#: The description last written into the folder (what a re-run compares with).
VENUE_FILE = "venue.toml"
#: The hub the one-table options describe (and every install before venues had).
DEFAULT_HUB = "hub"
HUB_USER = "hub"
#: The venue host: may command every table.
HOST_USER = "host"
#: The table display's read-only user: ``public`` and ``hub/status``, nothing else.
SPECTATOR_USER = "spectator"
PBKDF2_ROUNDS = 101  # what mosquitto_passwd writes for $7$


def station_user(table: str, station: str) -> str:
    """The broker user of one station (unique across tables)."""
    return f"{table}.{station}"


def hub_user(hub: str) -> str:
    """The broker user of one hub (``hub`` for the hub named ``hub``)."""
    return HUB_USER if hub == DEFAULT_HUB else f"hub-{hub}"


def host_user(table: str) -> str:
    """The broker user of one table's host."""
    return f"host-{table}"


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """A mosquitto 2.x ``$7$`` (PBKDF2-SHA512) password hash."""
    salt = salt if salt is not None else secrets.token_bytes(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, PBKDF2_ROUNDS)
    b64 = base64.b64encode
    return f"$7${PBKDF2_ROUNDS}${b64(salt).decode()}${b64(digest).decode()}"


@dataclass
class Venue:
    """Which hub plays which tables, each table's stations, and whether a venue host exists."""

    hubs: dict[str, list[str]]  # hub -> its tables
    stations: dict[str, list[str]]  # table -> its stations, in seat order
    venue_host: bool = False

    def check(self) -> Venue:
        """Raise ValueError (one line) for a bad name, a duplicate, a table with no hub."""
        if not self.hubs:
            raise ValueError("the venue has no hub")
        owners: dict[str, str] = {}
        for hub, tables in self.hubs.items():
            check_name(hub, "hub")
            if not tables:
                raise ValueError(f"hub {hub} plays no table")
            for table in tables:
                check_name(table, "table")
                if table in owners:
                    raise ValueError(
                        f"table {table} is owned by two hubs: {owners[table]} and {hub}"
                    )
                owners[table] = hub
        for table, stations in self.stations.items():
            if table not in owners:
                raise ValueError(f"table {table} has no hub")
            seen: set[str] = set()
            for station in stations:
                check_name(station, "station")
                if station in seen:
                    raise ValueError(f"table {table}: station {station} is listed twice")
                seen.add(station)
        return self

    def tables(self) -> list[str]:
        return [t for tables in self.hubs.values() for t in tables]

    def owner(self, table: str) -> str | None:
        return next((hub for hub, tables in self.hubs.items() if table in tables), None)

    def users(self) -> list[str]:
        """Every broker user of the venue."""
        return list(self._blocks())

    def acl(self) -> str:
        """mosquitto acl_file lines for the whole venue."""
        return _render(self._blocks())

    def _blocks(self) -> dict[str, list[str]]:
        topics = {t: Topics(t) for t in self.tables()}
        blocks = {
            hub_user(hub): [f"topic readwrite {topics[t].base}/#" for t in tables]
            for hub, tables in self.hubs.items()
        }
        host = {t: _host_lines(topics[t]) for t in topics}
        if self.venue_host:
            blocks[HOST_USER] = [line for lines in host.values() for line in lines]
        blocks.update({host_user(t): lines for t, lines in host.items()})
        blocks[SPECTATOR_USER] = [
            line
            for t in topics.values()
            for line in (f"topic read {t.public}", f"topic read {t.hub_status}")
        ]
        for table, t in topics.items():
            for s in self.stations.get(table, []):
                blocks[station_user(table, s)] = [
                    f"topic write {t.station(s, 'input')}",
                    f"topic readwrite {t.station(s, 'status')}",
                    f"topic read {t.station(s, 'screen')}",
                    f"topic read {t.station(s, 'ack')}",
                    f"topic read {t.public}",
                    f"topic read {t.hub_status}",
                ]
        return blocks

    def with_tables(self, hub: str, tables: Sequence[str], stations: Sequence[str]) -> Venue:
        """This venue with ``tables`` played by ``hub``, each with ``stations`` (the
        one-table options); a table another hub plays is a ValueError."""
        hubs = {h: list(ts) for h, ts in self.hubs.items()}
        for table in tables:
            owner = self.owner(table)
            if owner not in (None, hub):
                raise ValueError(
                    f"table {table} is played by hub {owner}: change it in a venue file (--venue)"
                )
            if owner is None:
                hubs.setdefault(hub, []).append(table)
        seats = {**self.stations, **{t: list(stations) for t in tables}}
        return Venue(hubs, seats, self.venue_host).check()

    def to_toml(self) -> str:
        """The venue as a description file (what ``--venue`` reads)."""
        q = json.dumps  # names are a-z, 0-9 and '-': a JSON string is a TOML string
        lines = [
            "# written by coffre broker-config: the venue as last configured",
            f"venue_host = {'true' if self.venue_host else 'false'}",
        ]
        lines += [line for hub in self.hubs for line in ("", "[[hub]]", f"name = {q(hub)}")]
        for hub, tables in self.hubs.items():
            for table in tables:
                seats = ", ".join(q(s) for s in self.stations.get(table, []))
                lines += ["", "[[table]]", f"name = {q(table)}", f"hub = {q(hub)}"]
                lines.append(f"stations = [{seats}]")
        return "\n".join(lines) + "\n"


def _host_lines(t: Topics) -> list[str]:
    return [
        f"topic write {t.host_command}",
        f"topic read {t.host_screen}",
        f"topic read {t.host_ack}",
        f"topic read {t.public}",
        f"topic read {t.hub_status}",
    ]


def _render(blocks: dict[str, list[str]]) -> str:
    return "".join(f"user {u}\n" + "".join(f"{t}\n" for t in ts) + "\n" for u, ts in blocks.items())


class _HubEntry(msgspec.Struct, forbid_unknown_fields=True):
    name: str


class _TableEntry(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    hub: str
    stations: list[str] = msgspec.field(default_factory=list)


class _VenueFile(msgspec.Struct, forbid_unknown_fields=True):
    hub: list[_HubEntry] = msgspec.field(default_factory=list)
    table: list[_TableEntry] = msgspec.field(default_factory=list)
    venue_host: bool = False


def read_venue(path: Path) -> Venue:
    """The venue described in ``path``; a ConfigError (one line) for any mistake."""
    data = decode(
        read_toml(path, "venue file"), _VenueFile, path, {"tables": "a table names its hub"}
    )
    hubs: dict[str, list[str]] = {}
    for hub in data.hub:
        if hub.name in hubs:
            raise ConfigError(f"{path}: hub {hub.name} is described twice")
        hubs[hub.name] = []
    stations: dict[str, list[str]] = {}
    for table in data.table:
        if table.hub not in hubs:
            known = ", ".join(hubs) or "none"
            raise ConfigError(
                f"{path}: table {table.name}: unknown hub {table.hub} (hubs: {known})"
            )
        owner = next((h for h, ts in hubs.items() if table.name in ts), None)
        if owner is not None and owner != table.hub:
            raise ConfigError(
                f"{path}: table {table.name} is owned by two hubs: {owner} and {table.hub}"
            )
        if owner is not None:
            raise ConfigError(f"{path}: table {table.name} is described twice")
        hubs[table.hub].append(table.name)
        stations[table.name] = table.stations
    try:
        return Venue(hubs, stations, data.venue_host).check()
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _listener(port: int, conf_dir: Path, bind: str, tls: TlsFiles | None) -> list[str]:
    """Our listener and its users, ACL and limits: the same for a test broker and a table."""
    return [
        f"listener {port} {bind}".rstrip(),
        *(listener_lines(tls) if tls else []),
        "allow_anonymous false",
        f"password_file {conf_dir / 'passwd'}",
        f"acl_file {conf_dir / 'acl'}",
        "max_packet_size 65536",
        # Screens are retained; inputs queue for the hub's persistent session.
        "max_queued_messages 10000",
        # Small messages both ways: without this Nagle and delayed ACKs add ~40 ms a hop.
        "set_tcp_nodelay true",
    ]


def mosquitto_conf(
    port: int,
    conf_dir: Path,
    *,
    persistence: bool = True,
    bind: str = "127.0.0.1",
    stay_root: bool = False,
    tls: TlsFiles | None = None,
) -> str:
    """A mosquitto.conf with our password and ACL files (loopback unless ``bind`` says).

    With ``tls`` the only listener is a TLS one: there is no plain port at all.
    """
    lines = [
        "# generated by coffre: one table's broker",
        *_listener(port, conf_dir, bind, tls),
        f"persistence {'true' if persistence else 'false'}",
        f"persistence_location {conf_dir / 'data'}/",
        "autosave_interval 5",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
    ]
    if stay_root:
        # A throw-away loopback broker started as root (CI, a dev box) would drop to the
        # 'mosquitto' user and lose access to its private temp files: let it stay root.
        lines.append("user root")
    return "\n".join(lines) + "\n"


def write_broker_files(
    conf_dir: Path,
    port: int,
    tables: list[TableAccess],
    *,
    persistence: bool = True,
    bind: str = "127.0.0.1",
    stay_root: bool = False,
    tls_hostnames: Sequence[str] | None = None,
) -> Path:
    """Write mosquitto.conf, passwd and acl into ``conf_dir``; returns the conf path.

    ``tls_hostnames``: make a CA and a broker certificate for these names/addresses
    (``ca.crt``, ``broker.crt``, ``broker.key`` in ``conf_dir``) and listen with TLS only.
    """
    conf_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "data").mkdir(exist_ok=True)
    passwords: dict[str, str] = {}
    acl_parts: list[str] = []
    for table in tables:
        passwords.update(table.passwords)
        acl_parts.append(table.acl())
    # The hub and host users of several tables are the same users: one line each.
    (conf_dir / "passwd").write_text(
        "".join(f"{u}:{hash_password(p)}\n" for u, p in sorted(passwords.items()))
    )
    (conf_dir / "acl").write_text(_merge_acl(acl_parts))
    # Password hashes are nobody else's business: private to us (or to mosquitto).
    (conf_dir / "passwd").chmod(0o600)
    if not stay_root:
        give_key_to_mosquitto(conf_dir / "passwd")
    tls = write_tls_files(conf_dir, tls_hostnames) if tls_hostnames is not None else None
    conf = conf_dir / "mosquitto.conf"
    conf.write_text(
        mosquitto_conf(
            port, conf_dir, persistence=persistence, bind=bind, stay_root=stay_root, tls=tls
        )
    )
    return conf


def give_key_to_mosquitto(key: Path, user: str = "mosquitto") -> bool:
    """As root, hand the broker key (0600) to the user mosquitto drops to before it reads it.

    mosquitto 2 loads its TLS key after dropping root, so a root-owned 0600 key stops it.
    Returns False when not root or there is no such user (then the key stays ours).
    """
    import pwd

    if os.geteuid() != 0:
        return False
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return False
    os.chown(key, entry.pw_uid, entry.pw_gid)
    return True


def _merge_acl(parts: list[str]) -> str:
    blocks: dict[str, list[str]] = {}
    for part in parts:
        user = None
        for line in part.splitlines():
            if line.startswith("user "):
                user = line.removeprefix("user ")
                blocks.setdefault(user, [])
            elif line.strip() and user is not None and line not in blocks[user]:
                blocks[user].append(line)
    return _render(blocks)


@dataclass
class TableAccess:
    """One table played by the hub ``hub``, with a venue host: a test broker's users, with
    generated passwords (several TableAccess share the hub, host and spectator users)."""

    table: str
    stations: list[str]
    passwords: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.venue = Venue({DEFAULT_HUB: [self.table]}, {self.table: self.stations}, True).check()
        for user in self.users():
            self.passwords.setdefault(user, secrets.token_urlsafe(16))

    def users(self) -> list[str]:
        return self.venue.users()

    def acl(self) -> str:
        """mosquitto acl_file lines for this table."""
        return self.venue.acl()


# --- `coffre broker-config`: the venue's broker, re-runnable ----------------------------


@dataclass
class BrokerSetupReport:
    """What ``configure_broker`` wrote and kept."""

    conf: Path
    tls: TlsFiles | None
    kept_users: list[str]
    new_users: list[str]
    removed_users: list[str]
    kept_ca: bool
    venue: Venue
    #: The venue the folder held before (None: a new folder).
    before: Venue | None = None


def read_credentials(conf_dir: Path) -> dict[str, str]:
    """The users and passwords an earlier run wrote (``credentials/<user>.password``)."""
    folder = conf_dir / CREDENTIALS
    if not folder.is_dir():
        return {}
    return {
        path.name.removesuffix(".password"): path.read_text().strip()
        for path in sorted(folder.glob("*.password"))
    }


def current_venue(conf_dir: Path) -> Venue | None:
    """The venue an earlier run wrote into ``conf_dir`` (None: nothing there yet).

    A folder written before venues has no ``venue.toml``: its station users name its
    tables, all played by the hub ``hub``, and its ``host`` user is the venue host.
    """
    if (conf_dir / VENUE_FILE).is_file():
        return read_venue(conf_dir / VENUE_FILE)
    known = read_credentials(conf_dir)
    if not known:
        return None
    stations: dict[str, list[str]] = {}
    for user in known:
        table, dot, station = user.partition(".")
        if dot:
            stations.setdefault(table, []).append(station)
    return Venue({DEFAULT_HUB: list(stations)}, stations, HOST_USER in known)


def conf_d(port: int, conf_dir: Path, *, bind: str = "", tls: TlsFiles | None = None) -> str:
    """The file for ``/etc/mosquitto/conf.d/``: our listener, users and ACL.

    Nothing that the distribution's ``mosquitto.conf`` already sets (persistence, its
    location, logging): mosquitto refuses a second ``persistence_location``.
    """
    return "\n".join(
        [
            "# generated by coffre broker-config: the coffre table's listener, users and ACL.",
            f"# install: cp {conf_dir / CONF_D_FILE} /etc/mosquitto/conf.d/",
            "per_listener_settings false",
            *_listener(port, conf_dir, bind, tls),
            "",
        ]
    )


def configure_broker(
    conf_dir: Path,
    venue: Venue,
    port: int,
    *,
    bind: str = "",
    tls_hostnames: Sequence[str] | None = None,
) -> BrokerSetupReport:
    """Write or update the broker files for ``venue``, keeping what already works.

    Users of an earlier run keep their passwords (a sixth station does not mean recopying
    five password files); users the venue no longer has lose their password file. With
    TLS the CA is kept (``ca.key``). ``venue`` replaces the folder's description: see
    :meth:`Venue.with_tables` to add tables to it.
    """
    venue.check()
    before = current_venue(conf_dir)
    known = read_credentials(conf_dir)
    wanted = {u: known.get(u) or secrets.token_urlsafe(16) for u in venue.users()}
    conf_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "passwd").write_text(
        "".join(f"{u}:{hash_password(p)}\n" for u, p in sorted(wanted.items()))
    )
    (conf_dir / "passwd").chmod(0o600)
    give_key_to_mosquitto(conf_dir / "passwd")
    (conf_dir / "acl").write_text(venue.acl())
    folder = conf_dir / CREDENTIALS
    folder.mkdir(mode=0o700, exist_ok=True)
    for user, password in wanted.items():
        if known.get(user) != password:
            write_private(folder / f"{user}.password", (password + "\n").encode())
    removed = sorted(set(known) - set(wanted))
    for user in removed:
        (folder / f"{user}.password").unlink(missing_ok=True)
    (conf_dir / VENUE_FILE).write_text(venue.to_toml())
    had_ca = (conf_dir / "ca.key").is_file()
    tls = None
    if tls_hostnames is not None:
        tls = write_tls_files(conf_dir, tls_hostnames, keep_ca=True)
        give_key_to_mosquitto(tls.key)
    conf = conf_dir / CONF_D_FILE
    conf.write_text(conf_d(port, conf_dir, bind=bind, tls=tls))
    return BrokerSetupReport(
        conf=conf,
        tls=tls,
        kept_users=sorted(set(known) & set(wanted)),
        new_users=sorted(set(wanted) - set(known)),
        removed_users=removed,
        kept_ca=had_ca and tls is not None,
        venue=venue,
        before=before,
    )


def changes(report: BrokerSetupReport) -> list[str]:
    """What a run kept, added and removed, in a few lines."""
    before = report.before or Venue({}, {})
    after = report.venue
    old_tables, new_tables = set(before.tables()), set(after.tables())
    lines = [
        f"kept: tables {len(old_tables & new_tables)}, users {len(report.kept_users)} "
        "(their passwords are unchanged)"
    ]
    added = [f"table {t} (hub {after.owner(t)})" for t in after.tables() if t not in old_tables]
    removed = [f"table {t}" for t in before.tables() if t not in new_tables]
    for table in sorted(old_tables & new_tables):
        old, new = before.stations.get(table, []), after.stations.get(table, [])
        added += [f"station {station_user(table, s)}" for s in new if s not in old]
        removed += [f"station {station_user(table, s)}" for s in old if s not in new]
    moved = [t for t in after.tables() if t in old_tables and before.owner(t) != after.owner(t)]
    if moved:
        lines.append("moved: " + ", ".join(f"table {t} to hub {after.owner(t)}" for t in moved))
    users = [u for u in report.new_users if "." not in u]
    removed_users = [u for u in report.removed_users if "." not in u]
    if added or users:
        lines.append("added: " + ", ".join(added + [f"user {u}" for u in users]))
    if removed or removed_users:
        lines.append(
            "removed (their password files are deleted): "
            + ", ".join(removed + [f"user {u}" for u in removed_users])
        )
    return lines
