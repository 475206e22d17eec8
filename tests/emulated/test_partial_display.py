"""Ssd1306Display sends the SSD1306 only the GDDRAM that changed, and never reads getdata."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from device.emulated import EmulatedStation, open_emulated_station
from device.real_display import WINDOW_COST, Window, changed_windows, to_gddram
from firmware.link.render import render_lines
from tests.support.emulated import same

FULL_FRAME = 128 * 64 // 8


def test_a_one_line_change_sends_a_small_window(station: EmulatedStation) -> None:
    """A station screen whose one line changes costs a fraction of the 1 KiB frame."""
    before = render_lines("Red: prepare", ["Pictos placed: 1", "Press when done"])
    after = render_lines("Red: prepare", ["Pictos placed: 2", "Press when done"])
    station.display.show(before)
    sent = station.panel.bytes_written
    station.display.show(after)
    assert same(station.screen(), after)
    assert 0 < station.panel.bytes_written - sent < FULL_FRAME // 4


def test_first_frame_and_frames_after_an_error_are_whole(station: EmulatedStation) -> None:
    """After a bus error the panel's memory is unknown: the next frame is sent whole."""
    first = render_lines("One", ["a"])
    station.display.show(first)
    station.panel.fail_writes(1)
    second = render_lines("Two", ["a"])
    station.display.show(second)
    assert same(station.screen(), second)
    assert station.display.recreations == 1


def test_showing_never_reads_image_getdata(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the panel and showing frames work with Image.getdata gone (Pillow 14)."""

    def gone(*_: object, **__: object) -> None:
        raise AssertionError("Image.getdata was called")

    monkeypatch.setattr(Image.Image, "getdata", gone)
    station = open_emulated_station()
    try:
        frame = render_lines("coffre", ["no getdata"])
        station.display.show(frame)
        station.display.show(render_lines("coffre", ["still none"]))
        assert same(station.screen(), render_lines("coffre", ["still none"]))
    finally:
        station.close()


@pytest.fixture(scope="module")
def shared_station() -> Iterator[EmulatedStation]:
    """One emulated station for a whole property test (frames follow one another)."""
    st_ = open_emulated_station()
    try:
        yield st_
    finally:
        st_.close()


BOXES = st.lists(
    st.tuples(st.integers(0, 127), st.integers(0, 63), st.integers(0, 127), st.integers(0, 63)),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(boxes=BOXES, fill=st.booleans())
def test_the_glass_always_shows_the_last_frame(
    shared_station: EmulatedStation, boxes: list[tuple[int, int, int, int]], fill: bool
) -> None:
    """Whatever follows whatever, partial updates leave the glass equal to the frame shown."""
    img = Image.new("1", (128, 64), int(fill))
    draw = ImageDraw.Draw(img)
    for x0, y0, x1, y1 in boxes:
        draw.rectangle((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)), fill=int(not fill))
    shared_station.display.show(img)
    assert same(shared_station.screen(), img)


def _written(old: bytes, windows: list[Window]) -> bytes:
    """GDDRAM after writing ``windows`` over ``old`` (horizontal addressing in a window)."""
    ram = bytearray(old)
    for c0, c1, p0, p1, data in windows:
        width = c1 - c0 + 1
        assert len(data) == width * (p1 - p0 + 1)
        for i, page in enumerate(range(p0, p1 + 1)):
            ram[page * 128 + c0 : page * 128 + c1 + 1] = data[i * width : (i + 1) * width]
    return bytes(ram)


def test_windows_rebuild_the_new_memory() -> None:
    """Writing the windows over the old GDDRAM gives the new GDDRAM exactly."""
    old = to_gddram(render_lines("A title", ["one", "two"]))
    new = to_gddram(render_lines("A title", ["one", "three", "four"]))
    windows = changed_windows(old, new)
    assert windows
    assert _written(old, windows) == new
    assert changed_windows(new, new) == []


@settings(max_examples=200, deadline=None)
@given(
    old=st.binary(min_size=1024, max_size=1024),
    edits=st.dictionaries(st.integers(0, 1023), st.integers(0, 255)),
)
def test_windows_rebuild_any_memory(old: bytes, edits: dict[int, int]) -> None:
    """Whatever bytes change, the windows turn the old GDDRAM into the new one."""
    ram = bytearray(old)
    for at, value in edits.items():
        ram[at] = value
    new = bytes(ram)
    assert _written(old, changed_windows(old, new)) == new
    assert (changed_windows(old, new) == []) == (old == new)


def test_changes_far_apart_in_a_page_are_two_windows() -> None:
    """A change at each end of a page sends two short runs, not the page between them."""
    old = bytes(1024)
    ram = bytearray(old)
    ram[3 * 128 + 2] = ram[3 * 128 + 120] = 0xFF
    windows = changed_windows(old, bytes(ram))
    assert [(w[0], w[1], w[2], w[3]) for w in windows] == [(2, 2, 3, 3), (120, 120, 3, 3)]
    ram[3 * 128 + 2 + WINDOW_COST] = 0xFF  # a gap no wider than a window's cost: one run
    joined = changed_windows(old, bytes(ram))
    assert [(w[0], w[1]) for w in joined] == [(2, 2 + WINDOW_COST), (120, 120)]


def test_to_gddram_packs_pages_of_columns_lsb_on_top() -> None:
    """Pixel (x, y) is bit y % 8 of byte (y // 8) * 128 + x."""
    img = Image.new("1", (128, 64), 0)
    for x, y in ((0, 0), (127, 63), (5, 9), (64, 31)):
        img.putpixel((x, y), 1)
    ram = to_gddram(img)
    lit = {
        (at % 128, (at // 128) * 8 + bit)
        for at in range(1024)
        for bit in range(8)
        if ram[at] >> bit & 1
    }
    assert lit == {(0, 0), (127, 63), (5, 9), (64, 31)}


def _windows_run_by_run(old: bytes, new: bytes) -> list[Window]:
    """The windows as found before issue 27's fourth pass: every changed run of a page,
    then runs joined in Python while the gap between them is under WINDOW_COST."""
    windows: list[Window] = []
    for page in range(8):
        at = page * 128
        was, now = old[at : at + 128], new[at : at + 128]
        changed = [i for i in range(128) if was[i] != now[i]]
        if not changed:
            continue
        first = end = changed[0]
        for i in changed[1:]:
            if i - end - 1 >= WINDOW_COST:
                windows.append((first, end, page, page, now[first : end + 1]))
                first = i
            end = i
        windows.append((first, end, page, page, now[first : end + 1]))
    return windows


@settings(max_examples=300, deadline=None)
@given(
    old=st.binary(min_size=1024, max_size=1024),
    edits=st.dictionaries(st.integers(0, 1023), st.integers(0, 255), max_size=300),
    gaps=st.lists(st.integers(0, 1023), max_size=40),
)
def test_windows_are_the_runs_joined_across_short_gaps(
    old: bytes, edits: dict[int, int], gaps: list[int]
) -> None:
    """The windows are exactly those of joining each page's changed runs one by one while
    they lie fewer than WINDOW_COST unchanged bytes apart (gaps of every width tried)."""
    ram = bytearray(old)
    for at, value in edits.items():
        ram[at] = value
    for at in gaps:  # a change, then one WINDOW_COST - 1 .. + 1 bytes further on
        for step in (0, WINDOW_COST, WINDOW_COST + 1, 2 * WINDOW_COST + 1):
            if at + step < 1024:
                ram[at + step] = old[at + step] ^ 0x5A
    new = bytes(ram)
    assert changed_windows(old, new) == _windows_run_by_run(old, new)


def test_a_rotated_panel_gets_the_rotated_frame_and_only_its_changes() -> None:
    """Upside down (rotate=2), the glass shows each frame turned round; a frame shown
    again sends nothing, a changed one less than the whole memory."""
    pins = SimpleNamespace(display=SimpleNamespace(rotate=2))
    with open_emulated_station(pins) as st:
        first = render_lines("Upside down", ["one", "two"])
        second = render_lines("Upside down", ["one", "three"])
        st.display.show(first)
        assert same(st.screen(), first.rotate(180))
        sent = st.panel.bytes_written
        st.display.show(first)
        assert st.panel.bytes_written == sent
        st.display.show(second)
        assert same(st.screen(), second.rotate(180))
        assert 0 < st.panel.bytes_written - sent < FULL_FRAME // 2
