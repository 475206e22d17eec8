"""Pin maps for the station and the hub, loaded from TOML so a builder can rewire without code.

Pins are BCM GPIO numbers. The dataclasses carry the defaults of DESIGN.md's hardware
profile (the same values as ``station.toml`` / ``hub.toml``) and validate themselves on
construction: a pin used twice (buses included), a GPIO outside 0..27, a bad I2C
address or an unknown driver raises ``PinMapError`` naming the offending key.
"""

from __future__ import annotations

import tomllib
import typing
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

BCM_MIN = 0
BCM_MAX = 27
I2C_ADDRESS_MIN = 0x03
I2C_ADDRESS_MAX = 0x77

HUB_BUTTONS: tuple[str, ...] = ("prev", "next", "ok", "back", "stop")
DISPLAY_DRIVERS = ("ssd1306",)
READER_DRIVERS = ("mfrc522",)
BUZZER_KINDS = ("active", "passive")

# Pins a bus takes once it is enabled (BCM): they cannot serve as plain GPIO.
_I2C_PINS = {0: {"SDA": 0, "SCL": 1}, 1: {"SDA": 2, "SCL": 3}}
_SPI_PINS = {
    0: {"MISO": 9, "MOSI": 10, "SCLK": 11},
    1: {"MISO": 19, "MOSI": 20, "SCLK": 21},
}
_SPI_CE = {0: (8, 7), 1: (18, 17, 16)}


class PinMapError(ValueError):
    """A pin map is malformed or wires two things to one pin."""


@dataclass(frozen=True)
class ReaderPins:
    """MFRC522 on SPI: bus, chip select (device), reset and optional IRQ GPIO."""

    driver: str = "mfrc522"
    spi_bus: int = 0
    spi_device: int = 0  # CE0
    rst: int = 25
    irq: int | None = None
    spi_speed_hz: int = 1_000_000


@dataclass(frozen=True)
class DisplayPins:
    """An I2C OLED: port (``/dev/i2c-<port>``), 7-bit address and geometry."""

    driver: str = "ssd1306"
    i2c_port: int = 1
    i2c_address: int = 0x3C
    width: int = 128
    height: int = 64
    rotate: int = 0  # quarter turns, as luma takes it


@dataclass(frozen=True)
class KnobPins:
    """KY-040 rotary encoder: A (CLK), B (DT) and the push switch (SW)."""

    a: int = 17
    b: int = 27
    push: int = 22
    bounce_ms: int | None = None  # encoder edges: gpiozero's state machine absorbs bounce
    push_bounce_ms: int | None = 20


@dataclass(frozen=True)
class FlapPins:
    """Reed switch or hall sensor under the flap's magnet.

    Wired between the GPIO and GND with the pull-up on: the magnet of the closed flap
    closes the reed (or pulls the hall output low), which reads as "pressed".
    ``open_when_pressed = true`` is for a normally-closed reed that opens at the magnet.
    """

    pin: int = 5
    pull_up: bool = True
    open_when_pressed: bool = False
    bounce_ms: int | None = None  # state is re-read on every edge: no edge is lost


@dataclass(frozen=True)
class ButtonPin:
    """A push button between the GPIO and GND (pull-up on), or to 3V3 with ``pull_up = false``."""

    pin: int
    pull_up: bool = True
    bounce_ms: int | None = 20


def _peek_default() -> ButtonPin:
    return ButtonPin(pin=16)


@dataclass(frozen=True)
class LedPins:
    """RGB LED through 3 PWM GPIOs (each with its resistor)."""

    red: int = 12
    green: int = 13
    blue: int = 19
    common_anode: bool = False  # True: the common leg goes to 3V3 and a low pin lights


@dataclass(frozen=True)
class BuzzerPins:
    """Buzzer: ``active`` (has its own oscillator: on/off) or ``passive`` (PWM tones)."""

    pin: int = 18
    kind: str = "active"
    active_high: bool = True


@dataclass(frozen=True)
class StationPins:
    """Everything a station wires to its Pi."""

    reader: ReaderPins = field(default_factory=ReaderPins)
    display: DisplayPins = field(default_factory=DisplayPins)
    knob: KnobPins = field(default_factory=KnobPins)
    flap: FlapPins = field(default_factory=FlapPins)
    peek: ButtonPin = field(default_factory=_peek_default)
    led: LedPins = field(default_factory=LedPins)
    buzzer: BuzzerPins = field(default_factory=BuzzerPins)

    def __post_init__(self) -> None:
        _check_station(self)


@dataclass(frozen=True)
class HubButtons:
    """The host panel's five buttons."""

    prev: int = 5
    next: int = 6
    ok: int = 13
    back: int = 19
    stop: int = 26
    pull_up: bool = True
    bounce_ms: int | None = 20

    def pin(self, name: str) -> int:
        """The GPIO of the button called ``name`` (one of ``HUB_BUTTONS``)."""
        if name not in HUB_BUTTONS:
            raise KeyError(name)
        value: int = getattr(self, name)
        return value


@dataclass(frozen=True)
class HubPins:
    """Everything the hub wires to its Pi: the panel buttons and the display."""

    buttons: HubButtons = field(default_factory=HubButtons)
    display: DisplayPins = field(default_factory=DisplayPins)

    def __post_init__(self) -> None:
        _check_hub(self)


# --- validation ------------------------------------------------------------------------


def _check_gpio(key: str, pin: int) -> None:
    if not BCM_MIN <= pin <= BCM_MAX:
        raise PinMapError(f"{key}: GPIO {pin} is outside BCM {BCM_MIN}..{BCM_MAX}")


def _check_ms(key: str, value: int | None) -> None:
    if value is not None and not 0 <= value <= 1000:
        raise PinMapError(f"{key}: {value} ms is outside 0..1000")


def _check_choice(key: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise PinMapError(f"{key}: {value!r} is not one of {', '.join(choices)}")


def _check_display(d: DisplayPins) -> None:
    _check_choice("display.driver", d.driver, DISPLAY_DRIVERS)
    if d.i2c_port not in _I2C_PINS:
        raise PinMapError(f"display.i2c_port: {d.i2c_port} is not 0 or 1")
    if not I2C_ADDRESS_MIN <= d.i2c_address <= I2C_ADDRESS_MAX:
        raise PinMapError(
            f"display.i2c_address: 0x{d.i2c_address:02X} is outside "
            f"0x{I2C_ADDRESS_MIN:02X}..0x{I2C_ADDRESS_MAX:02X} (7-bit)"
        )
    if (d.width, d.height) != (128, 64):
        raise PinMapError(f"display: {d.width}x{d.height} is not 128x64")
    if d.rotate not in (0, 1, 2, 3):
        raise PinMapError(f"display.rotate: {d.rotate} is not 0..3")


def _claim_all(claims: Iterator[tuple[str, int]]) -> None:
    """Check range and uniqueness of (key, GPIO) claims, naming both keys on a clash."""
    owner: dict[int, str] = {}
    for key, pin in claims:
        _check_gpio(key, pin)
        if pin in owner:
            raise PinMapError(f"{key}: GPIO {pin} is already used by {owner[pin]}")
        owner[pin] = key


def _i2c_claims(d: DisplayPins) -> Iterator[tuple[str, int]]:
    for line, pin in _I2C_PINS[d.i2c_port].items():
        yield f"display.i2c_port (I2C{d.i2c_port} {line})", pin


def _station_claims(p: StationPins) -> Iterator[tuple[str, int]]:
    r = p.reader
    for line, pin in _SPI_PINS[r.spi_bus].items():
        yield f"reader.spi_bus (SPI{r.spi_bus} {line})", pin
    yield f"reader.spi_device (SPI{r.spi_bus} CE{r.spi_device})", _SPI_CE[r.spi_bus][r.spi_device]
    yield "reader.rst", r.rst
    if r.irq is not None:
        yield "reader.irq", r.irq
    yield from _i2c_claims(p.display)
    yield from (("knob.a", p.knob.a), ("knob.b", p.knob.b), ("knob.push", p.knob.push))
    yield "flap.pin", p.flap.pin
    yield "peek.pin", p.peek.pin
    yield from (("led.red", p.led.red), ("led.green", p.led.green), ("led.blue", p.led.blue))
    yield "buzzer.pin", p.buzzer.pin


def _check_station(p: StationPins) -> None:
    r = p.reader
    _check_choice("reader.driver", r.driver, READER_DRIVERS)
    if r.spi_bus not in _SPI_PINS:
        raise PinMapError(f"reader.spi_bus: {r.spi_bus} is not 0 or 1")
    if not 0 <= r.spi_device < len(_SPI_CE[r.spi_bus]):
        raise PinMapError(
            f"reader.spi_device: SPI{r.spi_bus} has no CE{r.spi_device} "
            f"(0..{len(_SPI_CE[r.spi_bus]) - 1})"
        )
    if not 10_000 <= r.spi_speed_hz <= 10_000_000:
        raise PinMapError(f"reader.spi_speed_hz: {r.spi_speed_hz} is outside 10 kHz..10 MHz")
    _check_display(p.display)
    _check_choice("buzzer.kind", p.buzzer.kind, BUZZER_KINDS)
    _check_ms("knob.bounce_ms", p.knob.bounce_ms)
    _check_ms("knob.push_bounce_ms", p.knob.push_bounce_ms)
    _check_ms("flap.bounce_ms", p.flap.bounce_ms)
    _check_ms("peek.bounce_ms", p.peek.bounce_ms)
    _claim_all(_station_claims(p))


def _check_hub(p: HubPins) -> None:
    _check_display(p.display)
    _check_ms("buttons.bounce_ms", p.buttons.bounce_ms)
    claims = [(f"buttons.{name}", p.buttons.pin(name)) for name in HUB_BUTTONS]
    _claim_all(iter([*_i2c_claims(p.display), *claims]))


# --- TOML loading ----------------------------------------------------------------------

T = TypeVar("T")


def _type_ok(value: object, hint: object) -> bool:
    """Whether a TOML value fits a field's annotation (int, bool, str, or X | None)."""
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    args = typing.get_args(hint)
    return bool(args) and any(a is not type(None) and _type_ok(value, a) for a in args)


def _type_name(hint: object) -> str:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if args:
        return " or ".join(_type_name(a) for a in args)
    return getattr(hint, "__name__", str(hint))


def _build(cls: type[T], table: Mapping[str, Any], where: str) -> T:
    """Make dataclass ``cls`` from a TOML table: unknown keys and wrong types are errors."""
    if not isinstance(table, Mapping):
        raise PinMapError(f"{where or 'file'}: expected a table")
    assert is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    known = {f.name for f in fields(cls)}
    for key in table:
        if key not in known:
            raise PinMapError(f"{where}{key}: unknown key (known: {', '.join(sorted(known))})")
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in table:
            continue
        value, hint = table[f.name], hints[f.name]
        if is_dataclass(hint) and isinstance(hint, type):
            kwargs[f.name] = _build(hint, value, f"{where}{f.name}.")
        elif not _type_ok(value, hint):
            raise PinMapError(f"{where}{f.name}: expected {_type_name(hint)}, got {value!r}")
        else:
            kwargs[f.name] = value
    for f in fields(cls):
        if f.name not in kwargs and f.default is MISSING and f.default_factory is MISSING:
            raise PinMapError(f"{where}{f.name}: missing")
    return cls(**kwargs)


def _read_toml(path: str | Path | None, default_name: str) -> tuple[dict[str, Any], str]:
    if path is None:
        resource = resources.files("hardware") / default_name
        return tomllib.loads(resource.read_text(encoding="utf-8")), default_name
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PinMapError(f"{p}: cannot read ({exc.strerror})") from exc
    try:
        return tomllib.loads(text), str(p)
    except tomllib.TOMLDecodeError as exc:
        raise PinMapError(f"{p}: not valid TOML ({exc})") from exc


def _load(cls: type[T], path: str | Path | None, default_name: str) -> T:
    data, name = _read_toml(path, default_name)
    data.pop("profile", None)  # free-form description
    try:
        return _build(cls, data, "")
    except PinMapError as exc:
        raise PinMapError(f"{name}: {exc}") from None


def load_station_pins(path: str | Path | None = None) -> StationPins:
    """The station pin map from ``path`` (None: the packaged ``station.toml``)."""
    return _load(StationPins, path, "station.toml")


def load_hub_pins(path: str | Path | None = None) -> HubPins:
    """The hub pin map from ``path`` (None: the packaged ``hub.toml``)."""
    return _load(HubPins, path, "hub.toml")
