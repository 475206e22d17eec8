"""Broker set-up for a venue: coffre's own mosquitto, its users, password file, ACL, listener.

coffre runs **its own mosquitto instance** (the ``coffre-broker`` unit:
``mosquitto -c /etc/mosquitto/coffre/mosquitto.conf``, as the ``mosquitto`` user, on port
8883), never a snippet in the distribution's ``/etc/mosquitto/conf.d/``: mosquitto's
``password_file``, ``acl_file`` and ``allow_anonymous`` are global unless
``per_listener_settings true``, and that switch is global too and changes the meaning of
every other application's settings (Home Assistant's, zigbee2mqtt's). So a mosquitto that
already serves another application keeps its own file untouched and keeps running; ours
has its own port, users, ACL and persistence (``/var/lib/coffre-broker``).

Users and ACL are reloaded without a restart: mosquitto re-reads ``password_file`` and
``acl_file`` on SIGHUP (``systemctl reload coffre-broker``) and connected clients stay
connected, so adding a station disturbs no game. Only a changed listener (port, address,
certificate names) needs a restart: :class:`BrokerSetupReport` says which.

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
- ``spectator``: the table display: reads every table's ``public`` and ``hub/status``;
- ``enrol-<table>``: a station that pairs (public password ``coffre-enrol``): writes only
  ``enrol/<station>/request`` and reads only ``enrol/<station>/reply`` of its table.

Re-runnable: ``<out>/venue.toml`` keeps the description last written (a folder written
before venues is read from its password files: its tables belong to the hub ``hub``,
its ``host`` is the venue host). A user that exists keeps its password
(``<out>/credentials/<user>.password``), the CA is kept (``ca.key``) and so is the broker
certificate while its names are the same; tables and stations no longer described lose
their users and password files. Every mistake in the description is one line and
changes nothing.

It runs as root in a folder the hub's user may write in (``passwd``, ``acl`` and
``credentials/``: pairing adds stations there), so it reads, writes, gives a mode or an
owner to nothing there through a symbolic link (see :mod:`firmware.hub.safefiles`): a
link, or a file of another kind, where one of its files goes is one line naming it, and
nothing is written.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import secrets
import stat
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from firmware.hub import safefiles
from firmware.hub.certs import (
    CA_KEY_FILE,
    TlsFiles,
    listener_lines,
    write_private,
    write_tls_files,
)
from firmware.link.config import ConfigError, MissingFile, decode, read_toml
from firmware.link.pairing import ENROL_PASSWORD, all_enrol_requests, enrol_user
from firmware.link.protocol import Topics, check_name
from firmware.link.tls import CA_FILE, CERT_FILE, KEY_FILE

#: coffre's own mosquitto's whole configuration, in the broker-config folder.
BROKER_CONF = "mosquitto.conf"
#: The systemd unit that runs it.
BROKER_UNIT = "coffre-broker"
#: Where that unit keeps mosquitto's persistence (its StateDirectory).
BROKER_DATA = Path("/var/lib/coffre-broker")
#: What an older coffre installed into the distribution's mosquitto (now refused there).
CONF_D_FILE = "coffre.conf"
SYSTEM_CONF_D = Path("/etc/mosquitto/conf.d")
GENERATED = "# generated by coffre"
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
#: The largest password file read (ours are 23 bytes).
MAX_SECRET = 4096
#: The largest passwd, acl, mosquitto.conf or venue.toml read back (a thousand tables'
#: users and ACL are about 1 MB).
MAX_TEXT = 16 << 20


def station_user(table: str, station: str) -> str:
    """The broker user of one station (unique across tables)."""
    return f"{table}.{station}"


def hub_user(hub: str) -> str:
    """The broker user of one hub (``hub`` for the hub named ``hub``)."""
    return HUB_USER if hub == DEFAULT_HUB else f"hub-{hub}"


def host_user(table: str) -> str:
    """The broker user of one table's host."""
    return f"host-{table}"


def new_password(user: str) -> str:
    """A new user's password: random, but the enrol users' is public (docs/pairing.md)."""
    return ENROL_PASSWORD if user.startswith("enrol-") else secrets.token_urlsafe(16)


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
            # Pairing (docs/pairing.md): a public password, so the ACL is the whole wall.
            blocks[enrol_user(table)] = [
                f"topic write {all_enrol_requests(table)}",
                f"topic read {all_enrol_requests(table).removesuffix('request')}reply",
            ]
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


def read_venue(path: Path, text: str | None = None) -> Venue:
    """The venue described in ``path`` (``text``: its text, already read); a ConfigError
    (one line) for any mistake."""
    if text is None:
        document = read_toml(path, "venue file")
    else:
        try:
            document = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    data = decode(document, _VenueFile, path, {"tables": "a table names its hub"})
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


#: The broker's window of unacked QoS 1 messages to one client (see _listener).
MAX_INFLIGHT = 512


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
        # A hub hears all its tables on one connection and acks each input only once its
        # commit is on disk (manual acks): the default window of 20 unacked messages would
        # hold every table behind one slow fsync. 512 covers a 100 ms SD-card stall at 100
        # tables' worth of inputs (docs/benchmarks.md).
        f"max_inflight_messages {MAX_INFLIGHT}",
        # Small messages both ways: without this Nagle and delayed ACKs add ~40 ms a hop.
        "set_tcp_nodelay true",
    ]


def listener_ports(conf: Path) -> list[int]:
    """The ports a mosquitto.conf listens on (``listener PORT [address]``: what
    :func:`mosquitto_conf` writes); none when the file is missing or unreadable."""
    try:
        lines = conf.read_text(errors="replace").splitlines()
    except OSError:
        return []
    ports = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "listener" and parts[1].isdigit():
            ports.append(int(parts[1]))
    return ports


def mosquitto_conf(
    port: int,
    conf_dir: Path,
    *,
    persistence: bool = True,
    bind: str = "127.0.0.1",
    stay_root: bool = False,
    tls: TlsFiles | None = None,
    data_dir: Path | None = None,
) -> str:
    """A whole mosquitto.conf with our password and ACL files (loopback unless ``bind``
    says), for a mosquitto of coffre's own: nothing in it touches another instance.

    With ``tls`` the only listener is a TLS one: there is no plain port at all.
    ``data_dir``: where persistence goes (default ``conf_dir/data``).
    """
    lines = [
        f"{GENERATED}: coffre's own broker (its listener, users, ACL and persistence)",
        *_listener(port, conf_dir, bind, tls),
        f"persistence {'true' if persistence else 'false'}",
        f"persistence_location {data_dir or conf_dir / 'data'}/",
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
    # Password hashes are nobody else's business: private to us (or to mosquitto).
    write_private(
        conf_dir / "passwd",
        "".join(f"{u}:{hash_password(p)}\n" for u, p in sorted(passwords.items())).encode(),
    )
    safefiles.replace(conf_dir / "acl", _merge_acl(acl_parts).encode(), 0o644)
    if not stay_root:
        give_key_to_mosquitto(conf_dir / "passwd")
    tls = write_tls_files(conf_dir, tls_hostnames) if tls_hostnames is not None else None
    conf = conf_dir / "mosquitto.conf"
    text = mosquitto_conf(
        port, conf_dir, persistence=persistence, bind=bind, stay_root=stay_root, tls=tls
    )
    safefiles.replace(conf, text.encode(), 0o644)
    return conf


def give_key_to_mosquitto(key: Path, user: str = "mosquitto") -> bool:
    """As root, hand the broker key (0600) to the user mosquitto drops to before it reads it.

    mosquitto 2 loads its TLS key after dropping root, so a root-owned 0600 key stops it.
    Returns False when not root or there is no such user (then the key stays ours).
    Never through a link (:class:`~firmware.hub.safefiles.UnsafeFile`).
    """
    import pwd

    if os.geteuid() != 0:
        return False
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return False
    return safefiles.change(key, ids=(entry.pw_uid, entry.pw_gid))


#: What the hub's service writes in the broker's folder when a station pairs, and the mode
#: giving the hub's group that write (provisioning, restore and doctor read this one table).
HUB_WRITES: tuple[tuple[str, int], ...] = (("passwd", 0o660), ("acl", 0o664), (CREDENTIALS, 0o770))


def share_with_hub(conf_dir: Path, group: str = "coffre") -> bool:
    """As root, let the hub's service (group ``coffre``) add a paired station's user:
    ``passwd`` (mosquitto's, 0660), ``acl`` (0664) and ``credentials/`` (0770) in that
    group. ``ca.key`` and ``broker.key`` are untouched. False when not root or no group.
    Never through a link (:class:`~firmware.hub.safefiles.UnsafeFile`)."""
    import grp

    if os.geteuid() != 0:
        return False
    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return False
    with safefiles.opened_folder(conf_dir) as top:
        for name, mode in HUB_WRITES:
            safefiles.change(conf_dir / name, mode=mode, ids=(-1, gid), at=top)
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
            self.passwords.setdefault(user, new_password(user))

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
    #: What a running broker needs to serve this: "reload" (users or ACL changed: SIGHUP,
    #: clients stay connected), "restart" (listener or certificate changed), "none".
    apply: str = "reload"
    #: An older coffre's snippet in the distribution's conf.d, to remove (None: none).
    legacy_conf_d: Path | None = None


def read_credentials(conf_dir: Path) -> dict[str, str]:
    """The users and passwords an earlier run wrote (``credentials/<user>.password``).

    As root in a folder the hub's user writes in: a password file (or ``credentials/``)
    that is a link, or not a plain file, is a ConfigError (one line), never followed."""
    folder = conf_dir / CREDENTIALS
    try:
        with safefiles.opened_folder(conf_dir) as top:
            fd = safefiles.open_folder(folder, top)
            if fd is None:
                return {}
            try:
                names = sorted(n for n in os.listdir(fd) if n.endswith(".password"))
                return {
                    n.removesuffix(".password"): read_password(folder / n, at=fd) for n in names
                }
            finally:
                os.close(fd)
    except FileNotFoundError:
        return {}
    except safefiles.UnsafeFile as exc:
        raise ConfigError(str(exc)) from None


def read_password(path: Path, *, at: int | None = None) -> str:
    """One password file of broker-config's folder (``at``: its folder's descriptor),
    read without following a link: root never reads a file the hub's user pointed at.
    Anything else than a small plain UTF-8 file is a ConfigError (one line)."""
    try:
        data = safefiles.read(path, MAX_SECRET, at=at)
    except safefiles.UnsafeFile as exc:
        raise ConfigError(str(exc)) from None
    except PermissionError:
        raise MissingFile(
            f"{path} is not readable by this user: run it with sudo", path, "is not readable"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    if data is None:
        raise MissingFile(f"{path} does not exist", path, "does not exist")
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text") from None


def hand_over(conf_dir: Path, user: str, dest: Path, owner: str = "coffre") -> None:
    """Give ``user``'s password to a service: copied from the folder's ``credentials/`` to
    ``dest``, 0600 and ``owner``'s (provisioning's ``hub.password`` and
    ``spectator.password`` in /etc/coffre). As root: read without following a link (the
    hub's user writes in ``credentials/``, and would be handed the file it pointed at) and
    made new beside ``dest``. Any fault is a ConfigError (one line)."""
    import pwd

    secret = read_password(conf_dir / CREDENTIALS / f"{user}.password")
    try:
        entry = pwd.getpwnam(owner)
    except KeyError:
        raise ConfigError(f"this machine has no user {owner}") from None
    try:
        safefiles.replace(dest, (secret + "\n").encode(), 0o600, ids=(entry.pw_uid, entry.pw_gid))
    except OSError as exc:
        raise ConfigError(f"cannot write {dest}: {exc.strerror or exc}") from None


def current_venue(conf_dir: Path) -> Venue | None:
    """The venue an earlier run wrote into ``conf_dir`` (None: nothing there yet).

    A folder written before venues has no ``venue.toml``: its station users name its
    tables, all played by the hub ``hub``, and its ``host`` user is the venue host.
    """
    text = _read(conf_dir / VENUE_FILE)
    if text is not None:
        return read_venue(conf_dir / VENUE_FILE, text)
    known = read_credentials(conf_dir)
    if not known:
        return None
    stations: dict[str, list[str]] = {}
    for user in known:
        table, dot, station = user.partition(".")
        if dot:
            stations.setdefault(table, []).append(station)
    return Venue({DEFAULT_HUB: list(stations)}, stations, HOST_USER in known)


def configure_broker(
    conf_dir: Path,
    venue: Venue,
    port: int,
    *,
    bind: str = "",
    tls_hostnames: Sequence[str] | None = None,
    data_dir: Path | None = None,
    system_conf_d: Path = SYSTEM_CONF_D,
    group: str = "coffre",
) -> BrokerSetupReport:
    """Write or update coffre's broker files for ``venue``, keeping what already works.
    (``group``: the hub service's, which may add paired stations: see share_with_hub.)

    Users of an earlier run keep their passwords (a sixth station does not mean recopying
    five password files); users the venue no longer has lose their password file. With
    TLS the CA is kept (``ca.key``), and the broker certificate while its names are the
    same. ``venue`` replaces the folder's description: see :meth:`Venue.with_tables` to
    add tables to it. ``data_dir``: mosquitto's persistence (default ``conf_dir/data``).

    Nothing is read, written, given a mode or an owner through a link: a link (or a file
    of another kind) where one of its files goes is a ConfigError (one line) before
    anything is written.
    """
    venue.check()
    before = current_venue(conf_dir)
    known = read_credentials(conf_dir)
    old_passwd = _read(conf_dir / "passwd")
    old_acl = _read(conf_dir / "acl")
    old_conf = _read(conf_dir / BROKER_CONF)
    wanted = {u: known.get(u) or new_password(u) for u in venue.users()}
    try:
        _check_destinations(conf_dir, list(wanted))
        conf_dir.mkdir(parents=True, exist_ok=True)
        with safefiles.opened_folder(conf_dir) as top:
            write_private(  # 0600 from its first byte, whatever the umask
                conf_dir / "passwd",
                "".join(f"{u}:{hash_password(p)}\n" for u, p in sorted(wanted.items())).encode(),
            )
            give_key_to_mosquitto(conf_dir / "passwd")
            safefiles.replace(conf_dir / "acl", venue.acl().encode(), 0o644, at=top)
            folder = conf_dir / CREDENTIALS
            creds = safefiles.open_folder(folder, top, make=0o700)
            assert creds is not None  # made if missing
            try:
                for user, password in wanted.items():
                    if known.get(user) != password:
                        secret = (password + "\n").encode()
                        safefiles.replace(folder / f"{user}.password", secret, 0o600, at=creds)
                removed = sorted(set(known) - set(wanted))
                for user in removed:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(f"{user}.password", dir_fd=creds)
            finally:
                os.close(creds)
            safefiles.replace(conf_dir / VENUE_FILE, venue.to_toml().encode(), 0o644, at=top)
            had_ca = safefiles.check_kind(conf_dir / CA_KEY_FILE, folder=False, at=top)
            tls = None
            if tls_hostnames is not None:
                tls = write_tls_files(conf_dir, tls_hostnames, keep_ca=True)
                give_key_to_mosquitto(tls.key)
            conf = conf_dir / BROKER_CONF
            text = mosquitto_conf(port, conf_dir, bind=bind, tls=tls, data_dir=data_dir)
            safefiles.replace(conf, text.encode(), 0o644, at=top)
            # An older coffre wrote its conf.d snippet here; it is not ours to serve any more.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(CONF_D_FILE, dir_fd=top)
        repair_modes(conf_dir)
        # After repair_modes, which makes passwd 0600 and credentials/ 0700: shared before
        # it, the hub could never add a paired station (found by deploy/e2e/clean-table.sh).
        share_with_hub(conf_dir, group)
    except safefiles.UnsafeFile as exc:
        raise ConfigError(str(exc)) from None
    users_changed = old_passwd is None or old_acl != venue.acl() or set(known) != set(wanted)
    if old_conf != text or (tls is not None and tls.signed):
        apply = "restart"
    else:
        apply = "reload" if users_changed else "none"
    legacy = system_conf_d / CONF_D_FILE
    return BrokerSetupReport(
        conf=conf,
        tls=tls,
        kept_users=sorted(set(known) & set(wanted)),
        new_users=sorted(set(wanted) - set(known)),
        removed_users=removed,
        kept_ca=had_ca and tls is not None,
        venue=venue,
        before=before,
        apply=apply,
        legacy_conf_d=legacy if _legacy(legacy) else None,
    )


#: Every file of the folder that broker-config writes, besides ``credentials/``.
WRITTEN = ("passwd", "acl", VENUE_FILE, BROKER_CONF, CA_FILE, CERT_FILE, KEY_FILE, CA_KEY_FILE)


def _check_destinations(conf_dir: Path, users: list[str]) -> None:
    """UnsafeFile for the first place a file goes that is a link or not a plain file (or,
    for ``credentials/``, not a folder): checked before anything is written."""
    for name in WRITTEN:
        safefiles.check_kind(conf_dir / name, folder=False)
    folder = conf_dir / CREDENTIALS
    if safefiles.check_kind(folder, folder=True):
        for user in users:
            safefiles.check_kind(folder / f"{user}.password", folder=False)


def _legacy(path: Path) -> bool:
    """Whether an older coffre's snippet is in the distribution's conf.d (root's)."""
    try:
        return path.read_text().startswith(GENERATED)
    except (OSError, UnicodeError):
        return False


#: The folder's secrets: only their owner (coffre's root, or mosquitto) may read them.
PRIVATE_FILES = ("passwd", CA_KEY_FILE, KEY_FILE)


def repair_modes(conf_dir: Path) -> None:
    """Make modes what they should be, whatever the umask of an earlier run.

    Secrets 0600, the credentials folder 0700 and its files 0600; nothing else in the
    folder (the ACL, the config, the certificates) writable by anyone but its owner.
    Symbolic links, second names of a file (hard links), fifos and devices are left
    alone: they are somebody else's. Each mode is set on a descriptor opened without
    following a link, so a file swapped for a link meanwhile is never changed.
    """

    def set_mode(path: Path, at: int, mode: int | None, strip: int = 0) -> None:
        with contextlib.suppress(safefiles.UnsafeFile):
            safefiles.change(path, mode=mode, strip=strip, at=at)

    with safefiles.opened_folder(conf_dir) as top:
        current = stat.S_IMODE(os.fstat(top).st_mode)
        if current & 0o022:
            os.fchmod(top, current & ~0o022)
        for name in sorted(os.listdir(top)):
            path = conf_dir / name
            if name in PRIVATE_FILES:
                set_mode(path, top, 0o600)
            elif name == CREDENTIALS:
                set_mode(path, top, 0o700)
                with contextlib.suppress(safefiles.UnsafeFile):
                    creds = safefiles.open_folder(path, top)
                    if creds is None:
                        continue
                    try:
                        for file in sorted(os.listdir(creds)):
                            set_mode(path / file, creds, 0o600)
                    finally:
                        os.close(creds)
            else:
                set_mode(path, top, None, 0o022)


def _read(path: Path) -> str | None:
    """A file of the folder's text, or None when there is none to read; never through a
    link (ConfigError, one line: root reads no file the hub's user points at)."""
    try:
        data = safefiles.read(path, MAX_TEXT)
    except safefiles.UnsafeFile as exc:
        raise ConfigError(str(exc)) from None
    except OSError:
        return None
    return None if data is None else data.decode("utf-8", "replace")


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
