"""The README's main job: `coffre sim` plays a whole game and saves the screens."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
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
    ranked = re.findall(r"^  \d+\. \w+ +\d+ points?\b", text, re.MULTILINE)
    assert "final ranking" in text and len(ranked) == 3, text[-600:]
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


def test_sim_plays_coop_and_prints_the_band(tmp_path: Path) -> None:
    """`coffre sim -o mode=coop` plays ten co-op turns and prints the team's result band."""
    args = [sys.executable, "-m", "firmware.cli", "sim", "--players", "5", "-o", "mode=coop"]
    args += ["--out", str(tmp_path / "screens")]
    run = subprocess.run(args, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    text = run.stdout
    assert "options: mode=coop" in text
    assert "-- turn 10 of 10" in text and "the team said" in text
    band = [line for line in text.splitlines() if line.startswith("team result band ")]
    assert len(band) == 1 and ": " in band[0], text[-600:]
    assert not re.search(r"\d points?\b", text)  # no ranking for a team


def test_sim_refuses_an_unknown_option_as_play_does(tmp_path: Path) -> None:
    """An unknown game option stops `coffre sim` with play's message and status 2."""
    common = ["--game", "incognito", "--players", "4", "-o", "colour=red"]
    sim = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "sim", *common, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    play = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "play", *common, "-"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert sim.returncode == play.returncode == 2
    message = json.loads(play.stdout)["error"]
    assert sim.stdout.strip() == f"coffre sim: {message}"
    assert "Unknown option: colour" in message and "Traceback" not in sim.stderr
    assert not (tmp_path / "o").exists()  # refused before anything starts


def _children(pid: int, name: str) -> list[int]:
    """The pids of ``pid``'s children called ``name`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        comm, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :]
        if comm == name and int(rest.split()[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, is not alive)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2] != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_ends_the_sim_and_its_broker(tmp_path: Path, sig: signal.Signals) -> None:
    """`timeout` or a CI runner ends the sim with SIGTERM (a closed terminal with SIGHUP):
    the mosquitto it started goes with it, and it says so in one line."""
    args = [sys.executable, "-m", "firmware.cli", "sim", "--players", "3", "--pace", "1"]
    sim = subprocess.Popen(
        [*args, "--out", str(tmp_path / "screens")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    brokers: list[int] = []
    try:
        assert sim.stdout is not None
        up = sim.stdout.readline()  # printed once the broker, hub and stations are up
        assert up.startswith("broker: mosquitto"), up
        port = int(up.rsplit(":", 1)[1])
        brokers = _children(sim.pid, "mosquitto")
        assert len(brokers) == 1
        sim.send_signal(sig)
        status = sim.wait(30)
        left = [pid for pid in brokers if _alive(pid)]
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()
        for pid in brokers:  # a broker the sim left behind (the failure) is not left running
            if _alive(pid):
                os.kill(pid, signal.SIGTERM)
    assert left == [], "the sim's mosquitto outlived it"
    assert status == 128 + sig
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    assert sim.stderr is not None
    assert f"coffre: sim: stopped by {sig.name}" in sim.stderr.read()
