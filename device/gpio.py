"""Real controls over gpiozero: the station's knob, flap, peek button, RGB LED and buzzer,
and the hub panel's buttons.

gpiozero imports fine off a Pi (it picks its pin backend only when a device opens), so it
is imported at top level; pass ``pin_factory`` (e.g. ``MockFactory(pin_class=MockPWMPin)``)
to run on other pins than the Pi's. gpiozero calls the callbacks from its own threads.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from gpiozero import PWMLED, Button, Buzzer, RotaryEncoder, TonalBuzzer
from gpiozero.tones import Tone

from device.base import Beep, Colour, Controls, Display
from device.mock import BEEPS, check_colour
from device.panel import BUTTONS, Panel
from hardware.pins import HubPins, StationPins

log = logging.getLogger(__name__)

# A beep pattern: (frequency in Hz, or None for silence; seconds) steps.
Step = tuple[float | None, float]
PATTERNS: dict[Beep, tuple[Step, ...]] = {
    "ok": ((2093.0, 0.06),),
    "error": ((880.0, 0.15), (None, 0.08), (880.0, 0.15)),
    "tick": ((3136.0, 0.012),),
    "alert": ((1760.0, 0.1), (None, 0.1), (1760.0, 0.1), (None, 0.1), (1760.0, 0.1)),
    # Your turn: short-short-long, rising. Its rhythm alone (an active buzzer has one pitch)
    # tells it from the tick (one click), ok (one blip), error (two even) and alert (three even).
    "turn": ((1568.0, 0.05), (None, 0.05), (2093.0, 0.05), (None, 0.05), (2637.0, 0.25)),
}
# A passive buzzer's range (TonalBuzzer: one octave either side of A6), piezo-friendly.
TONE_MID = "A6"
TONE_OCTAVES = 1


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000


class BeepPlayer:
    """Plays one pattern at a time on a thread of its own; a new pattern cuts the old one.

    The thread lives as long as the player and sleeps between patterns: ``play`` only
    hands it the pattern. Starting a thread for each beep would cost the caller ~260 us
    of CPU here, a Zero's ~3 ms, on the path from a tap to the hub (the read's tick) and
    to the screen (the ack's beep).
    """

    def __init__(self, sound: Callable[[float], None], silence: Callable[[], None]) -> None:
        self._sound = sound
        self._silence = silence
        self._cond = threading.Condition()
        self._next: tuple[Step, ...] | None = None  # handed over, not yet started
        self._serial = 0  # counts play() and cancel(): a pattern stops when it moves
        self._busy = False  # a pattern is sounding (until the buzzer is silent again)
        self._closed = False
        self.failures = 0  # the buzzer's pin failed (said once in the log, then counted)
        self._thread = threading.Thread(target=self._run, name="coffre-beep", daemon=True)
        self._thread.start()

    def play(self, pattern: Sequence[Step]) -> None:
        """Start ``pattern`` and return at once."""
        with self._cond:
            if self._closed:
                return
            self._next = tuple(pattern)
            self._serial += 1
            self._cond.notify_all()

    @property
    def playing(self) -> bool:
        """Whether a pattern is still sounding (or about to)."""
        with self._cond:
            return self._next is not None or self._busy

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the current pattern ends; False if ``timeout`` ran out first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._next is None and not self._busy, timeout)

    def cancel(self) -> None:
        """Cut the current pattern; return once the buzzer is silent."""
        with self._cond:
            self._next = None
            self._serial += 1
            self._cond.notify_all()
            self._cond.wait_for(lambda: not self._busy)

    def close(self) -> None:
        """Cut the current pattern and end the thread."""
        with self._cond:
            self._closed = True
            self._next = None
            self._serial += 1
            self._cond.notify_all()
        self._thread.join()

    def _moved(self, serial: int) -> bool:
        return self._serial != serial

    def _run(self) -> None:
        cond = self._cond
        while True:
            with cond:
                cond.wait_for(lambda: self._next is not None or self._closed)
                if self._next is None:
                    return  # closed
                pattern, serial, self._next = self._next, self._serial, None
                self._busy = True
            try:
                self._play(pattern, serial)
            finally:
                with cond:
                    self._busy = False
                    cond.notify_all()

    def _play(self, pattern: tuple[Step, ...], serial: int) -> None:
        """One pattern, until it ends or another comes; the buzzer ends silent. A pin that
        fails is said once and costs this beep only: the thread plays the next."""
        try:
            for frequency, seconds in pattern:
                if frequency is None:
                    self._silence()
                else:
                    self._sound(frequency)
                with self._cond:
                    if self._cond.wait_for(functools.partial(self._moved, serial), seconds):
                        break
        except Exception as exc:  # a buzzer that fails must not end the beeps
            self._failed(exc)
        finally:
            try:
                self._silence()
            except Exception as exc:
                self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        level = logging.DEBUG if self.failures else logging.WARNING
        self.failures += 1
        log.log(level, "buzzer: %s (%d failures)", exc, self.failures)


class GpioControls(Controls):
    """KY-040 knob, flap sensor, peek button, RGB LED and buzzer on gpiozero devices."""

    def __init__(self, pins: StationPins, *, pin_factory: Any = None) -> None:
        self.pins = pins
        self._devices: list[Any] = []
        self._flap_lock = threading.Lock()
        self._flap_reported: bool | None = None
        try:
            self._open(pins, pin_factory)
        except BaseException:
            self._close_devices()
            raise
        self._flap_reported = self.flap_open

    def _add(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    def _open(self, pins: StationPins, pf: Any) -> None:
        knob, flap, peek = pins.knob, pins.flap, pins.peek
        # max_steps=0: count without bound; only the direction of each detent matters.
        self._knob = self._add(
            RotaryEncoder(
                knob.a, knob.b, bounce_time=_seconds(knob.bounce_ms), max_steps=0, pin_factory=pf
            )
        )
        self._knob.when_rotated_clockwise = self._turned_cw
        self._knob.when_rotated_counter_clockwise = self._turned_ccw
        self._push = self._add(
            Button(
                knob.push, pull_up=True, bounce_time=_seconds(knob.push_bounce_ms), pin_factory=pf
            )
        )
        self._push.when_released = self._pushed
        self._flap = self._add(
            Button(
                flap.pin, pull_up=flap.pull_up, bounce_time=_seconds(flap.bounce_ms), pin_factory=pf
            )
        )
        self._flap.when_pressed = self._flap_changed
        self._flap.when_released = self._flap_changed
        self._peek = self._add(
            Button(
                peek.pin, pull_up=peek.pull_up, bounce_time=_seconds(peek.bounce_ms), pin_factory=pf
            )
        )
        self._peek.when_pressed = self._peek_pressed
        self._peek.when_released = self._peek_released
        led = pins.led
        # Three PWM channels rather than gpiozero's RGBLED, whose every colour change
        # writes all three (its single-channel setters read and write all three too):
        # a read's blink and its end change one channel each. A channel's write is ~5 us
        # of gpiozero's Python here when warm, ~40 us after the station idled 20 ms
        # (bench_station_path prints it).
        self._channels = [
            self._add(PWMLED(pin, active_high=not led.common_anode, pin_factory=pf))
            for pin in (led.red, led.green, led.blue)
        ]
        self._colour: list[float | None] = [None, None, None]  # what each channel shows
        buzzer = pins.buzzer
        if buzzer.kind == "passive":
            tonal = self._add(
                TonalBuzzer(
                    buzzer.pin, mid_tone=Tone(TONE_MID), octaves=TONE_OCTAVES, pin_factory=pf
                )
            )
            self._beeper = BeepPlayer(
                lambda hz: tonal.play(Tone.from_frequency(_clamp_tone(tonal, hz))), tonal.stop
            )
        else:
            plain = self._add(Buzzer(buzzer.pin, active_high=buzzer.active_high, pin_factory=pf))
            self._beeper = BeepPlayer(lambda _hz: plain.on(), plain.off)

    # --- gpiozero callbacks (gpiozero's threads) ---

    def _turned_cw(self) -> None:
        callback = self.on_turn
        if callback is not None:
            callback(1)

    def _turned_ccw(self) -> None:
        callback = self.on_turn
        if callback is not None:
            callback(-1)

    def _pushed(self) -> None:
        callback = self.on_press
        if callback is not None:
            callback()

    def _flap_changed(self) -> None:
        # Re-read the pin rather than trust the edge: a bouncing reed can drop edges.
        with self._flap_lock:
            now = self.flap_open
            if now == self._flap_reported:
                return
            self._flap_reported = now
        callback = self.on_flap
        if callback is not None:
            callback(now)

    def _peek_pressed(self) -> None:
        callback = self.on_peek
        if callback is not None:
            callback(True)

    def _peek_released(self) -> None:
        callback = self.on_peek
        if callback is not None:
            callback(False)

    # --- Controls ---

    @property
    def flap_open(self) -> bool:
        pressed = bool(self._flap.is_pressed)
        return pressed if self.pins.flap.open_when_pressed else not pressed

    @property
    def peek_held(self) -> bool:
        return bool(self._peek.is_pressed)

    def led(self, colour: Colour) -> None:
        check_colour(colour)
        for i, value in enumerate(colour):
            if self._colour[i] != value:
                self._channels[i].value = float(value)
                self._colour[i] = value

    def beep(self, kind: Beep) -> None:
        if kind not in BEEPS:
            raise ValueError(f"unknown beep {kind!r}")
        self._beeper.play(PATTERNS[kind])

    @property
    def beeping(self) -> bool:
        """Whether a beep pattern is still sounding."""
        return self._beeper.playing

    def wait_beep(self, timeout: float | None = None) -> bool:
        """Block until the current beep ends (tests, shutdown); False on timeout."""
        return self._beeper.wait(timeout)

    def close(self) -> None:
        beeper = getattr(self, "_beeper", None)
        if beeper is not None:
            beeper.close()
        self._close_devices()

    def _close_devices(self) -> None:
        while self._devices:
            self._devices.pop().close()


def _clamp_tone(tonal: Any, hz: float) -> float:
    low = float(tonal.min_tone.frequency)
    high = float(tonal.max_tone.frequency)
    return min(max(hz, low), high)


class GpioPanel(Panel):
    """The hub's five panel buttons on gpiozero Buttons (fire on press), and its display."""

    def __init__(self, pins: HubPins, display: Display, *, pin_factory: Any = None) -> None:
        self.pins = pins
        self.display = display
        self.pin_factory = pin_factory
        self._buttons: dict[str, Any] = {}
        b = pins.buttons
        try:
            for name in BUTTONS:
                button = Button(
                    b.pin(name),
                    pull_up=b.pull_up,
                    bounce_time=_seconds(b.bounce_ms),
                    pin_factory=pin_factory,
                )
                self._buttons[name] = button
                button.when_pressed = self._handler(name)
        except BaseException:
            self._close_buttons()
            raise

    def _handler(self, name: str) -> Callable[[], None]:
        def pressed() -> None:
            callback = self.on_button
            if callback is not None:
                callback(name)

        return pressed

    def is_pressed(self, name: str) -> bool:
        """Whether the button ``name`` is down now."""
        return bool(self._buttons[name].is_pressed)

    def close(self) -> None:
        self._close_buttons()
        self.display.close()

    def _close_buttons(self) -> None:
        for button in self._buttons.values():
            button.close()
        self._buttons.clear()
