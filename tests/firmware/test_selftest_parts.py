"""``coffre selftest`` and ``keys learn`` on a station: which parts, and a broken one."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

import pytest

from device.base import ReaderError, ReaderEvent, StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.station import keylearn, selftest
from hardware.keys import Key, load_keyset
from hardware.pins import load_station_pins


def _args(**kw: Any) -> argparse.Namespace:
    base: dict[str, Any] = {"backend": None, "pins": None, "config": None}
    return argparse.Namespace(**{**base, **kw})


def test_a_pi_defaults_to_the_real_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no --backend, config or environment: real on a Pi, mock elsewhere."""
    monkeypatch.delenv("COFFRE_DEVICE_BACKEND", raising=False)
    monkeypatch.setattr(selftest, "on_a_pi", lambda: True)
    assert selftest.hardware_choice(_args()).backend == "real"
    monkeypatch.setattr(selftest, "on_a_pi", lambda: False)
    assert selftest.hardware_choice(_args()).backend == "mock"


def test_backend_and_pins_come_from_the_station_config(tmp_path: Path) -> None:
    """``--config station.toml`` gives its backend and its pin map (``--pins`` overrides)."""
    pins = tmp_path / "pins.toml"
    pins.write_text("[peek]\npin = 20\n")
    config = tmp_path / "station.toml"
    config.write_text(
        f'[station]\ntable = "main"\nid = "p1"\nbackend = "emulated"\npins = "{pins}"\n'
    )
    choice = selftest.hardware_choice(_args(config=str(config)))
    assert (choice.backend, choice.pins.peek.pin) == ("emulated", 20)
    other = tmp_path / "other.toml"
    other.write_text("[peek]\npin = 21\n")
    assert selftest.hardware_choice(_args(config=str(config), pins=str(other))).pins.peek.pin == 21


def test_a_broken_reader_fails_alone_and_the_rest_is_tested(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reader that cannot open is one FAIL line with the fix; display and controls go on."""
    controls = MockControls()

    def fake_real(module: str, name: str, _pins: Any) -> Any:
        if name == "Mfrc522Reader":
            raise ReaderError("cannot open SPI 0.0: [Errno 2] No such file or directory")
        return MockDisplay() if name == "Ssd1306Display" else controls

    monkeypatch.setattr(selftest, "_real", fake_real)
    choice = selftest.HardwareChoice("real", load_station_pins(), "--backend")
    out = io.StringIO()
    assert selftest.run_parts(choice, out, interactive=False) == 1
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("coffre selftest: real hardware")
    assert "[FAIL] reader: cannot open SPI 0.0" in out.getvalue()
    assert "enable SPI" in out.getvalue()
    assert "[OK  ] display" in out.getvalue() and "[OK  ] knob press" in out.getvalue()
    assert lines[-1] == "selftest: failed: reader"


class CtrlCReader(MockReader):
    """A reader whose user presses Ctrl-C once every tag laid on it has been read."""

    def __init__(self) -> None:
        super().__init__()
        self.ctrl_c = False

    def poll(self) -> ReaderEvent | None:
        event = super().poll()
        if event is None and self.ctrl_c:
            raise KeyboardInterrupt  # in the main thread, inside the learning loop
        return event


def test_keys_learn_saves_every_tap_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each tag is on disk at once; a second run on the same file asks for the next key."""
    target = tmp_path / "keys.toml"
    reader = CtrlCReader()
    monkeypatch.setattr(
        selftest,
        "open_parts",
        lambda _choice: (StationDevices(reader, MockDisplay(), MockControls()), {}),
    )
    args = _args(backend="mock", out=str(target), colours="red", votes=2, mysteries=1)

    # The interrupted session: one tag, then Ctrl-C while it waits for the next.
    reader.tap("04A1B2C3")
    reader.ctrl_c = True
    assert keylearn.main(args) == 130
    assert load_keyset(target).lookup("04A1B2C3") == Key("vote", "red", 1)

    reader.ctrl_c = False
    reader.tap("04A2B2C3")
    reader.tap("04A3B2C3")
    assert keylearn.main(args) == 0
    keys = load_keyset(target)
    assert keys.lookup("04A2B2C3") == Key("vote", "red", 2)
    assert keys.lookup("04A3B2C3") == Key("mystery", None, 1)
    assert len(keys) == 3
