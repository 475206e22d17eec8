"""The host's panel in a played game: undo (back twice), abort (stop twice), a new game,
and a hub restarted right after each of them."""

from __future__ import annotations

import json
import time
from typing import Any

import msgspec
import pytest

from firmware.hub.store import Store
from firmware.tools.bots.host_bot import host_starts
from firmware.tools.bots.secret_identity import Director
from firmware.tools.simtable import TABLE, SimTable
from rules import get_game
from tests.support.tables import TableFactory, director, expected_scores

GAME = "secret-identity"


def screens(sim: SimTable) -> dict[str, Any]:
    """What every station was last sent, revision numbers aside."""
    out = {}
    for name, station in sim.stations.items():
        data = msgspec.to_builtins(station.screen)
        data.pop("rev", None)
        out[name] = data
    return out


def snapshot(sim: SimTable) -> tuple[str, dict[str, Any]]:
    """The public table and the stations' screens as they are this instant."""
    return json.dumps(sim.watch.public, sort_keys=True), screens(sim)


def table_now(
    sim: SimTable, quiet: float = 0.4, timeout: float = 15.0
) -> tuple[str, dict[str, Any]]:
    """The public table and the stations' screens once nothing has changed for ``quiet``
    seconds (a restarted hub republishes; on a loaded machine that takes a while)."""
    deadline = time.monotonic() + timeout
    last, since = snapshot(sim), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = snapshot(sim)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return last


def press_twice(sim: SimTable, button: str, changed: Any) -> None:
    """Press a panel button twice (the confirmation) and wait until ``changed(public)``."""
    sim.panel.press(button)
    time.sleep(0.1)
    assert not changed(sim.watch.public), "one press must do nothing"
    sim.panel.press(button)
    sim.watch.wait(changed)


def restart_hub(sim: SimTable) -> None:
    """Stop the hub and start a new one on the same store (it replays what it finds)."""
    sim.stop_hub()
    sim.start_hub()


def fresh_public(players: int, options: dict[str, Any], seed: int = 7) -> dict[str, Any]:
    """The engine's own first public view of a game (the fixture's tables use seed 7)."""
    game = get_game(GAME)
    view: dict[str, Any] = game.view(game.setup(players, options, seed), None)
    return view


def play_out(bots: Director, players: int) -> dict[str, Any]:
    """Play to the end; the scores on public are the bots' recount."""
    bots.stop_at = None
    final = bots.play()
    assert final["over"]
    if final["view"]["mode"] == "coop":
        right = sum(1 for t in bots.record.values() if t["answer"] == t["mystery"])
        assert final["scores"] == [right] * players
    else:
        assert final["scores"] == expected_scores(bots.record, players)
    return final


def extra_move(sim: SimTable, mode: str) -> None:
    """One more move than the reference game makes: a vote, or a co-op answer."""
    view = sim.watch.public["view"]
    if mode == "coop":
        active = view["active"]
        guesser = (active + 1) % 3
        colour = sim.table_config.seating().colours[guesser]
        ack = sim.tap(sim.names[active], sim.keys.uid_for("vote", colour, 3))
    else:
        red = sim.table_config.seating().colours[0]
        ack = sim.tap(sim.names[1], sim.keys.uid_for("vote", red, 3))
    assert ack is not None and ack.ok, ack


@pytest.mark.parametrize(
    ("options", "stop"),
    [({}, (1, "vote")), ({"mode": "coop"}, (2, "answer"))],
    ids=["competitive-vote", "coop-answer"],
)
def test_undo_on_the_panel_restores_the_game_exactly(
    make_table: TableFactory, options: dict[str, Any], stop: tuple[int, str]
) -> None:
    """Back twice undoes the last move: public, screens and the rest of the game are those
    of a replay that never made it, also after a hub restart."""
    mode = options.get("mode", "competitive")
    played, reference = make_table(3), make_table(3)
    bots = director(played, seed=5, options=options, stop_at=stop)
    ref_bots = director(reference, seed=5, options=options, stop_at=stop)
    for b in (bots, ref_bots):
        b.start_game(3)
        b.play()
    before = table_now(played)
    assert before == table_now(reference)

    extra_move(played, mode)
    version = played.watch.public["version"]
    assert table_now(played) != before
    press_twice(played, "back", lambda p: p["version"] == version - 1)
    assert table_now(played) == before
    stored = Store(played.store_path).events(TABLE, 1)
    assert stored[-1] == {"undo": True}  # undo is a new event: nothing was deleted

    restart_hub(played)
    assert table_now(played) == before
    final = play_out(bots, 3)
    assert final == play_out(ref_bots, 3)


def test_abort_on_the_panel_then_a_new_game_starts_clean(make_table: TableFactory) -> None:
    """Stop twice ends the game for good (also after a restart); the next one starts from
    nothing of it and plays to the end."""
    sim = make_table(3)
    bots = director(sim, seed=3, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    press_twice(sim, "stop", lambda p: p.get("game") is None)
    idle = table_now(sim)
    assert all("Waiting for the host" in s["lines"] for s in idle[1].values()), idle[1]
    store = Store(sim.store_path)
    last = store.last_game(TABLE)
    assert last is not None and last.status == "aborted"

    restart_hub(sim)
    assert table_now(sim) == idle  # nothing of the aborted game comes back

    again = director(sim, seed=4, options={"mode": "coop"})
    again.start_game(3)
    assert sim.watch.public["view"] == fresh_public(3, {"mode": "coop"})
    assert store.current_game(TABLE) is not None
    restart_hub(sim)
    assert sim.watch.public["view"] == fresh_public(3, {"mode": "coop"})
    play_out(again, 3)


def test_a_new_game_after_game_over_on_the_panel(make_table: TableFactory) -> None:
    """After a finished game the panel starts another, clean, and a restart keeps each."""
    sim = make_table(3)
    bots = director(sim, seed=6)
    bots.start_game(3)
    first = play_out(bots, 3)
    restart_hub(sim)
    assert sim.watch.wait(lambda p: p.get("over") is True) == first  # the result stays up

    host_starts(sim, sim.watch, GAME, 3, {"mystery": "dealt"})
    assert sim.watch.public["view"] == fresh_public(3, {"mystery": "dealt"})
    restart_hub(sim)
    assert sim.watch.public["view"] == fresh_public(3, {"mystery": "dealt"})
    again = director(sim, seed=7, options={"mystery": "dealt"})
    final = play_out(again, 3)
    assert [g.status for g in (Store(sim.store_path).last_game(TABLE),) if g] == ["over"]
    assert final["view"]["mystery"] == "dealt"


def test_hub_killed_right_after_undo_abort_and_start_resumes_each(
    make_table: TableFactory,
) -> None:
    """A `coffre hub` process SIGKILLed right after each host command comes back to it.

    (A separate hub process has no panel here: the panel's commands go as host commands.)
    """
    sim = make_table(3, hub_mode="process")
    bots = director(sim, seed=5, options={"mode": "coop"}, stop_at=(2, "answer"))
    bots.start_game(3)
    bots.play()
    before = table_now(sim)

    extra_move(sim, "coop")
    version = sim.watch.public["version"]
    sim.host({"cmd": "undo"})
    sim.watch.wait(lambda p: p["version"] == version - 1)
    sim.kill_hub()
    sim.start_hub()
    assert table_now(sim) == before

    sim.host({"cmd": "abort"})
    sim.watch.wait(lambda p: p.get("game") is None)
    idle = table_now(sim)
    sim.kill_hub()
    sim.start_hub()
    assert table_now(sim) == idle

    again = director(sim, seed=8, options={"mode": "coop", "mystery": "dealt"})
    again.start_game(3)
    sim.kill_hub()
    sim.start_hub()
    assert sim.watch.public["view"] == fresh_public(3, {"mode": "coop", "mystery": "dealt"})
    play_out(again, 3)
