"""HIL fixtures: whole tables whose stations run their real reader/display backends
(Mfrc522Reader, Ssd1306Display over luma) on emulated MFRC522/SSD1306 chips, with the
hub on a real mosquitto (ACL on)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from PIL import Image

if TYPE_CHECKING:
    from firmware.tools.simtable import SimTable

TableFactory = Callable[..., "SimTable"]

#: The platform suite's golden screens (mock displays): the emulated glass must match.
GOLDEN = Path(__file__).parent.parent / "platform" / "golden"


@pytest.fixture(scope="session")
def _need_mosquitto() -> None:
    from firmware.tools.brokers import find_mosquitto

    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed: the HIL suite runs the hub on a real broker")


@pytest.fixture
def emulated_table(tmp_path: Path, _need_mosquitto: None) -> Iterator[TableFactory]:
    """Start tables on mosquitto whose stations are emulated chips under real drivers."""
    from firmware.tools.simtable import SimTable

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
