"""run_selftest over an emulated station (real drivers, emulated chips)."""

from __future__ import annotations

import io

from device.emulated import EmulatedStation
from device.factory import open_station
from device.mock import MockControls
from firmware.station.selftest import TEST_UID, run_selftest, selftest_pattern
from tests.support.emulated import same


def test_non_interactive_selftest_passes_on_emulated_station(station: EmulatedStation) -> None:
    """--yes mode drives the emulated field and mock controls: every check passes."""
    out = io.StringIO()
    assert run_selftest(station.devices, out, interactive=False) == 0
    text = out.getvalue()
    assert f"UID {TEST_UID}" in text and "all checks passed" in text
    controls = station.controls
    assert isinstance(controls, MockControls)
    assert controls.leds[:3] == [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
    assert controls.beeps == ["ok", "error"]


def test_selftest_pattern_reaches_the_glass(station: EmulatedStation) -> None:
    """When the builder is asked to look, the emulated glass shows the test pattern."""
    seen = {}

    def builder(step: str) -> None:
        if step == "display.look":
            seen["screen"] = station.screen()

    run_selftest(station.devices, io.StringIO(), interactive=False, on_prompt=builder,
                 timeout_s=0.1)  # fmt: skip
    assert same(seen["screen"], selftest_pattern())


def test_nothing_done_fails_each_action(station: EmulatedStation) -> None:
    """With nobody acting, the reader, knob, flap and peek checks fail and it returns 1."""
    out = io.StringIO()
    code = run_selftest(station.devices, out, interactive=False, on_prompt=lambda _s: None,
                        timeout_s=0.1)  # fmt: skip
    assert code == 1
    summary = out.getvalue().splitlines()[-1]
    assert "reader" in summary and "knob clockwise" in summary and "flap open" in summary
    assert "display" not in summary and "LED" not in summary


def test_builder_answer_no_fails_that_check(station: EmulatedStation) -> None:
    """A 'no' to the LED question fails only the LED check."""
    out = io.StringIO()
    code = run_selftest(station.devices, out, interactive=False,
                        confirm=lambda q: "LED" not in q)  # fmt: skip
    assert code == 1
    assert out.getvalue().splitlines()[-1] == "selftest: failed: LED"


def test_selftest_on_mock_backend() -> None:
    """The same selftest passes on the mock backend (mock reader driven by present_tag)."""
    devices = open_station(backend="mock")
    try:
        assert run_selftest(devices, io.StringIO(), interactive=False) == 0
    finally:
        devices.close()
