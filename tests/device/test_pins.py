"""Station and hub pin maps: the packaged defaults and the validation errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from hardware.pins import (
    ButtonPin,
    DisplayPins,
    HubButtons,
    HubPins,
    KnobPins,
    PinMapError,
    ReaderPins,
    StationPins,
    load_hub_pins,
    load_station_pins,
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pins.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_default_station_profile_matches_design() -> None:
    """The packaged station.toml is DESIGN.md's profile (and the dataclass defaults)."""
    pins = load_station_pins()
    assert pins == StationPins()
    assert (pins.reader.spi_bus, pins.reader.spi_device, pins.reader.rst) == (0, 0, 25)
    assert pins.reader.irq is None
    assert (pins.display.i2c_port, pins.display.i2c_address) == (1, 0x3C)
    assert (pins.knob.a, pins.knob.b, pins.knob.push) == (17, 27, 22)
    assert pins.flap.pin == 5 and pins.flap.pull_up and not pins.flap.open_when_pressed
    assert pins.peek.pin == 16
    assert (pins.led.red, pins.led.green, pins.led.blue) == (12, 13, 19)
    assert pins.buzzer.pin == 18


def test_default_hub_profile_matches_design() -> None:
    """The packaged hub.toml has the panel on GPIO 5,6,13,19,26 and an I2C SSD1306."""
    pins = load_hub_pins()
    assert pins == HubPins()
    assert [pins.buttons.pin(n) for n in ("prev", "next", "ok", "back", "stop")] == [
        5,
        6,
        13,
        19,
        26,
    ]
    assert pins.display.driver == "ssd1306"


def test_partial_file_keeps_defaults(tmp_path: Path) -> None:
    """A file that only moves one pin keeps every other default."""
    pins = load_station_pins(_write(tmp_path, "[peek]\npin = 20\n"))
    assert pins.peek.pin == 20
    assert pins.knob == KnobPins()


def test_pin_used_twice_names_both_keys(tmp_path: Path) -> None:
    """Two devices on one GPIO is an error naming both keys and the file."""
    path = _write(tmp_path, "[peek]\npin = 17\n")
    with pytest.raises(PinMapError, match=r"pins\.toml: peek\.pin: GPIO 17 .* knob\.a"):
        load_station_pins(path)


def test_pin_on_a_bus_line_is_refused() -> None:
    """A GPIO taken by the enabled SPI or I2C bus cannot be reused."""
    with pytest.raises(PinMapError, match=r"knob\.push: GPIO 10 .*SPI0 MOSI"):
        StationPins(knob=KnobPins(push=10))
    with pytest.raises(PinMapError, match=r"buttons\.prev: GPIO 2 .*I2C1 SDA"):
        HubPins(buttons=HubButtons(prev=2))


def test_spi1_clashes_with_the_led_pins() -> None:
    """Moving the reader to SPI1 collides with the LED's GPIO19 (SPI1 MISO)."""
    with pytest.raises(PinMapError, match=r"led\.blue: GPIO 19 .*SPI1 MISO"):
        StationPins(reader=ReaderPins(spi_bus=1, spi_device=0))


def test_pin_outside_bcm_range(tmp_path: Path) -> None:
    """A GPIO outside 0..27 is refused with its key."""
    with pytest.raises(PinMapError, match=r"reader\.rst: GPIO 40 is outside"):
        load_station_pins(_write(tmp_path, "[reader]\nrst = 40\n"))
    with pytest.raises(PinMapError, match=r"buttons\.stop: GPIO -1"):
        HubPins(buttons=HubButtons(stop=-1))


def test_bad_i2c_address(tmp_path: Path) -> None:
    """An I2C address outside the 7-bit range is refused with its key."""
    with pytest.raises(PinMapError, match=r"display\.i2c_address: 0x78"):
        load_hub_pins(_write(tmp_path, "[display]\ni2c_address = 0x78\n"))
    with pytest.raises(PinMapError, match=r"display\.i2c_address"):
        StationPins(display=DisplayPins(i2c_address=0x01))


def test_unknown_key_is_an_error(tmp_path: Path) -> None:
    """A misspelt key is not silently ignored."""
    with pytest.raises(PinMapError, match=r"reader\.rts: unknown key"):
        load_station_pins(_write(tmp_path, "[reader]\nrts = 24\n"))
    with pytest.raises(PinMapError, match=r"leds: unknown key"):
        load_station_pins(_write(tmp_path, "[leds]\nred = 4\n"))


def test_wrong_type_is_an_error(tmp_path: Path) -> None:
    """A string where a pin number goes, or a bool for an int, is refused."""
    with pytest.raises(PinMapError, match=r"knob\.a: expected int, got 'GPIO17'"):
        load_station_pins(_write(tmp_path, '[knob]\na = "GPIO17"\n'))
    with pytest.raises(PinMapError, match=r"flap\.pin: expected int"):
        load_station_pins(_write(tmp_path, "[flap]\npin = true\n"))
    with pytest.raises(PinMapError, match=r"reader\.irq: expected int"):
        load_station_pins(_write(tmp_path, '[reader]\nirq = "no"\n'))


def test_optional_irq_pin_is_checked(tmp_path: Path) -> None:
    """Setting reader.irq claims that pin like any other."""
    assert load_station_pins(_write(tmp_path, "[reader]\nirq = 24\n")).reader.irq == 24
    with pytest.raises(PinMapError, match=r"reader\.irq: GPIO 5 .*flap\.pin|flap\.pin: GPIO 5"):
        load_station_pins(_write(tmp_path, "[reader]\nirq = 5\n"))


def test_unknown_driver_and_buzzer_kind() -> None:
    """Drivers and buzzer kinds the code cannot run are refused by name."""
    with pytest.raises(PinMapError, match=r"display\.driver: 'ssd1322'"):
        StationPins(display=DisplayPins(driver="ssd1322"))
    with pytest.raises(PinMapError, match=r"buzzer\.kind"):
        StationPins(buzzer=dataclasses.replace(StationPins().buzzer, kind="piezo"))


def test_missing_required_key(tmp_path: Path) -> None:
    """A [peek] table without its pin says the pin is missing."""
    with pytest.raises(PinMapError, match=r"peek\.pin: missing"):
        load_station_pins(_write(tmp_path, "[peek]\npull_up = true\n"))


def test_unreadable_or_invalid_file(tmp_path: Path) -> None:
    """A missing file or broken TOML is a PinMapError naming the file."""
    with pytest.raises(PinMapError, match=r"nope\.toml: cannot read"):
        load_station_pins(tmp_path / "nope.toml")
    with pytest.raises(PinMapError, match="not valid TOML"):
        load_hub_pins(_write(tmp_path, "[buttons\n"))


def test_bounce_range_checked() -> None:
    """A debounce time outside 0..1000 ms is refused with its key."""
    with pytest.raises(PinMapError, match=r"peek\.bounce_ms"):
        StationPins(peek=ButtonPin(pin=16, bounce_ms=5000))


def test_pin_maps_are_frozen() -> None:
    """Pin maps are immutable values."""
    pins = StationPins()
    with pytest.raises(dataclasses.FrozenInstanceError):
        pins.knob.a = 4  # type: ignore[misc]
