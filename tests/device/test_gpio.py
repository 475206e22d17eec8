"""gpiozero controls and hub panel, run over gpiozero's mock pins."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterator

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from device import gpio
from device.gpio import GpioControls, GpioPanel
from device.mock import BEEPS, MockDisplay
from hardware.pins import BuzzerPins, FlapPins, HubPins, LedPins, StationPins

PINS = StationPins()


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    """A fresh MockFactory with PWM-capable pins, reset and restored after the test."""
    previous = Device.pin_factory
    mock = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = mock
    try:
        yield mock
    finally:
        mock.reset()
        Device.pin_factory = previous


@pytest.fixture
def controls(factory: MockFactory) -> Iterator[GpioControls]:
    """GpioControls on the default station pins over the mock factory."""
    c = GpioControls(PINS, pin_factory=factory)
    try:
        yield c
    finally:
        c.close()


def _step(factory: MockFactory, a: int, b: int, clockwise: bool) -> None:
    """One KY-040 detent: A leads B clockwise (pins go low when active)."""
    first, second = (a, b) if clockwise else (b, a)
    factory.pin(first).drive_low()
    factory.pin(second).drive_low()
    factory.pin(first).drive_high()
    factory.pin(second).drive_high()


def test_knob_detents_call_on_turn(factory: MockFactory, controls: GpioControls) -> None:
    """Each full quadrature cycle is one on_turn: +1 when A leads, -1 when B leads."""
    turns: list[int] = []
    controls.on_turn = turns.append
    for _ in range(3):
        _step(factory, 17, 27, clockwise=True)
    _step(factory, 17, 27, clockwise=False)
    assert turns == [1, 1, 1, -1]


def test_knob_turns_past_gpiozero_step_limit(factory: MockFactory, controls: GpioControls) -> None:
    """Turning far one way keeps reporting steps (no max_steps clamp swallows them)."""
    turns: list[int] = []
    controls.on_turn = turns.append
    for _ in range(40):
        _step(factory, 17, 27, clockwise=True)
    assert turns == [1] * 40


def test_knob_wiggle_without_a_full_step_is_ignored(
    factory: MockFactory, controls: GpioControls
) -> None:
    """A half step that goes back (contact jitter) is not a turn."""
    turns: list[int] = []
    controls.on_turn = turns.append
    factory.pin(17).drive_low()
    factory.pin(17).drive_high()
    factory.pin(27).drive_low()
    factory.pin(27).drive_high()
    assert turns == []


def test_knob_push_fires_on_release(factory: MockFactory, controls: GpioControls) -> None:
    """The knob's push calls on_press once, when it is released."""
    presses: list[None] = []
    controls.on_press = lambda: presses.append(None)
    factory.pin(22).drive_low()
    assert presses == []
    factory.pin(22).drive_high()
    assert len(presses) == 1


def test_flap_magnet_reads_closed(factory: MockFactory, controls: GpioControls) -> None:
    """Reed closed by the magnet (pin low) is a closed flap; pin high is open."""
    factory.pin(5).drive_low()
    assert not controls.flap_open
    factory.pin(5).drive_high()
    assert controls.flap_open


def test_flap_calls_on_flap_per_change(factory: MockFactory, controls: GpioControls) -> None:
    """Lifting and lowering the flap calls on_flap(True) then on_flap(False)."""
    factory.pin(5).drive_low()  # closed
    flaps: list[bool] = []
    controls.on_flap = flaps.append
    factory.pin(5).drive_high()
    factory.pin(5).drive_low()
    assert flaps == [True, False]


def test_flap_open_when_pressed_inverts(factory: MockFactory) -> None:
    """With a normally-closed reed (open_when_pressed), a low pin is an open flap."""
    pins = dataclasses.replace(PINS, flap=FlapPins(open_when_pressed=True))
    c = GpioControls(pins, pin_factory=factory)
    try:
        factory.pin(5).drive_low()
        assert c.flap_open
        factory.pin(5).drive_high()
        assert not c.flap_open
    finally:
        c.close()


def test_peek_hold_and_release(factory: MockFactory, controls: GpioControls) -> None:
    """Holding the peek button calls on_peek(True) and sets peek_held; release undoes it."""
    peeks: list[bool] = []
    controls.on_peek = peeks.append
    assert not controls.peek_held
    factory.pin(16).drive_low()
    assert controls.peek_held
    factory.pin(16).drive_high()
    assert not controls.peek_held
    assert peeks == [True, False]


def test_callbacks_unset_are_harmless(factory: MockFactory, controls: GpioControls) -> None:
    """Input with no callback set does nothing and raises nothing."""
    _step(factory, 17, 27, clockwise=True)
    for pin in (22, 5, 16):
        factory.pin(pin).drive_low()
        factory.pin(pin).drive_high()
    assert controls.flap_open


def test_led_sets_pwm_duty(factory: MockFactory, controls: GpioControls) -> None:
    """led((r, g, b)) puts each channel's duty cycle on GPIO 12, 13, 19."""
    controls.led((1.0, 0.5, 0.0))
    assert [factory.pin(p).state for p in (12, 13, 19)] == [1.0, 0.5, 0.0]
    controls.led((0.0, 0.0, 0.0))
    assert [factory.pin(p).state for p in (12, 13, 19)] == [0.0, 0.0, 0.0]


def test_a_colour_change_writes_only_the_channels_that_change(
    factory: MockFactory, controls: GpioControls, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read's blue blink over a red LED writes the blue pin alone, and the same colour
    again writes nothing (each write is gpiozero's Python on a Zero, at every tap)."""
    controls.led((1.0, 0.0, 0.0))
    writes: list[int] = []
    for number in (12, 13, 19):
        pin = factory.pin(number)
        write = pin._set_state
        monkeypatch.setattr(
            pin, "_set_state", lambda v, n=number, w=write: (writes.append(n), w(v))
        )
    controls.led((1.0, 0.0, 1.0))
    controls.led((1.0, 0.0, 1.0))
    assert writes == [19]
    assert [factory.pin(p).state for p in (12, 13, 19)] == [1.0, 0.0, 1.0]


def test_led_common_anode_inverts(factory: MockFactory) -> None:
    """A common-anode LED is driven inverted: full red is a low red pin."""
    pins = dataclasses.replace(PINS, led=LedPins(common_anode=True))
    c = GpioControls(pins, pin_factory=factory)
    try:
        c.led((1.0, 0.25, 0.0))
        assert [factory.pin(p).state for p in (12, 13, 19)] == [0.0, 0.75, 1.0]
    finally:
        c.close()


def test_led_refuses_out_of_range(controls: GpioControls) -> None:
    """A channel outside 0..1 is a ValueError."""
    with pytest.raises(ValueError):
        controls.led((0.0, 1.5, 0.0))


def test_active_buzzer_plays_the_error_pattern(
    factory: MockFactory, controls: GpioControls
) -> None:
    """beep("error") sounds twice on GPIO18 and ends silent."""
    pin = factory.pin(18)
    pin.clear_states()
    controls.beep("error")
    assert controls.wait_beep(timeout=10)
    assert [s.state for s in pin.states] == [False, True, False, True, False]
    assert not controls.beeping


def test_every_beep_kind_sounds_and_stops(factory: MockFactory, controls: GpioControls) -> None:
    """Each beep kind turns the buzzer on at least once and leaves it off."""
    pin = factory.pin(18)
    for kind in BEEPS:
        pin.clear_states()
        controls.beep(kind)
        assert controls.wait_beep(timeout=10)
        states = [s.state for s in pin.states]
        assert 1 in states and states[-1] == 0


def test_beep_does_not_block_and_a_new_beep_cuts_the_old(
    factory: MockFactory, controls: GpioControls, monkeypatch: pytest.MonkeyPatch
) -> None:
    """beep() returns while a long pattern sounds; the next beep cuts it short."""
    monkeypatch.setitem(gpio.PATTERNS, "alert", ((1760.0, 3600.0),))
    controls.beep("alert")
    assert controls.beeping
    controls.beep("tick")
    assert controls.wait_beep(timeout=10)
    assert factory.pin(18).state == 0


def test_close_silences_a_sounding_beep(
    factory: MockFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing the controls mid-beep stops the pattern and releases the pins."""
    monkeypatch.setitem(gpio.PATTERNS, "alert", ((1760.0, 3600.0),))
    c = GpioControls(PINS, pin_factory=factory)
    c.beep("alert")
    c.close()
    assert not c.beeping
    again = GpioControls(PINS, pin_factory=factory)  # the pins are free again
    again.close()


def test_beeps_play_on_one_thread_that_close_ends(
    factory: MockFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every beep is played by the one thread the controls started (a beep hands it the
    pattern, not a new thread), and closing the controls ends that thread."""
    monkeypatch.setitem(gpio.PATTERNS, "alert", ((1760.0, 3600.0),))

    def beepers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "coffre-beep"]

    before = set(beepers())
    c = GpioControls(PINS, pin_factory=factory)
    try:
        (mine,) = set(beepers()) - before
        for kind in ("alert", "tick", "ok", "error"):
            c.beep(kind)  # type: ignore[arg-type]
            assert set(beepers()) - before == {mine}
        assert c.wait_beep(timeout=10)
        assert factory.pin(18).state == 0
    finally:
        c.close()
    assert not mine.is_alive()


def test_passive_buzzer_plays_tones(factory: MockFactory) -> None:
    """A passive buzzer gets a PWM tone (frequency set, 50 % duty), then silence."""
    pins = dataclasses.replace(PINS, buzzer=BuzzerPins(kind="passive"))
    c = GpioControls(pins, pin_factory=factory)
    try:
        pin = factory.pin(18)
        pin.clear_states()
        c.beep("ok")
        assert c.wait_beep(timeout=10)
        assert 0.5 in [s.state for s in pin.states]
        assert pin.state == 0 and pin.frequency is None
    finally:
        c.close()


def test_active_low_buzzer(factory: MockFactory) -> None:
    """An active-low buzzer rests high and sounds low."""
    pins = dataclasses.replace(PINS, buzzer=BuzzerPins(active_high=False))
    c = GpioControls(pins, pin_factory=factory)
    try:
        pin = factory.pin(18)
        assert pin.state == 1
        pin.clear_states()
        c.beep("tick")
        assert c.wait_beep(timeout=10)
        assert [s.state for s in pin.states] == [True, False, True]
    finally:
        c.close()


def test_unknown_beep_is_refused(controls: GpioControls) -> None:
    """A beep kind outside ok/error/tick/alert/turn is a ValueError."""
    with pytest.raises(ValueError):
        controls.beep("boom")  # type: ignore[arg-type]


def test_failed_open_releases_pins(factory: MockFactory) -> None:
    """If a device cannot open, the ones already opened are released."""
    blocker = GpioPanel(HubPins(), MockDisplay(), pin_factory=factory)  # holds GPIO 5 (flap)
    with pytest.raises(Exception, match="GPIO5 is already in use"):
        GpioControls(PINS, pin_factory=factory)
    blocker.close()
    GpioControls(PINS, pin_factory=factory).close()  # knob/flap pins were released


def test_panel_buttons_call_on_button(factory: MockFactory) -> None:
    """Pressing each panel button calls on_button with its name, on press."""
    panel = GpioPanel(HubPins(), MockDisplay(), pin_factory=factory)
    try:
        names: list[str] = []
        panel.on_button = names.append
        for pin in (5, 6, 13, 19, 26):
            factory.pin(pin).drive_low()
            factory.pin(pin).drive_high()
        assert names == ["prev", "next", "ok", "back", "stop"]
    finally:
        panel.close()


def test_panel_is_pressed_and_close(factory: MockFactory) -> None:
    """is_pressed reads a button now; close() releases pins and closes the display."""
    display = MockDisplay()
    panel = GpioPanel(HubPins(), display, pin_factory=factory)
    factory.pin(26).drive_low()
    assert panel.is_pressed("stop") and not panel.is_pressed("ok")
    panel.close()
    assert display.closed
    GpioPanel(HubPins(), MockDisplay(), pin_factory=factory).close()


def test_a_buzzer_that_fails_costs_one_beep_not_the_next(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A buzzer pin that raises mid-beep is said once in the log; the beep ends and the
    player's thread plays the next one."""
    sounded: list[float] = []
    failures = [OSError("pin gone")]

    def sound(hz: float) -> None:
        if failures:
            raise failures.pop()
        sounded.append(hz)

    player = gpio.BeepPlayer(sound, lambda: None)
    try:
        with caplog.at_level(logging.WARNING, logger="device.gpio"):
            player.play(((1000.0, 0.01),))
            assert player.wait(timeout=10)
            player.play(((2000.0, 0.01),))
            assert player.wait(timeout=10)
        assert sounded == [2000.0]
        assert player.failures == 1
        assert [r.getMessage() for r in caplog.records] == ["buzzer: pin gone (1 failures)"]
    finally:
        player.close()


def test_the_turn_pattern_is_its_own_on_an_active_buzzer(
    factory: MockFactory, controls: GpioControls
) -> None:
    """beep("turn") on an active buzzer (one pitch) sounds three times and ends silent; its
    rhythm, short-short-long, is no other kind's (the pattern's own lengths: the mock pin's
    timestamps jitter on a loaded machine)."""
    pin = factory.pin(18)
    pin.clear_states()
    controls.beep("turn")
    assert controls.wait_beep(timeout=10)
    assert [s.state for s in pin.states] == [0, 1, 0, 1, 0, 1, 0]

    def rhythm(kind: str) -> list[float]:
        return [seconds for hz, seconds in gpio.PATTERNS[kind] if hz is not None]  # type: ignore[index]

    turn = rhythm("turn")
    assert len(turn) == 3 and turn[2] >= 3 * max(turn[:2])
    assert all(rhythm(kind) != turn for kind in BEEPS if kind != "turn")
    assert [len(rhythm(kind)) for kind in ("tick", "ok", "error")] == [1, 1, 2]
    assert max(rhythm("alert")) == min(rhythm("alert"))  # the alert's three are even


def test_the_turn_pattern_rises_on_a_passive_buzzer(factory: MockFactory) -> None:
    """On a passive buzzer the turn's three notes rise in pitch, within the buzzer's range."""
    pins = dataclasses.replace(PINS, buzzer=BuzzerPins(kind="passive"))
    c = GpioControls(pins, pin_factory=factory)
    heard: list[float] = []
    try:
        pin = factory.pin(18)
        original = pin._set_frequency

        def record(value: float | None) -> None:
            if value:
                heard.append(round(value))
            original(value)

        pin._set_frequency = record
        c.beep("turn")
        assert c.wait_beep(timeout=10)
        assert len(heard) == 3 and heard == sorted(heard) and len(set(heard)) == 3
        assert pin.state == 0 and pin.frequency is None
    finally:
        c.close()
