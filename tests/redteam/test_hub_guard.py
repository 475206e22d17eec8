"""Red team, issue 22 (hub side): no careless or hostile input may cost a game or a table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.redteam.harness import KEYS, TABLE, Rig, T
from tests.redteam.test_hub_abuse import voting_rig

RUNNING = "A game is running: abort it first"


def host_acks(rig: Rig) -> list[dict[str, object]]:
    return [p for t, p, _ in rig.sent if t == T.host_ack]


# --- host commands ---------------------------------------------------------------------


def test_start_over_a_running_game_is_refused_and_the_game_goes_on(tmp_path: Path) -> None:
    """A second start (another panel, a script) is refused on host/ack and the hub display;
    the running game is untouched."""
    rig = voting_rig(tmp_path)
    version = rig.table.state.version
    rig.start(seed=9)
    ack = host_acks(rig)[-1]
    assert ack == {"id": f"h:{rig.commands}", "ok": False, "message": RUNNING}
    assert rig.last(T.host_screen)["title"] == RUNNING  # the hub display says it too
    game = rig.hub.store.current_game(TABLE)
    assert game is not None and game.game_no == 1
    assert rig.table.state.version == version and rig.table.view(0)["my_mystery"] == 1
    rig.host("abort")
    rig.start(seed=9)  # after an explicit abort: a new game
    assert host_acks(rig)[-1]["ok"] is True
    game = rig.hub.store.current_game(TABLE)
    assert game is not None and game.game_no == 2


@pytest.mark.parametrize("command_id", ["X", "cli-1b2c3d", "h:1"])
def test_a_host_answer_outlives_any_number_of_station_refusals(
    tmp_path: Path, command_id: str
) -> None:
    """Start with id X, 600 refused station inputs from 80 boots, X again: the same answer,
    game 1 still running, no game 2."""
    rig = Rig(tmp_path)
    rig.start(id=command_id)
    assert host_acks(rig)[-1] == {"id": command_id, "ok": True, "message": "Game started"}
    refused = {"kind": "tag", "uid": KEYS.uid_for("vote", "red", 1)}  # no vote in prepare
    for n in range(600):
        rig.deliver(T.station("p1", "input"), {"id": f"b{n % 80}:{n}", **refused})
        assert rig.acks("p1")[-1]["ok"] is False
    rig.deliver(T.host_command, {"cmd": "start", "game": "secret-identity", "id": command_id})
    assert host_acks(rig)[-1] == {"id": command_id, "ok": True, "message": "Game started"}
    game = rig.hub.store.current_game(TABLE)
    assert game is not None and game.game_no == 1 and game.status == "playing"
    assert rig.hub.store.last_game(TABLE) == game
