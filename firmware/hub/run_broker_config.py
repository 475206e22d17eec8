"""``coffre broker-config``: write the venue's broker files and say what comes next.

The files themselves are ``firmware/hub/brokerconf.py``'s (the venue, users, ACL, TLS);
this module turns the command line into a venue, prints what changed and what each hub
and station needs, and, with ``--apply``, reloads or restarts the running broker unit.
A command line that cannot be carried out raises :class:`UsageError` (exit 64).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from firmware.hub import brokerconf as bc
from firmware.hub.brokerconf import BROKER_UNIT
from firmware.hub.certs import broker_hostnames
from firmware.link.process import UsageError
from firmware.link.tls import TLS_PORT

#: Where a provisioned station keeps its password and ``ca.crt`` (its unit's state folder).
STATION_STATE = "/var/lib/coffre-station"


def main(args: Any) -> int:
    """Write the broker's files for ``args`` into ``args.out``; print what changed and
    what comes next."""
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


def _venue_of(args: Any, out: Path) -> bc.Venue:
    """The venue ``broker-config`` writes: ``--venue``'s file, or ``out``'s venue with the
    ``--table`` options' tables (played by the hub ``hub``)."""
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


def _apply_broker(apply: str, run: bool) -> str:
    """What the running broker needs (and, with ``--apply``, what was done): one line."""
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
