"""The console's link to the hub: the broker, as the table's host user.

The console is one more host beside the panel and ``coffre host``: it logs in as
``host-<table>`` (or the venue's ``host``), which the broker's ACL already lets write
``host/command`` and read ``host/ack`` and nothing more (docs/host-guide.md). So a phone's
request for the console and every command it sends are :class:`HostCommand` s with ids,
answered on ``host/ack``:

- ``console`` with the request's code: the hub shows ``Console? 4721`` and answers when
  the host has said yes (``Console granted``) or no, or the request expired;
- ``console-refuse``: the display dropped the request (two requests at once);
- ``start``, ``next``, ``undo``, ``abort``: as the panel's;
- ``console-report`` with the table's signed-in phones: the hub holds it and answers
  when the host ends one from the hub (``end a1b2c3d4``) or after a minute (nothing to
  end); the console then reports again, so the hub always has a report to answer.

Only the exact answer ``Console granted`` grants: a hub that does not know ``console``
answers something else, and the phone is told no.

The link also reads each table's retained ``host/screen`` (the host user may) for the one
thing the console shows of it: every waiting pairing request's code (its ``pairing``),
so the host compares it with the station's glass beside the seat. An older hub's screen
has none: the console then asks the host to type the code on the glass.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Sequence

import msgspec

from firmware.display.console_auth import REQUEST_SECONDS, Request
from firmware.link import protocol as proto
from firmware.link.lang import N_
from firmware.link.mqtt import BrokerConfig, Client, LinkState
from firmware.link.protocol import pairing_codes

log = logging.getLogger(__name__)

#: The hub's answer that grants a console request, word for word.
GRANTED = "Console granted"
#: Every answer a hub that knows ``console`` gives to one (firmware/hub/console.py).
ANSWERS = frozenset(
    {
        GRANTED,
        N_("Too soon: wait"),
        N_("Two requests at once"),
        N_("Too many requests"),
        N_("Refused by the host"),
        N_("Nobody answered"),
    }
)
#: How long a command waits for the hub's answer.
COMMAND_SECONDS = 10.0
#: The hub answers a report within a minute (firmware/hub/console_state.py's HOLD_SECONDS).
REPORT_SECONDS = 60.0


class MqttHubLink:
    """Host commands over the broker, their answers matched by id; the pairing codes the
    hub's host screen shows."""

    def __init__(self, broker: BrokerConfig, tables: Sequence[str]) -> None:
        self.topics = {t: proto.Topics(t) for t in tables}
        self.screens = {t.host_screen: name for name, t in self.topics.items()}
        self.waiting: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future[proto.Ack]]] = {}
        self._lock = threading.Lock()
        #: Per table: the codes of its waiting pairing requests, by seat (the host screen's).
        self._codes: dict[str, dict[str, str]] = {}
        self.client = Client(
            broker,
            f"display-console-{uuid.uuid4().hex[:12]}",
            [t for tt in self.topics.values() for t in (tt.host_ack, tt.host_screen)],
            on_state=self._state,
        )
        self._thread = threading.Thread(target=self._read, name="console-link", daemon=True)

    def codes(self, table: str) -> dict[str, str]:
        """The codes of the table's waiting pairing requests, by seat, as the hub's host
        screen last said (none while the link is down: the broker sends the screen again
        once it is back)."""
        with self._lock:
            return dict(self._codes.get(table, {}))

    def _state(self, state: LinkState) -> None:
        if not state.ok:
            with self._lock:
                self._codes.clear()

    def start(self) -> None:
        self.client.start()
        self._thread.start()

    def stop(self) -> None:
        self.client.stop()
        self._thread.join(2)

    def _read(self) -> None:
        while (msg := self.client.inbox.get()) is not None:
            table = self.screens.get(msg.topic)
            if table is not None:
                with self._lock:
                    self._codes[table] = pairing_codes(msg.payload)
                continue
            try:
                ack = msgspec.json.decode(msg.payload, type=proto.Ack)
            except msgspec.DecodeError:
                continue
            if ack.id is None:
                continue
            with self._lock:
                waiter = self.waiting.pop(ack.id, None)
            if waiter is not None:
                loop, future = waiter
                loop.call_soon_threadsafe(_settle, future, ack)

    async def _send(self, table: str, cmd: proto.HostCommand, timeout: float) -> proto.Ack | None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[proto.Ack] = loop.create_future()
        with self._lock:
            self.waiting[cmd.id] = (loop, future)
        try:
            # Connected is not enough: until the broker has taken the subscription to
            # host/ack (after every reconnection), the hub's answer would be lost and a
            # command the hub did apply would read "did not answer".
            if not (self.client.connected.is_set() and self.client.subscribed.is_set()):
                return None
            self.client.publish(self.topics[table].host_command, payload(cmd))
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return None
        finally:
            with self._lock:
                self.waiting.pop(cmd.id, None)

    async def command(self, table: str, cmd: proto.HostCommand) -> proto.Ack:
        """The hub's answer as it came (its message id and fields with it, for the console
        to say in its own language), or one that says the hub did not answer."""
        ack = await self._send(table, cmd, COMMAND_SECONDS)
        if ack is None:
            said = N_("The hub did not answer: look at the table before trying again")
            return proto.Ack(cmd.id, False, said)
        return ack

    async def ask(self, table: str, request: Request) -> tuple[bool, str]:
        cmd = proto.HostCommand(cmd="console", id=f"console-ask-{request.id}", code=request.code)
        ack = await self._send(table, cmd, REQUEST_SECONDS + COMMAND_SECONDS)
        if ack is None:
            return False, N_("The hub did not answer")
        if ack.message not in ANSWERS:
            # A hub that does not know ``console`` answers as for any command.
            return False, N_("This hub cannot grant a console: update it")
        return ack.ok and ack.message == GRANTED, ack.message

    async def report(self, table: str, cmd: proto.HostCommand) -> list[str] | None:
        """Send the table's phones and wait for the hub's answer: the sessions the host
        ended from the hub (often none), or None if the hub did not answer."""
        ack = await self._send(table, cmd, REPORT_SECONDS + COMMAND_SECONDS)
        if ack is None:
            return None
        if not ack.ok:
            # A hub that does not know reports refuses them: the hub cannot list phones.
            log.info("console: the hub of %s refused the phones' list: %s", table, ack.message)
            return None
        word, _, ids = ack.message.partition(" ")
        return ids.split() if word == "end" else []

    def withdraw(self, table: str, request: Request) -> None:
        cmd = proto.HostCommand(cmd="console-refuse", id=f"console-drop-{request.id}")
        if self.client.connected.is_set():
            self.client.publish(self.topics[table].host_command, payload(cmd))


def payload(cmd: proto.HostCommand) -> bytes:
    """A command as the console sends it: the fields it sets only (the hub reads the
    rest as their defaults), so a report of a table's sessions fits in one command."""
    fields = {k: v for k, v in msgspec.structs.asdict(cmd).items() if v is not None and v != {}}
    return proto.encode(fields)


def _settle(future: asyncio.Future[proto.Ack], ack: proto.Ack) -> None:
    if not future.done():
        future.set_result(ack)
