"""The same unattended checks on the emulated station and, on a Pi with the station's
parts (COFFRE_HARDWARE=1), on the real one: reader chip answers and keeps its
configuration, an empty field stays quiet, the display takes frames. Hands-on checks
(tapping a tag, turning the knob) are ``coffre selftest``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PIL import Image

from device.base import StationDevices
from device.real_display import Ssd1306Display
from device.real_reader import KNOWN_VERSIONS, Mfrc522Reader
from firmware.station.selftest import selftest_pattern


@pytest.fixture(params=["emulated", pytest.param("real", marks=pytest.mark.hardware)])
def station(request: pytest.FixtureRequest) -> Iterator[StationDevices]:
    """Station devices on emulated chips, or on the Pi's own (nothing on the reader)."""
    from device.factory import open_station

    devices = open_station(backend=request.param)
    try:
        yield devices
    finally:
        devices.close()


def test_reader_chip_answers(station: StationDevices) -> None:
    """The MFRC522 reports a known version and keeps antenna and timer configured."""
    reader = station.reader
    assert isinstance(reader, Mfrc522Reader)
    assert reader.version() in KNOWN_VERSIONS
    assert reader.healthy()


def test_empty_field_is_quiet(station: StationDevices) -> None:
    """With nothing on the reader, 40 polls give no event and need no recovery."""
    reader = station.reader
    assert isinstance(reader, Mfrc522Reader)
    assert [e for e in (reader.poll() for _ in range(40)) if e is not None] == []
    assert reader.current is None and reader.recoveries == 0


def test_display_takes_frames(station: StationDevices) -> None:
    """The SSD1306 takes the test pattern and a blank frame without an I2C error."""
    display = station.display
    assert isinstance(display, Ssd1306Display)
    display.show(selftest_pattern())
    display.show(Image.new("1", (128, 64)))
    assert display.healthy and display.failures == 0
