"""``coffre play --game secret-identity``: the JSON notation from the command line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from firmware.tools.scenario import EXIT_ILLEGAL, run_scenario
from rules.core import action_to_json
from rules.secret_identity import GAME, Advance, Mystery, Pictos, Vote

PREPARE = [
    '{"type":"mystery","seat":0,"number":3}',
    '{"type":"pictos","seat":0,"count":2}',
    '{"type":"mystery","seat":1,"number":5}',
    '{"type":"pictos","seat":1,"count":1}',
    '{"type":"mystery","seat":2,"number":1}',
    '{"type":"pictos","seat":2,"count":3}',
]
VOTES = [
    '{"type":"vote","seat":0,"safe":1,"number":5}',
    '{"type":"vote","seat":1,"safe":0,"number":3}',
    "# seat 2 never votes: the host closes the vote",
    '{"type":"advance"}',
]


def play(lines: list[str], players: int = 3, seed: int = 4, **options: str) -> tuple[int, dict]:
    """Run a scenario through firmware.tools.scenario; return the exit status and the JSON."""
    out = io.StringIO()
    status = run_scenario("secret-identity", players, seed, options, lines, out)
    return status, json.loads(out.getvalue())


def test_scenario_runs_and_prints_the_public_table() -> None:
    """A legal scenario exits 0 with the version, scores and public view."""
    status, result = play([*PREPARE, *VOTES, '{"type":"advance"}', '{"type":"advance"}'])
    assert status == 0
    assert result["version"] == 11 and result["over"] is False
    assert result["scores"] == [2, 2, 0]
    assert result["public"]["phase"] == "reveal"
    assert [s["mystery"] for s in result["public"]["revealed"]] == [3, 5]
    assert "my_mystery" not in json.dumps(result)


def test_illegal_action_prints_the_message_and_exits_2() -> None:
    """A refused action stops the scenario with its message, line and status 2."""
    lines = [*PREPARE[:2], '{"type":"mystery","seat":1,"number":3}']
    status, result = play(lines)
    assert status == EXIT_ILLEGAL == 2
    assert result == {"error": "That key is in another safe", "line": 3}
    status, result = play(['{"type":"vote","seat":0,"safe":0,"number":1,"x":1}'])
    assert status == 2 and result["error"].startswith("Bad action")


def test_options_and_bad_setup() -> None:
    """-o mode=coop is honoured; a bad player count is an error with status 2."""
    status, result = play(['{"type":"pictos","seat":0,"count":1}'], mode="coop", mystery="dealt")
    assert status == 0 and result["public"]["mode"] == "coop"
    assert result["public"]["phase"] == "answer"
    status, result = play([], players=9)
    assert status == 2 and "3-8 players" in result["error"]


def test_action_json_notation_round_trips() -> None:
    """The documented JSON notation is exactly what the actions serialise to."""
    assert action_to_json(Mystery(0, 3)) == {"type": "mystery", "seat": 0, "number": 3}
    assert action_to_json(Pictos(1, 2)) == {"type": "pictos", "seat": 1, "count": 2}
    assert action_to_json(Vote(0, 2, 5)) == {"type": "vote", "seat": 0, "safe": 2, "number": 5}
    assert action_to_json(Advance()) == {"type": "advance"}
    assert GAME.id == "secret-identity"


def test_coffre_command_line() -> None:
    """The installed ``coffre play`` reads stdin and exits 2 on an illegal action."""
    exe = Path(sys.executable).parent / "coffre"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "firmware.cli"]
    args = [*cmd, "play", "--game", "secret-identity", "--players", "3", "--seed", "4"]
    good = subprocess.run(
        args, input="\n".join(PREPARE), capture_output=True, text=True, timeout=60, check=False
    )
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["public"]["phase"] == "vote"
    bad = subprocess.run(
        [*args, "-o", "mystery=dealt", "-"],
        input='{"type":"mystery","seat":0,"number":3}\n',
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2
    assert json.loads(bad.stdout) == {"error": "Numbers are dealt", "line": 1}


def test_unreadable_scenario_file_is_one_line(tmp_path: Path) -> None:
    """A missing, a directory or a non-UTF-8 scenario file: one ``coffre:`` line, exit != 0."""
    exe = Path(sys.executable).parent / "coffre"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "firmware.cli"]
    args = [*cmd, "play", "--game", "secret-identity", "--players", "3"]
    binary = tmp_path / "latin1.jsonl"
    binary.write_bytes('{"type":"advance"} # é'.encode("latin-1"))
    for path in (tmp_path / "missing.jsonl", tmp_path, binary):
        done = subprocess.run(
            [*args, str(path)], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode != 0 and done.stdout == ""
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("coffre: ") and str(path) in lines[0]
