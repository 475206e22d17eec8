"""The unmodified mfrc522 package over the emulated MFRC522 and virtual ISO 14443-A cards."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest

from device.emulated.iso14443 import CardState, VirtualCard, crc_a
from device.emulated.mfrc522_chip import Mfrc522Chip
from device.emulated.rack import RACK, vendor_fakes

BUS = 900  # a rack number no emulated station uses


@pytest.fixture
def chip() -> Iterator[Mfrc522Chip]:
    """An emulated MFRC522 wired at SPI 900.0, reset pin 925."""
    c = Mfrc522Chip()
    RACK.wire_spi(BUS, 0, c)
    RACK.wire_pin(BUS + 25, on_output=c.reset_pin)
    try:
        yield c
    finally:
        RACK.unwire(c)
        RACK.unwire_pin(BUS + 25)


@pytest.fixture
def drv(chip: Mfrc522Chip) -> Iterator[Any]:
    """The package's own MFRC522 class, constructed over the fakes as its docs say."""
    with vendor_fakes():
        module = importlib.import_module("mfrc522")
        gpio = importlib.import_module("RPi.GPIO")
        yield module.MFRC522(bus=BUS, device=0, pin_mode=gpio.BCM, pin_rst=BUS + 25)


def select(drv: Any) -> list[int]:
    """REQA, anticollision and select at cascade level 1 with the package's calls."""
    status, bits = drv.MFRC522_Request(drv.PICC_REQIDL)
    assert (status, bits) == (drv.MI_OK, 16)
    status, uid = drv.MFRC522_Anticoll()
    assert status == drv.MI_OK
    drv.MFRC522_SelectTag(uid)
    return list(uid)


def test_crc_a_matches_iso_example() -> None:
    """CRC_A of HLTA (50 00) is 57 CD, as in ISO 14443-3."""
    assert crc_a(bytes([0x50, 0x00])) == bytes([0x57, 0xCD])


def test_version_register_and_init(chip: Mfrc522Chip, drv: Any) -> None:
    """The driver's init soft-resets the chip, sets the timer and turns the antenna on."""
    assert drv.Read_MFRC522(drv.VersionReg) == 0x92
    assert chip.soft_resets == 1
    assert chip.antenna_on and chip.field.powered
    assert drv.Read_MFRC522(drv.TModeReg) == 0x8D


def test_driver_reads_4_byte_uid(chip: Mfrc522Chip, drv: Any) -> None:
    """Request, Anticoll and SelectTag of the package give UID+BCC and SAK 0x08."""
    chip.field.place(VirtualCard("DEADBEEF"))
    status, uid = 0, []
    assert drv.MFRC522_Request(drv.PICC_REQIDL) == (drv.MI_OK, 16)
    status, uid = drv.MFRC522_Anticoll()
    assert status == drv.MI_OK
    assert uid == [0xDE, 0xAD, 0xBE, 0xEF, 0xDE ^ 0xAD ^ 0xBE ^ 0xEF]
    assert drv.MFRC522_SelectTag(uid) == 0x08


def test_driver_reads_7_byte_uid_at_cascade_level_2(chip: Mfrc522Chip, drv: Any) -> None:
    """CL1 gives the cascade tag 0x88 and SAK 0x04; CL2 (0x95) with the driver's
    primitives gives the last four bytes and the final SAK."""
    card = chip.field.place(VirtualCard("04A1B2C3D4E5F6"))
    drv.MFRC522_Request(drv.PICC_REQIDL)
    status, cl1 = drv.MFRC522_Anticoll()
    assert status == drv.MI_OK and cl1[:4] == [0x88, 0x04, 0xA1, 0xB2]
    assert drv.MFRC522_SelectTag(cl1) == 0x04
    drv.Write_MFRC522(drv.BitFramingReg, 0x00)
    status, cl2, bits = drv.MFRC522_ToCard(drv.PCD_TRANSCEIVE, [0x95, 0x20])
    assert status == drv.MI_OK and bits == 40 and cl2[:4] == [0xC3, 0xD4, 0xE5, 0xF6]
    frame = [0x95, 0x70, *cl2]
    status, sak, bits = drv.MFRC522_ToCard(drv.PCD_TRANSCEIVE, frame + drv.CalulateCRC(frame))
    assert status == drv.MI_OK and bits == 24 and sak[0] == 0x00
    assert card.state is CardState.ACTIVE


def test_halted_card_wakes_on_wupa_not_reqa(chip: Mfrc522Chip, drv: Any) -> None:
    """After HLTA a card ignores REQA and answers WUPA."""
    card = chip.field.place(VirtualCard("11223344"))
    select(drv)
    halt = [0x50, 0x00]
    drv.MFRC522_ToCard(drv.PCD_TRANSCEIVE, halt + drv.CalulateCRC(halt))
    assert card.state is CardState.HALT
    assert drv.MFRC522_Request(drv.PICC_REQIDL)[0] == drv.MI_ERR
    assert drv.MFRC522_Request(drv.PICC_REQALL) == (drv.MI_OK, 16)
    assert card.state is CardState.READY


def test_active_card_ignores_the_next_request(chip: Mfrc522Chip, drv: Any) -> None:
    """A selected card left ACTIVE does not answer a new REQA (it drops to IDLE)."""
    card = chip.field.place(VirtualCard("11223344"))
    select(drv)
    assert drv.MFRC522_Request(drv.PICC_REQIDL)[0] == drv.MI_ERR
    assert card.state is CardState.IDLE
    assert drv.MFRC522_Request(drv.PICC_REQIDL)[0] == drv.MI_OK


def test_mifare_auth_read_write(chip: Mfrc522Chip, drv: Any) -> None:
    """Auth with key A sets MFCrypto1On; block 8 is read, written and read back."""
    card = chip.field.place(VirtualCard("CAFEF00D"))
    uid = select(drv)
    assert drv.MFRC522_Auth(drv.PICC_AUTHENT1A, 8, [0xFF] * 6, uid) == drv.MI_OK
    assert drv.Read_MFRC522(drv.Status2Reg) & 0x08
    assert drv.MFRC522_Read(8) == [0] * 16
    drv.MFRC522_Write(8, list(range(100, 116)))
    assert drv.MFRC522_Read(8) == list(range(100, 116))
    assert bytes(card.blocks[8]) == bytes(range(100, 116))
    drv.MFRC522_StopCrypto1()
    assert not drv.Read_MFRC522(drv.Status2Reg) & 0x08


def test_mifare_wrong_key_fails(chip: Mfrc522Chip, drv: Any) -> None:
    """A wrong key leaves Crypto1 off, and the card drops out of ACTIVE."""
    card = chip.field.place(VirtualCard("CAFEF00D"))
    uid = select(drv)
    assert drv.MFRC522_Auth(drv.PICC_AUTHENT1A, 8, [0x00] * 6, uid) == drv.MI_ERR
    assert not drv.Read_MFRC522(drv.Status2Reg) & 0x08
    assert card.state is CardState.IDLE


def test_read_without_auth_is_refused(chip: Mfrc522Chip, drv: Any) -> None:
    """A Classic block read without authentication gets a NAK, not data."""
    chip.field.place(VirtualCard("CAFEF00D"))
    select(drv)
    assert drv.MFRC522_Read(4) is None


def test_forgotten_stop_crypto_breaks_the_next_card(chip: Mfrc522Chip, drv: Any) -> None:
    """With MFCrypto1On left set, a fresh card cannot be selected (frames are ciphered)."""
    chip.field.place(VirtualCard("CAFEF00D"))
    uid = select(drv)
    drv.MFRC522_Auth(drv.PICC_AUTHENT1A, 8, [0xFF] * 6, uid)
    chip.field.remove()
    chip.field.place(VirtualCard("01020304"))
    assert drv.MFRC522_Request(drv.PICC_REQIDL) == (drv.MI_OK, 16)
    assert drv.MFRC522_Anticoll()[0] == drv.MI_ERR


def test_two_cards_collide(chip: Mfrc522Chip, drv: Any) -> None:
    """Two cards answer anticollision together: CollErr, and the driver reports an error."""
    chip.field.place(VirtualCard("01020304"))
    chip.field.place(VirtualCard("01030304"))
    assert drv.MFRC522_Request(drv.PICC_REQIDL) == (drv.MI_OK, 16)
    assert drv.MFRC522_Anticoll()[0] == drv.MI_ERR
    assert drv.Read_MFRC522(drv.ErrorReg) & 0x08
    assert drv.Read_MFRC522(drv.CollReg) & 0x3F == 9  # bit 9 differs first (02 vs 03)


def test_card_pulled_mid_read(chip: Mfrc522Chip, drv: Any) -> None:
    """A card leaving the field after select: the block read gets nothing back."""
    card = chip.field.place(VirtualCard("CAFEF00D"))
    uid = select(drv)
    assert drv.MFRC522_Auth(drv.PICC_AUTHENT1A, 8, [0xFF] * 6, uid) == drv.MI_OK
    chip.field.pull_after(0)
    assert drv.MFRC522_Read(8) is None
    assert card not in chip.field.cards


def test_ntag_reads_four_pages(chip: Mfrc522Chip, drv: Any) -> None:
    """An Ultralight/NTAG READ returns pages n..n+3 (UID bytes on pages 0-1)."""
    chip.field.place(VirtualCard("04A1B2C3D4E5F6"))
    drv.MFRC522_Request(drv.PICC_REQIDL)
    _, cl1 = drv.MFRC522_Anticoll()
    drv.MFRC522_SelectTag(cl1)
    drv.Write_MFRC522(drv.BitFramingReg, 0x00)
    _, cl2, _ = drv.MFRC522_ToCard(drv.PCD_TRANSCEIVE, [0x95, 0x20])
    frame = [0x95, 0x70, *cl2]
    drv.MFRC522_ToCard(drv.PCD_TRANSCEIVE, frame + drv.CalulateCRC(frame))
    data = drv.MFRC522_Read(0)
    assert data[:3] == [0x04, 0xA1, 0xB2] and data[4:8] == [0xC3, 0xD4, 0xE5, 0xF6]


def test_silent_chip_reads_constant_until_hard_reset(chip: Mfrc522Chip, drv: Any) -> None:
    """A silent chip reads 0x00 everywhere (VersionReg too); a reset-pin pulse revives it."""
    chip.go_silent(0x00)
    assert drv.Read_MFRC522(drv.VersionReg) == 0x00
    gpio = importlib.import_module("mfrc522.MFRC522").GPIO
    gpio.output(BUS + 25, 0)
    gpio.output(BUS + 25, 1)
    assert chip.hard_resets == 1
    assert drv.Read_MFRC522(drv.VersionReg) == 0x92
    assert not chip.antenna_on  # a hard reset loses the configuration


def test_fakes_are_removed_afterwards() -> None:
    """Outside vendor_fakes() no fake vendor module is left in sys.modules."""
    import sys

    with vendor_fakes():
        importlib.import_module("mfrc522")
        assert sys.modules["spidev"].__doc__.startswith("Emulated")
    assert "spidev" not in sys.modules or not (sys.modules["spidev"].__doc__ or "").startswith(
        "Emulated"
    )
    assert "mfrc522" not in sys.modules


def test_irq_pin_follows_enabled_interrupts(chip: Mfrc522Chip, drv: Any) -> None:
    """The IRQ pin, read through the fake GPIO, rises when an enabled interrupt is set."""
    RACK.wire_pin(BUS + 24, read=chip.irq_pin)
    try:
        gpio = importlib.import_module("mfrc522.MFRC522").GPIO
        gpio.setup(BUS + 24, gpio.IN)
        drv.Write_MFRC522(drv.CommIEnReg, 0x20)  # RxIRq only, IRQ pin active high
        drv.Write_MFRC522(drv.CommIrqReg, 0x7F)
        assert gpio.input(BUS + 24) == 0
        chip.field.place(VirtualCard("01020304"))
        drv.Write_MFRC522(drv.BitFramingReg, 0x07)
        drv.Write_MFRC522(drv.FIFODataReg, 0x26)
        drv.Write_MFRC522(drv.CommandReg, drv.PCD_TRANSCEIVE)
        drv.SetBitMask(drv.BitFramingReg, 0x80)
        assert gpio.input(BUS + 24) == 1
    finally:
        RACK.unwire_pin(BUS + 24)
