"""What every ``coffre`` program shares as a process: its version, the exit statuses and
the one line it fails with, and the stop signals that end a long-running one.

A mistake a user can make ends the program with one line ``coffre: <what and where>`` on
stderr, never a traceback. The statuses are sysexits.h's: the systemd units do not
restart on ``EX_CONFIG`` (a file to fix), and do on ``EX_IOERR`` (the disk refused).

The standard library only: every ``coffre`` command imports this module at start-up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

__all__ = [
    "EX_CONFIG",
    "EX_IOERR",
    "EX_USAGE",
    "STOP_SIGNALS",
    "UsageError",
    "fail",
    "stop_on_signal",
    "version",
]

EX_USAGE = 64
EX_IOERR = 74  # the disk refused the store: the units restart on it
#: A file to fix: systemd's RestartPreventExitStatus=78 stops the restart loop.
EX_CONFIG = 78
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class UsageError(Exception):
    """A command line that cannot be carried out; the message is the one line shown."""


def fail(message: str, status: int) -> int:
    """Say ``message`` as the program's one line on stderr; returns ``status``."""
    print(f"coffre: {message}", file=sys.stderr, flush=True)
    return status


def version() -> str:
    """The installed package's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("coffre")
    except PackageNotFoundError:  # a checkout run without installing
        return "unknown"


@contextlib.contextmanager
def stop_on_signal() -> Iterator[threading.Event]:
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
