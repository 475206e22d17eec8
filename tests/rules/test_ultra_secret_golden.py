"""Ultra Secret golden playthrough and the ``coffre play`` command.

- test_golden_playthrough: a scripted 3-player game (every action type: hide, bug,
  dial, informant, search, open, read, pass, declare, file, flight dials) replays to
  exactly the recorded views of every seat and of the public table, step by step.
  Regenerate with ``COFFRE_REGEN_GOLDEN=1`` (the test then fails on purpose).
- test_golden_scenario_file_matches: the plain action list shipped next to the golden
  file (usable with ``coffre play``) is the golden game's actions.
- test_coffre_play_runs_the_scenario: ``coffre play --game ultra-secret`` (subprocess)
  replays the scenario to the recorded outcome.
- test_run_scenario_reports_an_illegal_line: an illegal action stops with its message.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from firmware.tools.scenario import EXIT_ILLEGAL, run_scenario
from rules._ultra_secret_board import COLOURS
from rules.core import Action, action_to_json, decode_action
from rules.ultra_secret import (
    GAME,
    Bug,
    Declare,
    Dial,
    Hide,
    Informant,
    Open,
    Pass,
    Read,
    Search,
    UltraState,
)
from tests.support.golden import regenerating

GOLDEN = Path(__file__).parent / "golden" / "ultra-secret-3p.jsonl"
SCENARIO = Path(__file__).parent / "golden" / "ultra-secret-3p.actions.jsonl"
PLAYERS, SEED, OPTIONS = 3, 7, {"declare": "any"}


def _script() -> list[Action]:
    """The scripted game; a few choices depend on the cards the seed deals."""
    state = GAME.setup(PLAYERS, OPTIONS, SEED)
    actions: list[Action] = []

    def do(action: Action) -> None:
        nonlocal state
        state, _ = GAME.apply(state, action)
        actions.append(action)

    def lockers(seat: int) -> tuple[str, ...]:
        here = state.agents[seat]
        full = [
            c
            for c, st in zip(COLOURS, state.stashes, strict=True)
            if st.at == here and c != COLOURS[seat]
        ]
        return tuple(full[:2])

    do(Hide(0, "identity", "toothbrush", "formula", "B1"))
    do(Hide(1, "formula", "identity", "toothbrush", "F1"))
    do(Hide(2, "toothbrush", "formula", "identity", "B1"))
    # turn 1: red bugs G2; red draws a mole card, yellow searches red's hotel under
    # green's informant (one bag), green opens lockers at B1
    for action in (Bug(0, "G2"), Pass(1), Pass(2)):
        do(action)
    for action in (Dial(0, "V1"), Dial(1, "H1"), Dial(2, "B1")):
        do(action)
    for action in (Pass(0), Pass(1), Informant(2, "H1")):
        do(action)
    do(Search(1, "suitcase"))
    do(Open(2, lockers(2)))
    # turn 2: red reads the G square of its mole card; yellow draws; green searches H2
    card = state.hands[0][0]
    for s in range(3):
        do(Pass(s))
    for action in (Dial(0, card), Dial(1, "V2"), Dial(2, "H2")):
        do(action)
    for s in range(3):
        do(Pass(s))
    do(Read(0, (card,)))
    do(Search(2))
    # turn 3: yellow and green crowd G5; red searches green's hotel; yellow posts at H3
    for action in (Pass(0), Bug(1, "H3"), Pass(2)):
        do(action)
    for action in (Dial(0, "H3"), Dial(1, "G5"), Dial(2, "G5")):
        do(action)
    for action in (Pass(0), Informant(1, "H3"), Pass(2)):
        do(action)
    do(Search(0, "briefcase"))
    # turn 4: red and green declare (declare: any); the digit sum picks the fugitive
    for action in (Declare(0), Pass(1), Declare(2)):
        do(action)
    fugitive = state.fugitive
    filing = GAME.legal_actions(state, fugitive)[0]
    do(filing)
    # the flight: one enemy on F1 with him, then alone on a VM square, then alone on F1
    others = [s for s in range(3) if s != fugitive]
    for squares in (
        {fugitive: "F1", others[0]: "F1", others[1]: "VM3"},
        {fugitive: "VM1", others[0]: "VM2", others[1]: "VM3"},
        {fugitive: "F1", others[0]: "VM2", others[1]: "VM2"},
    ):
        for s in range(3):
            do(Dial(s, squares[s]))
    assert GAME.is_over(state)
    return actions


def _record(actions: list[Action]) -> list[dict[str, Any]]:
    state: UltraState = GAME.setup(PLAYERS, OPTIONS, SEED)
    lines: list[dict[str, Any]] = [
        {"game": GAME.id, "players": PLAYERS, "seed": SEED, "options": OPTIONS},
        {"n": 0, "action": None, "views": _views(state)},
    ]
    for n, action in enumerate(actions, start=1):
        state, events = GAME.apply(state, action)
        lines.append(
            {
                "n": n,
                "action": action_to_json(action),
                "events": [{"kind": e.kind, "data": e.data, "to": e.to} for e in events],
                "views": _views(state),
            }
        )
    lines.append({"over": GAME.is_over(state), "scores": GAME.scores(state)})
    return lines


def _views(state: UltraState) -> dict[str, Any]:
    views = {str(s): GAME.view(state, s) for s in range(state.players)}
    for v in views.values():
        v.pop("table")  # identical to the public view, recorded once
    return {"public": GAME.view(state, None), **views}


def _dump(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines)


def test_golden_playthrough() -> None:
    """Every seat's view and the public view match the recorded playthrough."""
    text = _dump(json.loads(json.dumps(_record(_script()))))
    if regenerating():
        GOLDEN.write_text(text, encoding="utf-8")
        SCENARIO.write_text(
            "".join(json.dumps(action_to_json(a)) + "\n" for a in _script()), encoding="utf-8"
        )
        raise AssertionError("golden regenerated: review the diff, then run again")
    expected = GOLDEN.read_text(encoding="utf-8").splitlines()
    got = text.splitlines()
    for i, (want, have) in enumerate(zip(expected, got, strict=False)):
        assert json.loads(have) == json.loads(want), f"golden line {i + 1} differs"
    assert len(got) == len(expected)


def test_golden_scenario_file_matches() -> None:
    """The shipped action list decodes to the golden game's actions."""
    lines = SCENARIO.read_text(encoding="utf-8").splitlines()
    assert [decode_action(GAME, line) for line in lines] == _script()


def test_coffre_play_runs_the_scenario() -> None:
    """`coffre play --game ultra-secret` replays the scenario to its recorded end."""
    cmd = [sys.executable, "-m", "firmware.cli", "play", "--game", "ultra-secret"]
    cmd += ["--players", str(PLAYERS), "--seed", str(SEED), "-o", "declare=any", str(SCENARIO)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    last = json.loads(GOLDEN.read_text(encoding="utf-8").splitlines()[-2])
    assert result["over"] is True
    assert result["public"] == last["views"]["public"]
    assert (
        result["scores"]
        == json.loads(GOLDEN.read_text(encoding="utf-8").splitlines()[-1])["scores"]
    )


def test_run_scenario_reports_an_illegal_line() -> None:
    """An illegal action stops the replay with its message and line number."""
    lines = SCENARIO.read_text(encoding="utf-8").splitlines()[:3]
    lines.append('{"type":"dial","seat":0,"square":"VM1"}')
    out = io.StringIO()
    code = run_scenario("ultra-secret", PLAYERS, SEED, OPTIONS, lines, out)
    assert code == EXIT_ILLEGAL
    assert json.loads(out.getvalue()) == {"error": "Not the time for that", "line": 4}
