"""A small MQTT client over paho 2.x that hands every message to one queue.

The program owning the client processes messages in its own thread; paho's
network thread only enqueues. Subscriptions are made in ``on_connect`` so they
survive reconnects, and an optional hook runs on every (re)connection.

With ``manual_ack`` the broker is told a QoS 1 message arrived only when the program
calls the message's ``ack`` (paho's manual acks): the hub acks after its commit, so a
message it had not stored when it crashed is delivered again to its persistent session.

With ``BrokerConfig.tls_ca`` set the connection is TLS 1.2+, trusting only that CA
and checking the broker's host name (see :mod:`firmware.link.tls`).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import queue
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from firmware.link.protocol import QOS
from firmware.link.tls import client_context

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BrokerConfig:
    """Where the broker is and who we are to it."""

    host: str = "127.0.0.1"
    port: int = 1883
    username: str | None = None
    password: str | None = None
    keepalive: int = 10
    #: The table's CA certificate (a path): set, the link is TLS and the broker's
    #: certificate must come from that CA and name ``host``. None: plain MQTT.
    tls_ca: str | None = None


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    retain: bool = False
    #: Tells the broker the message is handled (a client with ``manual_ack``); else None.
    ack: Callable[[], Any] | None = field(default=None, compare=False, repr=False)

    def done(self) -> None:
        """Acknowledge the message to the broker, if that is left to us."""
        if self.ack is not None:
            self.ack()


@dataclass
class Will:
    topic: str
    payload: bytes
    retain: bool = True


@dataclass
class Client:
    """One connection; messages land in ``inbox``."""

    config: BrokerConfig
    client_id: str
    subscriptions: Iterable[str]
    will: Will | None = None
    clean_session: bool = True
    on_connected: Callable[[], None] | None = None
    inbox: queue.Queue[Message | None] = field(default_factory=queue.Queue)
    #: Ack QoS 1 messages only when ``Message.done()`` is called (after a commit).
    manual_ack: bool = False

    def __post_init__(self) -> None:
        self.subscriptions = list(self.subscriptions)
        self.connected = threading.Event()
        self._paho = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            clean_session=self.clean_session,
            protocol=paho.MQTTv311,
            manual_ack=self.manual_ack,
        )
        self._paho.max_queued_messages_set(10_000)
        self._paho.reconnect_delay_set(min_delay=1, max_delay=2)
        if self.config.tls_ca:
            self._paho.tls_set_context(client_context(self.config.tls_ca))
        if self.config.username:
            self._paho.username_pw_set(self.config.username, self.config.password)
        if self.will:
            self._paho.will_set(
                self.will.topic, self.will.payload, qos=QOS, retain=self.will.retain
            )
        self._paho.on_connect = self._on_connect
        self._paho.on_disconnect = self._on_disconnect
        self._paho.on_message = self._on_message
        self._paho.on_socket_open = _no_delay

    def start(self) -> None:
        """Connect (retrying in the background until the broker answers)."""
        if not self.config.tls_ca and not _loopback(self.config.host):
            log.warning(
                "%s: no ca_file: MQTT to %s is not encrypted (passwords and screens in clear)",
                self.client_id,
                self.config.host,
            )
        self._paho.connect_async(self.config.host, self.config.port, self.config.keepalive)
        self._paho.loop_start()

    def wait_connected(self, timeout: float = 10.0) -> bool:
        return self.connected.wait(timeout)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> paho.MQTTMessageInfo:
        """Queue a QoS 1 message (paho resends it after a reconnect)."""
        return self._paho.publish(topic, payload, qos=QOS, retain=retain)

    def stop(self, *, clean: bool = True) -> None:
        """Disconnect; ``clean=False`` drops the socket as a crash would (the LWT fires)."""
        if clean:
            self._paho.disconnect()
        else:
            sock = self._paho.socket()
            if sock is not None:
                sock.close()
        self._paho.loop_stop()
        self.inbox.put(None)

    def _on_connect(self, client: paho.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            log.warning("%s: connection refused: %s", self.client_id, reason)
            return
        for topic in self.subscriptions:
            client.subscribe(topic, qos=QOS)
        self.connected.set()
        if self.on_connected:
            self.on_connected()

    def _on_disconnect(self, _c: paho.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        self.connected.clear()
        log.info("%s: disconnected (%s)", self.client_id, reason)

    def _on_message(self, _c: paho.Client, _u: Any, msg: paho.MQTTMessage) -> None:
        ack = None
        if self.manual_ack and msg.qos > 0:
            ack = functools.partial(self._paho.ack, msg.mid, msg.qos)
        self.inbox.put(Message(msg.topic, bytes(msg.payload), bool(msg.retain), ack))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _no_delay(_client: paho.Client, _userdata: Any, sock: Any) -> None:
    """Send small messages at once: Nagle plus delayed ACKs would add ~40 ms a hop."""
    if isinstance(sock, socket.socket):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
