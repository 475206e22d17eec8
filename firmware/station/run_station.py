"""``coffre station``: the station program, from its config file to its exit status.

The boot (``firmware/station/boot.py``) reads the config and opens the parts, showing a
mistake on the glass too; then the station runs until SIGTERM or SIGINT, speaking
systemd's notify protocol (ready, watchdog, stopping).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from firmware.link import notify
from firmware.link.process import fail, stop_on_signal, version
from firmware.station.boot import Boot, Started
from firmware.station.service import Station

log = logging.getLogger("coffre.station")


def main(args: Any) -> int:
    """Run the station of ``args.config`` until a stop signal; the process's exit status."""
    with stop_on_signal() as stop:
        return serve(args, stop)


def serve(args: Any, stop: threading.Event) -> int:
    """Boot the station, then run it until ``stop`` is set."""
    # A config mistake, a missing file or a silent part: on the glass too (see boot.py).
    boot = Boot(args.config, args.pins, retry_seconds=args.retry, pair=args.retry is not None)
    outcome = boot.run(stop)
    if not isinstance(outcome, Started):
        if outcome != 0 and boot.problems:
            return fail(boot.problems[-1].message, outcome)
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
