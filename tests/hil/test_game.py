"""Hardware in the loop without hardware: whole Secret Identity games in which every tap is
a virtual card entering an emulated MFRC522's RF field (read by Mfrc522Reader through the
unmodified mfrc522 package) and every screen is read back from an emulated SSD1306's
GDDRAM (drawn by Ssd1306Display through the unmodified luma.oled driver)."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from device.emulated import EmulatedStation
from device.real_display import Ssd1306Display
from device.real_reader import Mfrc522Reader
from firmware.tools.bots.secret_identity import Director
from firmware.tools.simtable import SimTable
from tests.support.golden import glass_mismatches
from tests.support.tables import TableFactory, expected_scores


def bots(sim: SimTable, seed: int = 3) -> Director:
    """The platform suite's bots (same seeds as its golden game), quiet."""
    return Director(sim, sim.watch, random.Random(seed), say=lambda _: None)


def play(sim: SimTable) -> tuple[Director, dict[str, Any]]:
    """Start a 5-player game from the host panel and play it to the end."""
    director = bots(sim)
    director.start_game(5)
    final = director.play()
    time.sleep(0.3)  # let the last screens land
    return director, final


def check_game(sim: SimTable, director: Director, final: dict[str, Any]) -> None:
    """Scores from what the bots did; every station's glass equals the golden screens."""
    want = expected_scores(director.record, 5)
    assert final["over"] is True
    assert final["scores"] == want
    problems = [
        p for n in sim.names for p in glass_mismatches(f"si-5p/{n}", sim.emulated[n].frames)
    ]
    import os

    if problems and os.environ.get("HIL_DUMP"):
        from pathlib import Path

        for n in sim.names:
            d = Path(os.environ["HIL_DUMP"]) / n
            d.mkdir(parents=True, exist_ok=True)
            for i, f in enumerate(sim.emulated[n].frames):
                f.save(d / f"{i:04d}.png")
    assert not problems, problems


def test_whole_game_on_emulated_chips(emulated_table: TableFactory) -> None:
    """A 5-player game through real backends over emulated chips: right scores, and
    every screen read back from GDDRAM equals the golden PNGs pixel for pixel."""
    sim = emulated_table(5)
    for name in sim.names:
        devices = sim.devices[name]
        assert isinstance(devices.reader, Mfrc522Reader)
        assert isinstance(devices.display, Ssd1306Display)
    director, final = play(sim)
    check_game(sim, director, final)
    for name in sim.names:
        emu: EmulatedStation = sim.emulated[name]
        assert emu.chip.hard_resets == 0 and emu.display.failures == 0


@pytest.mark.parametrize("seed", [11, 12])
def test_whole_game_with_faults_loses_and_duplicates_nothing(
    emulated_table: TableFactory, seed: int
) -> None:
    """The same game with a fault injected before most taps (chip gone silent, CRC and
    parity errors, collisions, the card slipping out mid-read, a NACKed I2C write): the
    stations recover, send exactly one input per tap and gesture, and the scores and
    every screen are those of the clean game."""
    sim = emulated_table(5)
    rng = random.Random(seed)
    clean_tap, clean_gesture = sim.tap, sim.gesture
    made = {"inputs": 0}
    injected: dict[str, int] = {}

    def faulty_tap(station: str, uid: str, **kwargs: Any) -> Any:
        emu: EmulatedStation = sim.emulated[station]
        fault = rng.choice(("silent", "crc", "parity", "collision", "pull", "i2c", "none"))
        injected[fault] = injected.get(fault, 0) + 1
        if fault == "silent":
            emu.chip.go_silent(rng.choice((0x00, 0xFF)))
        elif fault in ("crc", "parity", "collision"):
            emu.field.inject(fault, rng.randint(1, 3))  # type: ignore[arg-type]
        elif fault == "i2c":
            emu.panel.fail_writes(1)
        elif fault == "pull":  # the card slips out during the read, then is put back
            emu.field.place(uid)
            # gone after answering WUPA, or CL1 anticollision: before the UID is complete
            emu.field.pull_after(rng.randint(1, 2), uid)
            time.sleep(sim.poll_interval * 4)
        made["inputs"] += 1
        return clean_tap(station, uid, **kwargs)

    def counted_gesture(station: str, act: Any) -> Any:
        made["inputs"] += 1
        return clean_gesture(station, act)

    sim.tap = faulty_tap  # type: ignore[method-assign]
    sim.gesture = counted_gesture  # type: ignore[method-assign]
    director, final = play(sim)
    check_game(sim, director, final)
    assert sum(sim.stations[n].sent for n in sim.names) == made["inputs"]
    assert sum(sim.emulated[n].reader.recoveries for n in sim.names) >= injected["silent"]
    assert sum(sim.emulated[n].display.failures for n in sim.names) == injected["i2c"]
