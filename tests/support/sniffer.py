"""TCP hops between MQTT clients and the broker, for tests that watch or hold the wire.

:class:`Hop` forwards every connection made to its loopback port to the broker; its
subclasses see the bytes on the way: :class:`Sniffer` keeps all of them (a sniffer's view),
:class:`PacketHop` cuts what a client sends into whole MQTT packets (plain MQTT only).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

Send = Callable[[bytes], None]


class Hop:
    """Listen on a free loopback port and forward each connection to ``target``."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.server.getsockname()[1]
        self.lock = threading.Lock()
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.server.close()

    def from_client(self, conn: int, data: bytes, send: Send) -> None:
        """Bytes connection ``conn`` sent to the broker: passed on as they came."""
        send(data)

    def from_broker(self, conn: int, data: bytes, send: Send) -> None:
        """Bytes the broker sent to connection ``conn``: passed on as they came."""
        send(data)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:  # the broker is down: the client sees its connection closed
                client.close()
                continue
            with self.lock:
                conn = self.connections
                self.connections += 1
            for src, dst, see in (
                (client, upstream, self.from_client),
                (upstream, client, self.from_broker),
            ):
                threading.Thread(target=_pipe, args=(src, dst, conn, see), daemon=True).start()


def _pipe(
    src: socket.socket, dst: socket.socket, conn: int, see: Callable[[int, bytes, Send], None]
) -> None:
    try:
        while data := src.recv(4096):
            see(conn, data, dst.sendall)
    except OSError:
        pass
    dst.close()


class Sniffer(Hop):
    """A hop that keeps every byte that crossed it, both ways."""

    def __init__(self, target: int) -> None:
        self.seen = bytearray()
        super().__init__(target)

    def wire(self) -> bytes:
        """Everything that crossed so far."""
        with self.lock:
            return bytes(self.seen)

    def from_client(self, conn: int, data: bytes, send: Send) -> None:
        self._keep(data)
        send(data)

    def from_broker(self, conn: int, data: bytes, send: Send) -> None:
        self._keep(data)
        send(data)

    def _keep(self, data: bytes) -> None:
        with self.lock:
            self.seen += data


class PacketHop(Hop):
    """A hop that passes on what clients send one whole MQTT packet at a time, through
    :meth:`packet`, and keeps them: ``(type, flags, body)`` per connection."""

    def __init__(self, target: int) -> None:
        self.pending: dict[int, bytearray] = {}
        self.sent: dict[int, list[tuple[int, int, bytes]]] = {}
        super().__init__(target)

    def packet(self, kind: int, raw: bytes, send: Send) -> None:
        """One whole packet of type ``kind`` from a client: passed on at once."""
        send(raw)

    def packets(self) -> list[tuple[int, int, bytes]]:
        """Every MQTT packet the clients sent so far, connection by connection."""
        with self.lock:
            return [p for conn in sorted(self.sent) for p in self.sent[conn]]

    def from_client(self, conn: int, data: bytes, send: Send) -> None:
        buffer = self.pending.setdefault(conn, bytearray())
        buffer += data
        for raw, body_at in _whole_packets(buffer):
            kind, flags = raw[0] >> 4, raw[0] & 0x0F
            with self.lock:
                self.sent.setdefault(conn, []).append((kind, flags, raw[body_at:]))
            self.packet(kind, raw, send)


def _whole_packets(buffer: bytearray) -> Iterator[tuple[bytes, int]]:
    """Take each whole packet off the front of ``buffer``: (its bytes, where its body
    starts); a packet not all here yet stays."""
    while True:
        length, shift, i = 0, 0, 1
        while True:
            if i >= len(buffer):
                return
            byte = buffer[i]
            length |= (byte & 0x7F) << shift
            shift += 7
            i += 1
            if not byte & 0x80:
                break
        end = i + length
        if end > len(buffer):
            return
        raw = bytes(buffer[:end])
        del buffer[:end]
        yield raw, i
