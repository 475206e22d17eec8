"""The SQLite event store: append-only, deduplicated, resumable."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from firmware.hub.store import Store


def test_events_survive_a_reopen(tmp_path: Path) -> None:
    """What was appended is there after the file is opened again (a restart)."""
    path = tmp_path / "hub.sqlite3"
    store = Store(path)
    game = store.new_game("t", "secret-identity", 3, {"mode": "coop"}, 42, ["a", "b", "c"])
    assert store.append("t", game.game_no, {"rules": {"type": "advance"}}, "t/a/x:1")
    store.close()
    again = Store(path)
    record = again.current_game("t")
    assert record is not None and record.seed == 42 and record.options == {"mode": "coop"}
    assert again.events("t", record.game_no) == [{"rules": {"type": "advance"}}]


def test_duplicate_source_id_is_not_stored(tmp_path: Path) -> None:
    """A second event with the same source id is refused and writes nothing."""
    store = Store(tmp_path / "s.db")
    game = store.new_game("t", "g", 3, {}, 1, ["a", "b", "c"])
    assert store.append("t", game.game_no, {"ui": {"n": 1}}, "dup")
    assert not store.append("t", game.game_no, {"ui": {"n": 2}}, "dup")
    assert store.answer("dup") == (True, "")
    assert store.events("t", game.game_no) == [{"ui": {"n": 1}}]


def test_events_without_source_may_repeat(tmp_path: Path) -> None:
    """Timer and host events carry no source id and are all kept, in order."""
    store = Store(tmp_path / "s.db")
    game = store.new_game("t", "g", 3, {}, 1, ["a", "b", "c"])
    for i in range(3):
        assert store.append("t", game.game_no, {"n": i}, None)
    assert [e["n"] for e in store.events("t", game.game_no)] == [0, 1, 2]


def test_a_new_game_ends_the_one_playing(tmp_path: Path) -> None:
    """Starting a game at a table marks the unfinished one aborted; games are numbered."""
    store = Store(tmp_path / "s.db")
    first = store.new_game("t", "g", 3, {}, 1, ["a"])
    second = store.new_game("t", "g", 3, {}, 2, ["a"])
    assert second.game_no == first.game_no + 1
    current = store.current_game("t")
    assert current is not None and current.game_no == second.game_no
    store.set_status("t", second.game_no, "over")
    assert store.current_game("t") is None
    last = store.last_game("t")
    assert last is not None and last.status == "over"


def test_tables_are_separate(tmp_path: Path) -> None:
    """Two tables in one file number their games and events independently."""
    store = Store(tmp_path / "s.db")
    a = store.new_game("a", "g", 3, {}, 1, ["x"])
    b = store.new_game("b", "g", 3, {}, 1, ["y"])
    store.append("a", a.game_no, {"e": "a"}, None)
    assert store.events("b", b.game_no) == []
    assert a.game_no == b.game_no == 1


def test_a_store_others_could_read_is_made_the_hubs_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store left readable by others (an older coffre, a copy by hand): 0600 at the next
    open, said once in the log; a store already private says nothing."""
    path = tmp_path / "hub.sqlite3"
    Store(path).close()
    for name in (path, Path(f"{path}-wal")):
        name.touch()
        name.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        Store(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and all("could be read by other users (mode 644)" in s for s in said)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        Store(path).close()
    assert caplog.records == []


def test_a_store_the_hub_cannot_make_private_says_how(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the hub user's to change: the log line gives the command that fixes it."""
    path = tmp_path / "hub.sqlite3"
    path.touch()
    path.chmod(0o666)

    def refuse(self: Path, mode: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(Path, "chmod", refuse)
    with caplog.at_level(logging.WARNING):
        Store(path).close()
    assert [r.getMessage() for r in caplog.records] == [
        f"hub: {path} can be read by other users (mode 666) and this user cannot change "
        f"that: sudo chmod 600 {path} (it holds every player's secret)"
    ]
