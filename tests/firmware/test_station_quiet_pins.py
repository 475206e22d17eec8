"""A quiet table's station, on gpiozero's mock pins: the host's "sound off" (``Screen.quiet``)
keeps the buzzer pin low when the table starts waiting on the seat; what answers the
player's own hand (the tap's tick, the refusal's two beeps) still sounds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from device.base import StationDevices, TagPresent
from device.gpio import GpioControls
from device.mock import MockDisplay, MockReader
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from firmware.station.service import Station
from hardware.pins import StationPins

PINS = StationPins()
T = proto.Topics("t")


@pytest.fixture
def rig() -> Iterator[tuple[Station, GpioControls, MockFactory]]:
    """A station whose controls are gpiozero's, over fresh mock pins."""
    previous = Device.pin_factory
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    controls = GpioControls(PINS, pin_factory=factory)
    devices = StationDevices(MockReader(), MockDisplay(), controls)
    try:
        yield Station(BrokerConfig(port=1), "t", "p1", devices, show_link=False), controls, factory
    finally:
        controls.close()
        factory.reset()
        Device.pin_factory = previous


def show(st: Station, line: str, *, turn: bool, quiet: bool) -> None:
    screen = proto.Screen(rev=1, title="Red R1/3", lines=(line,), turn=turn, quiet=quiet)
    st._handle(Message(T.station("p1", "screen"), proto.encode(screen)))


def sounded(controls: GpioControls, factory: MockFactory) -> int:
    """How many times the buzzer pin went high since the last call (after the beep ends)."""
    assert controls.wait_beep(timeout=10)
    pin = factory.pin(PINS.buzzer.pin)
    ons = sum(1 for s in pin.states if s.state)
    pin.clear_states()
    return ons


def test_a_quiet_turn_keeps_the_buzzer_pin_low(
    rig: tuple[Station, GpioControls, MockFactory],
) -> None:
    """Quiet: the turn comes and goes on the glass, the pin never rises. Not quiet: the
    same turn sounds the turn pattern (short-short-long: three times high)."""
    st, controls, factory = rig
    sounded(controls, factory)
    show(st, "Waiting for Blue", turn=False, quiet=True)
    show(st, "Your turn", turn=True, quiet=True)
    assert sounded(controls, factory) == 0
    show(st, "Waiting for Blue", turn=False, quiet=False)
    show(st, "Your turn", turn=True, quiet=False)
    assert sounded(controls, factory) == 3


def test_a_quiet_table_still_ticks_a_tap_and_beeps_a_refusal(
    rig: tuple[Station, GpioControls, MockFactory],
) -> None:
    """The tick (the card was read) and the refusal's two beeps answer the player's own
    tap, heard at arm's length: the host's "off" leaves them."""
    st, controls, factory = rig
    show(st, "Your turn", turn=True, quiet=True)
    sounded(controls, factory)
    st._handle(TagPresent("DEADBEEF"))
    assert sounded(controls, factory) == 1
    (input_id,) = st.pending
    st._handle(proto.Ack(input_id, False, "Not your turn"))
    assert sounded(controls, factory) == 2
