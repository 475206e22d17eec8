"""A station draws a screen only when what it shows changes."""

from __future__ import annotations

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from firmware.link.render import render
from firmware.station.service import Station

T = proto.Topics("t")


class FlakyDisplay(MockDisplay):
    """A display that reports whether its last frame reached the glass."""

    healthy = True


def station(display: MockDisplay, controls: MockControls | None = None) -> Station:
    devices = StationDevices(MockReader(), display, controls or MockControls())
    return Station(BrokerConfig(port=1), "t", "p1", devices, show_link=False)


def send(st: Station, screen: proto.Screen) -> None:
    st._handle(Message(T.station("p1", "screen"), proto.encode(screen)))


def test_a_republished_screen_is_not_drawn_again() -> None:
    """The same title and lines under a new rev, LED or phase leave the display alone."""
    display = MockDisplay()
    st = station(display)
    send(st, proto.Screen(rev=1, title="Red", lines=("Your turn",)))
    send(st, proto.Screen(rev=2, title="Red", lines=("Your turn",), led=(0, 9, 0), phase="2"))
    assert display.shows == 1
    send(st, proto.Screen(rev=3, title="Red", lines=("Vote",)))
    assert display.shows == 2
    assert display.last is not None
    assert (
        display.last.tobytes()
        == render(proto.Screen(rev=3, title="Red", lines=("Vote",)), show_secret=False).tobytes()
    )


def test_opening_the_flap_draws_the_secret_only_when_there_is_one() -> None:
    """A flap opened over a screen without a secret draws nothing; over one, the secret."""
    display = MockDisplay()
    controls = MockControls()
    st = station(display, controls)
    send(st, proto.Screen(rev=1, title="Red", lines=("Wait",)))
    controls.open_flap()
    st._draw()
    assert display.shows == 1
    secret = proto.Screen(rev=2, title="Red", lines=("Wait",), secret=proto.Secret(big="B7"))
    send(st, secret)
    assert display.shows == 2
    assert display.last is not None
    assert display.last.tobytes() == render(secret, show_secret=True).tobytes()


def test_a_display_that_lost_its_frame_is_given_it_again() -> None:
    """After an I2C error the same picture is shown again, so the display can resend it."""
    display = FlakyDisplay()
    st = station(display)
    send(st, proto.Screen(rev=1, title="Red", lines=("Your turn",)))
    display.healthy = False
    send(st, proto.Screen(rev=2, title="Red", lines=("Your turn",)))
    assert display.shows == 2
