"""The mock backends: a virtual NFC field, a recording display, driveable controls, a panel."""

from __future__ import annotations

import threading

import pytest
from PIL import Image, ImageDraw

from device.base import DisplayError, TagPresent, TagRemoved
from device.mock import MockControls, MockDisplay, MockReader
from device.panel import BUTTONS, MockPanel


def test_reader_reports_a_lying_tag_once() -> None:
    """A tag lying on the reader is one TagPresent, then nothing until it moves."""
    reader = MockReader()
    assert reader.poll() is None
    reader.present_tag("04:a1:0b:3c:5d:6e:80")
    assert reader.poll() == TagPresent("04A10B3C5D6E80")
    assert reader.current == "04A10B3C5D6E80"
    assert reader.poll() is None
    assert reader.poll() is None


def test_reader_reports_removal_once() -> None:
    """Lifting the tag gives one TagRemoved carrying its UID and clears current."""
    reader = MockReader()
    reader.present_tag("DEADBEEF")
    reader.poll()
    reader.remove_tag()
    assert reader.poll() == TagRemoved("DEADBEEF")
    assert reader.current is None
    assert reader.poll() is None
    reader.remove_tag()
    assert reader.poll() is None


def test_reader_same_tag_twice_is_one_event() -> None:
    """Presenting the tag already lying there changes nothing."""
    reader = MockReader()
    reader.present_tag("DEADBEEF")
    reader.present_tag("de-ad-be-ef")
    assert reader.poll() == TagPresent("DEADBEEF")
    assert reader.poll() is None


def test_reader_swap_removes_then_presents() -> None:
    """Putting another tag on lifts the first one: removed, then present."""
    reader = MockReader()
    reader.present_tag("DEADBEEF")
    reader.present_tag("01020304")
    assert reader.poll() == TagPresent("DEADBEEF")
    assert reader.poll() == TagRemoved("DEADBEEF")
    assert reader.poll() == TagPresent("01020304")
    assert reader.current == "01020304"


def test_reader_tap_between_polls_is_not_lost() -> None:
    """A tap (present + remove) between two polls still yields both events in order."""
    reader = MockReader()
    reader.tap("01020304")
    assert reader.field is None
    assert reader.poll() == TagPresent("01020304")
    assert reader.poll() == TagRemoved("01020304")
    assert reader.poll() is None


def test_reader_refuses_bad_uid() -> None:
    """A UID that is not 4, 7 or 10 bytes of hex is refused at once."""
    reader = MockReader()
    with pytest.raises(ValueError):
        reader.present_tag("XYZ")
    with pytest.raises(ValueError):
        reader.present_tag("010203")
    assert reader.poll() is None


def test_reader_is_thread_safe() -> None:
    """Tags presented from another thread all arrive, each once, in order."""
    reader = MockReader()
    uids = [f"{i:08X}" for i in range(1, 201)]

    def player() -> None:
        for uid in uids:
            reader.tap(uid)

    thread = threading.Thread(target=player)
    thread.start()
    events: list[TagPresent | TagRemoved] = []
    while thread.is_alive() or len(events) < 2 * len(uids):
        event = reader.poll()
        if event is not None:
            events.append(event)
    thread.join()
    expected = [e for uid in uids for e in (TagPresent(uid), TagRemoved(uid))]
    assert events == expected
    assert reader.poll() is None


def _frame(text: str = "") -> Image.Image:
    image = Image.new("1", (128, 64))
    if text:
        ImageDraw.Draw(image).text((0, 0), text, fill=1)
    return image


def test_display_records_only_changed_frames() -> None:
    """Identical consecutive frames are recorded once; a change is a new frame."""
    display = MockDisplay()
    assert display.last is None
    display.show(_frame("a"))
    display.show(_frame("a"))
    display.show(_frame("b"))
    display.show(_frame("a"))
    assert len(display.frames) == 3
    assert display.shows == 4
    assert display.last is not None
    assert display.last.tobytes() == _frame("a").tobytes()


def test_display_keeps_a_copy() -> None:
    """Drawing on the image after show() does not change the recorded frame."""
    display = MockDisplay()
    image = _frame()
    display.show(image)
    ImageDraw.Draw(image).rectangle((0, 0, 10, 10), fill=1)
    assert display.frames[0].getbbox() is None


def test_display_calls_on_frame_per_new_frame() -> None:
    """on_frame sees each new frame, not repeats."""
    seen: list[Image.Image] = []
    display = MockDisplay(on_frame=seen.append)
    display.show(_frame("x"))
    display.show(_frame("x"))
    display.show(_frame("y"))
    assert [f.tobytes() for f in seen] == [f.tobytes() for f in display.frames]
    assert len(seen) == 2


def test_display_refuses_wrong_mode_or_size() -> None:
    """Like the real driver, a non-"1" image or a wrong size is a DisplayError."""
    display = MockDisplay()
    with pytest.raises(DisplayError):
        display.show(Image.new("L", (128, 64)))
    with pytest.raises(DisplayError):
        display.show(Image.new("1", (128, 32)))
    display.close()
    with pytest.raises(DisplayError):
        display.show(_frame())
    assert display.frames == []


def test_controls_turn_calls_once_per_step() -> None:
    """turn(n) calls on_turn |n| times with +1 or -1."""
    controls = MockControls()
    turns: list[int] = []
    controls.on_turn = turns.append
    controls.turn()
    controls.turn(3)
    controls.turn(-2)
    controls.turn(0)
    assert turns == [1, 1, 1, 1, -1, -1]


def test_controls_press_calls_on_press() -> None:
    """press() calls on_press once; no callback set is fine."""
    controls = MockControls()
    controls.press()
    presses: list[None] = []
    controls.on_press = lambda: presses.append(None)
    controls.press()
    assert len(presses) == 1


def test_controls_flap_reports_changes_only() -> None:
    """Opening/closing the flap sets flap_open and calls on_flap only on a change."""
    controls = MockControls()
    flaps: list[bool] = []
    controls.on_flap = flaps.append
    assert not controls.flap_open
    controls.open_flap()
    controls.open_flap()
    assert controls.flap_open
    controls.close_flap()
    controls.close_flap()
    assert flaps == [True, False]
    assert not controls.flap_open


def test_controls_can_start_with_the_flap_open() -> None:
    """flap_open=True starts open, so closing it is a change."""
    controls = MockControls(flap_open=True)
    flaps: list[bool] = []
    controls.on_flap = flaps.append
    controls.close_flap()
    assert flaps == [False]


def test_controls_peek_reports_changes_only() -> None:
    """Holding/releasing peek sets peek_held and calls on_peek only on a change."""
    controls = MockControls()
    peeks: list[bool] = []
    controls.on_peek = peeks.append
    controls.hold_peek()
    controls.hold_peek()
    assert controls.peek_held
    controls.release_peek()
    assert peeks == [True, False]
    assert not controls.peek_held


def test_controls_record_leds_and_beeps() -> None:
    """Every LED colour and beep is recorded in order; bad ones are refused."""
    controls = MockControls()
    assert controls.led_colour == (0.0, 0.0, 0.0)
    controls.led((0.0, 1.0, 0.0))
    controls.led((0.0, 0.0, 0.0))
    controls.beep("ok")
    controls.beep("error")
    assert controls.leds == [(0.0, 1.0, 0.0), (0.0, 0.0, 0.0)]
    assert controls.led_colour == (0.0, 0.0, 0.0)
    assert controls.beeps == ["ok", "error"]
    with pytest.raises(ValueError):
        controls.led((2.0, 0.0, 0.0))
    with pytest.raises(ValueError):
        controls.beep("boom")  # type: ignore[arg-type]
    assert len(controls.leds) == 2 and len(controls.beeps) == 2


def test_panel_press_calls_on_button() -> None:
    """MockPanel.press(name) calls on_button(name) for the five buttons."""
    panel = MockPanel()
    names: list[str] = []
    panel.on_button = names.append
    for name in BUTTONS:
        panel.press(name)
    assert names == ["prev", "next", "ok", "back", "stop"]
    assert panel.presses == names


def test_panel_refuses_unknown_button() -> None:
    """Pressing a button the panel lacks is a ValueError naming it."""
    panel = MockPanel()
    with pytest.raises(ValueError, match="menu"):
        panel.press("menu")


def test_panel_has_a_mock_display_and_closes_it() -> None:
    """The mock panel draws on a MockDisplay that close() closes."""
    panel = MockPanel()
    assert isinstance(panel.display, MockDisplay)
    panel.display.show(_frame("menu"))
    panel.close()
    assert panel.display.closed
