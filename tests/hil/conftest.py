"""HIL fixtures: whole tables whose stations run their real reader/display backends
(Mfrc522Reader, Ssd1306Display over luma) on emulated MFRC522/SSD1306 chips, with the
hub on a real mosquitto (ACL on)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from PIL import Image

if TYPE_CHECKING:
    from firmware.sim import SimTable

HARDWARE_ENV = "COFFRE_HARDWARE"
TableFactory = Callable[..., "SimTable"]

#: The platform suite's golden screens (mock displays): the emulated glass must match.
GOLDEN = Path(__file__).parent.parent / "platform" / "golden"


def on_station_hardware() -> bool:
    """A Raspberry Pi with the station's parts, and the builder said so (COFFRE_HARDWARE=1)."""
    try:
        model = Path("/proc/device-tree/model").read_text(errors="replace")
    except OSError:
        return False
    return "Raspberry Pi" in model and os.environ.get(HARDWARE_ENV) == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``hardware`` are deselected (not skipped) off station hardware."""
    if on_station_hardware():
        return
    off = [i for i in items if i.get_closest_marker("hardware") is not None]
    if off:
        config.hook.pytest_deselected(items=off)
        items[:] = [i for i in items if i.get_closest_marker("hardware") is None]


@pytest.fixture(scope="session")
def _need_mosquitto() -> None:
    from firmware.broker import find_mosquitto

    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed: the HIL suite runs the hub on a real broker")


@pytest.fixture
def emulated_table(tmp_path: Path, _need_mosquitto: None) -> Iterator[TableFactory]:
    """Start tables on mosquitto whose stations are emulated chips under real drivers."""
    from firmware.sim import SimTable

    started: list[SimTable] = []

    def make(players: int = 5, **kwargs: Any) -> SimTable:
        kwargs.setdefault("embedded", False)
        kwargs.setdefault("seed", 7)
        kwargs.setdefault("device_backend", "emulated")
        sim = SimTable(players=players, workdir=tmp_path / f"table{len(started)}", **kwargs)
        started.append(sim)
        sim.start()
        return sim

    yield make
    for sim in started:
        sim.stop()


def golden_mismatches(name: str, frames: list[Image.Image]) -> list[str]:
    """Differences between a station's glass frames and ``golden/<name>/NNNN.png``."""
    folder = GOLDEN / name
    expected = sorted(folder.glob("*.png"))
    if not expected:
        return [f"no golden screens in {folder}"]
    problems = []
    for i, (path, frame) in enumerate(zip(expected, frames, strict=False)):
        with Image.open(path) as want:
            if want.convert("1").tobytes() != frame.convert("1").tobytes():
                problems.append(f"{name}: screen {i} differs from {path.name}")
    if len(frames) != len(expected):
        problems.append(f"{name}: {len(frames)} screens, golden has {len(expected)}")
    return problems


def expected_scores(record: dict[int, dict[str, Any]], players: int) -> list[int]:
    """Score what the bots physically did (right vote: a point to voter and safe owner)."""
    scores = [0] * players
    for rnd in record.values():
        for (voter, safe), number in rnd["votes"].items():
            if rnd["mystery"].get(safe) == number:
                scores[safe] += 1
                scores[voter] += 1
    return scores
