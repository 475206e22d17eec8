"""A station buzzes "your turn" when the table starts waiting on its seat, once, and never
on a quiet table."""

from __future__ import annotations

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from firmware.station.service import Station, turn_begins

T = proto.Topics("t")


def station() -> tuple[Station, MockControls]:
    controls = MockControls()
    devices = StationDevices(MockReader(), MockDisplay(), controls)
    return Station(BrokerConfig(port=1), "t", "p1", devices, show_link=False), controls


def screen(st: Station, line: str, *, turn: bool = False, quiet: bool = False) -> None:
    shown = proto.Screen(rev=1, title="Red R1/3", lines=(line,), turn=turn, quiet=quiet)
    st._handle(Message(T.station("p1", "screen"), proto.encode(shown)))


def test_the_turn_buzzes_when_the_table_starts_waiting_on_this_seat() -> None:
    """Others' turns are silent; the screen that says "your turn" buzzes once; redraws of
    that turn (a knob turn, the same screen again) do not; the next turn buzzes again."""
    st, controls = station()
    screen(st, "Waiting for Blue")
    screen(st, "Waiting for Green")
    assert controls.beeps == []
    screen(st, "Your turn", turn=True)
    assert controls.beeps == ["turn"]
    screen(st, "Your turn > Blue", turn=True)
    screen(st, "Your turn > Blue", turn=True)
    assert controls.beeps == ["turn"]
    screen(st, "Waiting for Blue")
    screen(st, "Your turn", turn=True)
    assert controls.beeps == ["turn", "turn"]


def test_a_quiet_table_never_buzzes_a_turn() -> None:
    """With the host's sounds off the turn is on the screen only."""
    st, controls = station()
    screen(st, "Waiting for Blue", quiet=True)
    screen(st, "Your turn", turn=True, quiet=True)
    assert controls.beeps == []


def test_a_bad_screen_changes_nothing() -> None:
    """A payload that is no screen neither buzzes nor forgets the turn it is in."""
    st, controls = station()
    screen(st, "Your turn", turn=True)
    st._handle(Message(T.station("p1", "screen"), b'{"rev": "x", "turn": true}'))
    screen(st, "Your turn", turn=True)
    assert controls.beeps == ["turn"]


def test_turn_begins_is_the_edge_only() -> None:
    """The decision alone: from no screen, from another's turn, within one's turn."""
    mine = proto.Screen(rev=1, turn=True)
    theirs = proto.Screen(rev=1)
    assert turn_begins(None, mine)
    assert turn_begins(theirs, mine)
    assert not turn_begins(mine, mine)
    assert not turn_begins(mine, theirs)
    assert not turn_begins(theirs, proto.Screen(rev=1, turn=True, quiet=True))


def test_old_screens_encode_as_before() -> None:
    """The new fields at their defaults are left out: a screen with no turn is the same
    bytes an older hub sends, and an older station's decoder reads it."""
    plain = proto.Screen(rev=3, title="x", lines=("a",))
    assert proto.encode(plain) == b'{"rev":3,"title":"x","lines":["a"]}'
    assert b"turn" in proto.encode(proto.Screen(rev=3, turn=True))
