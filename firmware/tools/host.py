"""``coffre host``: the host's command line for any table of a venue.

It does what a hub's button panel does (start, next, undo, abort, sound, language), for a
table named on the command line: it connects as the host user, checks that a hub is live on
that table (its retained ``hub/status``), publishes one
:class:`~firmware.link.protocol.HostCommand` with a fresh id on the table's ``host/command``
and waits for the hub's answer on ``host/ack`` (the hub deduplicates by id: a resent
command is answered, not redone). The answer is printed as one line; exit 0 when the hub
did it, 1 when it refused, 69 (EX_UNAVAILABLE) when the broker or the hub cannot be reached.

The broker settings come from a small TOML file (``--config``, a ``[broker]`` section as
in ``hub.toml``) or from options; options win over the file. The user is the table's host
user (``host-<table>``, see :mod:`firmware.hub.brokerconf`) unless one is named (the venue
host is ``host``). Without a password, the user's password file and ``ca.crt`` are taken
from ``broker-config``'s folder (``--broker-dir``, default ``/etc/mosquitto/coffre`` when
it has them): on the broker's machine ``sudo coffre host --table t2 start --game …`` is
enough, on whatever port the broker listens (read from that folder's ``mosquitto.conf``
when neither ``--port`` nor ``--config`` says it).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import msgspec

from firmware.hub import safefiles
from firmware.hub.brokerconf import (
    BROKER_CONF,
    CREDENTIALS,
    host_user,
    listener_ports,
    read_password,
)
from firmware.link import protocol as proto
from firmware.link.config import BrokerSection, ConfigError, broker_config, decode, read_toml
from firmware.link.lang import LANGUAGES
from firmware.link.mqtt import BrokerConfig, Client, LinkState
from firmware.link.tls import CA_FILE

T = TypeVar("T")

EX_REFUSED = 1
EX_UNAVAILABLE = 69  # sysexits.h

#: Where ``coffre broker-config --out`` writes on a hub Pi (deploy/provision-pi.sh).
BROKER_DIR = Path("/etc/mosquitto/coffre")

#: Link states after which waiting longer will not help (the broker said no, or TLS failed).
_FATAL = ("refused", "wrong-password", "wrong-ca", "wrong-name", "tls")


class HostUnavailable(Exception):
    """The broker or the table's hub cannot be reached; the message is the one line shown."""


class _HostFile(msgspec.Struct, forbid_unknown_fields=True):
    broker: BrokerSection = msgspec.field(default_factory=BrokerSection)


def load_broker(args: Any) -> BrokerConfig:
    """The host's broker settings: ``--config``'s ``[broker]``, then the options on top,
    then the table's host user and broker-config's files for what is still missing."""
    section = BrokerSection()
    where = Path("command line")
    if args.config:
        where = Path(args.config)
        section = decode(read_toml(where, "host config"), _HostFile, where, {}).broker
    overrides = {
        "host": args.broker,
        "port": args.port,
        "username": args.username,
        "password_file": args.password_file,
        "ca_file": args.ca_file,
    }
    if args.port is None and not args.config:
        overrides["port"] = listener_port(Path(args.broker_dir) if args.broker_dir else BROKER_DIR)
    section = msgspec.structs.replace(
        section, **{key: value for key, value in overrides.items() if value is not None}
    )
    return broker_config(_from_broker_dir(section, args), where)


def listener_port(folder: Path) -> int | None:
    """The port of the broker ``broker-config`` wrote into ``folder`` (provisioning's
    ``--port``), or None when there is no such file or it cannot be read."""
    ports = listener_ports(folder / BROKER_CONF)
    return ports[0] if ports else None


def _from_broker_dir(section: BrokerSection, args: Any) -> BrokerSection:
    """The table's host user by default, and its password and the CA from
    ``--broker-dir`` (or :data:`BROKER_DIR` when it has them) if none is given.

    Run with sudo, this reads as root in a folder the hub's user writes in
    (``credentials/``): a password file or ``ca.crt`` there that is a symbolic link is
    refused (one line), never followed."""
    user = section.username or host_user(args.table)
    folder = Path(args.broker_dir) if args.broker_dir else BROKER_DIR
    password_file = folder / CREDENTIALS / f"{user}.password"
    missing = section.password is None and section.password_file is None
    if args.broker_dir is None and not (missing and _present(password_file)):
        return msgspec.structs.replace(section, username=user)
    password = read_password(password_file) if missing else section.password
    ca_file = section.ca_file
    if ca_file is None:
        try:
            if safefiles.check_kind(folder / CA_FILE, folder=False):
                ca_file = str(folder / CA_FILE)
        except safefiles.UnsafeFile as exc:
            raise ConfigError(str(exc)) from None
        except OSError as exc:
            raise ConfigError(f"{folder / CA_FILE}: {exc.strerror}") from None
    return msgspec.structs.replace(section, username=user, password=password, ca_file=ca_file)


def _present(path: Path) -> bool:
    """Whether ``path`` is there (a link too: it is refused when read, not skipped); a
    folder we may not look into is one line (sudo helps)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except PermissionError:
        raise ConfigError(
            f"{path.parent} is not readable by this user: run it with sudo, or give "
            "--config or --password-file"
        ) from None
    return True


def build_command(args: Any) -> proto.HostCommand:
    """The command to send, with a fresh id (never reused: the hub answers an old id's
    first answer again and does nothing)."""
    from firmware.tools.scenario import parse_options

    try:
        options = parse_options(args.option or [], args.game)
    except SystemExit as exc:
        raise ConfigError(str(exc)) from None
    if args.action != "start" and (args.game or args.players or options or args.seed is not None):
        raise ConfigError(f"--game, --players, --seed and -o go with start, not {args.action}")
    code = getattr(args, "code", None)
    station = getattr(args, "station", None)
    if args.action == "sound":
        # ``sound narration``: the setting takes the station's place on the line.
        if station not in proto.SOUNDS or code is not None:
            raise ConfigError("sound takes one of off, cues, narration: sound cues")
        sound = cast(proto.Sound, station)
        return proto.HostCommand(cmd="sound", sound=sound, id=f"cli-{uuid.uuid4().hex[:16]}")
    if args.action == "language":
        # ``language fr``: the language takes the station's place on the line.
        if station not in LANGUAGES or code is not None:
            raise ConfigError(
                f"language takes one of {', '.join(LANGUAGES)}: language {LANGUAGES[0]}"
            )
        return proto.HostCommand(
            cmd="language", language=station, id=f"cli-{uuid.uuid4().hex[:16]}"
        )
    if args.action in ("console-ok", "console-refuse"):
        # The console's yes names the code the phone shows (console-ok 4721), no station.
        code, station = (station, None) if code is None else (code, station)
        if station is not None or (args.action == "console-refuse" and code is not None):
            raise ConfigError(f"{args.action} takes no station: console-ok 4721")
        if args.action == "console-ok" and code is None:
            raise ConfigError("console-ok needs the code on the phone: console-ok 4721")
    if args.action == "console-end" and station is None:
        raise ConfigError("console-end needs the phone's id (console-sessions lists them) or all")
    if args.action in ("console-sessions", "backup") and station is not None:
        raise ConfigError(f"{args.action} takes nothing more")
    if args.action == "pair" and (station is None or code is None):
        # The code binds the yes to the request the host compared, not to whatever asks
        # for the seat by the time the command lands.
        raise ConfigError("pair needs the station and the code on its glass: pair p6 4721")
    if code is not None and args.action not in ("pair", "console-ok"):
        raise ConfigError(f"a code goes with pair or console-ok, not {args.action}")
    if code is not None and not (len(code) == 4 and code.isascii() and code.isdigit()):
        where = "the phone" if args.action == "console-ok" else "the glass"
        raise ConfigError(f"{code!r} is not a code: four digits, as on {where}")
    return proto.HostCommand(
        cmd=args.action,
        game=args.game,
        players=args.players,
        options=options,
        seed=args.seed,
        station=station,
        code=code,
        id=f"cli-{uuid.uuid4().hex[:16]}",
    )


def send(
    broker: BrokerConfig, table: str, cmd: proto.HostCommand, timeout: float = 5.0
) -> proto.Ack:
    """Publish ``cmd`` on ``table`` and return the hub's answer; HostUnavailable if none."""
    topics = proto.Topics(table)
    states: queue.Queue[LinkState] = queue.Queue()
    client = Client(
        broker,
        f"coffre-host-{uuid.uuid4().hex[:12]}",
        [topics.hub_status, topics.host_ack],
        on_state=states.put,
    )
    deadline = time.monotonic() + timeout
    client.start()
    try:
        _connect(client, states, broker, deadline)
        _wait_for_hub(client, topics, table, deadline)
        assert cmd.id is not None
        client.publish(topics.host_command, proto.encode(cmd))
        ack = _first(client, topics.host_ack, proto.Ack, deadline, lambda a: a.id == cmd.id)
        if ack is not None:
            return ack
        raise HostUnavailable(
            f"table {table}: the hub did not answer {cmd.cmd} within {timeout:g} s "
            "(it may still act on it; look at the table before sending it again)"
        )
    finally:
        client.stop()


def _connect(
    client: Client, states: queue.Queue[LinkState], broker: BrokerConfig, deadline: float
) -> None:
    """Wait until connected; a refusal or a TLS failure ends the wait at once."""
    last: LinkState | None = None
    while not client.connected.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            last = states.get(timeout=min(left, 0.1))
        except queue.Empty:
            continue
        if last.state in _FATAL:
            raise HostUnavailable(f"broker {broker.host}:{broker.port}: {last.detail}")
    if not client.connected.is_set():
        why = last.detail if last is not None and last.state != "connecting" else "no answer"
        raise HostUnavailable(f"broker {broker.host}:{broker.port}: {why}")


def _wait_for_hub(client: Client, topics: proto.Topics, table: str, deadline: float) -> None:
    """The table's retained hub status must say ready: else no hub would answer."""
    # Retained messages come right after the subscription; a short wait is enough.
    soon = min(deadline, time.monotonic() + 1.5)
    status = _first(client, topics.hub_status, proto.HubStatus, soon, lambda _s: True)
    if status is not None:
        if status.state == "ready":
            return
        raise HostUnavailable(f"table {table}: its hub is {status.state}")
    raise HostUnavailable(
        f"table {table}: no hub on this broker has it (or user "
        f"{client.config.username or 'anonymous'} may not see it)"
    )


def _first(
    client: Client, topic: str, kind: type[T], deadline: float, accept: Callable[[T], bool]
) -> T | None:
    """The first message on ``topic`` that decodes as ``kind`` and is accepted, before the
    deadline (None: none came)."""
    while (left := deadline - time.monotonic()) > 0:
        try:
            msg = client.inbox.get(timeout=left)
        except queue.Empty:
            return None
        if msg is None:  # the client stopped
            return None
        if msg.topic != topic:
            continue
        try:
            item = msgspec.json.decode(msg.payload, type=kind)
        except msgspec.DecodeError:
            continue
        if accept(item):
            return item
    return None


def describe(table: str, cmd: proto.HostCommand, ack: proto.Ack) -> str:
    """The hub's answer as the one line printed."""
    verdict = "done" if ack.ok else "refused"
    return f"{table}: {cmd.cmd} {verdict}" + (f": {ack.message}" if ack.message else "")


def main(args: Any) -> int:
    """``coffre host``: send one command, print the answer; see the module's docstring."""
    logging.getLogger("firmware.link.mqtt").setLevel(logging.ERROR)  # the line says it all
    broker = load_broker(args)
    if args.action == "status":
        return status(broker, args.table, args.timeout)
    cmd = build_command(args)
    try:
        ack = send(broker, args.table, cmd, timeout=args.timeout)
    except HostUnavailable as exc:
        print(f"coffre: {exc}", file=sys.stderr, flush=True)
        return EX_UNAVAILABLE
    print(describe(args.table, cmd, ack), flush=True)
    return 0 if ack.ok else EX_REFUSED


def status(broker: BrokerConfig, table: str, timeout: float) -> int:
    """``coffre host status``: the hub display's text ("Pair p6? 4721"), each seat's
    health with its pairing code if one waits (every seat's, where the display shows the
    first), and when the last backup was made, from the retained ``host/screen`` and
    ``hub/status``."""
    topics = proto.Topics(table)
    client = Client(
        broker, f"coffre-host-{uuid.uuid4().hex[:12]}", [topics.host_screen, topics.hub_status]
    )
    client.start()
    got: dict[str, bytes] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(got) < 2 and time.monotonic() < deadline:
            try:
                msg = client.inbox.get(timeout=0.1)
            except queue.Empty:
                continue
            if msg is not None and msg.payload:
                got[msg.topic] = msg.payload
    finally:
        client.stop()
    if topics.hub_status not in got:
        print(f"coffre: table {table}: no hub status (is coffre-hub running?)", file=sys.stderr)
        return EX_UNAVAILABLE
    hub = proto.decode_hub_status(got[topics.hub_status])
    screen = json.loads(got.get(topics.host_screen, b"{}"))
    print(f"{table}: hub {hub.state}: {screen.get('title', '')}")
    for line in screen.get("lines", []):
        print(f"  {line}")
    codes = proto.pairing_codes(got.get(topics.host_screen, b""))
    for station, seat in (hub.stations or {}).items():
        line = f"  {station}: {seat.state}" + (f" ({seat.reason})" if seat.reason else "")
        line += ", a pairing request waits" if seat.asking else ""
        code = codes.get(station)
        print(line + (f", code {code}" if code else ""))
    made = hub.backup
    if made is None:
        print("  last backup: none yet")
    else:
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(made.at))
        sealed = ", sealed: its key was on the hub's glass" if made.sealed else ""
        print(f"  last backup: {when} ({made.name}, {made.size} bytes{sealed})")
    return 0
