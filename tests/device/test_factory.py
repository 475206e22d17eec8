"""The backend factory: choosing mock/real/emulated, env default, clear errors, cleanup."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin
from PIL import Image

from device.base import (
    DeviceError,
    Display,
    Reader,
    ReaderEvent,
    StationDevices,
    TagPresent,
    TagRemoved,
)
from device.factory import ENV_VAR, UnknownBackend, open_panel, open_station, resolve_backend
from device.gpio import GpioControls, GpioPanel
from device.mock import MockControls, MockDisplay, MockReader
from device.panel import MockPanel
from hardware.keys import load_keyset
from hardware.pins import HubPins, StationPins


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No backend chosen in the environment."""
    monkeypatch.delenv(ENV_VAR, raising=False)


@pytest.fixture
def default_factory() -> Iterator[MockFactory]:
    """gpiozero's default pin factory is a MockFactory for the test (restored after)."""
    previous = Device.pin_factory
    mock = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = mock
    try:
        yield mock
    finally:
        mock.reset()
        Device.pin_factory = previous


class FakeReader(Reader):
    """Stands in for device.real_reader.Mfrc522Reader."""

    made: list[FakeReader] = []  # noqa: RUF012 - a test log

    def __init__(self, pins: StationPins) -> None:
        self.pins = pins
        self.closed = False
        FakeReader.made.append(self)

    def poll(self) -> ReaderEvent | None:
        return None

    @property
    def current(self) -> str | None:
        return None

    def close(self) -> None:
        self.closed = True


class FakeDisplay(Display):
    """Stands in for device.real_display.Ssd1306Display."""

    def __init__(self, pins: StationPins | HubPins) -> None:
        self.pins = pins
        self.closed = False

    def show(self, image: Image.Image) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class BrokenDisplay(FakeDisplay):
    """A display whose bus is not there."""

    def __init__(self, pins: StationPins | HubPins) -> None:
        raise DeviceError("no I2C bus 1")


@pytest.fixture
def real_modules(monkeypatch: pytest.MonkeyPatch) -> type[FakeDisplay]:
    """Fake device.real_reader / device.real_display modules (no vendor library needed)."""
    FakeReader.made.clear()
    reader_mod = types.ModuleType("device.real_reader")
    reader_mod.Mfrc522Reader = FakeReader  # type: ignore[attr-defined]
    display_mod = types.ModuleType("device.real_display")
    display_mod.Ssd1306Display = FakeDisplay  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "device.real_reader", reader_mod)
    monkeypatch.setitem(sys.modules, "device.real_display", display_mod)
    return FakeDisplay


def test_default_backend_is_mock(no_env: None) -> None:
    """With nothing set, a station is mock reader, display and controls."""
    devices = open_station()
    assert isinstance(devices.reader, MockReader)
    assert isinstance(devices.display, MockDisplay)
    assert isinstance(devices.controls, MockControls)
    assert resolve_backend() == "mock"


def test_env_var_chooses_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """COFFRE_DEVICE_BACKEND picks the backend when the caller does not (case-insensitive)."""
    monkeypatch.setenv(ENV_VAR, " Emulated ")
    assert resolve_backend() == "emulated"
    assert resolve_backend("mock") == "mock"
    monkeypatch.setenv(ENV_VAR, "")
    assert resolve_backend() == "mock"


def test_unknown_backend_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown name says where it came from and what the choices are."""
    with pytest.raises(UnknownBackend, match=r"'fake' \(from backend argument\): choose mock"):
        open_station(backend="fake")
    monkeypatch.setenv(ENV_VAR, "pi")
    with pytest.raises(UnknownBackend, match=rf"'pi' \(from {ENV_VAR}\)"):
        open_panel()
    with pytest.raises(ValueError):
        resolve_backend("gpio")


def test_real_station_wires_the_real_backends(
    no_env: None, real_modules: type[FakeDisplay], default_factory: MockFactory
) -> None:
    """backend="real" builds Mfrc522Reader(pins), Ssd1306Display(pins), GpioControls(pins)."""
    pins = StationPins()
    devices = open_station(pins, backend="real")
    try:
        assert isinstance(devices.reader, FakeReader) and devices.reader.pins is pins
        assert isinstance(devices.display, FakeDisplay) and devices.display.pins is pins
        assert isinstance(devices.controls, GpioControls)
        turns: list[int] = []
        devices.controls.on_turn = turns.append
        for pin in (17, 27):
            default_factory.pin(pin).drive_low()
        for pin in (17, 27):
            default_factory.pin(pin).drive_high()
        assert turns == [1]
    finally:
        devices.close()
    assert devices.reader.closed and devices.display.closed


def test_real_station_closes_what_it_opened_on_failure(
    monkeypatch: pytest.MonkeyPatch, real_modules: type[FakeDisplay]
) -> None:
    """If the display fails, the reader already opened is closed and the error propagates."""
    monkeypatch.setattr(sys.modules["device.real_display"], "Ssd1306Display", BrokenDisplay)
    with pytest.raises(DeviceError, match="no I2C bus 1"):
        open_station(backend="real")
    assert len(FakeReader.made) == 1 and FakeReader.made[0].closed


def test_real_backend_of_the_wrong_type_is_refused(
    monkeypatch: pytest.MonkeyPatch, real_modules: type[FakeDisplay]
) -> None:
    """A backend class that is not a Reader is refused by name."""
    monkeypatch.setattr(sys.modules["device.real_reader"], "Mfrc522Reader", lambda pins: 42)
    with pytest.raises(DeviceError, match="Mfrc522Reader gave an object of type int, not a Reader"):
        open_station(backend="real")


def test_emulated_station_comes_from_device_emulated(monkeypatch: pytest.MonkeyPatch) -> None:
    """backend="emulated" returns open_emulated_station(pins).devices."""
    expected = StationDevices(MockReader(), MockDisplay(), MockControls())
    seen: list[StationPins] = []

    def fake_open(pins: StationPins) -> types.SimpleNamespace:
        seen.append(pins)
        return types.SimpleNamespace(devices=expected)

    import device.emulated

    monkeypatch.setattr(device.emulated, "open_emulated_station", fake_open, raising=False)
    assert open_station(backend="emulated") is expected
    assert seen == [StationPins()]


def test_mock_panel(no_env: None) -> None:
    """The default panel is a MockPanel."""
    assert isinstance(open_panel(), MockPanel)


def test_emulated_panel_runs_gpio_code_on_mock_pins() -> None:
    """backend="emulated" gives a GpioPanel whose mock pins can be driven."""
    panel = open_panel(backend="emulated")
    try:
        assert isinstance(panel, GpioPanel)
        names: list[str] = []
        panel.on_button = names.append
        panel.pin_factory.pin(26).drive_low()
        assert names == ["stop"]
    finally:
        panel.close()


def test_real_panel_wires_display_and_buttons(
    real_modules: type[FakeDisplay], default_factory: MockFactory
) -> None:
    """backend="real" gives a GpioPanel over Ssd1306Display(hub pins)."""
    pins = HubPins()
    panel = open_panel(pins, backend="real")
    try:
        assert isinstance(panel, GpioPanel)
        assert isinstance(panel.display, FakeDisplay) and panel.display.pins is pins
        names: list[str] = []
        panel.on_button = names.append
        default_factory.pin(5).drive_low()
        assert names == ["prev"]
    finally:
        panel.close()


def test_emulated_station_reads_every_default_key() -> None:
    """Through the emulated chips, the real driver reads all 72 default UIDs (4- and 7-byte)."""
    devices = open_station(backend="emulated")
    field: Any = getattr(devices, "emulated").field  # noqa: B009 - emulated-only attribute
    try:
        for uid in load_keyset():
            field.place(uid)
            assert _next_event(devices.reader) == TagPresent(uid)
            field.remove(uid)
            assert _next_event(devices.reader) == TagRemoved(uid)
    finally:
        devices.close()


def _next_event(reader: Reader) -> ReaderEvent | None:
    for _ in range(20):
        event = reader.poll()
        if event is not None:
            return event
    return None


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (
            RuntimeError("This module can only be run on a Raspberry Pi!"),
            "no Raspberry Pi GPIO here",
        ),
        (
            ModuleNotFoundError("No module named 'mfrc522'", name="mfrc522"),
            "mfrc522 not installed: mfrc522",
        ),
    ],
)
def test_reader_driver_failure_is_a_short_reason(
    monkeypatch: pytest.MonkeyPatch, failure: Exception, reason: str
) -> None:
    """The vendor driver failing to import off a Pi gives a reason that fits the hub's
    64-character seat line whole (it read "...can only be run on a Ras")."""
    from device import real_reader
    from device.base import ReaderError

    def broken(_name: str) -> Any:
        raise failure

    monkeypatch.setattr(real_reader.importlib, "import_module", broken)
    with pytest.raises(ReaderError) as raised:
        real_reader.Mfrc522Reader()
    assert str(raised.value) == reason
    assert len(reason) <= 64
