"""A plain mosquitto (no TLS, anyone may connect) on a free loopback port, for tests that
read or hold back the packets themselves."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from firmware.tools.brokers import Mosquitto, free_port


@contextlib.contextmanager
def plain_mosquitto(folder: Path) -> Iterator[int]:
    """The broker's port, while it runs (its config in ``folder``)."""
    port = free_port()
    conf = folder / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
    mosq = Mosquitto(conf, port)
    mosq.start()
    try:
        yield port
    finally:
        mosq.stop()
