"""The station: a thin terminal at one seat.

Raw inputs go up (tag UIDs, knob steps, presses); ready-to-draw screens come
down. The secret part of a screen is drawn only while the flap is open or the
peek button is held, decided here with no round trip. Every read gets a blink
and a tick at once, before the hub answers.

One thread owns all state: device callbacks and MQTT messages only enqueue.
Inputs stay pending until the hub acks them; they are sent again (same id)
when the hub comes back, so a hub restart loses nothing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from device.base import StationDevices, TagPresent
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, LinkState, Message, Will
from firmware.link.render import render, render_lines

log = logging.getLogger(__name__)

FW_VERSION = "0.1.0"
POLL_INTERVAL = 0.02
RESEND_AFTER = 3.0
TOAST_SECONDS = 2.5
READ_BLINK = (0.0, 0.0, 1.0)
ERROR_LED = (1.0, 0.0, 0.0)
#: The station thread wakes at least this often; the watchdog wants a beat this fresh.
ALIVE_WITHIN = 30.0
#: Answers to no pending input are logged at most once in this many seconds.
UNASKED_LOG_EVERY = 10.0

#: What to do about each connection problem, on the screen's second line (21 characters
#: at most): the short form of coffre doctor's fix, which the journal's line spells out.
_LINK_HINTS = {
    "connecting": "",
    "not-found": "Check hub and Wi-Fi",
    "refused": "Start coffre-broker",
    "wrong-ca": "Pair it again",
    "wrong-name": "Add it: --hostname",
    "wrong-password": "Pair it again",
    "tls": "Check host and port",
    "disconnected": "Reconnecting",
}


# What the station's controls queue for the station thread, beside the broker's
# messages, the link's states (LinkState) and the reader's taps.


@dataclass(frozen=True)
class KnobTurned:
    """The knob turned ``step`` detents (negative: back)."""

    step: int


@dataclass(frozen=True)
class KnobPressed:
    """The knob was pressed."""


@dataclass(frozen=True)
class Redraw:
    """The flap moved or the peek button changed: the glass shows or hides the secret."""


@dataclass(frozen=True)
class Tick:
    """Nothing came for a while: time to let toasts and the LED expire."""


class Station:
    """One seat's program; ``start()`` runs it in background threads."""

    def __init__(
        self,
        broker: BrokerConfig,
        table: str,
        station_id: str,
        devices: StationDevices,
        *,
        poll_interval: float = POLL_INTERVAL,
        boot: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        show_link: bool = True,
    ) -> None:
        """``show_link``: draw what the connection is doing until the hub sends a screen
        (and a banner over it while the broker or the hub is away)."""
        self.topics = proto.Topics(table)
        self.id = proto.check_name(station_id, "station")
        self.devices = devices
        self.poll_interval = poll_interval
        self.boot = boot or os.urandom(8).hex()
        self.clock = clock
        self.seq = 0
        self.pending: dict[str, tuple[bytes, float]] = {}
        self.screen: proto.Screen | None = None
        self.toast: tuple[str, float] | None = None
        #: The game step (``Screen.phase``) a toast was shown under: it ends with that step.
        self.toast_phase = ""
        self.led_until = 0.0
        self.last_ack: proto.Ack | None = None
        self.acks = 0
        self.sent = 0
        self.hub_ready = False
        #: The hub's last announced state (None: never heard from it).
        self.hub_state: str | None = None
        self.link = LinkState("idle", "")
        self.show_link = show_link
        #: What the last screen drawn was made of (see ``_draw``).
        self._drawn: tuple[Any, ...] | None = None
        self.beat = time.monotonic()
        self.read_at = 0.0  # perf_counter of the last tag read (for the latency bench)
        self.settled = threading.Condition()
        #: Answers dropped because no pending input of this station asked for them.
        self.unasked = 0
        self._unasked_lock = threading.Lock()
        self._unasked_logged = -UNASKED_LOG_EVERY
        self._unasked_held = 0
        self._ack_topic = self.topics.station(station_id, "ack")
        self.client = Client(
            broker,
            # The boot id makes the client id unguessable: no other user can take it over.
            f"coffre-{table}-{station_id}-{self.boot}",
            [
                self.topics.station(station_id, "screen"),
                self.topics.station(station_id, "ack"),
                self.topics.hub_status,
            ],
            will=Will(self.topics.station(station_id, "status"), self._status("lost")),
            on_connected=lambda: self.client.inbox.put(Message("!connected", b"")),
            on_state=lambda state: self.queue.put(state),  # a LinkState
            admit=self._admit,
        )
        self.queue: queue.Queue[Any] = self.client.inbox
        controls = devices.controls
        controls.on_turn = lambda step: self.queue.put(KnobTurned(int(step)))
        controls.on_press = lambda: self.queue.put(KnobPressed())
        controls.on_flap = lambda opened: self.queue.put(Redraw())
        controls.on_peek = lambda held: self.queue.put(Redraw())
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # --- life cycle ----------------------------------------------------------------

    def start(self) -> None:
        self.client.start()
        for target, name in ((self.run, "station"), (self._reader_loop, "reader")):
            thread = threading.Thread(target=target, name=f"{name}-{self.id}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, *, crash: bool = False) -> None:
        """Stop; ``crash=True`` drops the connection without goodbye (the LWT fires)."""
        self._stop.set()
        if not crash and self.client.connected.is_set():
            # Not connected (broker down at shutdown): there is nobody to say goodbye to.
            info = self.client.publish(
                self.topics.station(self.id, "status"), self._status("offline"), retain=True
            )
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(2)
        self.client.stop(clean=not crash)
        for thread in self._threads:
            thread.join(2)

    def _reader_loop(self) -> None:
        """Poll the reader at a fixed rate: a poll starts every ``poll_interval``, not that
        long after the last one ended (an empty poll waits ~1.8 ms for the chip, so a tag
        laid at a random moment waited ~1 ms more on average). A poll that runs past the
        next start (a card read takes ~8 ms) is followed at once, never by a catch-up run."""
        reader = self.devices.reader
        due = time.monotonic()
        while True:
            due += self.poll_interval
            now = time.monotonic()
            if due < now:
                due = now
            if self._stop.wait(due - now):
                return
            try:
                event = reader.poll()
            except Exception:  # the backend already tried to recover
                log.exception("%s: reader failed", self.id)
                continue
            if event is not None:
                self.queue.put(event)

    def run(self) -> None:
        """The station thread: handle one queued item at a time."""
        while True:
            self.beat = time.monotonic()
            try:
                item = self.queue.get(timeout=self._wait())
            except queue.Empty:
                item = Tick()
            if item is None:
                return
            try:
                self._handle(item)
            except Exception:
                log.exception("%s: failed on %r", self.id, item)

    def _wait(self) -> float:
        now = self.clock()
        dues = [sent + RESEND_AFTER for _, sent in self.pending.values()]
        if self.toast:
            dues.append(self.toast[1])
        if self.led_until:
            dues.append(self.led_until)
        return max(0.01, min(dues) - now) if dues else 1.0

    # --- handling ------------------------------------------------------------------

    def _handle(self, item: Any) -> None:
        if isinstance(item, Message):
            self._message(item)
        elif isinstance(item, proto.Ack):  # decoded and let in by _admit
            self._ack(item)
        elif isinstance(item, TagPresent):
            self.read_at = time.perf_counter()
            # The tap goes out first: the blink and the tick cost a Zero as much as the
            # publish (gpiozero's PWM and buzzer), and the player cannot tell 1 ms apart.
            self._send({"kind": "tag", "uid": item.uid})
            self._feedback_read()
        elif isinstance(item, KnobTurned):
            self._send({"kind": "knob", "step": item.step})
        elif isinstance(item, KnobPressed):
            self._send({"kind": "press"})
        elif isinstance(item, Redraw):
            self._draw()
        elif isinstance(item, LinkState):
            self.link = item
            if self.show_link:
                self._draw()
        self._expire()

    def alive(self) -> bool:
        """Whether the station thread still runs its loop (for systemd's watchdog)."""
        running = any(t.is_alive() for t in self._threads[:1])
        return running and time.monotonic() - self.beat < ALIVE_WITHIN

    def _message(self, msg: Message) -> None:
        if msg.topic == "!connected":
            self.client.publish(
                self.topics.station(self.id, "status"), self._status("online"), retain=True
            )
            return
        if msg.topic == self.topics.hub_status:
            try:
                status = msgspec.json.decode(msg.payload, type=proto.HubStatus)
            except msgspec.MsgspecError:
                return
            ready = status.state == "ready"
            redraw = status.state != self.hub_state
            if redraw:
                if ready:
                    log.info("%s: the hub is ready", self.id)
                else:
                    log.warning("%s: the hub is offline (%s)", self.id, status.state)
                self.hub_state = status.state
            if ready and not self.hub_ready:
                # Rebirth: the hub is (back) up; say who we are, resend what it never answered.
                # Only on that change: the status also changes with every move of the game.
                self.client.publish(
                    self.topics.station(self.id, "status"), self._status("online"), retain=True
                )
                self._resend(force=True)
            self.hub_ready = ready
            if redraw and self.show_link:
                self._draw()
            return
        # Exact topics only: a broker that delivers more than we asked for changes nothing.
        if msg.topic == self.topics.station(self.id, "screen"):
            try:
                screen = msgspec.json.decode(msg.payload, type=proto.Screen)
            except msgspec.MsgspecError:
                log.warning("%s: bad screen payload %r", self.id, msg.payload[:80])
                return
            if turn_begins(self.screen, screen):
                self.devices.controls.beep("turn")
            self.screen = screen
            if self.toast and self.screen.phase != self.toast_phase:
                self.toast = None  # a refusal of the last step would cover this one's prompt
            if self.screen.led is not None and self.clock() >= self.led_until:
                self.devices.controls.led(_rgb(self.screen.led))
            self._draw()
        elif msg.topic == self._ack_topic:  # a raw answer: only where no _admit ran
            try:
                ack = msgspec.json.decode(msg.payload, type=proto.Ack)
            except msgspec.MsgspecError:
                return
            self._ack(ack)

    def _admit(self, topic: str, payload: bytes) -> bool:
        """On paho's thread: an answer to no pending input stops here, before the mailbox.

        Anyone who can make the hub refuse inputs under this station's name (its
        credentials, copied) makes it answer here, as fast as they send: such answers
        must cost the station next to nothing and never queue its own taps behind them.
        ``pending`` is only read here (one dict lookup, safe against the station thread);
        an input enters it before it is published, so its answer always finds it. An
        answer that is let in goes to the mailbox decoded, so it is decoded once.
        """
        if topic != self._ack_topic:
            return True
        try:
            ack = msgspec.json.decode(payload, type=proto.Ack)
        except msgspec.MsgspecError:
            self._unasked_answer(None)
            return False
        if ack.id is not None and ack.id in self.pending:
            self.queue.put(ack)
        else:
            self._unasked_answer(ack)
        return False

    def _unasked_answer(self, ack: proto.Ack | None) -> None:
        """Count an answer no pending input asked for; log it at most every few seconds."""
        with self._unasked_lock:
            self.unasked += 1
            now = time.monotonic()
            if now - self._unasked_logged < UNASKED_LOG_EVERY:
                self._unasked_held += 1
                return
            held, self._unasked_held = self._unasked_held, 0
            self._unasked_logged = now
        # The id is whatever the sender chose: quoted and cut, one line whatever it holds.
        what = "a malformed answer" if ack is None else f"an answer to {str(ack.id)[:40]!r}"
        more = f" (+{held} more since the last line)" if held else ""
        log.warning("%s: dropped %s: no input of this station waits for it%s", self.id, what, more)

    def _ack(self, ack: proto.Ack) -> None:
        # A second answer to one input (a resend answered twice) finds it gone here.
        if ack.id is None or self.pending.pop(ack.id, None) is None:
            self._unasked_answer(ack)
            return
        self.last_ack = ack
        if ack.ok:
            self.devices.controls.beep("ok")
            if ack.message:
                self._show_toast(ack.message)
        else:
            self.devices.controls.beep("error")
            self.devices.controls.led(ERROR_LED)
            self.led_until = self.clock() + TOAST_SECONDS
            self._show_toast(ack.message or "Refused")
        with self.settled:
            self.acks += 1
            self.settled.notify_all()

    def _send(self, fields: dict[str, Any]) -> None:
        self.seq += 1
        input_id = f"{self.boot}:{self.seq}"
        payload = proto.encode({"id": input_id, **fields})
        self.pending[input_id] = (payload, self.clock())
        self.client.publish(self.topics.station(self.id, "input"), payload)
        with self.settled:
            self.sent += 1
            self.settled.notify_all()

    def _resend(self, *, force: bool = False) -> None:
        now = self.clock()
        for input_id, (payload, sent) in list(self.pending.items()):
            if force or now - sent >= RESEND_AFTER:
                self.pending[input_id] = (payload, now)
                self.client.publish(self.topics.station(self.id, "input"), payload)

    def _expire(self) -> None:
        now = self.clock()
        self._resend()
        if self.toast and now >= self.toast[1]:
            self.toast = None
            self._draw()
        if self.led_until and now >= self.led_until:
            self.led_until = 0.0
            led = self.screen.led if self.screen and self.screen.led else (0, 0, 0)
            self.devices.controls.led(_rgb(led))

    def _feedback_read(self) -> None:
        self.devices.controls.led(READ_BLINK)
        self.devices.controls.beep("tick")
        self.led_until = self.clock() + 0.15

    def _show_toast(self, text: str) -> None:
        self.toast = (text, self.clock() + TOAST_SECONDS)
        self.toast_phase = self.screen.phase if self.screen is not None else ""
        self._draw()

    def _draw(self) -> None:
        problem = self._link_problem() if self.show_link else None
        if self.screen is None:
            if problem is not None:
                self.devices.display.show(render_lines(f"coffre {self.id}", problem))
                self._drawn = None
            return
        controls = self.devices.controls
        show_secret = controls.flap_open or controls.peek_held
        toast = self.toast[0] if self.toast else (problem[0] if problem else None)
        screen = self.screen
        # What the picture is made of: the same again (a screen republished with a new
        # rev, a flap opened over no secret, the LED's or phase's change) is not drawn
        # again, unless the display still owes the glass its last frame (an I2C error).
        drawn = (screen.title, screen.lines, screen.secret if show_secret else None, toast)
        display = self.devices.display
        if drawn == self._drawn and getattr(display, "healthy", True):
            return
        display.show(render(screen, show_secret=show_secret, toast=toast))
        self._drawn = drawn

    def _link_problem(self) -> list[str] | None:
        """What keeps this seat from playing (lines for the screen), or None."""
        if self.link.state == "idle":
            return None
        if self.link.state == "connecting":
            return ["Connecting to", f"{self.client.config.host}..."]
        if not self.link.ok:
            hint = _LINK_HINTS.get(self.link.state, "")
            more = "Retrying..." if self.link.state not in ("disconnected", "stopped") else ""
            return [line for line in (self.link.text, hint, more) if line]
        if self.hub_ready:
            return None
        if self.hub_state is None:
            return ["Waiting for the hub", "Connected to broker"]
        return ["Hub offline", "Start coffre-hub", "Inputs are kept"]

    def _status(self, state: Literal["online", "lost", "offline"]) -> bytes:
        reader = self.devices.reader
        hw = proto.Hardware(
            reader=type(reader).__name__,
            display=type(self.devices.display).__name__,
            controls=type(self.devices.controls).__name__,
        )
        current = getattr(reader, "current", None) if state == "online" else None
        return proto.encode(
            proto.StationStatus(
                state=state,
                fw=FW_VERSION,
                boot=self.boot,
                hw=hw,
                tag=current,
            )
        )

    # --- for bots and tests ----------------------------------------------------------

    def wait_screen(self, timeout: float = 10.0) -> bool:
        """Wait until the station has drawn a screen from the hub."""
        deadline = time.monotonic() + timeout
        while self.screen is None:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def wait_settled(self, sent_before: int, timeout: float = 10.0) -> bool:
        """Wait until an input beyond ``sent_before`` was sent and nothing is pending."""
        deadline = time.monotonic() + timeout
        with self.settled:
            while self.sent <= sent_before or self.pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.settled.wait(left)
        return True


def turn_begins(before: proto.Screen | None, now: proto.Screen) -> bool:
    """Whether ``now`` is the moment the table starts waiting on this seat (the station
    buzzes then): its screen says so and the last one did not. A screen sent again (a
    redraw, a knob turn, the retained screen after a reconnect) is no new turn, and a
    quiet table (the host turned sounds off) never buzzes."""
    return now.turn and not now.quiet and not (before is not None and before.turn)


def _rgb(led: tuple[int, int, int] | tuple[float, float, float]) -> tuple[float, float, float]:
    if all(isinstance(c, int) for c in led) and max(led) > 1:
        return (led[0] / 255, led[1] / 255, led[2] / 255)
    return (float(led[0]), float(led[1]), float(led[2]))
