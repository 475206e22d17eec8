"""The ``coffre`` command line: sim, hub, station, display, host, play, bench,
broker-config, selftest, keys.

A mistake a user can make (a config typo, a missing file, an unknown backend) ends the
program with one line ``coffre: <what and where>`` on stderr, never a traceback: exit
status 78 (EX_CONFIG) for configuration, which the systemd units do not restart on.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware.hub.brokerconf import Venue

BACKENDS = ("real", "mock", "emulated")
LOG_LEVELS = ("debug", "info", "warning", "error")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
EX_USAGE = 64
EX_IOERR = 74  # sysexits.h: the disk refused the store (the units restart on it)
EX_CONFIG = 78  # sysexits.h; the same value as firmware.link.config.EX_CONFIG
#: Optional libraries and the extra that brings each (a station installs none of them).
_EXTRAS = {
    "amqtt": "sim",
    "cryptography": "hub",
    "aiohttp": "display",
    "lgpio": "station",
    "spidev": "station",
}


class UsageError(Exception):
    """A command line that cannot be carried out; the message is the one line shown."""


class _GameIds:
    """The games, for ``choices=``: the rules load only when a command asks for a game.

    ``coffre station`` parses the same command line, and a station never loads the rules.
    """

    def __contains__(self, game: object) -> bool:
        from rules import GAME_IDS

        return game in GAME_IDS

    def __iter__(self) -> Iterator[str]:
        from rules import GAME_IDS

        return iter(GAME_IDS)


GAME_IDS = _GameIds()
# A metavar keeps argparse from listing the games (loading the rules) at start-up.
GAME_HELP = "the game: %(choices)s"


def _count(low: int, high: int) -> Any:
    """An argparse type: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not in {low}..{high}")
        return value

    return parse


def version() -> str:
    """The installed package's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("coffre")
    except PackageNotFoundError:  # a checkout run without installing
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """All subcommands and their options."""
    parser = argparse.ArgumentParser(prog="coffre", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"coffre {version()}")
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=None,
        help="what to log (default: info for hub and station, warning for the rest)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sim = sub.add_parser("sim", help="a simulated table plays a whole game")
    sim.add_argument(
        "--game", choices=GAME_IDS, metavar="GAME", help=GAME_HELP + " (default: the first)"
    )
    sim.add_argument(
        "--players", type=_count(1, 16), default=5, help="seats at the table (the game's range)"
    )
    sim.add_argument("--seed", type=int, default=1, help="the game's random seed")
    sim.add_argument(
        "--out",
        default="sim-out",
        help="folder for the saved screens and screens.jsonl (a new one, or an earlier sim's)",
    )
    sim.add_argument("--language", default="en", choices=["en", "fr"], help="what the table speaks")
    sim.add_argument("--pace", type=float, default=0.0, help="seconds to wait before each safe")
    sim.add_argument(
        "--option", "-o", action="append", metavar="KEY=VALUE", help="a game option, as for play"
    )
    sim.add_argument(
        "--embedded-broker",
        action="store_true",
        help="use the in-process broker even if mosquitto is installed",
    )
    sim.add_argument(
        "--emulate-chips",
        action="store_true",
        help="real reader/display drivers over emulated MFRC522 and SSD1306",
    )

    sim.add_argument(
        "--display",
        type=_count(1, 65535),
        metavar="PORT",
        default=None,
        help="serve the table display of the simulated table on this port",
    )
    sim.add_argument(
        "--linger",
        type=float,
        metavar="SECONDS",
        default=0.0,
        help="keep the table (and its display) up this long after the game",
    )

    display = sub.add_parser("display", help="serve the table display (a web page)")
    display.add_argument("--config", required=True, help="display TOML file")
    display.add_argument(
        "--port", type=_count(1, 65535), default=None, help="HTTP port (overrides the file)"
    )
    display.add_argument(
        "--language",
        choices=["en", "fr"],
        default=None,
        help="what the display speaks before a hub says its table's language (overrides the file)",
    )

    hub = sub.add_parser("hub", help="run the hub (the referee)")
    hub.add_argument("--config", required=True, help="hub TOML file (see firmware/hub/config.py)")
    hub.add_argument("--pins", default=None, help="panel pin map TOML (overrides [panel] pins)")
    hub.add_argument(
        "--take-over",
        action="append",
        default=[],
        metavar="TABLE",
        help="run TABLE even though another hub's claim is still on the broker: only when "
        "that hub is gone for good (its claim outlived it); repeatable",
    )

    station = sub.add_parser("station", help="run one station")
    station.add_argument(
        "--config", required=True, help="station TOML file (see firmware/station/config.py)"
    )
    station.add_argument("--pins", default=None, help="pin map TOML (overrides [station] pins)")
    station.add_argument(
        "--retry",
        type=float,
        metavar="SECONDS",
        default=None,
        help="a missing file or a part that does not answer: show it on the glass and try "
        "again every SECONDS (the unit: 5) instead of exiting",
    )

    play = sub.add_parser("play", help="apply a JSON scenario to a rules engine")
    play.add_argument("--game", required=True, choices=GAME_IDS, metavar="GAME", help=GAME_HELP)
    play.add_argument("--players", type=_count(1, 16), required=True, help="seats at the table")
    play.add_argument("--seed", type=int, default=0, help="the game's random seed")
    play.add_argument(
        "--option", "-o", action="append", metavar="KEY=VALUE", help="a game option, repeatable"
    )
    play.add_argument("scenario", nargs="?", help="file of JSON actions, one a line (- = stdin)")

    host = sub.add_parser("host", help="send a host command (start, next...) to any table")
    host.add_argument("--table", required=True, type=_table_name, help="the table to command")
    host.add_argument(
        "action",
        choices=(
            "start",
            "next",
            "undo",
            "abort",
            "pair",
            "refuse",
            "console-ok",
            "console-refuse",
            "status",
        ),
        help="the command; status: the hub display and every seat's health; console-ok "
        "CODE: grant the phone whose console sign-in shows CODE",
    )
    host.add_argument(
        "station",
        nargs="?",
        type=_table_name,
        help="pair, refuse: the station (refuse's default: the one shown)",
    )
    host.add_argument(
        "code", nargs="?", help="pair: the four digits on the station's glass (pair p6 4721)"
    )
    host.add_argument("--game", choices=GAME_IDS, metavar="GAME", help="start: " + GAME_HELP)
    host.add_argument("--players", type=_count(1, 16), help="start: seats (default: the menu's)")
    host.add_argument("--seed", type=_count(0, 2**63 - 1), help="start: a fixed seed")
    host.add_argument(
        "--option", "-o", action="append", metavar="KEY=VALUE", help="start: a game option"
    )
    host.add_argument("--config", help="a TOML file with a [broker] section, as in hub.toml")
    host.add_argument("--broker", help="the broker's host name or address")
    host.add_argument("--port", type=_count(1, 65535), help="the broker's port")
    host.add_argument("--username", help="the broker user (default: the table's, host-<table>)")
    host.add_argument("--password-file", help="a file holding the user's password")
    host.add_argument("--ca-file", help="the table's ca.crt (TLS)")
    host.add_argument(
        "--broker-dir",
        help="broker-config's --out folder: the user's password and ca.crt come from it "
        "(default: /etc/mosquitto/coffre, when it has them)",
    )
    host.add_argument(
        "--timeout", type=float, default=5.0, help="seconds to wait for the hub's answer"
    )

    bench = sub.add_parser(
        "bench", help="tap-to-screen latency, or --tables N load, against an echo baseline"
    )
    bench.add_argument("--stations", type=_count(1, 64), default=8, help="tap mode: stations")
    bench.add_argument("--taps", type=_count(1, 100_000), default=200, help="tap mode: taps")
    bench.add_argument(
        "--tables", type=_count(0, 1000), default=0, help="load mode: tables of 8 stations"
    )
    bench.add_argument(
        "--hubs", type=_count(1, 100), default=1, help="load mode: hub processes sharing the tables"
    )
    bench.add_argument("--duration", type=float, default=10.0, help="load mode: seconds")
    bench.add_argument("--rate", type=float, default=1.0, help="load mode: inputs/s a station")
    bench.add_argument(
        "--commit-delay", type=float, default=0.0, metavar="MS", help="simulated ms per commit"
    )
    bench.add_argument("--stall", type=float, default=0.0, metavar="MS", help="simulated stall")
    bench.add_argument(
        "--stall-every", type=float, default=2.0, metavar="S", help="seconds between stalls"
    )
    bench.add_argument("--no-echo", action="store_true", help="skip the echo baseline")
    bench.add_argument(
        "--no-sniff",
        action="store_true",
        help="load and venue modes: do not count the hubs' messages (the counter is a client "
        "of every message, a big share of a small machine's CPU)",
    )
    bench.add_argument(
        "--pi-class",
        action="store_true",
        help="tap to glass with each station and the hub held to a Zero 2 W's and a Pi 4's CPU",
    )
    bench.add_argument(
        "--runs",
        type=_count(1, 100),
        default=1,
        help="--pi-class: whole runs, each calibrated afresh, and the median of their p50s "
        "and p99s (one run's p50 moves by 10-30 ms on a shared machine)",
    )
    bench.add_argument(
        "--i2c-hz",
        type=_count(10_000, 3_400_000),
        default=400_000,
        metavar="HZ",
        help="--pi-class: the SSD1306's I2C clock (400000: the datasheet's; more is beyond it)",
    )

    conf = sub.add_parser(
        "broker-config",
        help="write coffre's own mosquitto config, users, ACL and TLS files (keeps what exists)",
    )
    what = conf.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--venue", help="a venue file: hubs, their tables and stations (see deploy/venue.toml)"
    )
    what.add_argument(
        "--table", help="the table's name (a-z, 0-9, -); t1,t2: several with the same stations"
    )
    conf.add_argument("--stations", help="with --table: comma-separated station ids, in seat order")
    conf.add_argument(
        "--port", type=_count(1, 65535), default=None, help="default 8883 (TLS), 1883 (plain)"
    )
    conf.add_argument("--out", required=True, help="folder to write into")
    conf.add_argument("--bind", default="", help="listen address (default: all interfaces)")
    conf.add_argument(
        "--tls",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="TLS with a private CA (default); --no-tls: plain MQTT, passwords in clear",
    )
    conf.add_argument(
        "--data-dir",
        default=None,
        help="mosquitto's persistence folder (default /var/lib/coffre-broker, the unit's)",
    )
    conf.add_argument(
        "--apply",
        action="store_true",
        help="reload (or restart, if its listener changed) the running coffre-broker unit",
    )
    conf.add_argument(
        "--hostname",
        action="append",
        help="a name or IP stations use for the hub, repeatable (default: this host's "
        "name and its .local name); localhost and 127.0.0.1 are always added",
    )

    backup = sub.add_parser(
        "backup", help="the hub's store, CA, broker users and configs in one private file"
    )
    backup.add_argument(
        "--out", default=None, help="the file (default coffre-backup-<host>-<date>.tar.gz)"
    )
    backup.add_argument("--config", default="/etc/coffre/hub.toml", help="hub.toml: its [store]")
    backup.add_argument("--store", default=None, help="the store (overrides hub.toml's)")
    backup.add_argument(
        "--broker-dir", default="/etc/mosquitto/coffre", help="broker-config's folder"
    )
    backup.add_argument("--etc", default="/etc/coffre", help="the hub's config folder")
    restore = sub.add_parser("restore", help="put a backup back (on a fresh hub, say)")
    restore.add_argument("archive", help="the file coffre backup wrote")
    restore.add_argument(
        "--config",
        default=None,
        help="this hub's hub.toml: its [store] (default /etc/coffre/hub.toml)",
    )
    restore.add_argument("--store", default=None, help="where the store goes (overrides hub.toml)")
    restore.add_argument(
        "--broker-dir", default=None, help="where the broker files go (/etc/mosquitto/coffre)"
    )
    restore.add_argument("--etc", default=None, help="where the configs go (/etc/coffre)")
    restore.add_argument(
        "--force", action="store_true", help="replace an existing store (kept beside, renamed)"
    )

    doctor = sub.add_parser(
        "doctor", help="check this Pi: buses, groups, files, chips, broker, certificate, clock"
    )
    doctor.add_argument(
        "--role", choices=("hub", "station"), default=None, help="default: what /etc/coffre has"
    )
    doctor.add_argument("--root", default="/", help=argparse.SUPPRESS)

    keys = sub.add_parser("keys", help="register your own NFC tags")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    learn = keys_sub.add_parser("learn", help="tap every key on a station, write a key set")
    learn.add_argument("--out", default="keys.toml", help="the key set file (resumed if it exists)")
    _hardware_options(learn)
    learn.add_argument("--colours", default=None, help="comma-separated (default: the 8)")
    learn.add_argument("--votes", type=_count(0, 16), default=8, help="vote keys per colour")
    learn.add_argument("--mysteries", type=_count(0, 16), default=8, help="mystery keys")

    selftest = sub.add_parser("selftest", help="check a station's hardware, step by step")
    _hardware_options(selftest)
    selftest.add_argument("--yes", action="store_true", help="do not wait for the builder")
    return parser


def _hardware_options(parser: argparse.ArgumentParser) -> None:
    """--backend, --pins and --config for the commands that open a station's parts."""
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="the parts to use (default: the config's, else $COFFRE_DEVICE_BACKEND, "
        "else real on a Raspberry Pi and mock elsewhere)",
    )
    parser.add_argument("--pins", default=None, help="pin map TOML (default: the config's)")
    parser.add_argument(
        "--config", default=None, help="a station TOML file to take backend and pins from"
    )


#: Where a provisioned station keeps its password and ``ca.crt`` (its unit's state folder).
STATION_STATE = "/var/lib/coffre-station"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the process exit status (user mistakes: one line)."""
    from device.base import DeviceError
    from device.factory import UnknownBackend
    from firmware.link.config import ConfigError
    from hardware.pins import PinMapError

    args = build_parser().parse_args(argv)
    setup_logging(args.log_level, args.command)
    try:
        return _dispatch(args)
    except (ConfigError, UnknownBackend, PinMapError) as exc:
        return _fail(str(exc), EX_CONFIG)
    except UsageError as exc:
        return _fail(str(exc), EX_USAGE)
    except DeviceError as exc:
        return _fail(f"hardware: {exc}", 1)
    except ModuleNotFoundError as exc:
        extra = _EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        return _fail(
            f"{args.command} needs {exc.name}, which this install lacks: "
            f"pip install 'coffre[{extra}]'",
            1,
        )
    except KeyboardInterrupt:
        return 130


def _fail(message: str, status: int) -> int:
    print(f"coffre: {message}", file=sys.stderr, flush=True)
    return status


def setup_logging(level: str | None, command: str) -> None:
    """One line per record; no timestamp under systemd (journald adds its own)."""
    if level is None:
        level = "info" if command in ("hub", "station", "display") else "warning"
    under_journal = bool(os.environ.get("JOURNAL_STREAM") or os.environ.get("INVOCATION_ID"))
    fmt = "%(levelname)s %(name)s: %(message)s"
    if not under_journal:
        fmt = "%(asctime)s " + fmt
    logging.basicConfig(level=level.upper(), format=fmt, force=True)


def _table_name(text: str) -> str:
    """An argparse type: a table name as hub.toml allows it."""
    from firmware.link.protocol import check_name

    try:
        return check_name(text, "table")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _dispatch(args: Any) -> int:
    if args.command == "host":
        from firmware.tools import host

        return host.main(args)
    if args.command == "play":
        from firmware.tools import play

        return play.main(args)
    if args.command == "sim":
        from firmware.tools import sim

        return sim.main(args)
    if args.command == "hub":
        return _run_hub(args)
    if args.command == "station":
        return _run_station(args)
    if args.command == "display":
        return _run_display(args)
    if args.command == "bench":
        from firmware.bench import command

        return command.main(args)
    if args.command == "broker-config":
        return _broker_config(args)
    if args.command == "keys":
        from firmware.station import keylearn

        return keylearn.main(args)
    if args.command == "selftest":
        return _selftest(args)
    if args.command in ("backup", "restore"):
        return _backup(args)
    if args.command == "doctor":
        from firmware.tools import doctor

        return doctor.main(args)
    return 1


@contextlib.contextmanager
def _stop_on_signal() -> Iterator[threading.Event]:
    """An event SIGTERM or SIGINT sets; installed before anything starts, so a stop that
    comes early (the broker unreachable, systemd giving up) is still a clean exit 0. The
    previous handlers come back on exit.

    The event is set by a thread of its own, woken through :func:`signal.set_wakeup_fd`
    (a self-pipe): a Python handler that set it could be re-entered by a second signal
    while it held the event's lock, and never return (a stop that hung 1 time in 35).
    The handlers themselves do nothing; the pipe byte is written by the C handler.
    """
    done = threading.Event()
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # set_wakeup_fd's demand: a full pipe drops bytes

    def relay() -> None:
        while os.read(read_fd, 64):  # b"": our write end closed, the context is over
            done.set()

    relay_thread = threading.Thread(target=relay, name="stop-signals", daemon=True)
    relay_thread.start()
    saved_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    saved = {sig: signal.signal(sig, _ignore_signal) for sig in STOP_SIGNALS}
    try:
        yield done
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(saved_fd)
        os.close(write_fd)
        relay_thread.join()
        os.close(read_fd)


def _ignore_signal(_signum: int, _frame: object) -> None:
    """The Python half of a stop signal: nothing (the wake-up fd carries it)."""


def _run_hub(args: Any) -> int:
    with _stop_on_signal() as stop:
        return _hub(args, stop)


def _hub(args: Any, stop: threading.Event) -> int:
    from device.base import DeviceError
    from device.factory import open_panel
    from firmware.hub.config import load_hub
    from firmware.hub.pairing import BrokerDoor
    from firmware.hub.service import Hub, HubRefused
    from firmware.link import notify
    from firmware.link.config import ConfigError
    from hardware.keys import load_keyset
    from hardware.pins import load_hub_pins

    log = logging.getLogger("coffre.hub")
    settings = load_hub(args.config)
    keys = _load_keyset(load_keyset, settings.keyset)
    _check_colours(keys, settings, args.config)
    if not settings.store.parent.is_dir():  # checked here: backup and doctor read hub.toml too
        raise ConfigError(
            f"{args.config}: [store] path {settings.store}: folder {settings.store.parent} "
            "does not exist (create it, owned by the hub's user)"
        )
    pins_file = args.pins or settings.panel_pins
    panel = None
    if settings.panel != "none":
        pin_map = load_hub_pins(pins_file) if pins_file else None  # a bad map: exit 78
        try:
            panel = open_panel(pin_map, settings.panel)
        except DeviceError as exc:
            # The referee matters more than its buttons: a panel that is missing or
            # miswired must not stop the table (nor make systemd restart the hub forever).
            log.error(
                "panel: %s; the hub runs without it (host commands still work). "
                'If no panel is wired, set [panel] backend = "none" in %s',
                exc,
                args.config,
            )
    try:
        hub = Hub(
            settings.broker,
            settings.tables,
            settings.store,
            keys=keys,
            panel=panel,
            take_over=[t for arg in args.take_over for t in arg.split(",") if t],
            door=BrokerDoor(settings.pairing_dir) if settings.pairing_dir else None,
        )
    except HubRefused as exc:  # another hub on the store, a table the key set cannot seat
        return _fail(" ".join(str(exc).split()), 2)
    log.info(
        "hub %s starting: tables %s, broker %s:%d, store %s",
        version(),
        ", ".join(t.name for t in settings.tables),
        settings.broker.host,
        settings.broker.port,
        settings.store,
    )
    # Every table refused (another hub runs it, the broker's ACL): nothing to run. Exit
    # EX_CONFIG: two hubs given one table is a configuration to fix, not worth a restart.
    hub.on_give_up = lambda _why: stop.set()
    hub.on_failed = lambda _why: stop.set()  # a refused fsync: exit, and systemd restarts
    hub.start()
    notify.ready()
    with notify.Watchdog(alive=hub.alive):
        stop.wait()
    notify.stopping()
    log.info("hub stopping")
    hub.stop()
    if hub.gave_up is not None:
        return _fail(hub.gave_up, EX_CONFIG)
    if hub.failed is not None:
        return _fail(hub.failed, EX_IOERR)
    return 0


def _load_keyset(load: Any, path: Any) -> Any:
    from firmware.link.config import ConfigError

    try:
        return load(path)
    except FileNotFoundError:
        raise ConfigError(f"keyset {path} does not exist") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"keyset {path}: {exc}") from None


def _check_colours(keys: Any, settings: Any, config: str) -> None:
    """Every table's seat colours must have keys (else no vote key could ever count)."""
    from firmware.link.config import ConfigError
    from hardware.keys import KeySetError

    source = settings.keyset or "the default key set"
    for n, table in enumerate(settings.tables, start=1):
        try:
            keys.check_colours(table.colours or (), f"{config}: [[table]] {n} colours")
        except KeySetError as exc:
            raise ConfigError(f"{exc} ({source})") from None


def _run_station(args: Any) -> int:
    with _stop_on_signal() as stop:
        return _station(args, stop)


def _station(args: Any, stop: threading.Event) -> int:
    from firmware.link import notify
    from firmware.station.boot import Boot, Started
    from firmware.station.service import Station

    log = logging.getLogger("coffre.station")
    # A config mistake, a missing file or a silent part: on the glass too (see boot.py).
    boot = Boot(args.config, args.pins, retry_seconds=args.retry, pair=args.retry is not None)
    outcome = boot.run(stop)
    if not isinstance(outcome, Started):
        if outcome != 0 and boot.problems:
            return _fail(boot.problems[-1].message, outcome)
        return outcome
    settings, devices = outcome.settings, outcome.devices
    station = Station(settings.broker, settings.table, settings.id, devices)
    log.info(
        "station %s/%s %s starting: broker %s:%d",
        settings.table,
        settings.id,
        version(),
        settings.broker.host,
        settings.broker.port,
    )
    station.start()
    notify.ready()
    with notify.Watchdog(alive=station.alive):
        stop.wait()
    notify.stopping()
    log.info("station stopping")
    station.stop()
    devices.close()
    return 0


def _run_display(args: Any) -> int:
    with _stop_on_signal() as stop:
        return _display(args, stop)


def _display(args: Any, stop: threading.Event) -> int:
    from firmware.display.config import load_display

    settings = load_display(args.config)
    from firmware.display.server import Display  # aiohttp: the "display" extra

    port = settings.port if args.port is None else args.port
    language = settings.language if args.language is None else args.language
    console = None
    if settings.console is not None:
        from firmware.display.console import Console
        from firmware.display.console_link import MqttHubLink

        console = Console(settings.tables, MqttHubLink(settings.console, settings.tables))
    display = Display(
        settings.broker,
        settings.tables,
        host=settings.host,
        port=port,
        language=language,
        console=console,
    )
    try:
        display.start()
    except RuntimeError as err:
        return _fail(f"display: {err}", 1)
    print(f"table display on {display.url} for {', '.join(settings.tables)}", flush=True)
    stop.wait()
    display.stop()
    return 0


def _venue_of(args: Any, out: Path) -> Venue:
    """The venue ``broker-config`` writes: ``--venue``'s file, or ``out``'s venue with the
    ``--table`` options' tables (played by the hub ``hub``)."""
    from firmware.hub import brokerconf as bc

    if args.venue is not None:
        if args.stations is not None:
            raise UsageError("broker-config: --stations goes with --table; a venue file lists them")
        return bc.read_venue(Path(args.venue))
    if args.stations is None:
        raise UsageError("broker-config: --table needs --stations")
    tables = [t.strip() for t in args.table.split(",") if t.strip()]
    stations = [s.strip() for s in args.stations.split(",") if s.strip()]
    start = bc.current_venue(out) or bc.Venue({}, {}, venue_host=True)
    try:
        return start.with_tables(bc.DEFAULT_HUB, tables, stations)
    except ValueError as exc:
        raise UsageError(f"broker-config: {exc}") from None


def _broker_config(args: Any) -> int:
    from firmware.hub import brokerconf as bc
    from firmware.hub.certs import broker_hostnames
    from firmware.link.tls import TLS_PORT

    out = Path(args.out)
    port = args.port or (TLS_PORT if args.tls else 1883)
    names = broker_hostnames(args.hostname) if args.tls else None
    try:
        venue = _venue_of(args, out)
        data = Path(args.data_dir) if args.data_dir else bc.BROKER_DATA
        report = bc.configure_broker(
            out, venue, port, bind=args.bind, tls_hostnames=names, data_dir=data
        )
    except PermissionError as exc:
        raise UsageError(f"broker-config: cannot write {exc.filename}: run it with sudo") from None
    creds = out / bc.CREDENTIALS
    if report.tls is not None and names is not None:
        what = (
            "kept the venue's CA (ca.key, root only)" if report.kept_ca else "made the venue's CA"
        )
        print(f"TLS on port {port}: {what}; broker certificate for {', '.join(names)}")
    for line in bc.changes(report):
        print(line)
    print(f"wrote {report.conf}, passwd, acl, {bc.VENUE_FILE} and {creds}/")
    if report.legacy_conf_d is not None:
        print(
            f"an older coffre's {report.legacy_conf_d} is still in the distribution's mosquitto "
            f"(coffre now runs its own, {bc.BROKER_UNIT}): sudo rm {report.legacy_conf_d} "
            "&& sudo systemctl restart mosquitto"
        )
    print(_apply_broker(report.apply, args.apply))
    print("next:")
    for hub, tables in venue.hubs.items():
        user = bc.hub_user(hub)
        print(
            f"  hub {hub} ({', '.join(tables)}): its hub.toml [broker] has "
            # A hub on another machine dials a name on the broker's certificate.
            + (f'host = "{names[0]}", ' if names else "")
            + (f"port = {port}, " if port not in (TLS_PORT, 1883) else "")
            + f'username = "{user}", password_file = "/etc/coffre/hub.password"'
            + (', ca_file = "/etc/coffre/ca.crt"' if report.tls else "")
        )
        print(
            f"    on it: sudo install -m 0600 -o coffre -g coffre {creds / user}.password "
            "/etc/coffre/hub.password"
        )
    print(
        f"  the table display: user {bc.SPECTATOR_USER} ({creds / bc.SPECTATOR_USER}.password); "
        f"a table's host: user {bc.host_user('<table>')} (coffre host --table <table> "
        f"--broker-dir {out})"
    )
    fresh = [u for u in report.new_users if "." in u]
    if report.tls is not None and not report.kept_ca:
        fresh = [u for u in venue.users() if "." in u]  # a new CA: every station needs it
    if not fresh:
        print("  no station needs new files")
        return 0
    print(
        "  stations pair by themselves (docs/pairing.md): start each one and press ok on "
        "the hub when it shows the station's code; a hub.toml needs [pairing] broker_dir = "
        f'"{out}". Or by hand:'
    )
    # The paths a provisioned station.toml names (deploy/provision-pi.sh station).
    print(
        f"  stations: copy {creds}/<table>.<id>.password to the station's "
        f"{STATION_STATE}/station.password"
        + (f" and {report.tls.ca} to {STATION_STATE}/ca.crt" if report.tls else "")
        + " (the paths its station.toml names), owned by coffre, 0600; for"
    )
    for table in venue.tables():
        ids = [s for s in venue.stations.get(table, []) if bc.station_user(table, s) in fresh]
        if ids:
            print(f"    table {table}: {', '.join(ids)}")
    return 0


def _backup(args: Any) -> int:
    import datetime
    import socket

    from firmware.hub import backup as bk

    try:
        if args.command == "restore":
            done = bk.restore_backup(
                Path(args.archive),
                store=Path(args.store) if args.store else None,
                broker_dir=Path(args.broker_dir) if args.broker_dir else None,
                etc_dir=Path(args.etc) if args.etc else None,
                config=Path(args.config) if args.config else None,
                force=args.force,
                owners=bk.Owners.of_this_machine() if os.geteuid() == 0 else None,
            )
            where = ", ".join(f"{part} {path}" for part, path in done.folders.items())
            print(f"restored {done.files} files: store {done.store}, {where}")
            if done.replaced is not None:
                print(f"the store that was there: {done.replaced}")
            for note in done.notes:
                print(f"note: {note}")
            print("next: sudo systemctl restart coffre-broker coffre-hub coffre-display")
            return 0
        store = Path(args.store) if args.store else bk.store_of(Path(args.config))
        day = datetime.date.today().isoformat()
        out = Path(args.out or f"coffre-backup-{socket.gethostname()}-{day}.tar.gz")
        manifest = bk.make_backup(
            out,
            store=store,
            broker_dir=Path(args.broker_dir),
            etc_dir=Path(args.etc),
            version=version(),
        )
    except bk.BackupError as exc:
        raise UsageError(f"{args.command}: {exc}") from None
    except PermissionError as exc:
        raise UsageError(f"{args.command}: cannot write {exc.filename}: run it with sudo") from None
    parts = ", ".join(f"{p} ({path})" for p, path in manifest.parts.items())
    print(f"wrote {out} (0600, {len(manifest.files)} files): {parts}")
    print("keep it off this SD card: it holds the CA's key and every password (docs/backup.md)")
    return 0


def _apply_broker(apply: str, run: bool) -> str:
    """What the running broker needs (and, with ``--apply``, what was done): one line."""
    import shutil
    import subprocess

    from firmware.hub.brokerconf import BROKER_UNIT

    if apply == "none":
        return f"broker: nothing changed for {BROKER_UNIT}"
    why = (
        "users and ACL changed; connected clients stay connected"
        if apply == "reload"
        else "its listener or certificate changed"
    )
    command = f"sudo systemctl {apply} {BROKER_UNIT}"
    if not run:
        return f"broker: {why}: {command} (or re-run with --apply)"
    systemctl = shutil.which("systemctl")
    if systemctl is None:
        return f"broker: no systemctl here; {why}: {apply} {BROKER_UNIT} yourself"
    active = subprocess.run([systemctl, "is-active", "--quiet", BROKER_UNIT], check=False)
    if active.returncode != 0:
        return f"broker: {BROKER_UNIT} is not running; start it: sudo systemctl start {BROKER_UNIT}"
    done = subprocess.run(
        [systemctl, apply, BROKER_UNIT], check=False, capture_output=True, text=True
    )
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return f"broker: {apply} {BROKER_UNIT} failed: {reason}"
    verb = "reloaded" if apply == "reload" else "restarted"
    return f"broker: {verb} {BROKER_UNIT} ({why})"


def _selftest(args: Any) -> int:
    from firmware.station.selftest import hardware_choice, run_parts

    return run_parts(hardware_choice(args), sys.stdout, interactive=not args.yes)


if __name__ == "__main__":
    sys.exit(main())
