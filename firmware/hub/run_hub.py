"""``coffre hub``: the hub program, from its config file to its exit status.

It checks what it can before a table is touched (the key set, every table's seat
colours, the store's folder), opens the host's panel, builds the hub service and runs it
until SIGTERM or SIGINT, speaking systemd's notify protocol (ready, watchdog, stopping).
A user's mistake raises :class:`ConfigError` (the command line's one line, exit 78).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from device.base import DeviceError
from device.factory import open_panel
from firmware.hub.config import HubSettings, load_hub
from firmware.hub.pairing import BrokerDoor
from firmware.hub.service import Hub, HubRefused
from firmware.link import notify
from firmware.link.config import EX_CONFIG, ConfigError
from firmware.link.process import EX_IOERR, fail, stop_on_signal, version
from hardware.keys import KeySet, KeySetError, load_keyset
from hardware.pins import load_hub_pins

log = logging.getLogger("coffre.hub")


def main(args: Any, commit_delay: Callable[[], float] | None = None) -> int:
    """Run the hub of ``args.config`` until a stop signal; the process's exit status.
    ``commit_delay``: the store's hook (a benchmark's simulated disk)."""
    with stop_on_signal() as stop:
        return serve(args, stop, commit_delay)


def serve(args: Any, stop: threading.Event, commit_delay: Callable[[], float] | None = None) -> int:
    """Run the hub until ``stop`` is set (or every table gives up, or the disk fails)."""
    settings = load_hub(args.config)
    keys = _keyset(settings.keyset)
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
            backup_dir=settings.backup_dir,
            commit_delay=commit_delay,
        )
    except HubRefused as exc:  # another hub on the store, a table the key set cannot seat
        return fail(" ".join(str(exc).split()), 2)
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
        return fail(hub.gave_up, EX_CONFIG)
    if hub.failed is not None:
        return fail(hub.failed, EX_IOERR)
    return 0


def _keyset(path: Path | None) -> KeySet:
    """The key set hub.toml names (None: the default one); a missing or bad file: one line."""
    try:
        return load_keyset(path)
    except FileNotFoundError:
        raise ConfigError(f"keyset {path} does not exist") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"keyset {path}: {exc}") from None


def _check_colours(keys: KeySet, settings: HubSettings, config: str) -> None:
    """Every table's seat colours must have keys (else no vote key could ever count)."""
    source = settings.keyset or "the default key set"
    for n, table in enumerate(settings.tables, start=1):
        try:
            keys.check_colours(table.colours or (), f"{config}: [[table]] {n} colours")
        except KeySetError as exc:
            raise ConfigError(f"{exc} ({source})") from None
