"""The README's main job: `coffre sim` plays a whole game and saves the screens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("broker", ["mosquitto", "embedded"])
def test_sim_plays_a_whole_game(tmp_path: Path, broker: str) -> None:
    """`coffre sim` prints the ranking and saves PNGs and a GIF per station and the hub."""
    out = tmp_path / "screens"
    args = [sys.executable, "-m", "firmware.cli", "sim", "--players", "3", "--out", str(out)]
    if broker == "embedded":
        args.append("--embedded-broker")
    run = subprocess.run(args, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    text = run.stdout
    assert ("mosquitto with ACL" if broker == "mosquitto" else "embedded amqtt") in text
    assert "final ranking" in text and text.count(" points") == 3
    assert "-- round 4 of 4" in text
    for folder in ("p1", "p2", "p3", "hub"):
        pngs = list((out / folder).glob("*.png"))
        assert len(pngs) > 5, folder
        assert (out / folder / "screens.gif").exists()


def test_sim_refuses_a_game_it_cannot_bind(tmp_path: Path) -> None:
    """An unknown game is refused by the command line, with exit status 2."""
    run = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "sim", "--game", "chess"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert run.returncode == 2 and "invalid choice" in run.stderr
