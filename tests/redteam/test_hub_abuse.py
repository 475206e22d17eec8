"""Red team, hub level (no broker): duplicates, host mistakes, store failures, crashes."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.actor import PAGE_SECONDS
from firmware.hub.events import TimersDue
from firmware.hub.service import Hub
from firmware.link.lang import short_colour
from firmware.link.mqtt import Message
from hardware.keys import COLOURS
from tests.support.hubrig import (
    KEYS,
    TABLE,
    Clock,
    Rig,
    T,
    prepare_all,
    readable,
    voting_rig,
)


def all_votes(rig: Rig, players: int) -> None:
    """Every seat votes on every other safe (voter v puts key v+1... on each)."""
    for voter in range(players):
        for safe in range(players):
            if safe != voter:
                assert rig.vote(voter, rig.stations[safe], safe + 1)["ok"]


# --- host commands ---------------------------------------------------------------------


def test_redelivered_start_command_does_not_wipe_the_running_game(tmp_path: Path) -> None:
    """A host 'start' delivered twice with the same id (QoS 1) starts one game, not two."""
    rig = Rig(tmp_path)
    rig.start(id="start-1")
    assert rig.mystery("p1", 3)["ok"]
    rig.start(id="start-1")  # the same message again: a QoS 1 redelivery
    game = rig.hub.store.current_game(TABLE)
    assert game is not None and game.game_no == 1
    assert rig.table.view(0)["my_mystery"] == 3


def test_redelivered_abort_command_does_not_abort_the_next_game(tmp_path: Path) -> None:
    """An 'abort' redelivered after the host started a new game leaves the new game alone."""
    rig = Rig(tmp_path)
    rig.start(id="start-1")
    rig.host("abort", id="abort-1")
    rig.start(id="start-2")
    assert rig.mystery("p1", 3)["ok"]
    rig.host("abort", id="abort-1")  # the first abort, delivered again
    assert rig.hub.actors[TABLE].table is not None
    assert rig.table.view(0)["my_mystery"] == 3


def test_station_named_host_is_not_mistaken_for_a_host_command(tmp_path: Path) -> None:
    """Station 'host' and a host command may use the same id; both count."""
    rig = Rig(tmp_path, ("host", "p2", "p3"))
    rig.start()
    assert rig.mystery("p2", 4)["ok"]
    rig.host("undo", id="ab:1")
    assert rig.table.view(1)["my_mystery"] is None
    ack = rig.tap("host", KEYS.uid_for("mystery", None, 6), "ab:1")
    assert ack["ok"]
    assert rig.table.view(0)["my_mystery"] == 6, "acknowledged but never applied"


def test_host_start_with_a_huge_seed_is_explained(tmp_path: Path) -> None:
    """A seed SQLite cannot store is refused on the hub display; the game goes on."""
    rig = Rig(tmp_path)
    rig.start()
    assert rig.mystery("p1", 3)["ok"]
    before = rig.last(T.host_screen)
    with contextlib.suppress(Exception):  # the hub's run() logs it and carries on
        rig.start(seed=2**70)
    assert rig.table.view(0)["my_mystery"] == 3  # the running game is untouched
    assert rig.hub.store.current_game(TABLE) is not None
    assert rig.last(T.host_screen) != before, "the host is told nothing"


def track(rig: Rig) -> tuple[list[int], list[int]]:
    """Each seat's score and picto cards in hand, as public shows them."""
    seats = rig.public()["view"]["seats"]
    return [s["score"] for s in seats], [s["pictos_left"] for s in seats]


def test_undo_in_the_reveal_and_across_the_round_boundary(tmp_path: Path) -> None:
    """Undo closes safes again (scores go back) and reopens the last round; resume agrees."""
    rig = voting_rig(tmp_path)
    all_votes(rig, 3)
    assert rig.public()["view"]["phase"] == "reveal"
    tracks: list[tuple[list[int], list[int]]] = []
    for _ in range(4):  # three safes, then the end of the round
        tracks.append(track(rig))
        rig.host("next")
    assert rig.public()["view"]["round"] == 2
    assert track(rig)[0] == [4, 4, 4]  # every vote was right: 2 as owner, 2 as voter
    for expected in reversed(tracks):
        rig.host("undo")
        assert track(rig) == expected
        assert rig.public()["view"]["round"] == 1
    assert rig.public()["view"]["revealed"] == []
    state, ui = rig.table.state, dict(rig.table.ui)
    rig.close()
    again = Rig(tmp_path)
    assert again.table.state == state and again.table.ui == ui


def test_undo_after_game_over_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    """Once the game is over, undo and next are refused with a readable note."""
    rig = voting_rig(tmp_path)
    for rnd in range(4):
        if rnd:
            prepare_all(rig, [1, 2, 3])
        all_votes(rig, 3)
        for _ in range(4):
            rig.host("next")
    assert rig.public()["over"] is True
    final = rig.public()
    events = len(rig.events())
    for cmd in ("undo", "next"):
        rig.host(cmd)
        assert readable(rig.host_lines()[-1])
    assert rig.public() == final and len(rig.events()) == events
    ack = rig.press("p1")
    assert not ack["ok"] and readable(ack["message"])


def test_abort_then_new_game_old_input_ids_do_nothing(tmp_path: Path) -> None:
    """After abort and a new game, the previous game's input ids are acked, never re-applied."""
    rig = Rig(tmp_path)
    rig.connected()
    rig.start()
    uid = KEYS.uid_for("mystery", None, 3)
    assert rig.tap("p1", uid, "oldboot:1")["ok"]
    rig.host("abort")
    idle = rig.last(T.station("p1", "screen"))
    assert "Waiting for the host" in idle["lines"] and "secret" not in idle
    assert rig.public()["game"] is None
    rig.start(seed=9)
    ack = rig.tap("p1", uid, "oldboot:1")  # the old game's input, delivered again
    assert ack["ok"]
    assert rig.table.view(0)["my_mystery"] is None
    assert rig.events() == []


# --- stations ------------------------------------------------------------------------


def test_knob_spam_is_clamped_and_confirms_the_limit(tmp_path: Path) -> None:
    """200 knob steps up then 200 down: every step acked, cursor stays within 1..3."""
    rig = Rig(tmp_path)
    rig.start()
    for _ in range(200):
        assert rig.knob("p1", 1)["ok"]
    assert rig.hub.actors[TABLE].table.binding.cursor(rig.table, 0) == 3  # type: ignore[union-attr]
    for _ in range(200):
        assert rig.knob("p1", -1)["ok"]
    assert rig.knob("p1", 8)["ok"]
    assert rig.press("p1")["ok"]
    assert rig.table.view(0)["pictos_placed"] == 3
    ack = rig.knob("p1", 1)
    assert not ack["ok"] and readable(ack["message"])


def test_input_from_a_station_not_in_this_game(tmp_path: Path) -> None:
    """A 4-station table playing 3: the fourth station is told, nothing changes."""
    rig = Rig(tmp_path, ("p1", "p2", "p3", "p4"))
    rig.start(3)
    ack = rig.mystery("p4", 2)
    assert ack == {"id": ack["id"], "ok": False, "message": "Not in this game"}
    assert rig.events() == []


@pytest.mark.parametrize(
    "payload",
    [
        '{"id":"é:1","kind":"press"}'.encode(),
        b'{"id":"a:1","kind":"tag","uid":"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"}',
        b'{"id":"a:1","kind":"tag","uid":"04a1b2c3"}',
        b'{"id":"a:1","kind":"knob","step":1e400}',
        b'{"id":"a:1","kind":"knob","step":99999999999999999999999999}',
        b'{"id":"a:1","kind":"knob","step":true}',
        b'{"id":"a:1","kind":"flap"}',
        b"[" * 400 + b"]" * 100,
        b'{"id":"a:1\\u0000","kind":"press"}',
        b'{"id":"../../p2:1","kind":"press"}',
        b'{"id":"+:1","kind":"press"}',
        b"\xff\xfe\x00",
        b"",
        b"null",
    ],
)
def test_malformed_inputs_are_refused_readably(tmp_path: Path, payload: bytes) -> None:
    """Odd payloads (unicode, NUL, huge numbers, deep nesting, path ids) change nothing."""
    rig = Rig(tmp_path)
    rig.start()
    before = (rig.table.state, dict(rig.table.ui))
    rig.deliver(T.station("p1", "input"), payload)
    ack = rig.acks("p1")[-1]
    assert ack["ok"] is False and readable(ack["message"])
    assert (rig.table.state, dict(rig.table.ui)) == before and rig.events() == []


def test_retained_input_is_not_replayed_later(tmp_path: Path) -> None:
    """A station's retained input, refused once, must not count when the broker sends it again."""
    rig = voting_rig(tmp_path)
    uid = KEYS.uid_for("mystery", None, 8)
    raw = {"id": "ret:1", "kind": "tag", "uid": uid}
    rig.deliver(T.station("p1", "input"), raw, retain=True)  # refused: we are voting
    assert rig.table.view(0)["my_mystery"] == 1
    rig.host("next")  # close the vote
    for _ in range(4):
        rig.host("next")
    assert rig.public()["view"]["phase"] == "prepare"
    # The hub reconnects: the broker sends the retained input again (it is still there).
    rig.deliver(T.station("p1", "input"), raw, retain=True)
    assert rig.table.view(0)["my_mystery"] is None, "a key nobody tapped was locked"


# --- store and crashes -------------------------------------------------------------------


class FailingAppend:
    """Makes the store's append fail as a full or read-only disk would."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.real = hub.store.append

    def __enter__(self) -> FailingAppend:
        def fail(*_: Any, **__: Any) -> bool:
            raise sqlite3.OperationalError("attempt to write a readonly database")

        self.hub.store.append = fail  # type: ignore[method-assign]
        return self

    def __exit__(self, *_: Any) -> None:
        self.hub.store.append = self.real  # type: ignore[method-assign]


def test_store_write_failure_refuses_the_input_and_changes_nothing(tmp_path: Path) -> None:
    """Disk read-only: the tap is refused readably, nothing changes; the resend then counts."""
    rig = voting_rig(tmp_path)
    version, events = rig.public()["version"], len(rig.events())
    with FailingAppend(rig.hub):
        ack = rig.vote(0, "p2", 5)
    assert ack["ok"] is False and readable(ack["message"])
    assert rig.public()["version"] == version and len(rig.events()) == events
    assert rig.table.view(0)["my_votes"] == []
    again = rig.tap("p2", KEYS.uid_for("vote", "red", 5), ack["id"])  # the station resends
    assert again["ok"] and rig.table.view(0)["my_votes"] == [{"safe": 1, "number": 5}]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_store_failure_in_the_reveal_timer_does_not_kill_the_hub(tmp_path: Path) -> None:
    """With an automatic reveal, a failing disk must not stop the hub answering inputs."""
    rig = voting_rig(tmp_path, reveal_delay=0.05)
    rig.hub.clock = time.monotonic
    all_votes(rig, 3)
    assert rig.public()["view"]["phase"] == "reveal"
    rig.hub.actors[TABLE].timer_due = time.monotonic() + 0.05
    thread = threading.Thread(target=rig.hub.run, daemon=True)
    with FailingAppend(rig.hub):
        thread.start()
        time.sleep(0.4)  # the timer fires (and fails) while the disk is bad
    before = len(rig.acks("p1"))
    rig.hub.inbox.put(Message(T.station("p1", "input"), b'{"id":"late:1","kind":"press"}'))
    deadline = time.monotonic() + 2
    while len(rig.acks("p1")) == before and time.monotonic() < deadline:
        time.sleep(0.02)
    alive = thread.is_alive()
    rig.hub.inbox.put(None)
    thread.join(2)
    assert alive, "the hub thread died"
    assert len(rig.acks("p1")) > before


def test_failure_after_commit_is_not_reported_as_refused(tmp_path: Path) -> None:
    """If drawing screens fails after the store committed a tap, the ack must not say refused."""
    rig = voting_rig(tmp_path)
    binding = rig.table.binding
    real = binding.station_screen
    calls = {"n": 0}

    def flaky(table: Any, seat: int) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("render bug")
        return real(table, seat)

    binding.station_screen = flaky
    ack = rig.vote(0, "p2", 5)
    binding.station_screen = real
    committed = rig.table.view(0)["my_votes"] == [{"safe": 1, "number": 5}]
    assert committed  # the vote counts...
    assert ack["ok"], "...but the player was told it failed (and will tap again)"


def test_hub_killed_between_commit_and_publish_republishes_on_resume(tmp_path: Path) -> None:
    """Commit, then the hub dies before publishing: a new hub publishes it and acks the resend."""
    rig = voting_rig(tmp_path)

    def die(*_: Any, **__: Any) -> Any:
        raise SystemExit("killed")

    # What the batch publishes is sent only after its commit: die at the first send.
    rig.hub.client.publish = die  # type: ignore[method-assign]
    with pytest.raises(SystemExit):
        rig.tap("p2", KEYS.uid_for("vote", "red", 5), "crash:1")
    assert rig.acks("p2")[-1]["id"] != "crash:1"  # never acknowledged
    rig.close()
    fresh = Rig(tmp_path)
    fresh.connected()
    assert fresh.public()["view"]["seats"][1]["votes_in"] == 1
    assert fresh.last(T.hub_status)["state"] == "ready"
    screen = fresh.last(T.station("p1", "screen"))
    assert any("Your votes: 1/2" in line for line in screen["lines"])
    ack = fresh.tap("p2", KEYS.uid_for("vote", "red", 5), "crash:1")  # the station resends
    assert ack == {"id": "crash:1", "ok": True, "message": ""}
    assert fresh.table.view(0)["my_votes"] == [{"safe": 1, "number": 5}]


def test_replayed_input_after_restart_is_acked_not_applied(tmp_path: Path) -> None:
    """An input id already committed, sent again to a restarted hub: ok, applied once."""
    rig = voting_rig(tmp_path)
    assert rig.tap("p2", KEYS.uid_for("vote", "red", 5), "once:1")["ok"]
    rig.close()
    fresh = Rig(tmp_path)
    fresh.connected()
    events = len(fresh.events())
    state = fresh.table.state
    # Red moves the key to green's safe, then the old input (key on yellow) comes again.
    assert fresh.tap("p3", KEYS.uid_for("vote", "red", 5), "once:2")["ok"]
    ack = fresh.tap("p2", KEYS.uid_for("vote", "red", 5), "once:1")
    assert ack == {"id": "once:1", "ok": True, "message": ""}
    assert fresh.table.view(0)["my_votes"] == [{"safe": 2, "number": 5}]
    assert len(fresh.events()) == events + 1 and fresh.table.state.version == state.version + 1


def test_resume_in_the_reveal_rearms_the_timer(tmp_path: Path) -> None:
    """A hub restarted mid-reveal with an automatic reveal goes on opening safes by itself."""
    clock = Clock()
    rig = voting_rig(tmp_path, reveal_delay=3.0, clock=clock)
    all_votes(rig, 3)
    rig.host("next")  # the host opens the first safe himself
    assert len(rig.public()["view"]["revealed"]) == 1
    rig.close()
    fresh = Rig(tmp_path, reveal_delay=3.0, clock=clock)
    fresh.connected()
    clock.now += 3.1
    fresh.hub.submit(TimersDue())
    assert len(fresh.public()["view"]["revealed"]) == 2


def test_deleted_store_file_loses_no_acknowledged_input(tmp_path: Path) -> None:
    """The SQLite file is deleted mid-game: a tap acked after that must survive a restart."""
    rig = voting_rig(tmp_path)
    for path in tmp_path.glob("hub.db*"):
        path.unlink()
    ack = rig.vote(0, "p2", 5)
    rig.close()
    fresh = Rig(tmp_path)
    if ack["ok"]:
        table = fresh.hub.actors[TABLE].table
        assert table is not None, "the game the hub acked into is gone"
        assert table.view(0)["my_votes"] == [{"safe": 1, "number": 5}]


def test_second_hub_on_the_same_store_refuses_to_start(tmp_path: Path) -> None:
    """Two hub processes on one store (systemd + a manual run) must not both referee."""
    first = voting_rig(tmp_path)
    with pytest.raises(Exception):  # noqa: B017 - any clear refusal will do
        Rig(tmp_path)
    first.close()


def test_final_ranking_survives_a_hub_restart(tmp_path: Path) -> None:
    """A hub that restarts after the last safe still shows the final ranking."""
    rig = voting_rig(tmp_path)
    for rnd in range(4):
        if rnd:
            prepare_all(rig, [1, 2, 3])
        all_votes(rig, 3)
        for _ in range(4):
            rig.host("next")
    final = rig.public()
    assert final["over"] is True
    rig.close()
    fresh = Rig(tmp_path)
    fresh.connected()
    assert fresh.public().get("ranking") == final["ranking"]


def test_a_table_with_many_stations(tmp_path: Path) -> None:
    """40 stations, 8 play: the others idle and are told; 9 players is refused readably."""
    stations = tuple(f"s{i:02d}" for i in range(40))
    rig = Rig(tmp_path, stations)
    rig.connected()
    rig.host("start", game="secret-identity", players=9)
    assert rig.hub.actors[TABLE].table is None and readable(rig.host_lines()[-1])
    rig.start(8)
    assert [s["colour"] for s in rig.public()["seats"]] == list(COLOURS)
    assert rig.mystery("s39", 2)["message"] == "Not in this game"
    idle = rig.last(T.station("s08", "screen"))
    assert "Waiting for the host" in idle["lines"] and "secret" not in idle
    for seat in range(8):
        assert rig.mystery(stations[seat], seat + 1)["ok"]
        assert rig.press(stations[seat])["ok"]
    assert rig.public()["view"]["phase"] == "vote"
    assert rig.vote(7, "s00", 3)["ok"]  # white votes on red


def test_redelivered_refused_input_stays_refused(tmp_path: Path) -> None:
    """A tap refused, then delivered again after the table moved on, must not count."""
    rig = Rig(tmp_path)
    rig.start()
    for seat, station in enumerate(("p1", "p2", "p3")):
        assert rig.mystery(station, seat + 1)["ok"]
    assert rig.press("p1")["ok"] and rig.press("p2")["ok"]
    uid = KEYS.uid_for("vote", COLOURS[0], 5)
    first = rig.tap("p2", uid, "early:1")  # red votes before everyone is ready
    assert first["ok"] is False and first["message"] == "Voting has not started"
    assert rig.press("p3")["ok"]  # the last ready: voting opens
    # The station resends "early:1" (it did so on the hub/status of an earlier move, the
    # copy queued behind the last press): the same input must get the same answer.
    again = rig.tap("p2", uid, "early:1")
    assert rig.table.view(0)["my_votes"] == [], "red was told 'refused' but the vote counts"
    assert again == first


def test_knob_step_that_moves_nothing_writes_nothing(tmp_path: Path) -> None:
    """At the end of its range (or with no step) a knob turn leaves the store alone."""
    rig = Rig(tmp_path)
    rig.start()
    for _ in range(3):
        rig.knob("p1", 1)
    events = len(rig.events())
    for _ in range(50):  # a cheat (or a loose encoder) spinning past the stop
        assert rig.knob("p1", 1)["ok"]
    rig.send("p1", kind="knob")
    assert len(rig.events()) == events


def test_host_note_never_hides_a_seat_on_the_track(tmp_path: Path) -> None:
    """8 players: after 'Game started' or a refused next, every colour is still on the
    display (on one of its pages, which take turns)."""
    clock = Clock()
    rig = Rig(tmp_path, tuple(f"p{i}" for i in range(1, 9)), clock=clock)
    rig.connected()
    rig.start(8)
    rig.host("next")  # refused in prepare: 'Nothing to skip now'
    actor = rig.hub.actors[TABLE]
    pages = []
    for _page in range(actor.host_pages):
        pages += rig.host_lines()
        clock.now += PAGE_SECONDS
        rig.hub.out.host(actor)
    for seat, colour in enumerate(COLOURS):  # each with its number: "Red1 0"
        assert f"{short_colour(colour)}{seat + 1} " in " ".join(pages), (colour, pages)


def test_host_next_restarts_the_reveal_delay(tmp_path: Path) -> None:
    """Auto reveal every 5 s: a safe the host opens by hand gets its full 5 s on screen."""
    clock = Clock()
    rig = voting_rig(tmp_path, reveal_delay=5.0, clock=clock)
    all_votes(rig, 3)
    clock.now += 4.9
    rig.host("next")  # the host does not wait: safe 0 opens now
    assert len(rig.public()["view"]["revealed"]) == 1
    clock.now += 0.2
    rig.hub.submit(TimersDue())
    assert len(rig.public()["view"]["revealed"]) == 1, "safe 1 opened 0.2 s after safe 0"


def test_schema_violation_is_not_called_not_json(tmp_path: Path) -> None:
    """Valid JSON with a wrong field is refused with what is wrong, not 'not JSON'."""
    rig = Rig(tmp_path)
    rig.start()
    ack = rig.send("p1", "x:1", kind="tag", uid="nothex!")
    assert ack["ok"] is False and readable(ack["message"])
    assert "not JSON" not in ack["message"], ack["message"]


def test_undo_a_picto_confirm_gives_the_cards_back(tmp_path: Path) -> None:
    """Undo of a 3-picto 'ready': the 3 cards are back in hand and the seat confirms again."""
    rig = Rig(tmp_path)
    rig.start()
    for _ in range(2):
        rig.knob("p1", 1)
    assert rig.press("p1")["ok"]
    seat = rig.public()["view"]["seats"][0]
    assert (seat["pictos_left"], seat["ready"]) == (7, True)
    rig.host("undo")
    seat = rig.public()["view"]["seats"][0]
    assert (seat["pictos_left"], seat["ready"], seat["pictos_placed"]) == (10, False, 0)
    assert rig.knob("p1", 1)["ok"] and rig.press("p1")["ok"]
    assert rig.public()["view"]["seats"][0]["pictos_left"] == 8


def test_every_player_sees_their_own_final_score(tmp_path: Path) -> None:
    """5 players: each station's final screen names its own colour and score."""
    stations = ("p1", "p2", "p3", "p4", "p5")
    rig = Rig(tmp_path, stations)
    rig.connected()
    rig.start(5)
    for _ in range(4):
        prepare_all(rig, [1, 2, 3, 4, 5])
        for voter in range(5):
            for safe in range(5):
                if safe != voter:  # seat 4 (black) always guesses wrong
                    number = safe + 1 if voter != 4 else (safe + 1) % 5 + 1
                    assert rig.vote(voter, stations[safe], number)["ok"]
        for _ in range(6):
            rig.host("next")
    final = rig.public()
    assert final["over"]
    for seat, station in enumerate(stations):
        lines = rig.last(T.station(station, "screen"))["lines"]
        name = COLOURS[seat].capitalize()
        assert any(name in line and str(final["scores"][seat]) in line for line in lines), (
            station,
            lines,
        )


def test_a_next_for_a_step_already_left_skips_nothing(tmp_path: Path) -> None:
    """``next`` carrying the step the host saw: the first closes the vote; the same tap
    again (a double tap, or a second host who saw the vote too) finds the table in the
    reveal and is refused, so the first safe stays shut."""
    rig = voting_rig(tmp_path)
    seen = f"{rig.public()['round']}/{rig.public()['phase']}"
    assert seen == "1/vote"
    rig.host("next", step=seen)
    assert rig.public()["phase"] == "reveal"
    version, events = rig.public()["version"], len(rig.events())
    rig.host("next", step=seen)
    answer = rig.last(T.host_ack)
    assert (answer["ok"], answer["message"]) == (False, "The game moved on: look again")
    assert rig.public()["view"]["revealed"] == []
    assert (rig.public()["version"], len(rig.events())) == (version, events)
    rig.host("next", step="1/reveal")  # what the host sees now
    assert len(rig.public()["view"]["revealed"]) == 1
