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

import contextlib
import functools
import ipaddress
import logging
import queue
import select
import socket
import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from firmware.link.protocol import QOS
from firmware.link.tls import client_context, unverified_context

log = logging.getLogger(__name__)


#: OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH and X509_V_ERR_IP_ADDRESS_MISMATCH: the CA is
#: right, the name or address dialled is not on the certificate.
_NAME_MISMATCH = (62, 64)
#: In a burst (see :meth:`Client.burst`), paho's thread is woken at each of the first
#: BURST_EAGER messages, as without a burst (the first answer goes out at once: its wake-up
#: hands paho's thread the interpreter lock), then once every BURST_WAKE.
BURST_EAGER = 2
BURST_WAKE = 32
#: At most this many bytes of packets go out in one write (one TLS record holds 16 KiB).
COALESCE_BYTES = 16_000
#: Packets paho's network thread reads at most before it writes what they made it send.
READ_BATCH = 64
_PUBLISH, _PUBACK, _DISCONNECT = 0x30, 0x40, 0xE0


def _wake(pair: socket.socket) -> None:
    """Wake paho's network thread (what paho does at each publish)."""
    # Full: a wake-up is pending already; closed: the client stopped (nothing to wake).
    with contextlib.suppress(OSError):
        pair.send(b"\0")


def _coalesce(out: Any) -> None:
    """Join the packets waiting at the head of paho's ``out`` queue into one, to go out in
    one write (see :meth:`Client._coalesced`). On paho's network thread, the only one
    that takes from the queue; others only append to it."""
    parts: list[bytes] = []
    size = 0
    taken: list[Any] = []
    while out and size < COALESCE_BYTES:
        packet = out[0]
        kind = packet["command"] & 0xF0
        # Those two do something once written (a QoS 0 publish is done, a DISCONNECT
        # closes): they go alone.
        if kind == _DISCONNECT or (kind == _PUBLISH and packet["qos"] == 0):
            break
        out.popleft()
        taken.append(packet)
        chunk = bytes(packet["packet"][packet["pos"] :])
        parts.append(chunk)
        size += len(chunk)
    if len(taken) == 1:
        out.appendleft(taken[0])
    elif taken:
        joined = b"".join(parts)
        out.appendleft(
            {
                "command": _PUBACK,
                "mid": 0,
                "qos": 1,
                "pos": 0,
                "to_process": len(joined),
                "packet": joined,
                "info": None,
            }
        )


def _readable(sock: Any) -> bool:
    """Whether ``sock`` has more to read now (decrypted already, or on the wire)."""
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


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
    #: Pairing only (no CA yet): TLS that checks nothing; the pairing code vouches for the
    #: hub instead (see :mod:`firmware.link.pairing`).
    tls_unverified: bool = False
    #: Where ``password`` was read (None: given as is): named in the fixes the log gives.
    password_file: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class LinkState:
    """What the connection to the broker is doing, for a screen and for the log.

    ``state``: connecting, connected, not-found, refused, wrong-ca, wrong-name,
    wrong-password, tls, disconnected or stopped. ``text`` fits one line of a 128x64 screen;
    ``detail`` says more in the log.
    """

    state: str
    text: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.state == "connected"

    @property
    def calm(self) -> bool:
        """Not trouble: idle, connecting, connected or stopped."""
        return self.state in ("idle", "connecting", "connected", "stopped")


def classify_failure(
    exc: BaseException | None, host: str, port: int, config: BrokerConfig | None = None
) -> LinkState:
    """Why a connection attempt to ``host:port`` failed, in words a host can act on: the
    fixes ``coffre doctor`` gives, with ``config``'s files named, for the journal."""
    where = f"{host}:{port}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        message = str(exc.verify_message).lower()
        if exc.verify_code in _NAME_MISMATCH or "hostname" in message or "ip address" in message:
            return LinkState(
                "wrong-name",
                # An address is the usual case (a station told the hub's IP): 21 characters.
                "IP not on certificate" if _is_ip(host) else "Certificate: wrong name",
                f"the broker's certificate (from the right CA) does not name {host}: dial a "
                f"name on it, or add {host} on the hub (broker-config --hostname {host}) "
                "and restart coffre-broker; ca.crt stays the same",
            )
        # A station's files from another table: it drops them and pairs again
        # (docs/pairing.md); on the hub, coffre doctor names the CA file to use.
        ca = config.tls_ca if config and config.tls_ca else "<its ca_file>"
        password = config.password_file if config and config.password_file else None
        return LinkState(
            "wrong-ca",
            "Certificate: wrong CA",
            f"the broker at {where} has a certificate from another table's CA than {ca} "
            f"({exc.verify_message}): on a station, pair again: sudo rm "
            f"{password or '<its password_file>'} {ca} && sudo systemctl restart "
            "coffre-station (docs/pairing.md); on the hub, sudo coffre doctor",
        )
    if isinstance(exc, ssl.SSLError):
        return LinkState("tls", "TLS failed", f"TLS with {where} failed: {exc}")
    if isinstance(exc, socket.gaierror):
        return LinkState("not-found", "Broker not found", f"cannot resolve {host}: {exc.strerror}")
    if isinstance(exc, ConnectionRefusedError):
        # coffre's broker is its own unit: the distribution's mosquitto is not it.
        return LinkState(
            "refused",
            "Broker not running",
            f"nothing listens on {where}: on the hub, sudo systemctl start coffre-broker",
        )
    if isinstance(exc, TimeoutError | OSError):
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return LinkState("not-found", "Broker not found", f"cannot reach {where}: {reason}")
    return LinkState("not-found", "Broker not found", f"cannot reach {where}")


def classify_refusal(reason: Any) -> LinkState:
    """A CONNACK refusal from the broker (it answered, then said no)."""
    text = str(reason)
    if "password" in text.lower() or "authori" in text.lower():
        return LinkState(
            "wrong-password",
            "Wrong password",
            f"the broker refused the user name or password ({text})",
        )
    return LinkState("refused", "Broker refused us", f"the broker refused the connection ({text})")


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
    #: Called (from paho's thread) on every change of :class:`LinkState`.
    on_state: Callable[[LinkState], None] | None = None
    #: Ack QoS 1 messages only when ``Message.done()`` is called (after a commit).
    manual_ack: bool = False
    #: Called (from paho's thread) with each SUBACK: its SUBSCRIBE's message id, and the
    #: topics the broker refused (0x80: not authorised), if any.
    on_subscribed: Callable[[int, list[str]], None] | None = None
    #: The QoS the subscriptions ask for.
    qos: int = QOS
    #: QoS 1 messages this client sends before waiting for the broker's PUBACKs (paho's
    #: default is 20: a hub sending every table's screens on one connection needs more);
    #: 0: no limit.
    inflight: int = 20
    #: Log every state at DEBUG only: the owner says what matters, through ``on_state``
    #: (a hub's will connections, one a table, would fill the journal at every start and
    #: at every broker outage; see firmware.hub.links).
    quiet: bool = False
    #: What the logs call this connection; its client id when empty. A hub's client id
    #: holds a secret token (it keeps other users from taking the id over), which the
    #: journal, readable by more people than the store, must not show.
    label: str = ""
    #: Called (from paho's thread) with each message's topic and payload before it is
    #: queued: False drops it there (acked to the broker at once under ``manual_ack``). A
    #: flood of messages the owner would only discard then never reaches its mailbox, so
    #: it cannot queue the owner's own work behind it.
    admit: Callable[[str, bytes], bool] | None = None

    def __post_init__(self) -> None:
        self.subscriptions = list(self.subscriptions)
        self.connected = threading.Event()
        #: Set once the broker has answered the subscriptions asked at (re)connection: from
        #: then on, whatever is published to them reaches this client.
        self.subscribed = threading.Event()
        self._connect_mid = -1
        #: paho's wake-up socket while a burst holds it back, and how many were queued.
        self._burst: socket.socket | None = None
        self._queued = 0
        self.state = LinkState("idle", "")
        self._paho = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            clean_session=self.clean_session,
            protocol=paho.MQTTv311,
            manual_ack=self.manual_ack,
        )
        self._paho.max_queued_messages_set(10_000)
        self._paho.max_inflight_messages_set(self.inflight)
        self._paho.reconnect_delay_set(min_delay=1, max_delay=2)
        if self.config.tls_ca:
            self._paho.tls_set_context(client_context(self.config.tls_ca))
        elif self.config.tls_unverified:
            self._paho.tls_set_context(unverified_context())
        if self.config.username:
            self._paho.username_pw_set(self.config.username, self.config.password)
        if self.will:
            self._paho.will_set(
                self.will.topic, self.will.payload, qos=QOS, retain=self.will.retain
            )
        self._paho.on_connect = self._on_connect
        self._paho.on_disconnect = self._on_disconnect
        self._paho.on_connect_fail = self._on_connect_fail
        self._paho.on_message = self._on_message
        self._paho.on_subscribe = self._on_subscribe
        self._asked: dict[int, list[str]] = {}
        self._ask_lock = threading.Lock()
        self._paho.on_socket_open = _no_delay
        self._coalesced()

    def _coalesced(self) -> None:
        """Make paho write the packets it has waiting in one go, not each on its own, and
        read up to READ_BATCH packets before it writes what they made it send.

        paho writes each packet with a send of its own (over TLS, a record each) and reads
        one packet between two writes. mosquitto takes a client's packets a record at a
        time, once each time round its loop, and while another client floods it each time
        round takes long: the hub's PUBACKs for a flood's backlog went out one a record,
        and every answer waited behind hundreds of them. Joined, they go in a record or a
        few. Left as paho has it if its internals are not what this expects (another paho
        version).
        """
        client = self._paho
        write = getattr(client, "_packet_write", None)
        if write is None or not isinstance(getattr(client, "_out_packet", None), deque):
            return

        def packet_write() -> Any:
            _coalesce(client._out_packet)
            return write()

        client._packet_write = packet_write  # type: ignore[method-assign]
        read = client.loop_read

        def loop_read(max_packets: int = 1) -> Any:
            rc = read(max_packets)
            for _ in range(READ_BATCH - 1):
                sock = client._sock
                if rc != paho.MQTT_ERR_SUCCESS or sock is None or not _readable(sock):
                    break
                rc = read(max_packets)
            return rc

        client.loop_read = loop_read  # type: ignore[method-assign]

    @property
    def name(self) -> str:
        """What the logs call this connection (``label``, else the client id)."""
        return self.label or self.client_id

    def start(self) -> None:
        """Connect (retrying in the background until the broker answers)."""
        if not (self.config.tls_ca or self.config.tls_unverified) and not is_loopback(
            self.config.host
        ):
            log.warning(
                "%s: no ca_file: MQTT to %s is not encrypted (passwords and screens in clear)",
                self.name,
                self.config.host,
            )
        self._report(
            LinkState(
                "connecting",
                f"Connecting to {self.config.host}",
                f"connecting to {self.config.host}:{self.config.port}",
            )
        )
        self._paho.connect_async(self.config.host, self.config.port, self.config.keepalive)
        self._paho.loop_start()

    def wait_connected(self, timeout: float = 10.0) -> bool:
        """Wait until connected *and* subscribed (a CONNACK alone is not enough: a message
        published before the SUBACK would not reach this client)."""
        deadline = time.monotonic() + timeout
        if not self.connected.wait(timeout):
            return False
        return self.subscribed.wait(max(0.0, deadline - time.monotonic()))

    def publish(
        self, topic: str, payload: bytes, *, retain: bool = False, qos: int = QOS
    ) -> paho.MQTTMessageInfo:
        """Queue a message: at QoS 1 paho resends it after a reconnect; QoS 0 is dropped
        when not connected."""
        info = self._paho.publish(topic, payload, qos=qos, retain=retain)
        if self._burst is not None:
            self._queued += 1
            if self._queued <= BURST_EAGER or self._queued % BURST_WAKE == 0:
                _wake(self._burst)
        return info

    @contextlib.contextmanager
    def burst(self) -> Iterator[None]:
        """Publish (and ack) everything inside, waking paho's network thread at the first
        BURST_EAGER messages, then once every BURST_WAKE and at the end, not at each.

        paho wakes its thread at every publish and ack (a byte on a socket pair: a system
        call, and the woken thread takes the interpreter lock from the sender between two
        messages); a hub at 100 tables did so 2,700 times a second. Inside, the messages
        queue, in order. On the network thread itself, or with a paho that has no such
        pair, it is a plain block, and so is a burst inside a burst.
        """
        pair = getattr(self._paho, "_sockpairW", None)
        if pair is None or threading.current_thread() is getattr(self._paho, "_thread", None):
            yield
            return
        self._paho._sockpairW = None  # paho's own check: no pair, no wake-up
        self._burst, self._queued = pair, 0
        try:
            yield
        finally:
            self._burst = None
            self._paho._sockpairW = pair
            _wake(pair)

    def subscribe(self, topics: list[str]) -> int:
        """Subscribe to ``topics`` in one SUBSCRIBE; its message id (see ``on_subscribed``)."""
        # Under the lock: the SUBACK, on paho's thread, must find what it answers.
        with self._ask_lock:
            _rc, mid = self._paho.subscribe([(t, self.qos) for t in topics])
            if mid is None:  # not connected: asked again on (re)connection
                return -1
            self._asked[mid] = list(topics)
        return mid

    def unsubscribe(self, topics: list[str]) -> None:
        """Stop hearing ``topics`` (a persistent session then queues nothing more for them)."""
        if topics:
            self._paho.unsubscribe(topics)

    def stop(self, *, clean: bool = True, last: bool = True) -> None:
        """Disconnect; ``clean=False`` drops the socket as a crash would (the LWT fires).

        A clean stop sends DISCONNECT, so the broker drops the will. ``last=False``: the
        inbox is shared and others still feed it (no end-of-messages marker).
        """
        self._report(LinkState("stopped", "Stopped", "stopped"))
        if clean:
            self._paho.disconnect()
        else:
            sock = self._paho.socket()
            if sock is not None:
                sock.close()
        own = threading.current_thread() is getattr(self._paho, "_thread", None)
        self._paho.loop_stop()
        if not own:  # its network thread has ended: nothing uses its sockets any more
            self._release_sockets()
        if last:
            self.inbox.put(None)

    def _release_sockets(self) -> None:
        """Close paho's sockets now: its connection and the pair it wakes its network
        thread with (two loopback TCP sockets, made at every ``loop_start``). paho closes
        the pair only when the client is garbage-collected, and a client is a reference
        cycle (its callbacks are our bound methods): a hub that replaces its will
        connections at every broker restart kept two sockets per table per restart until
        a full collection happened to run."""
        reset = getattr(self._paho, "_reset_sockets", None)
        if reset is not None:
            reset()

    def leave(self) -> None:
        """Unsubscribe (so a persistent session queues nothing more) and stop cleanly, with
        no will; the shared inbox goes on."""
        if self.connected.is_set():
            self.unsubscribe(list(self.subscriptions))
        self.stop(last=False)

    def _on_connect(self, client: paho.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            self._report(classify_refusal(reason))
            return
        self.subscribed.clear()
        if self.subscriptions:
            self._connect_mid = self.subscribe(list(self.subscriptions))
        else:
            self.subscribed.set()
        self.connected.set()
        where = f"{self.config.host}:{self.config.port}"
        self._report(LinkState("connected", "Connected", f"connected to {where}"))
        if self.on_connected:
            self.on_connected()

    def _on_disconnect(self, _c: paho.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        was = self.connected.is_set()
        self.connected.clear()
        if was and self.state.state != "stopped":  # our own stop() is not news
            self._report(LinkState("disconnected", "Broker lost", f"disconnected ({reason})"))

    def _on_connect_fail(self, _c: paho.Client, _u: Any) -> None:
        # paho calls this inside its ``except OSError:``: the exception is still at hand.
        config = self.config
        self._report(classify_failure(sys.exc_info()[1], config.host, config.port, config))

    def _report(self, state: LinkState) -> None:
        """Log and pass on a change of state (the same failure every retry: once)."""
        if state == self.state:
            return
        self.state = state
        level = logging.WARNING
        if self.quiet:
            level = logging.DEBUG
        elif state.calm:
            level = logging.INFO
        log.log(level, "%s: %s", self.name, state.detail or state.text)
        if self.on_state is not None:
            self.on_state(state)

    def _on_subscribe(self, _c: paho.Client, _u: Any, mid: int, codes: Any, _p: Any) -> None:
        with self._ask_lock:
            topics = self._asked.pop(mid, [])
        refused = [t for t, code in zip(topics, codes, strict=False) if code.is_failure]
        if mid == self._connect_mid:
            self.subscribed.set()
        if self.on_subscribed is not None:
            self.on_subscribed(mid, refused)

    def _on_message(self, _c: paho.Client, _u: Any, msg: paho.MQTTMessage) -> None:
        if self.admit is not None and not self.admit(msg.topic, bytes(msg.payload)):
            if self.manual_ack and msg.qos > 0:
                self._paho.ack(msg.mid, msg.qos)
            return
        ack = None
        if self.manual_ack and msg.qos > 0:
            ack = functools.partial(self._paho.ack, msg.mid, msg.qos)
        self.inbox.put(Message(msg.topic, bytes(msg.payload), bool(msg.retain), ack))


def is_loopback(host: str) -> bool:
    """``host`` names this machine (localhost or a loopback address)."""
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
