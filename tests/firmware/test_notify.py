"""systemd notifications: readiness and the watchdog, over a real Unix datagram socket."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.link import notify


@pytest.fixture
def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET."""
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(3)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()


def test_ready_and_stopping_reach_systemd(systemd: socket.socket) -> None:
    """READY=1 and STOPPING=1 arrive as datagrams on NOTIFY_SOCKET."""
    assert notify.ready() and notify.stopping()
    assert systemd.recv(64) == b"READY=1"
    assert systemd.recv(64) == b"STOPPING=1"


def test_watchdog_pings_only_while_alive(
    systemd: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With WatchdogSec set, WATCHDOG=1 comes while alive() is true and stops when it is not."""
    monkeypatch.setenv("WATCHDOG_USEC", "100000")  # a ping every 50 ms
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    alive = [True]
    with notify.Watchdog(alive=lambda: alive[0]):
        assert systemd.recv(64) == b"WATCHDOG=1"
        alive[0] = False
        systemd.settimeout(0.3)
        with pytest.raises(TimeoutError):  # drain what was in flight, then silence
            while True:
                systemd.recv(64)


def test_nothing_happens_outside_systemd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without NOTIFY_SOCKET the calls do nothing and say so."""
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert not notify.ready()
    assert notify.watchdog_interval() is None
