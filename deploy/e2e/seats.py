"""The players of deploy/e2e/clean-table.sh: bots play a whole game at the provisioned table.

A chroot has no NFC reader, OLED or knob, so once every station has paired (and its
service has stopped: see clean-table.sh) the seats are taken by stations with mock
hardware, run here, each with **its own paired files**: the ``station.toml`` that
provisioning wrote, the password and the ``ca.crt`` that pairing stored (read from the
station's root). They dial the hub's broker over the table's network like the station
services did; the game's bots (``firmware/tools/bots``, as in ``coffre sim``) tap keys,
turn knobs and lift flaps on them. The host's panel is a host command
(``coffre host``'s user ``host-<table>``, its password read from the hub's broker folder).

    python -m deploy.e2e.seats ROOTS_DIR --table main --game secret-identity --seed 1

ROOTS_DIR holds ``hub/`` and one root per station (``p1/``...); ``--hub hub2`` and
``--root p3=p3b`` name others (a replaced hub or station). Prints the game and the
ranking; exits 0 once the game is over.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.hub.brokerconf import host_user
from firmware.hub.config import TableConfig
from firmware.link.lang import ranks
from firmware.link.mqtt import BrokerConfig
from firmware.station.service import Station
from firmware.tools.bots import bot_class
from firmware.tools.simtable import PublicWatcher, SimTable


def inside(root: Path, path: str) -> Path:
    """A path of a machine's file system, seen from here."""
    return root / path.lstrip("/")


def station_broker(root: Path) -> tuple[str, str, BrokerConfig]:
    """(table, id, broker) from a station's own station.toml and its paired files."""
    data = tomllib.loads(inside(root, "/etc/coffre/station.toml").read_text())
    broker, station = data["broker"], data["station"]
    password = inside(root, broker["password_file"]).read_text().strip()
    config = BrokerConfig(
        host=broker["host"],
        port=int(broker["port"]),
        username=broker["username"],
        password=password,
        tls_ca=str(inside(root, broker["ca_file"])),
    )
    return station["table"], station["id"], config


class ProvisionedTable(SimTable):
    """A :class:`SimTable` whose broker and hub are the provisioned hub's (not started here)."""

    def __init__(
        self, roots: dict[str, Path], table: str, names: list[str], host_broker: BrokerConfig
    ):
        super().__init__(players=len(names), workdir=roots[names[0]].parent)
        self.names = names
        self.table = table
        self.host_broker = host_broker
        self.configs = {n: station_broker(roots[n])[2] for n in names}

    @property
    def table_config(self) -> TableConfig:
        return TableConfig(self.table, self.names, language=self.language)

    def start(self) -> None:
        self._started = time.monotonic()
        self.watch = PublicWatcher(self.host_broker, self.table)
        self.watch.start()
        for name in self.names:
            self.start_station(name)
        for name in self.names:
            if not self.stations[name].wait_screen(30):
                raise TimeoutError(f"station {name} got no screen from the hub")
        self.watch.wait_seats_heard(self.names)

    def start_station(self, name: str, *, devices: StationDevices | None = None) -> Station:
        devices = devices or StationDevices(MockReader(), MockDisplay(), MockControls())
        self.devices[name] = devices
        station = Station(self.configs[name], self.table, name, devices, show_link=False)
        station.start()
        station.client.wait_connected(15)
        self.stations[name] = station
        return station

    def stop(self) -> None:
        for station in self.stations.values():
            station.stop()
        self.watch.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", type=Path)
    parser.add_argument("--table", default="main")
    parser.add_argument("--stations", default="p1,p2,p3")
    parser.add_argument("--game", default="secret-identity")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hub", default="hub", help="the hub's root under ROOTS_DIR")
    parser.add_argument(
        "--root", action="append", default=[], help="ID=DIR: station ID's root is DIR"
    )
    args = parser.parse_args(argv)
    names = args.stations.split(",")
    roots = {n: args.roots / n for n in names}
    for given in args.root:
        station, _, folder = given.partition("=")
        roots[station] = args.roots / folder
    hub = args.roots / args.hub
    hub_toml = tomllib.loads(inside(hub, "/etc/coffre/hub.toml").read_text())
    broker_dir = inside(hub, hub_toml["pairing"]["broker_dir"])
    user = host_user(args.table)
    host_broker = BrokerConfig(
        host=station_broker(roots[names[0]])[2].host,
        port=int(hub_toml["broker"]["port"]),
        username=user,
        password=(broker_dir / "credentials" / f"{user}.password").read_text().strip(),
        tls_ca=str(broker_dir / "ca.crt"),
    )
    table = ProvisionedTable(roots, args.table, names, host_broker)
    table.language = "en"
    table.start()
    try:
        print(f"seats {', '.join(names)}: mock hardware, paired credentials, hub heard them all")
        bot: Any = bot_class(args.game)(table, table.watch, random.Random(args.seed))
        bot.start_game(len(names))
        print(f"host started {args.game} for {len(names)} players")
        final = bot.play()
    finally:
        table.stop()
    over = bool((final.get("view") or {}).get("is_over"))
    print(f"game {'over' if over else 'NOT over'} after {final.get('version')} actions")
    places = ranks(final.get("ranking") or [])
    for group in final.get("ranking") or []:
        for seat in group:
            who = final["seats"][seat].get("colour", names[seat])
            print(f"  {places[seat]}. {names[seat]} ({who}): {final['scores'][seat]} points")
    return 0 if over else 1


if __name__ == "__main__":
    sys.exit(main())
