"""Open a station's devices or the hub's panel on a chosen backend.

Backends: ``mock`` (driveable fakes, the default off a Pi), ``real`` (mfrc522, luma.oled
and gpiozero on the Pi's own pins) and ``emulated`` (the real vendor drivers over emulated
chips, see ``device.emulated``). The default comes from the ``COFFRE_DEVICE_BACKEND``
environment variable, else ``mock``.

Real and emulated backends are imported by name only when asked for (so vendor libraries
are never imported off a Pi); what they return is checked against the abstract devices.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from typing import Any

from device.base import Controls, DeviceError, Display, Reader, StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from device.panel import MockPanel, Panel
from hardware.pins import HubPins, StationPins, load_hub_pins, load_station_pins

BACKENDS: tuple[str, ...] = ("mock", "real", "emulated")
ENV_VAR = "COFFRE_DEVICE_BACKEND"


class UnknownBackend(DeviceError, ValueError):
    """The backend name is not one of BACKENDS."""


def backend_from_env() -> str | None:
    """$COFFRE_DEVICE_BACKEND as given, or None when it is unset or empty."""
    return os.environ.get(ENV_VAR) or None


def resolve_backend(backend: str | None = None) -> str:
    """The backend to use: the argument, else $COFFRE_DEVICE_BACKEND, else "mock"."""
    source = "backend argument"
    if backend is None:
        backend, source = backend_from_env() or "mock", ENV_VAR
    name = backend.strip().lower()
    if name not in BACKENDS:
        raise UnknownBackend(
            f"unknown device backend {backend!r} (from {source}): choose {', '.join(BACKENDS)}"
        )
    return name


def _attr(module: str, name: str) -> Any:
    """``module.name``, imported now (vendor libraries load only with their backend)."""
    return getattr(importlib.import_module(module), name)


def _not_a(value: object, kind: type, what: str) -> DeviceError:
    got = type(value).__name__
    return DeviceError(f"{what} gave an object of type {got}, not a {kind.__name__}")


def open_station(pins: StationPins | None = None, backend: str | None = None) -> StationDevices:
    """Reader, display and controls of one station on the chosen backend.

    ``pins`` defaults to the packaged station profile (``hardware/station.toml``).
    """
    name = resolve_backend(backend)
    if pins is None:
        pins = load_station_pins()
    if name == "mock":
        return StationDevices(MockReader(), MockDisplay(), MockControls())
    if name == "emulated":
        devices = _attr("device.emulated", "open_emulated_station")(pins).devices
        if not isinstance(devices, StationDevices):
            raise _not_a(devices, StationDevices, "open_emulated_station")
        return devices
    return _open_real_station(pins)


def open_station_display(pins: StationPins | None = None, backend: str | None = None) -> Display:
    """A station's display alone: to show why the station cannot start (its reader may be
    the part that fails). Close it before :func:`open_station` opens the same bus."""
    name = resolve_backend(backend)
    if pins is None:
        pins = load_station_pins()
    if name == "mock":
        return MockDisplay()
    if name == "emulated":
        return _DisplayOf(open_station(pins, "emulated"))
    display = _attr("device.real_display", "Ssd1306Display")(pins)
    if not isinstance(display, Display):
        raise _not_a(display, Display, "Ssd1306Display")
    return display


class _DisplayOf(Display):
    """The display of opened station devices; closing it closes them all."""

    def __init__(self, devices: StationDevices) -> None:
        self.devices = devices

    @property
    def inner(self) -> Display:
        return self.devices.display

    def show(self, image: Any) -> None:
        self.devices.display.show(image)

    def close(self) -> None:
        self.devices.close()

    def leave(self) -> None:
        self.devices.display.leave()
        self.devices.close()


def _open_real_station(pins: StationPins) -> StationDevices:
    from device.gpio import GpioControls

    opened: list[Reader | Display | Controls] = []
    try:
        reader = _attr("device.real_reader", "Mfrc522Reader")(pins)
        if not isinstance(reader, Reader):
            raise _not_a(reader, Reader, "Mfrc522Reader")
        opened.append(reader)
        display = _attr("device.real_display", "Ssd1306Display")(pins)
        if not isinstance(display, Display):
            raise _not_a(display, Display, "Ssd1306Display")
        opened.append(display)
        controls = GpioControls(pins)
    except BaseException:
        for device in reversed(opened):
            _close_quietly(device)
        raise
    return StationDevices(reader, display, controls)


def _close_quietly(device: Reader | Display | Controls | Panel) -> None:
    # Already failing: the first error is the one worth reporting.
    with contextlib.suppress(Exception):
        device.close()


def open_panel(pins: HubPins | None = None, backend: str | None = None) -> Panel:
    """The hub's host panel (five buttons + display) on the chosen backend.

    ``pins`` defaults to the packaged hub profile (``hardware/hub.toml``). ``emulated``
    runs the real gpiozero panel code over gpiozero's mock pins (drive them through
    ``panel.pin_factory.pin(n)``) with a MockDisplay.
    """
    name = resolve_backend(backend)
    if pins is None:
        pins = load_hub_pins()
    if name == "mock":
        return MockPanel()
    from device.gpio import GpioPanel

    if name == "emulated":
        from gpiozero.pins.mock import MockFactory, MockPWMPin

        return GpioPanel(pins, MockDisplay(), pin_factory=MockFactory(pin_class=MockPWMPin))
    display = _attr("device.real_display", "Ssd1306Display")(pins)
    if not isinstance(display, Display):
        raise _not_a(display, Display, "Ssd1306Display")
    try:
        return GpioPanel(pins, display)
    except BaseException:
        _close_quietly(display)
        raise
