"""The ``coffre`` command line: sim, hub, station, display, play, bench, broker-config, selftest."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any


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


def build_parser() -> argparse.ArgumentParser:
    """All subcommands and their options."""
    parser = argparse.ArgumentParser(prog="coffre", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("sim", help="a simulated table plays a whole game")
    sim.add_argument(
        "--game", default="secret-identity", choices=GAME_IDS, metavar="GAME", help=GAME_HELP
    )
    sim.add_argument("--players", type=int, default=5)
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--out", default="sim-out", help="folder for the saved screens")
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
        type=int,
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
    display.add_argument("--port", type=int, default=None, help="HTTP port (overrides the file)")

    hub = sub.add_parser("hub", help="run the hub (the referee)")
    hub.add_argument("--config", required=True, help="hub TOML file (see firmware/hub/config.py)")

    station = sub.add_parser("station", help="run one station")
    station.add_argument("--config", required=True, help="station TOML file")

    play = sub.add_parser("play", help="apply a JSON scenario to a rules engine")
    play.add_argument("--game", required=True, choices=GAME_IDS, metavar="GAME", help=GAME_HELP)
    play.add_argument("--players", type=int, required=True)
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--option", "-o", action="append", metavar="KEY=VALUE")
    play.add_argument("scenario", nargs="?", help="file of JSON actions, one a line (- = stdin)")

    bench = sub.add_parser(
        "bench", help="tap-to-screen latency, or --tables N load, against an echo baseline"
    )
    bench.add_argument("--stations", type=int, default=8, help="tap mode: stations")
    bench.add_argument("--taps", type=int, default=200, help="tap mode: taps")
    bench.add_argument("--tables", type=int, default=0, help="load mode: tables of 8 stations")
    bench.add_argument("--duration", type=float, default=10.0, help="load mode: seconds")
    bench.add_argument("--rate", type=float, default=1.0, help="load mode: inputs/s a station")
    bench.add_argument(
        "--commit-delay", type=float, default=0.0, metavar="MS", help="simulated ms per commit"
    )
    bench.add_argument("--stall", type=float, default=0.0, metavar="MS", help="simulated stall")
    bench.add_argument("--stall-every", type=float, default=2.0, metavar="S")
    bench.add_argument("--no-echo", action="store_true", help="skip the echo baseline")

    conf = sub.add_parser("broker-config", help="write mosquitto.conf, passwords and ACL")
    conf.add_argument("--table", required=True)
    conf.add_argument("--stations", required=True, help="comma-separated station ids")
    conf.add_argument("--port", type=int, default=None, help="default 8883 (TLS), 1883 (plain)")
    conf.add_argument("--out", required=True, help="folder to write into")
    conf.add_argument("--bind", default="", help="listen address (default: all interfaces)")
    conf.add_argument(
        "--tls",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="TLS with a private CA (default); --no-tls: plain MQTT, passwords in clear",
    )
    conf.add_argument(
        "--hostname",
        action="append",
        help="a name or IP stations use for the hub, repeatable (default: this host's "
        "name and its .local name); localhost and 127.0.0.1 are always added",
    )

    keys = sub.add_parser("keys", help="register your own NFC tags")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    learn = keys_sub.add_parser("learn", help="tap every key on a station, write a key set")
    learn.add_argument("--out", default="keys.toml")
    learn.add_argument("--backend", default=None, help="real | mock | emulated")
    learn.add_argument("--colours", default=None, help="comma-separated (default: the 8)")
    learn.add_argument("--votes", type=int, default=8, help="vote keys per colour")
    learn.add_argument("--mysteries", type=int, default=8, help="mystery keys")

    selftest = sub.add_parser("selftest", help="check a station's hardware, step by step")
    selftest.add_argument("--backend", default=None, help="real | mock | emulated")
    selftest.add_argument("--yes", action="store_true", help="do not wait for the builder")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the process exit status."""
    args = build_parser().parse_args(argv)
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
        from firmware.tools import bench

        return bench.main(args)
    if args.command == "broker-config":
        return _broker_config(args)
    if args.command == "keys":
        from firmware.station import keylearn

        return keylearn.main(args)
    if args.command == "selftest":
        return _selftest(args)
    return 1


def _wait_for_signal() -> None:
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()


def _run_hub(args: Any) -> int:
    from device.factory import open_panel
    from firmware.hub.config import load_hub
    from firmware.hub.service import Hub
    from hardware.keys import load_keyset

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        settings = load_hub(args.config)
        panel = None if settings.panel == "none" else open_panel(backend=settings.panel)
        hub = Hub(
            settings.broker,
            settings.tables,
            settings.store,
            keys=load_keyset(settings.keyset),
            panel=panel,
        )
    except (ValueError, OSError) as exc:  # HubRefused, ConfigError, a missing file...
        # One line, not a traceback: systemd's journal shows it as the reason.
        text = str(exc) if str(exc).startswith("hub:") else f"hub: cannot start: {exc}"
        print(" ".join(text.split()), file=sys.stderr)
        return 2
    hub.start()
    _wait_for_signal()
    hub.stop()
    return 0


def _run_station(args: Any) -> int:
    from device.factory import open_station
    from firmware.station.config import load_station
    from firmware.station.service import Station
    from hardware.pins import load_station_pins

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = load_station(args.config)
    devices = open_station(load_station_pins(settings.pins), backend=settings.backend)
    station = Station(settings.broker, settings.table, settings.id, devices)
    station.start()
    _wait_for_signal()
    station.stop()
    devices.close()
    return 0


def _run_display(args: Any) -> int:
    from firmware.display.config import load_display
    from firmware.link.config import ConfigError

    try:
        settings = load_display(args.config)
        from firmware.display.server import Display
    except ConfigError as err:
        print(f"coffre display: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        hint = "pip install 'coffre[display]'"
        print(f"coffre display: {err.name} is missing: {hint}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    port = settings.port if args.port is None else args.port
    display = Display(settings.broker, settings.tables, host=settings.host, port=port)
    try:
        display.start()
    except RuntimeError as err:
        print(f"coffre display: {err}", file=sys.stderr)
        return 1
    print(f"table display on {display.url} for {', '.join(settings.tables)}", flush=True)
    _wait_for_signal()
    display.stop()
    return 0


def _broker_config(args: Any) -> int:
    from pathlib import Path

    from firmware.hub.brokerconf import TableAccess, give_key_to_mosquitto, write_broker_files
    from firmware.hub.certs import broker_hostnames
    from firmware.link.tls import CA_FILE, KEY_FILE, TLS_PORT

    stations = [s.strip() for s in args.stations.split(",") if s.strip()]
    access = TableAccess(args.table, stations)
    out = Path(args.out)
    port = args.port or (TLS_PORT if args.tls else 1883)
    names = broker_hostnames(args.hostname) if args.tls else None
    conf = write_broker_files(out, port, [access], bind=args.bind, tls_hostnames=names)
    if names is not None:
        owned = give_key_to_mosquitto(out / KEY_FILE)
        print(
            f"TLS on port {port}: wrote {out / CA_FILE} (copy it to every station), "
            f"broker.crt for {', '.join(names)} and broker.key (0600"
            + (", owner mosquitto)" if owned else "; mosquitto must be able to read it)")
        )
    secrets = out / "credentials"
    secrets.mkdir(exist_ok=True)
    for user, password in access.passwords.items():
        path = secrets / f"{user}.password"
        path.write_text(password + "\n")
        path.chmod(0o600)
    print(
        f"wrote {conf}, {out / 'passwd'}, {out / 'acl'} and one password file per user "
        f"in {secrets}/ (copy each to its station)"
    )
    return 0


def _selftest(args: Any) -> int:
    from device.factory import open_station
    from firmware.station.selftest import run_selftest

    devices = open_station(backend=args.backend)
    try:
        result: int = run_selftest(devices, sys.stdout, interactive=not args.yes)
        return result
    finally:
        devices.close()


if __name__ == "__main__":
    sys.exit(main())
