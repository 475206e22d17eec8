"""open_emulated_station: several stations in one process, each on its own virtual board."""

from __future__ import annotations

import sys

from PIL import Image, ImageDraw

from device.base import TagPresent
from device.emulated import open_emulated_station, rack
from device.factory import open_station
from device.real_display import Ssd1306Display
from device.real_reader import Mfrc522Reader
from hardware.pins import load_station_pins
from tests.support.emulated import events, same


def test_eight_stations_are_independent() -> None:
    """Eight stations: each reader sees only its own field, each glass its own frames."""
    stations = [open_emulated_station() for _ in range(8)]
    try:
        assert len({s.board for s in stations}) == 8
        for i, s in enumerate(stations):
            s.field.place(f"0000000{i}")
        for i, s in enumerate(stations):
            assert events(s.reader, 3) == [TagPresent(f"0000000{i}")]
        for i, s in enumerate(stations):
            img = Image.new("1", (128, 64))
            ImageDraw.Draw(img).text((0, 0), f"station {i}", fill=1)
            s.display.show(img)
        for i, s in enumerate(stations):
            img = Image.new("1", (128, 64))
            ImageDraw.Draw(img).text((0, 0), f"station {i}", fill=1)
            assert same(s.screen(), img)
        stations[3].chip.go_silent(0x00)
        assert events(stations[4].reader, 5) == []
        assert stations[4].chip.hard_resets == 0
    finally:
        for s in stations:
            s.close()


def test_pin_map_numbers_are_offset_per_board() -> None:
    """The packaged pin map (SPI0 CE0, RST 25, I2C1) lands on board k at 1000k + n."""
    pins = load_station_pins()
    with open_emulated_station(pins) as s:
        assert (s.spi_bus, s.spi_device) == (s.board * 1000 + 0, 0)
        assert s.rst_pin == s.board * 1000 + 25
        assert (s.i2c_port, s.i2c_address) == (s.board * 1000 + 1, 0x3C)
        assert isinstance(s.reader, Mfrc522Reader) and isinstance(s.display, Ssd1306Display)


def test_closing_frees_the_board_and_the_fakes() -> None:
    """Closing every station unwires its chips and takes the fake modules out of sys.modules."""
    before = rack.installed()
    s = open_emulated_station()
    board = s.board
    assert rack.installed()
    s.close()
    assert all(b // 1000 != board for b, _ in rack.RACK.spi)
    assert rack.installed() == before
    if not before:
        spidev = sys.modules.get("spidev")
        assert spidev is None or "Emulated" not in (spidev.__doc__ or "")


def test_factory_emulated_backend() -> None:
    """device.factory.open_station(backend="emulated") gives real backends over emulators,
    and devices.close() releases the board."""
    devices = open_station(backend="emulated")
    try:
        assert isinstance(devices.reader, Mfrc522Reader)
        emulated = devices.emulated  # type: ignore[attr-defined]
        emulated.field.place("CAFEF00D")
        assert events(devices.reader, 2) == [TagPresent("CAFEF00D")]
    finally:
        devices.close()
    assert emulated.chip not in rack.RACK.spi.values()


def test_frames_record_what_the_glass_showed() -> None:
    """EmulatedStation.frames holds each distinct frame read back from GDDRAM, in order,
    like MockDisplay.frames (luma's init and close are not frames)."""
    from device.mock import MockDisplay

    pictures = []
    for i in range(3):
        img = Image.new("1", (128, 64))
        ImageDraw.Draw(img).text((0, 20), f"frame {i}", fill=1)
        pictures.append(img)
    mock = MockDisplay()
    with open_emulated_station() as s:
        for img in (pictures[0], pictures[0], pictures[1], pictures[2], pictures[1]):
            s.display.show(img)
            mock.show(img)
        s.panel.fail_writes(1)
        s.display.show(pictures[0])
        mock.show(pictures[0])
        frames = list(s.frames)
    assert [f.tobytes() for f in frames] == [f.tobytes() for f in mock.frames]


def test_display_exposes_the_glass_frames() -> None:
    """The emulated station's display is the real Ssd1306Display whose ``frames``/``last``
    read back the glass (the simulator waits on them as on MockDisplay's)."""
    img = Image.new("1", (128, 64))
    ImageDraw.Draw(img).text((0, 20), "hello", fill=1)
    with open_emulated_station() as s:
        assert isinstance(s.display, Ssd1306Display)
        assert s.display.last is None
        s.display.show(img)
        assert s.display.frames == s.frames and same(s.display.last, img)


def test_backends_import_without_vendor_libraries() -> None:
    """Importing the real backends and the emulator loads no vendor hardware library."""
    import subprocess

    code = (
        "import sys, device.real_reader, device.real_display, device.emulated\n"
        "bad = [m for m in ('mfrc522', 'RPi', 'RPi.GPIO', 'spidev', 'smbus2', 'luma.oled')"
        " if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
