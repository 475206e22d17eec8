"""The unmodified luma.oled ssd1306 driver over the emulated SSD1306: frames decoded from
GDDRAM pixel-exactly, panel settings, and Ssd1306Display's recovery from I2C errors."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image, ImageDraw

from device.emulated import EmulatedStation
from device.emulated.rack import RACK, vendor_fakes
from device.emulated.ssd1306_chip import Ssd1306Chip
from tests.support.emulated import same

PORT = 901


@pytest.fixture
def panel() -> Iterator[Ssd1306Chip]:
    """An emulated SSD1306 wired at I2C port 901, address 0x3C."""
    chip = Ssd1306Chip()
    RACK.wire_i2c(PORT, 0x3C, chip)
    try:
        yield chip
    finally:
        RACK.unwire(chip)


@pytest.fixture
def oled(panel: Ssd1306Chip) -> Iterator[Any]:
    """luma's own ssd1306 device on luma's own i2c interface, over the fake smbus2."""
    with vendor_fakes():
        serial = importlib.import_module("luma.core.interface.serial").i2c(port=PORT)
        device = importlib.import_module("luma.oled.device").ssd1306(serial)
        yield device
        device.persist = True


def picture() -> Image.Image:
    """Text and shapes touching every page and both edges."""
    img = Image.new("1", (128, 64))
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, 127, 63), outline=1)
    d.text((4, 4), "Secret Identity", fill=1)
    d.ellipse((90, 30, 120, 60), fill=1)
    d.line((0, 63, 60, 20), fill=1)
    d.point((127, 0), fill=1)
    return img


def test_canvas_drawing_decodes_exactly(panel: Ssd1306Chip, oled: Any) -> None:
    """What luma's canvas draws is, pixel for pixel, what the emulated glass shows."""
    canvas = importlib.import_module("luma.core.render").canvas
    with canvas(oled) as draw:
        draw.rectangle(oled.bounding_box, outline="white", fill="black")
        draw.text((10, 20), "coffre 0123", fill="white")
        draw.polygon([(100, 5), (120, 25), (80, 25)], fill="white")
    expected = Image.new("1", (128, 64))
    d = ImageDraw.Draw(expected)
    d.rectangle((0, 0, 127, 63), outline=1, fill=0)
    d.text((10, 20), "coffre 0123", fill=1)
    d.polygon([(100, 5), (120, 25), (80, 25)], fill=1)
    assert same(panel.frame(), expected)


def test_display_image_decodes_exactly(panel: Ssd1306Chip, oled: Any) -> None:
    """device.display(image) puts exactly that image on the glass (LSB-on-top pages)."""
    img = picture()
    oled.display(img)
    assert same(panel.frame(), img)
    assert panel.pixel(127, 0) and panel.ram[127] & 1


def test_init_sequence_is_decoded(panel: Ssd1306Chip, oled: Any) -> None:
    """luma's init: horizontal mode, remap, COM scan dec, charge pump on, contrast 0xCF, on."""
    assert panel.mode == 0 and panel.seg_remap and panel.com_reverse
    assert panel.charge_pump and panel.display_on and panel.multiplex == 63
    assert panel.contrast == 0xCF


def test_contrast_and_on_off(panel: Ssd1306Chip, oled: Any) -> None:
    """contrast() is recorded; hide() blanks the glass and show() brings the frame back."""
    img = picture()
    oled.display(img)
    oled.contrast(0x10)
    assert panel.contrast == 0x10
    oled.hide()
    assert panel.frame().getbbox() is None
    oled.show()
    assert same(panel.frame(), img)


def test_inverse_display(panel: Ssd1306Chip, oled: Any) -> None:
    """Command 0xA7 inverts the glass; 0xA6 restores it; 0xA5 lights everything."""
    img = picture()
    oled.display(img)
    oled.command(0xA7)
    assert same(panel.frame(), Image.eval(img.convert("L"), lambda v: 255 - v).convert("1"))
    oled.command(0xA6)
    assert same(panel.frame(), img)
    oled.command(0xA5)
    assert panel.frame().convert("L").getextrema() == (255, 255)


def test_orientation_commands(panel: Ssd1306Chip, oled: Any) -> None:
    """Without segment remap the glass is mirrored; with COM scan increasing, flipped."""
    img = picture()
    oled.display(img)
    oled.command(0xA0)
    assert same(panel.frame(), img.transpose(Image.Transpose.FLIP_LEFT_RIGHT))
    oled.command(0xA1, 0xC0)
    assert same(panel.frame(), img.transpose(Image.Transpose.FLIP_TOP_BOTTOM))


def test_start_line_scrolls_vertically(panel: Ssd1306Chip, oled: Any) -> None:
    """Display start line 8 shows GDDRAM row 8 on the top line."""
    img = picture()
    oled.display(img)
    oled.command(0x48)
    top = Image.new("1", (128, 64))
    top.paste(img.crop((0, 8, 128, 64)), (0, 0))
    top.paste(img.crop((0, 0, 128, 8)), (0, 56))
    assert same(panel.frame(), top)


def test_vertical_and_page_addressing(panel: Ssd1306Chip, oled: Any) -> None:
    """Vertical mode fills columns page by page; page mode writes one page from a column."""
    oled.command(0x20, 0x01, 0x21, 10, 11, 0x22, 2, 3)
    oled.data([0x01, 0x02, 0x04, 0x08])
    assert panel.pixel(10, 16) and panel.pixel(10, 25) and panel.pixel(11, 18)
    assert panel.pixel(11, 27)
    oled.command(0x20, 0x02, 0xB5, 0x04, 0x12)  # page 5, column 0x24
    oled.data([0xFF])
    assert all(panel.pixel(0x24, y) for y in range(40, 48))


def test_glass_blank_before_init_and_when_pump_off(panel: Ssd1306Chip) -> None:
    """At power-up the panel is off; with the charge pump off it stays dark."""
    assert panel.frame().getbbox() is None
    panel.i2c_write(bytes([0x00, 0xAF, 0xA5]))
    assert panel.frame().getbbox() is None
    panel.i2c_write(bytes([0x00, 0x8D, 0x14]))
    assert panel.frame().getbbox() == (0, 0, 128, 64)


def test_continuation_control_bytes(panel: Ssd1306Chip) -> None:
    """Co=1 control bytes carry one byte each; a command's arguments may span writes."""
    panel.i2c_write(bytes([0x80, 0x81, 0x80, 0x33]))
    assert panel.contrast == 0x33
    panel.i2c_write(bytes([0x00, 0x81]))
    panel.i2c_write(bytes([0x00, 0x44]))
    assert panel.contrast == 0x44


# -- Ssd1306Display ------------------------------------------------------------------------


def test_show_puts_the_frame_on_the_glass(station: EmulatedStation) -> None:
    """Ssd1306Display.show(image) gives exactly that image on the emulated glass."""
    img = picture()
    station.display.show(img)
    assert same(station.screen(), img)


def test_identical_frames_are_skipped(station: EmulatedStation) -> None:
    """Showing the same frame again sends nothing over I2C."""
    img = picture()
    station.display.show(img)
    writes = station.panel.writes
    station.display.show(img.copy())
    assert station.panel.writes == writes


def test_single_i2c_error_recovers_in_the_same_show(station: EmulatedStation) -> None:
    """One NACKed write: show() re-creates the luma device and the frame still lands."""
    img = picture()
    station.panel.fail_writes(1)
    station.display.show(img)
    assert same(station.screen(), img)
    assert station.display.failures == 1 and station.display.recreations == 1


def test_long_i2c_outage_loses_no_frame(station: EmulatedStation) -> None:
    """While the bus fails show() does not raise; the next show re-sends the last wanted
    frame, even when it is the same frame."""
    first, second = picture(), Image.new("1", (128, 64), 1)
    station.display.show(first)
    station.panel.fail_writes(1000)
    station.display.show(second)
    assert same(station.screen(), first) and not station.display.healthy
    station.panel.fail_next = 0
    station.display.show(second)
    assert same(station.screen(), second) and station.display.healthy


def test_panel_reset_is_repaired_by_recreation(station: EmulatedStation) -> None:
    """After an I2C error the new luma device re-sends the init: a panel that lost power
    comes back on, configured, with the frame."""
    img = picture()
    station.display.show(img)
    station.panel.power_on_reset()
    station.panel.fail_writes(1)
    station.display.show(Image.new("1", (128, 64)))
    station.display.show(img)
    assert station.panel.display_on and same(station.screen(), img)


def test_close_blanks_the_panel(station: EmulatedStation) -> None:
    """Closing the display switches the panel off (luma cleanup)."""
    station.display.show(picture())
    station.display.close()
    assert station.screen().getbbox() is None


def test_missing_panel_is_a_display_error() -> None:
    """Opening a display where no panel answers raises DisplayError."""
    from device.base import DisplayError
    from device.real_display import Ssd1306Display

    chip = Ssd1306Chip()
    RACK.wire_i2c(902, 0x3D, chip)  # the port exists, 0x3C does not answer
    try:
        with vendor_fakes(), pytest.raises(DisplayError, match="no SSD1306 at I2C 902:0x3C"):
            Ssd1306Display(port=902, address=0x3C)
        with vendor_fakes(), pytest.raises(DisplayError, match="I2C 903"):
            Ssd1306Display(port=903)
    finally:
        RACK.unwire(chip)
