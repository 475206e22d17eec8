"""``coffre host``: the host's command line drives a table over a real mosquitto with the
host user's credentials, and a command is answered once, by id."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from firmware.cli import main
from firmware.hub.brokerconf import HOST_USER
from firmware.hub.store import Store
from firmware.link import protocol as proto
from firmware.link.mqtt import Client
from firmware.tools import host
from firmware.tools.simtable import TABLE
from tests.support.tables import TableFactory, director, host_toml, run_host

GAME = "secret-identity"


def test_host_command_line_starts_undoes_and_aborts_a_game(
    make_table: TableFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """start/next/undo/abort from the command line each print the hub's answer in one line."""
    sim = make_table(players=3)
    config = host_toml(sim, tmp_path)
    start = ("--table", TABLE, "start", "--game", GAME, "--players", "3", "-o", "mode=coop")
    assert run_host(capsys, config, *start) == (0, f"{TABLE}: start done: Game started", "")
    public = sim.watch.wait(lambda p: p.get("game") == GAME and p.get("version") == 0)
    assert public["view"]["mode"] == "coop"
    assert run_host(capsys, config, "--table", TABLE, "next") == (
        1,
        f"{TABLE}: next refused: Nothing to skip now",
        "",
    )

    director(sim, seed=3, options={"mode": "coop"}, stop_at=(2, "answer")).play()
    version = sim.watch.public["version"]
    assert version > 0
    assert run_host(capsys, config, "--table", TABLE, "undo") == (0, f"{TABLE}: undo done", "")
    sim.watch.wait(lambda p: p.get("version") == version - 1)  # the last move is undone

    assert run_host(capsys, config, "--table", TABLE, "abort") == (0, f"{TABLE}: abort done", "")
    sim.watch.wait(lambda p: p.get("game") is None)
    last = Store(sim.store_path).last_game(TABLE)
    assert last is not None and last.status == "aborted"
    assert run_host(capsys, config, "--table", TABLE, "undo") == (
        1,
        f"{TABLE}: undo refused: No game running",
        "",
    )


def test_a_resent_command_is_answered_again_not_redone(
    make_table: TableFactory, tmp_path: Path
) -> None:
    """The same command id sent twice starts one game and gets the same answer twice."""
    sim = make_table(players=3)
    broker = sim.broker.config(HOST_USER)
    cmd = proto.HostCommand(cmd="start", game=GAME, players=3, id="cli-once")
    first = host.send(broker, TABLE, cmd)
    sim.watch.wait(lambda p: p.get("game") == GAME)
    again = host.send(broker, TABLE, cmd)
    assert first == again == proto.Ack("cli-once", True, "Game started")
    store = Store(sim.store_path)
    current = store.current_game(TABLE)
    assert current is not None and current.game_no == 1


def test_unknown_table_and_wrong_password_are_one_line(
    make_table: TableFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table no hub plays, or a password the broker refuses, ends in one clear line."""
    sim = make_table(players=3)
    config = host_toml(sim, tmp_path)
    status, out, err = run_host(capsys, config, "--table", "other", "start", "--game", GAME)
    assert (status, out) == (host.EX_UNAVAILABLE, "")
    assert err == "coffre: table other: no hub on this broker has it (or user host may not see it)"
    assert sim.watch.public.get("game") is None  # nothing started anywhere

    bad = host_toml(sim, tmp_path, password="wrong")
    status, out, err = run_host(capsys, bad, "--table", TABLE, "abort")
    assert (status, out) == (host.EX_UNAVAILABLE, "")
    assert err.startswith("coffre: broker 127.0.0.1:") and "refused" in err, err
    assert len(err.splitlines()) == 1


def test_options_for_another_action_than_start_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--game`` with ``next`` is a config mistake named in one line, before any broker."""
    status = main(["host", "--table", "t1", "--broker", "127.0.0.1", "next", "--game", GAME])
    assert status == 78
    assert capsys.readouterr().err.strip() == (
        "coffre: --game, --players, --seed and -o go with start, not next"
    )


def test_a_malformed_command_with_an_id_is_refused_on_host_ack(make_table: TableFactory) -> None:
    """A host command the hub cannot read is answered ``ok: false`` with the reason, by id."""
    sim = make_table(players=3)
    topics = proto.Topics(TABLE)
    client = Client(sim.broker.config(HOST_USER), "test-host-ack", [topics.host_ack])
    client.start()
    try:
        assert client.wait_connected(10)
        # paho sent the SUBSCRIBE on connecting: the broker handles it before this.
        client.publish(topics.host_command, b'{"cmd": "dance", "id": "x1"}')
        msg = client.inbox.get(timeout=10)
        assert msg is not None
        ack = msgspec.json.decode(msg.payload, type=proto.Ack)
        assert (ack.id, ack.ok) == ("x1", False) and ack.message.startswith("Bad message"), ack
    finally:
        client.stop()
    assert sim.watch.public.get("game") is None


def test_a_start_over_a_running_game_is_refused_with_a_failing_status(
    make_table: TableFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`coffre host start` while a game runs: exit 1 and the hub's reason; the game goes on."""
    sim = make_table(players=3)
    config = host_toml(sim, tmp_path)
    start = ("--table", TABLE, "start", "--game", GAME, "--players", "3")
    assert run_host(capsys, config, *start)[0] == 0
    sim.watch.wait(lambda p: p.get("game") == GAME)
    assert run_host(capsys, config, *start) == (
        1,
        f"{TABLE}: start refused: A game is running: abort it first",
        "",
    )
    current = Store(sim.store_path).current_game(TABLE)
    assert current is not None and current.game_no == 1
