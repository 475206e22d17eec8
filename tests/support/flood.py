"""A station's credentials publishing as fast as the socket takes it: raw MQTT 3.1.1 packets
built in bulk (paho would spend more time building each one than the broker spends on it),
over TLS when the broker has it, at QoS 0 or QoS 1."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

from firmware.link.mqtt import BrokerConfig
from firmware.link.tls import client_context

#: Packets written in one sendall.
CHUNK = 200


def _length(n: int) -> bytes:
    out = bytearray()
    while True:
        n, byte = n >> 7, n & 0x7F
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _string(text: str) -> bytes:
    raw = text.encode()
    return len(raw).to_bytes(2, "big") + raw


def _connect(config: BrokerConfig, client_id: str) -> socket.socket:
    sock = socket.create_connection((config.host, config.port))
    if config.tls_ca:
        sock = client_context(config.tls_ca).wrap_socket(sock, server_hostname=config.host)
    body = _string("MQTT") + bytes([4, 0xC2, 0, 60])
    body += _string(client_id) + _string(config.username or "") + _string(config.password or "")
    sock.sendall(b"\x10" + _length(len(body)) + body)
    connack = sock.recv(4)
    assert connack[:2] == b"\x20\x02" and connack[3:4] == b"\x00", f"refused: {connack!r}"
    return sock


def _drain(sock: socket.socket) -> None:
    """Read what the broker sent back (PUBACKs), without waiting for more."""
    sock.settimeout(0.0)
    try:
        while sock.recv(65536):
            pass
    except (BlockingIOError, ssl.SSLWantReadError):
        pass
    finally:
        sock.settimeout(None)


def flood(
    config: BrokerConfig,
    topic: str,
    seconds: float,
    stop: threading.Event,
    *,
    qos: int = 0,
    client_id: str = "flooder",
) -> int:
    """Publish inputs on ``topic`` (ids ``fl:<n>``) with ``config``'s credentials as fast as
    the socket takes them, for ``seconds`` or until ``stop``; returns how many."""
    sock = _connect(config, client_id)
    sent = 0
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end and not stop.is_set():
            chunk = bytearray()
            for _ in range(CHUNK):
                sent += 1
                payload = b'{"id":"fl:%d","kind":"press"}' % sent
                if qos:
                    packet = _string(topic) + (sent % 65535 + 1).to_bytes(2, "big") + payload
                    chunk += b"\x32" + _length(len(packet)) + packet
                else:
                    packet = _string(topic) + payload
                    chunk += b"\x30" + _length(len(packet)) + packet
            sock.sendall(chunk)
            if qos:
                _drain(sock)
    finally:
        sock.close()
    return sent


def flood_in_process(
    config: BrokerConfig, topic: str, seconds: float, *, qos: int = 0
) -> subprocess.Popen[str]:
    """:func:`flood` from a process of its own, as an attacker's machine would: in the
    hub's process it would take the interpreter lock from the hub's threads, which no
    real flood does. It writes a line when it starts sending, another with how many it
    sent."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.flood",
            json.dumps(
                {
                    "host": config.host,
                    "port": config.port,
                    "username": config.username,
                    "password": config.password,
                    "tls_ca": config.tls_ca,
                    "topic": topic,
                    "seconds": seconds,
                    "qos": qos,
                }
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def rss_mb() -> float:
    """This process's resident memory (MB), from /proc."""
    for row in Path("/proc/self/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) / 1024
    return 0.0


def _main() -> None:
    args = json.loads(sys.argv[1])
    config = BrokerConfig(
        args["host"], args["port"], args["username"], args["password"], tls_ca=args["tls_ca"]
    )
    print("flooding", flush=True)
    print(flood(config, args["topic"], args["seconds"], threading.Event(), qos=args["qos"]))


if __name__ == "__main__":
    _main()
