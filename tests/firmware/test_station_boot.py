"""A station that cannot start says why on its own glass, and waits where waiting helps."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from device.base import DisplayError, ReaderError, StationDevices
from device.factory import open_station_display
from device.mock import MockControls, MockDisplay, MockReader
from firmware.link.config import EX_CONFIG
from firmware.link.render import render_lines
from firmware.station.boot import Boot, Started
from tests.support.golden import frame_problems

STATION = '[station]\ntable = "main"\nid = "p1"\nbackend = "mock"\n'
GOLDEN = Path(__file__).parent / "golden"


def _same(a: Image.Image | None, b: Image.Image) -> bool:
    return a is not None and a.convert("1").tobytes() == b.convert("1").tobytes()


class Parts:
    """The openers a Boot uses: one MockDisplay for problems, devices that may fail."""

    def __init__(self, failures: list[Exception] | None = None) -> None:
        self.display = MockDisplay()
        self.failures = list(failures or [])
        self.shown = threading.Event()
        self.display.on_frame = lambda _frame: self.shown.set()

    def open_display(self, _pins: Any, _backend: str | None) -> MockDisplay:
        self.display.closed = False
        return self.display

    def open_devices(self, _pins: Any, _backend: str | None) -> StationDevices:
        if self.failures:
            raise self.failures.pop(0)
        return StationDevices(MockReader(), MockDisplay(), MockControls())


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def _boot(config: Path, parts: Parts, retry: float | None = 0.02) -> Boot:
    return Boot(
        config,
        open_devices=parts.open_devices,
        open_display=parts.open_display,
        retry_seconds=retry,
    )


def _in_thread(boot: Boot, stop: threading.Event) -> tuple[threading.Thread, list[object]]:
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(boot.run(stop)), daemon=True)
    thread.start()
    return thread, result


def test_a_missing_password_file_is_on_the_glass_until_it_arrives(
    tmp_path: Path, stop: threading.Event
) -> None:
    """The password file not there yet: its name on the glass with "Retrying...", then,
    once the file is copied, the station starts by itself and the problem screen closes."""
    secret = tmp_path / "station.password"
    config = tmp_path / "station.toml"
    config.write_text(f'[broker]\npassword_file = "{secret}"\n' + STATION)
    parts = Parts()
    boot = _boot(config, parts)
    thread, result = _in_thread(boot, stop)
    assert parts.shown.wait(10)
    # The file's name and what is wrong with it; the journal has the whole path.
    lines = ["station.password does", "not exist", "Retrying..."]
    assert _same(parts.display.last, render_lines("coffre p1", lines))
    assert not frame_problems("station-boot/missing-file", parts.display.frames, GOLDEN)
    secret.write_text("pw\n")
    thread.join(10)
    assert len(result) == 1 and isinstance(result[0], Started)
    assert parts.display.closed and not parts.display.left
    assert len(boot.problems) == 1, "one problem, logged once, however many retries"
    assert boot.attempts >= 2


def test_a_config_mistake_stays_lit_and_exits_78(tmp_path: Path, stop: threading.Event) -> None:
    """A typo in station.toml: the one-line reason and "Fix it, then restart" stay on the
    glass (left lit, not blanked), and the exit status is 78 (no restart loop)."""
    config = tmp_path / "station.toml"
    config.write_text('[broker]\nhots = "hub"\n' + STATION)
    parts = Parts()
    boot = _boot(config, parts)
    assert boot.run(stop) == EX_CONFIG
    assert boot.problems[-1].message == f"{config}: unknown key hots in [broker]"
    lines = ["station.toml: unknown", "key hots in [broker]", "Fix it, then restart"]
    assert _same(parts.display.last, render_lines("coffre p1", lines))
    assert parts.display.left
    assert not frame_problems("station-boot/config-typo", parts.display.frames, GOLDEN)


def test_a_silent_reader_is_shown_and_retried(tmp_path: Path, stop: threading.Event) -> None:
    """The reader does not answer twice (a loose wire), then does: the reason is on the
    glass meanwhile and the station starts on the third try."""
    config = tmp_path / "station.toml"
    config.write_text(STATION)
    fault = ReaderError("no MFRC522 on SPI 0.0")
    parts = Parts([fault, fault])
    boot = _boot(config, parts)
    outcome = boot.run(stop)
    assert isinstance(outcome, Started) and boot.attempts == 3
    lines = ["hardware: no MFRC522", "on SPI 0.0", "Retrying..."]
    assert _same(parts.display.frames[0], render_lines("coffre p1", lines))


def test_without_retry_a_missing_file_exits_at_once(tmp_path: Path, stop: threading.Event) -> None:
    """At a terminal (no --retry) a missing file is shown and the station exits 78 at once;
    a hardware fault exits 1."""
    config = tmp_path / "station.toml"
    config.write_text(f'[broker]\nca_file = "{tmp_path / "ca.crt"}"\n' + STATION)
    parts = Parts()
    assert _boot(config, parts, retry=None).run(stop) == EX_CONFIG
    assert parts.display.left
    config.write_text(STATION)
    assert _boot(config, Parts([ReaderError("gone")]), retry=None).run(stop) == 1


def test_a_broken_display_leaves_the_journal_line(tmp_path: Path, stop: threading.Event) -> None:
    """When the display itself cannot open, the problem is still reported (no crash)."""
    config = tmp_path / "station.toml"
    config.write_text('[broker]\nhots = "hub"\n' + STATION)
    parts = Parts()

    def no_display(_pins: Any, _backend: str | None) -> MockDisplay:
        raise DisplayError("no SSD1306 at I2C 1:0x3C")

    boot = Boot(config, open_devices=parts.open_devices, open_display=no_display)
    assert boot.run(stop) == EX_CONFIG
    assert "unknown key hots" in boot.problems[-1].message


def test_the_real_ssd1306_driver_shows_the_reason(tmp_path: Path, stop: threading.Event) -> None:
    """Over an emulated SSD1306 (luma's real driver): the glass's GDDRAM, decoded, is the
    reason's frame, and it is left lit when the station gives up."""
    config = tmp_path / "station.toml"
    config.write_text('[broker]\nhots = "hub"\n' + STATION.replace('"mock"', '"emulated"'))
    opened: list[Any] = []

    def display(pins: Any, backend: str | None) -> Any:
        assert backend == "emulated", "the backend is read from the file, typo or not"
        opened.append(open_station_display(pins, backend))
        return opened[-1]

    boot = Boot(config, open_display=display)
    assert boot.run(stop) == EX_CONFIG
    lines = ["station.toml: unknown", "key hots in [broker]", "Fix it, then restart"]
    glass = opened[0].inner
    assert _same(glass.last, render_lines("coffre p1", lines))
