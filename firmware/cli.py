"""The ``coffre`` command line: sim, hub, station, display, host, play, bench,
broker-config, backup, restore, doctor, selftest, keys.

This module holds the arguments, the logging set-up and the exit statuses; each command
runs in its own subsystem's module (``firmware/hub/run_hub.py`` for ``coffre hub``,
``firmware/station/run_station.py``, ``firmware/display/run_display.py``,
``firmware/hub/run_broker_config.py``, ``firmware/hub/run_backup.py``, the tools' and
the station's ``main``), imported only when its command is asked for.

A mistake a user can make (a config typo, a missing file, an unknown backend) ends the
program with one line ``coffre: <what and where>`` on stderr, never a traceback: exit
status 78 (EX_CONFIG) for configuration, which the systemd units do not restart on.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from firmware.link.process import EX_CONFIG, EX_USAGE, UsageError, fail, version

BACKENDS = ("real", "mock", "emulated")
LOG_LEVELS = ("debug", "info", "warning", "error")
#: Optional libraries and the extra that brings each (a station installs none of them).
_EXTRAS = {
    "amqtt": "sim",
    "cryptography": "hub",
    "aiohttp": "display",
    "lgpio": "station",
    "spidev": "station",
}


class _GameChoices:
    """The games, for ``choices=``: the rules load only when a command asks for a game.

    ``coffre station`` parses the same command line, and a station never loads the rules.
    """

    def __contains__(self, game: object) -> bool:
        from rules import GAMES

        return game in GAMES

    def __iter__(self) -> Iterator[str]:
        from rules import GAMES

        return iter(GAMES)


GAME_CHOICES = _GameChoices()
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


def build_parser() -> argparse.ArgumentParser:
    """All subcommands and their options."""
    from firmware.link.lang import LANGUAGES
    from firmware.link.protocol import HOST_ACTIONS

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
        "--game", choices=GAME_CHOICES, metavar="GAME", help=GAME_HELP + " (default: the first)"
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
    play.add_argument("--game", required=True, choices=GAME_CHOICES, metavar="GAME", help=GAME_HELP)
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
        choices=(*HOST_ACTIONS, "status"),
        help="the command; status: the hub display and every seat's health; console-ok "
        "CODE: grant the phone whose console sign-in shows CODE; console-sessions: the "
        "phones signed in to the console; console-end ID (or all): sign one out at once; "
        "sound off|cues|narration: what the table hears (off also keeps the stations from "
        f"buzzing a turn); language {'|'.join(LANGUAGES)}: what the table speaks",
    )
    host.add_argument(
        "station",
        nargs="?",
        type=_table_name,
        help="pair, refuse: the station (refuse's default: the one shown); console-end: "
        "the phone's id as console-sessions lists it, or all; sound: the setting; language: "
        "the language",
    )
    host.add_argument(
        "code", nargs="?", help="pair: the four digits on the station's glass (pair p6 4721)"
    )
    host.add_argument("--game", choices=GAME_CHOICES, metavar="GAME", help="start: " + GAME_HELP)
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
    backup.add_argument(
        "--requested",
        default=None,
        metavar="REQUEST",
        help="the hub's request file (the console asked): a sealed backup beside it "
        "(coffre-backup.service runs this)",
    )
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
    restore.add_argument(
        "--key-file",
        default=None,
        help="a sealed backup's key, in a file (default: asked on the terminal)",
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
        return fail(str(exc), EX_CONFIG)
    except UsageError as exc:
        return fail(str(exc), EX_USAGE)
    except DeviceError as exc:
        return fail(f"hardware: {exc}", 1)
    except ModuleNotFoundError as exc:
        extra = _EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        return fail(
            f"{args.command} needs {exc.name}, which this install lacks: "
            f"pip install 'coffre[{extra}]'",
            1,
        )
    except KeyboardInterrupt:
        return 130


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
        from firmware.tools import scenario

        return scenario.main(args)
    if args.command == "sim":
        from firmware.tools import sim

        return sim.main(args)
    if args.command == "hub":
        from firmware.bench.sd_card import commit_delay_from_env
        from firmware.hub import run_hub

        return run_hub.main(args, commit_delay=commit_delay_from_env())
    if args.command == "station":
        from firmware.station import run_station

        return run_station.main(args)
    if args.command == "display":
        from firmware.display import run_display

        return run_display.main(args)
    if args.command == "bench":
        from firmware.bench import command

        return command.main(args)
    if args.command == "broker-config":
        from firmware.hub import run_broker_config

        return run_broker_config.main(args)
    if args.command == "keys":
        from firmware.station import keylearn

        return keylearn.main(args)
    if args.command == "selftest":
        from firmware.station import selftest

        return selftest.main(args)
    if args.command in ("backup", "restore"):
        from firmware.hub import run_backup

        return run_backup.main(args)
    if args.command == "doctor":
        from firmware.tools import doctor

        return doctor.main(args)
    return 1


if __name__ == "__main__":
    sys.exit(main())
