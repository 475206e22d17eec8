"""systemd's notify protocol (``sd_notify``): readiness, stopping and the watchdog.

A unit with ``Type=notify`` waits for ``READY=1`` before it counts the program as
started, and with ``WatchdogSec=`` restarts a program that stops sending ``WATCHDOG=1``.
Outside systemd (no ``NOTIFY_SOCKET``) every call does nothing. The protocol is one
datagram on a Unix socket, so no library is needed.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from types import TracebackType


def notify(message: str) -> bool:
    """Send one notification; False when not under systemd (or the socket is gone)."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):  # an abstract socket
        address = "\0" + address[1:]
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.connect(address)
        sock.sendall(message.encode())
        return True
    return False


def ready() -> bool:
    """The program is up: systemd may start what comes after it."""
    return notify("READY=1")


def stopping() -> bool:
    """The program is shutting down on purpose."""
    return notify("STOPPING=1")


def watchdog_interval() -> float | None:
    """Seconds between two watchdog pings (half of ``WatchdogSec``), or None if unset."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 2_000_000
    except ValueError:
        return None


class Watchdog:
    """Pings systemd's watchdog while ``alive()`` says the program still works.

    A wedged station thread stops the pings, and systemd restarts the service.
    """

    def __init__(self, alive: Callable[[], bool] = lambda: True) -> None:
        self.alive = alive
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Watchdog:
        interval = watchdog_interval()
        if interval is not None:
            self._thread = threading.Thread(
                target=self._run, args=(interval,), name="watchdog", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        _t: type[BaseException] | None,
        _e: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            if self.alive():
                notify("WATCHDOG=1")
