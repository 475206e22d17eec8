"""A crowd of idle event streams cannot take the table display from everyone (issue 22):
streams are capped per client address and in all, old ones end (the page reconnects), and
the refusals are one log line per 10 s."""

from __future__ import annotations

import http.client
import logging
import socket
import time

import pytest

from firmware.tools.simtable import TABLE
from tests.support.browser import start_display
from tests.support.tables import TableFactory


def open_stream(port: int, path: str = f"/table/{TABLE}/events") -> socket.socket:
    """An event stream left open and never read (what an idle or hostile client does)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    head = sock.recv(4096).decode("latin-1")
    assert head.startswith("HTTP/1.1 200"), head[:80]
    return sock


def status_of(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    status = conn.getresponse().status
    conn.close()
    return status


def test_idle_streams_are_capped_and_the_page_still_loads(
    make_table: TableFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """Past its share, one address's streams are refused (503) with one log line per 10 s,
    while the page itself still loads; a closed stream gives its slot back."""
    sim = make_table(3)
    display = start_display(sim, streams_per_address=4, streams_total=6)
    port = display.port
    held = [open_stream(port) for _ in range(4)]
    with caplog.at_level(logging.WARNING, logger="firmware.display.server"):
        refused = [status_of(port, f"/table/{TABLE}/events") for _ in range(30)]
    assert refused == [503] * 30
    lines = [r for r in caplog.records if "refused a stream" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert status_of(port, f"/table/{TABLE}") == 200  # the page is not a stream: it loads
    held.pop().close()
    deadline = time.monotonic() + 10
    while display.open_streams.get("127.0.0.1", 0) > 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    held.append(open_stream(port))
    for sock in held:
        sock.close()


def test_a_stream_ends_after_its_time_and_frees_its_slot(make_table: TableFactory) -> None:
    """A stream nobody closes ends by itself after ``stream_seconds`` (the browser's
    EventSource reconnects), so forgotten ones never pile up."""
    sim = make_table(3)
    display = start_display(sim, stream_seconds=1.0)
    sock = open_stream(display.port)
    sock.settimeout(10)
    start = time.monotonic()
    while sock.recv(4096):
        pass  # the server closes the stream: recv returns b""
    took = time.monotonic() - start
    sock.close()
    assert took < 8, took
    deadline = time.monotonic() + 5
    while display.open_streams and time.monotonic() < deadline:
        time.sleep(0.05)
    assert display.open_streams == {}
