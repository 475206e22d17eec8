"""A refusal toast on a station lasts no longer than the game step it was shown in."""

from __future__ import annotations

from PIL import ImageChops

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from firmware.link.render import render
from firmware.station.service import Station

T = proto.Topics("t")


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def station(clock: Clock) -> tuple[Station, MockDisplay]:
    display = MockDisplay()
    devices = StationDevices(MockReader(), display, MockControls())
    return Station(BrokerConfig(port=1), "t", "p1", devices, clock=clock, show_link=False), display


def screen(st: Station, phase: str, line: str) -> None:
    payload = proto.encode(proto.Screen(rev=1, title="Red R1/3", lines=(line,), phase=phase))
    st._handle(Message(T.station("p1", "screen"), payload))


def refuse(st: Station, message: str) -> None:
    """A press at the station, refused by the hub (a station shows only answers it awaits)."""
    st._send({"kind": "press"})
    answer = proto.Ack(f"{st.boot}:{st.seq}", False, message)
    st._handle(Message(T.station("p1", "ack"), proto.encode(answer)))


def shows(display: MockDisplay, expected: proto.Screen, toast: str | None) -> bool:
    frame = display.last
    assert frame is not None
    drawn = render(expected, show_secret=False, toast=toast)
    return ImageChops.difference(frame, drawn).getbbox() is None


def test_a_refusal_toast_ends_when_the_next_phase_begins() -> None:
    """ "Not the vote" shown while drawing is gone the moment the vote's screen arrives,
    though its seconds are not up: the new prompt is never covered."""
    clock = Clock()
    st, display = station(clock)
    screen(st, "1/draw", "Press knob when done")
    refuse(st, "Not the vote")
    drawing = proto.Screen(rev=1, title="Red R1/3", lines=("Press knob when done",))
    assert shows(display, drawing, "Not the vote")
    clock.now += 0.5  # well within the toast's time
    screen(st, "1/vote", "Done? Press")
    voting = proto.Screen(rev=1, title="Red R1/3", lines=("Done? Press",))
    assert shows(display, voting, None)


def test_a_refusal_toast_stays_while_the_phase_lasts() -> None:
    """A screen of the same step (a knob turn elsewhere) keeps the toast for its time."""
    clock = Clock()
    st, display = station(clock)
    screen(st, "1/draw", "Press knob when done")
    refuse(st, "Not the vote")
    clock.now += 0.5
    screen(st, "1/draw", "Done; 2 drawing")
    same = proto.Screen(rev=1, title="Red R1/3", lines=("Done; 2 drawing",))
    assert shows(display, same, "Not the vote")
