"""``coffre selftest``: walk a builder through a station's parts, one at a time.

The checks go through the same device classes as the station program (whatever
``device.factory.open_station`` returns: real, emulated or mock), so a pass means the
app's code path works on this hardware:

1. reader: tap any tag (its UID is shown on the screen), then take it away;
2. display: a test pattern (border, checkerboard, text); the builder confirms it;
3. knob: turn clockwise, anticlockwise, press;
4. flap: lift it, lower it; peek button: hold it, let go;
5. LED: red, green, blue (confirmed); 6. buzzer: two beeps (confirmed).

Interactive mode asks on ``out``/stdin and waits ``timeout_s`` (30 s) per action.
Non-interactive mode (``--yes``) answers every question "yes" and waits 5 s per action;
with no ``on_prompt`` it drives what can be driven (an emulated station's RF field, the
mock reader and controls), so ``coffre selftest --backend emulated --yes`` runs
end to end. On real hardware ``--yes`` only passes the actions someone performs.
Returns 0 when every check passed, 1 otherwise.

``coffre selftest`` opens each part on its own (:func:`run_parts`): a reader that is
not wired, or SPI not enabled, is one ``[FAIL] reader: ...`` line with the fix, and the
display, knob and the rest are still tested.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from PIL import Image, ImageDraw, ImageFont

from device.base import HEIGHT, WIDTH, DeviceError, StationDevices, TagPresent, TagRemoved
from hardware.pins import StationPins, load_station_pins

Prompt = Callable[[str], None]
TEST_UID = "5E1F7E57"


@dataclass
class Check:
    """The result of one step."""

    name: str
    ok: bool
    detail: str = ""


def selftest_pattern() -> Image.Image:
    """Border, 8-pixel checkerboard on the left half, text on the right."""
    img = Image.new("1", (WIDTH, HEIGHT), 0)
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, WIDTH - 1, HEIGHT - 1), outline=1)
    for y in range(2, HEIGHT - 2, 8):
        for x in range(2, WIDTH // 2, 8):
            if (x // 8 + y // 8) % 2 == 0:
                draw.rectangle((x, y, min(x + 7, WIDTH // 2 - 1), min(y + 7, HEIGHT - 3)), fill=1)
    draw.text((WIDTH // 2 + 6, 10), "coffre", fill=1)
    draw.text((WIDTH // 2 + 6, 26), "self", fill=1)
    draw.text((WIDTH // 2 + 6, 40), "test", fill=1)
    return img


def _equals(want: object) -> Callable[[object], bool]:
    return lambda value: value == want


def _card(lines: list[str]) -> Image.Image:
    img = Image.new("1", (WIDTH, HEIGHT), 0)
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    for i, line in enumerate(lines[:5]):
        draw.text((2, 2 + 12 * i), line, fill=1, font=font)
    return img


class _Session:
    def __init__(
        self,
        devices: StationDevices,
        out: TextIO,
        confirm: Callable[[str], bool],
        on_prompt: Prompt | None,
        timeout_s: float,
        interval_s: float,
        broken: dict[str, str] | None = None,
    ) -> None:
        self.d = devices
        self.broken = broken or {}
        self.out = out
        self.confirm = confirm
        self.on_prompt = on_prompt
        self.timeout_s = timeout_s
        self.interval_s = interval_s
        self.inputs: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.checks: list[Check] = []

    # -- plumbing ----------------------------------------------------------------------

    def say(self, step: str, text: str, screen: list[str] | None = None) -> None:
        """Tell the builder what to do (terminal and, when it works, the station screen)."""
        print(f"  -> {text}", file=self.out, flush=True)
        if screen is not None:
            with contextlib.suppress(DeviceError):  # a broken display must not stop the test
                self.d.display.show(_card(screen))
        if self.on_prompt is not None:
            self.on_prompt(step)

    def record(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks.append(Check(name, ok, detail))
        status = "OK  " if ok else "FAIL"
        print(f"[{status}] {name}{': ' + detail if detail else ''}", file=self.out, flush=True)

    def wait_input(self, kind: str, want: Callable[[Any], bool]) -> bool:
        """Whether a control input of ``kind`` that ``want`` accepts came in time."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                got_kind, value = self.inputs.get(timeout=min(left, 0.25))
            except queue.Empty:
                continue
            if got_kind == kind and want(value):
                return True

    def drain(self) -> None:
        while not self.inputs.empty():
            self.inputs.get_nowait()

    # -- steps -------------------------------------------------------------------------

    def reader(self) -> None:
        reader = self.d.reader
        self.say("reader.tap", "Tap any tag on the reader", ["SELFTEST 1/6", "Tap any tag"])
        uid = None
        try:
            while reader.poll() is not None:  # settle what happened before the test
                pass
            uid = reader.current  # a tag already lying there counts
            deadline = time.monotonic() + self.timeout_s
            while uid is None and time.monotonic() < deadline:
                event = reader.poll()
                if isinstance(event, TagPresent):
                    uid = event.uid
                    break
                time.sleep(self.interval_s)
            if uid is None:
                self.record("reader", False, "no tag seen")
                return
            self.d.display.show(_card(["Tag read:", uid, "", "Take it away"]))
            print(f"  tag UID {uid}", file=self.out, flush=True)
            self.say("reader.remove", f"Tag {uid} read: take it away")
            removed = False
            deadline = time.monotonic() + self.timeout_s
            while time.monotonic() < deadline:
                event = reader.poll()
                if isinstance(event, TagRemoved):
                    removed = True
                    break
                time.sleep(self.interval_s)
        except DeviceError as exc:
            self.record("reader", False, str(exc))
            return
        self.record("reader", removed, f"UID {uid}" + ("" if removed else ", removal not seen"))

    def display(self) -> None:
        try:
            self.d.display.show(selftest_pattern())
        except DeviceError as exc:
            self.record("display", False, str(exc))
            return
        self.say("display.look", "The screen shows a border, a checkerboard and 'coffre self test'")
        self.record("display", self.confirm("Is the test pattern on the screen, complete?"))

    def knob(self) -> None:
        for step, text, value in (
            ("knob.cw", "Turn the knob clockwise", 1),
            ("knob.ccw", "Turn the knob anticlockwise", -1),
        ):
            self.drain()
            self.say(step, text, ["SELFTEST 3/6", text.replace("Turn the knob ", "Turn knob "), ""])
            got = self.wait_input("turn", _equals(value))
            self.record(f"knob {'clockwise' if value > 0 else 'anticlockwise'}", got)
        self.drain()
        self.say("knob.press", "Press the knob", ["SELFTEST 3/6", "Press the knob"])
        self.record("knob press", self.wait_input("press", lambda _: True))

    def flap(self) -> None:
        for step, text, value in (
            ("flap.open", "Lift the flap", True),
            ("flap.close", "Lower the flap", False),
        ):
            self.drain()
            self.say(step, text, ["SELFTEST 4/6", text])
            got = self.d.controls.flap_open == value or self.wait_input("flap", _equals(value))
            self.record(f"flap {'open' if value else 'closed'}", got)
        for step, text, value in (
            ("peek.hold", "Hold the peek button", True),
            ("peek.release", "Let go of the peek button", False),
        ):
            self.drain()
            self.say(step, text, ["SELFTEST 4/6", text])
            got = self.d.controls.peek_held == value or self.wait_input("peek", _equals(value))
            self.record(f"peek {'held' if value else 'released'}", got)

    def led(self) -> None:
        self.say("led.watch", "Watch the LED: red, green, blue", ["SELFTEST 5/6", "LED: R, G, B"])
        try:
            for colour in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)):
                self.d.controls.led(colour)
                time.sleep(0.6 if self.timeout_s > 5 else 0.05)
            self.d.controls.led((0.0, 0.0, 0.0))
        except DeviceError as exc:
            self.record("LED", False, str(exc))
            return
        self.record("LED", self.confirm("Did the LED glow red, then green, then blue?"))

    def buzzer(self) -> None:
        self.say("buzzer.listen", "Listen: two beeps", ["SELFTEST 6/6", "Listen:", "two beeps"])
        try:
            self.d.controls.beep("ok")
            time.sleep(0.5 if self.timeout_s > 5 else 0.05)
            self.d.controls.beep("error")
        except DeviceError as exc:
            self.record("buzzer", False, str(exc))
            return
        self.record("buzzer", self.confirm("Did you hear two different beeps?"))

    def run(self) -> int:
        controls = self.d.controls
        saved = (controls.on_turn, controls.on_press, controls.on_flap, controls.on_peek)
        controls.on_turn = lambda step: self.inputs.put(("turn", step))
        controls.on_press = lambda: self.inputs.put(("press", None))
        controls.on_flap = lambda is_open: self.inputs.put(("flap", is_open))
        controls.on_peek = lambda held: self.inputs.put(("peek", held))
        steps = (
            ("reader", self.reader),
            ("display", self.display),
            ("controls", self.knob),
            ("controls", self.flap),
            ("controls", self.led),
            ("controls", self.buzzer),
        )
        try:
            reported: set[str] = set()
            for part, step in steps:
                if part not in self.broken:
                    step()
                elif part not in reported:  # one line for a part that did not open
                    reported.add(part)
                    self.record(part, False, self.broken[part])
        finally:
            controls.on_turn, controls.on_press, controls.on_flap, controls.on_peek = saved
        failed = [c.name for c in self.checks if not c.ok]
        summary = "all checks passed" if not failed else "failed: " + ", ".join(failed)
        print(f"selftest: {summary}", file=self.out, flush=True)
        with contextlib.suppress(DeviceError):
            self.d.display.show(_card(["SELFTEST", "PASS" if not failed else "FAIL", *failed[:3]]))
        return 0 if not failed else 1


def auto_builder(devices: StationDevices) -> Prompt | None:
    """A stand-in builder for backends that can be driven (emulated chips, mocks)."""
    field = getattr(getattr(devices, "emulated", None), "field", None)
    reader: Any = devices.reader
    controls: Any = devices.controls
    if field is None and not hasattr(reader, "present_tag"):
        return None
    if not all(hasattr(controls, m) for m in ("turn", "press", "open_flap", "hold_peek")):
        return None

    def act(step: str) -> None:
        if step == "reader.tap":
            field.place(TEST_UID) if field is not None else reader.present_tag(TEST_UID)
        elif step == "reader.remove":
            field.remove() if field is not None else reader.remove_tag()
        elif step in ("knob.cw", "knob.ccw"):
            controls.turn(1 if step == "knob.cw" else -1)
        elif step == "knob.press":
            controls.press()
        elif step == "flap.open":
            controls.open_flap()
        elif step == "flap.close":
            controls.close_flap()
        elif step == "peek.hold":
            controls.hold_peek()
        elif step == "peek.release":
            controls.release_peek()

    return act


def _ask_stdin(out: TextIO) -> Callable[[str], bool]:
    def confirm(question: str) -> bool:
        print(f"  ? {question} [Y/n] ", end="", file=out, flush=True)
        try:
            answer = input()
        except EOFError:
            return False
        return answer.strip().lower() in ("", "y", "yes", "o", "oui")

    return confirm


def run_selftest(
    devices: StationDevices,
    out: TextIO,
    *,
    interactive: bool = True,
    on_prompt: Prompt | None = None,
    confirm: Callable[[str], bool] | None = None,
    timeout_s: float | None = None,
    interval_s: float = 0.05,
    broken: dict[str, str] | None = None,
) -> int:
    """Check reader, display, knob, flap, peek, LED and buzzer; 0 if all passed, else 1.

    ``interactive``: ask the builder on ``out``/stdin and wait 30 s per action; else
    answer "yes" to every question, wait 5 s per action, and (unless ``on_prompt`` is
    given) drive the devices that can be driven. ``on_prompt(step)`` is called after
    each instruction (steps: reader.tap, reader.remove, display.look, knob.cw, knob.ccw,
    knob.press, flap.open, flap.close, peek.hold, peek.release, led.watch, buzzer.listen).
    ``broken``: parts (reader, display, controls) that did not open, with the reason:
    each is one failed check and its steps are skipped.
    """
    if confirm is None:
        confirm = _ask_stdin(out) if interactive else (lambda _question: True)
    if on_prompt is None and not interactive:
        on_prompt = auto_builder(devices)
    wait = timeout_s if timeout_s is not None else (30.0 if interactive else 5.0)
    print("coffre selftest: follow the instructions (terminal and station screen)", file=out)
    return _Session(devices, out, confirm, on_prompt, wait, interval_s, broken).run()


# --- choosing and opening the parts ------------------------------------------------------

#: What to do when a part does not open on a Pi.
_FIXES = {
    "reader": "enable SPI: sudo raspi-config nonint do_spi 0, reboot; check the wiring",
    "display": "enable I2C: sudo raspi-config nonint do_i2c 0, reboot; i2cdetect -y 1 "
    "should show 3c",
    "controls": "is lgpio installed (the station extra)? is coffre-station using the pins? "
    "sudo systemctl stop coffre-station",
}


def on_a_pi() -> bool:
    """Whether this machine is a Raspberry Pi (its device tree says so)."""
    try:
        return "raspberry pi" in Path("/proc/device-tree/model").read_text().lower()
    except OSError:
        return False


@dataclass
class HardwareChoice:
    """Which backend and pin map a hardware command uses, and where they came from."""

    backend: str
    pins: StationPins
    source: str
    pins_file: str = field(default="the packaged station.toml")


def hardware_choice(args: Any) -> HardwareChoice:
    """``--backend``/``--pins``, else the ``--config`` file's, else the environment's,
    else the real parts on a Raspberry Pi and mocks elsewhere."""
    from device.factory import ENV_VAR, backend_from_env, resolve_backend

    backend, source = getattr(args, "backend", None), "--backend"
    pins_file = getattr(args, "pins", None)
    config = getattr(args, "config", None)
    if config:
        from firmware.station.config import load_station

        settings = load_station(config)
        if backend is None and settings.backend is not None:
            backend, source = settings.backend, str(config)
        pins_file = pins_file or settings.pins
    if backend is None and (from_env := backend_from_env()) is not None:
        backend, source = from_env, ENV_VAR
    if backend is None:
        backend, source = ("real", "this is a Raspberry Pi") if on_a_pi() else ("mock", "no Pi")
    name = resolve_backend(backend)
    pins = load_station_pins(pins_file)
    return HardwareChoice(
        name, pins, source, str(pins_file) if pins_file else "the packaged station.toml"
    )


def open_parts(choice: HardwareChoice) -> tuple[StationDevices, dict[str, str]]:
    """The station's parts, each opened on its own; a part that fails is replaced by a
    mock and reported in the second value (part -> one-line reason and fix)."""
    from device.factory import open_station
    from device.mock import MockControls, MockDisplay, MockReader

    if choice.backend != "real":
        return open_station(choice.pins, backend=choice.backend), {}
    broken: dict[str, str] = {}
    openers: dict[str, Callable[[], Any]] = {
        "reader": lambda: _real("device.real_reader", "Mfrc522Reader", choice.pins),
        "display": lambda: _real("device.real_display", "Ssd1306Display", choice.pins),
        "controls": lambda: _real("device.gpio", "GpioControls", choice.pins),
    }
    stand_ins: dict[str, Callable[[], Any]] = {
        "reader": MockReader,
        "display": MockDisplay,
        "controls": MockControls,
    }
    parts: dict[str, Any] = {}
    for part, opener in openers.items():
        try:
            with warnings.catch_warnings():  # gpiozero's fallback chatter: the FAIL line says it
                warnings.simplefilter("ignore")
                parts[part] = opener()
        except Exception as exc:  # any failure of one part: report it, test the others
            broken[part] = f"{_one_line(exc)} ({_FIXES[part]})"
            parts[part] = stand_ins[part]()
    return StationDevices(parts["reader"], parts["display"], parts["controls"]), broken


def _real(module: str, name: str, pins: StationPins) -> Any:
    import importlib

    return getattr(importlib.import_module(module), name)(pins)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


def run_parts(choice: HardwareChoice, out: TextIO, *, interactive: bool = True) -> int:
    """``coffre selftest``: say which backend, open each part, test what opened."""
    print(
        f"coffre selftest: {choice.backend} hardware ({choice.source}), pins from "
        f"{choice.pins_file}",
        file=out,
        flush=True,
    )
    devices, broken = open_parts(choice)
    try:
        return run_selftest(devices, out, interactive=interactive, broken=broken)
    finally:
        devices.close()


def main(args: Any) -> int:
    """``coffre selftest``: the parts ``args`` chooses, tested; 0 when every check passed."""
    return run_parts(hardware_choice(args), sys.stdout, interactive=not args.yes)
