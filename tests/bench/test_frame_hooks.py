"""The simulator's screen log and a benchmark's frame clock share a display's frame hook."""

from __future__ import annotations

from PIL import Image

from device.mock import MockDisplay
from firmware.tools.simtable import also_log


def frame(shade: int) -> Image.Image:
    image = Image.new("1", (128, 64))
    image.putpixel((shade, 0), 1)
    return image


def test_the_log_runs_after_the_hook_a_display_already_had() -> None:
    """A bench's clock still sees every frame once the sim adds its log, and sees it first."""
    seen: list[str] = []
    display = MockDisplay(on_frame=lambda _f: seen.append("clock"))
    also_log(display, lambda _f: seen.append("log"))
    display.show(frame(1))
    assert seen == ["clock", "log"]


def test_a_station_started_again_replaces_its_log_never_stacks_it() -> None:
    """Logging a display twice (a restarted station) keeps one log and the original hook."""
    seen: list[str] = []
    display = MockDisplay(on_frame=lambda _f: seen.append("clock"))
    also_log(display, lambda _f: seen.append("old log"))
    also_log(display, lambda _f: seen.append("new log"))
    display.show(frame(2))
    assert seen == ["clock", "new log"]


def test_a_display_without_a_hook_gets_only_the_log() -> None:
    """No hook before: the log alone runs."""
    seen: list[str] = []
    display = MockDisplay()
    also_log(display, lambda _f: seen.append("log"))
    display.show(frame(3))
    assert seen == ["log"]
