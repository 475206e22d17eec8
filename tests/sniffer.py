"""A TCP hop between one client and the broker that keeps every byte: a sniffer's view."""

from __future__ import annotations

import socket
import threading


class Sniffer:
    """Listen on a free loopback port, forward to ``target``, record both directions."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.server.getsockname()[1]
        self.seen = bytearray()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def wire(self) -> bytes:
        """Everything that crossed so far."""
        with self.lock:
            return bytes(self.seen)

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        try:
            client, _ = self.server.accept()
        except OSError:
            return
        upstream = socket.create_connection(("127.0.0.1", self.target))
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        while True:
            try:
                data = src.recv(4096)
                if not data:
                    return
                with self.lock:
                    self.seen += data
                dst.sendall(data)
            except OSError:
                return
