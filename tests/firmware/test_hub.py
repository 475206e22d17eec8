"""The hub's per-input path, driven directly (no broker): commit, ack, dedup, resume."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.config import TableConfig
from firmware.hub.context import Batch
from firmware.hub.events import Tick, TimersDue
from firmware.hub.moves import apply
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.lang import refusal
from firmware.link.mqtt import BrokerConfig
from hardware.keys import COLOURS
from rules.core import IllegalAction
from tests.support.hub import KEYS, Clock, T, claimed, deliver, host, make_hub
from tests.support.screens import random_move


def acks(sent: list[tuple[str, Any]], station: str) -> list[Any]:
    return [p for t, p in sent if t == T.station(station, "ack")]


def start(hub: Hub, **extra: Any) -> None:
    host(hub, {"cmd": "start", "game": "secret-identity", "players": 3, "seed": 5, **extra})


def tap(hub: Hub, station: str, uid: str, n: int) -> None:
    deliver(hub, T.station(station, "input"), {"id": f"b{station}:{n}", "kind": "tag", "uid": uid})


def test_input_is_committed_before_it_is_acked(tmp_path: Path) -> None:
    """By the time the ack is published, the event is in the store."""
    hub, sent = make_hub(tmp_path)
    start(hub)
    seen_at_ack: list[int] = []
    publish = hub.client.publish

    def spying(topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> Any:
        if topic.endswith("/ack"):
            seen_at_ack.append(len(hub.store.events("t", 1)))
        return publish(topic, payload, retain=retain)

    hub.client.publish = spying  # type: ignore[method-assign]
    tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    assert seen_at_ack == [1]
    assert acks(sent, "p1")[-1] == {"id": "bp1:1", "ok": True, "message": ""}


def test_duplicate_is_acked_but_not_applied(tmp_path: Path) -> None:
    """The same input id twice: two ok acks, one event."""
    hub, sent = make_hub(tmp_path)
    start(hub)
    for _ in range(2):
        tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    assert [a["ok"] for a in acks(sent, "p1")] == [True, True]
    assert len(hub.store.events("t", 1)) == 1


def _to_the_vote(hub: Hub) -> None:
    """Every seat locks a key and confirms its pictos (ids b<station>:10 and k<station>:1)."""
    for station, number in (("p1", 1), ("p2", 2), ("p3", 3)):
        tap(hub, station, KEYS.uid_for("mystery", None, number), 10)
        deliver(hub, T.station(station, "input"), {"id": f"k{station}:1", "kind": "press"})
    table = hub.actors["t"].table
    assert table is not None and table.view(None)["phase"] == "vote"


@pytest.mark.parametrize("restart", [False, True])
def test_a_refused_input_sent_again_gets_its_refusal_once_it_would_pass(
    tmp_path: Path, restart: bool
) -> None:
    """A vote refused before the vote, sent again during it: the same refusal, no vote."""
    hub, sent = make_hub(tmp_path)
    start(hub)
    early = KEYS.uid_for("vote", COLOURS[1], 4)  # yellow's vote, tapped on red's safe
    tap(hub, "p1", early, 1)
    refusal_said = acks(sent, "p1")[-1]
    assert refusal_said["ok"] is False
    _to_the_vote(hub)
    if restart:  # the hub's memory of ids gone: the store alone knows the answer
        hub.store.close()
        hub, sent = make_hub(tmp_path)
    events = len(hub.store.events("t", 1))
    tap(hub, "p1", early, 1)
    assert acks(sent, "p1")[-1] == refusal_said
    assert len(hub.store.events("t", 1)) == events
    tap(hub, "p1", early, 2)  # the same tap with a new id is a new input: it counts now
    assert acks(sent, "p1")[-1] == {"id": "bp1:2", "ok": True, "message": ""}
    assert len(hub.store.events("t", 1)) == events + 1


def test_the_store_is_asked_only_about_an_id_it_may_have_seen(tmp_path: Path) -> None:
    """Ids past their station's last go straight on; one at or under it is looked up."""
    hub, sent = make_hub(tmp_path)
    start(hub)
    asked: list[str] = []
    answer = hub.store.answer

    def spying(source_id: str) -> Any:
        asked.append(source_id)
        return answer(source_id)

    hub.store.answer = spying  # type: ignore[method-assign]
    for n in (1, 2, 3):
        deliver(hub, T.station("p1", "input"), {"id": f"x:{n}", "kind": "knob", "step": 1})
    assert asked == []
    deliver(hub, T.station("p1", "input"), {"id": "x:2", "kind": "knob", "step": 1})
    assert asked == ["t/p1/x:2"]
    assert [a["ok"] for a in acks(sent, "p1")] == [True] * 4


def test_what_a_commit_made_durable_goes_out_in_one_burst(tmp_path: Path) -> None:
    """Screens and acks are published inside the shared connection's burst (one wake-up
    of its network thread for all of them), one burst per durable batch."""
    hub, sent = make_hub(tmp_path)
    start(hub)
    bursting = False
    bursts = 0
    inside: list[bool] = []

    @contextlib.contextmanager
    def burst() -> Iterator[None]:
        nonlocal bursting, bursts
        bursts += 1
        bursting = True
        try:
            yield
        finally:
            bursting = False

    record = hub.client.publish

    def publish(topic: str, payload: bytes, **kwargs: Any) -> Any:
        inside.append(bursting)
        return record(topic, payload, **kwargs)

    hub.links.data.burst = burst  # type: ignore[method-assign]
    hub.client.publish = publish  # type: ignore[method-assign]
    tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    assert acks(sent, "p1") and len(inside) >= 2  # its screen and its ack at least
    assert all(inside)
    assert bursts == 1


def test_a_bug_in_a_binding_is_an_error_ack_not_a_crash(tmp_path: Path) -> None:
    """An unexpected exception becomes a readable error ack and stores nothing."""
    hub, sent = make_hub(tmp_path)
    start(hub)
    table = hub.actors["t"].table
    assert table is not None

    def broken(*_: Any) -> dict[str, Any]:
        raise KeyError("oops")

    table.binding.translate = broken  # type: ignore[method-assign]
    tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    assert acks(sent, "p1")[-1] == {
        "id": "bp1:1",
        "ok": False,
        "message": "Hub error: tell the host",
    }
    assert hub.store.events("t", 1) == []


def test_no_game_running(tmp_path: Path) -> None:
    """Before the host starts a game, inputs are refused with a hint."""
    hub, sent = make_hub(tmp_path)
    tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    assert acks(sent, "p1")[-1]["message"] == "No game: ask the host"


@pytest.mark.parametrize(
    ("language", "given", "words"),
    [("en", {}, "en"), ("fr", {}, "fr"), ("en", {"lang": "fr"}, "fr")],
)
def test_incognito_words_follow_the_table_language(
    tmp_path: Path, language: str, given: dict[str, Any], words: str
) -> None:
    """A start that names no word list takes the table's language; a host's choice wins."""
    hub, _sent = make_hub(tmp_path, language=language)
    host(hub, {"cmd": "start", "game": "incognito", "players": 3, "seed": 5, "options": given})
    record = hub.actors["t"].record
    assert record is not None and record.options["lang"] == words
    table = hub.actors["t"].table
    assert table is not None and table.state.lang == words


def test_a_restarted_hub_resumes_the_game(tmp_path: Path) -> None:
    """A new hub on the same store rebuilds the same state and UI."""
    hub, _ = make_hub(tmp_path)
    start(hub)
    tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    deliver(hub, T.station("p2", "input"), {"id": "x:1", "kind": "knob", "step": 1})
    before = hub.actors["t"].table
    hub.store.close()
    again, _ = make_hub(tmp_path)
    after = again.actors["t"].table
    assert before is not None and after is not None
    assert after.state == before.state and after.ui == before.ui


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ({"cmd": "start", "game": "secret-identity", "players": 9}, "Only 3 stations here"),
        ({"cmd": "start", "game": "secret-identity", "players": 2}, "3-8 players"),
        ({"cmd": "undo"}, "No game running"),
        ({"cmd": "reboot"}, "Bad message"),
    ],
)
def test_bad_host_commands_show_on_the_hub_display(
    tmp_path: Path, command: dict[str, Any], message: str
) -> None:
    """A refused host command is explained on the hub display; no game starts."""
    hub, sent = make_hub(tmp_path)
    host(hub, command)
    screens = [p for t, p in sent if t == T.host_screen]
    assert message in screens[-1]["title"]
    assert hub.store.current_game("t") is None


def test_a_host_command_without_an_id_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    """Without an id a redelivered "undo" could not be told from a second one: refused."""
    hub, sent = make_hub(tmp_path)
    start(hub)
    tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    table = hub.actors["t"].table
    assert table is not None
    before = (table.state, len(hub.store.events("t", 1)))
    for _ in range(2):  # as the broker would deliver it again after a crash
        deliver(hub, T.host_command, {"cmd": "undo"})
    assert (table.state, len(hub.store.events("t", 1))) == before
    screens = [p for t, p in sent if t == T.host_screen]
    assert "Host command needs an id" in screens[-1]["title"]


def test_undo_then_abort(tmp_path: Path) -> None:
    """Undo takes back the last move; abort ends the game and idles the stations."""
    hub, sent = make_hub(tmp_path)
    start(hub)
    tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    table = hub.actors["t"].table
    assert table is not None and table.view(0)["my_mystery"] == 3
    host(hub, {"cmd": "undo"})
    assert table.view(0)["my_mystery"] is None
    host(hub, {"cmd": "abort"})
    assert hub.actors["t"].table is None and hub.store.current_game("t") is None
    screen = [p for t, p in sent if t == T.station("p1", "screen")][-1]
    assert "Waiting for the host" in screen["lines"]


def test_reveal_timer_fires_on_the_clock(tmp_path: Path) -> None:
    """With reveal_delay, safes open as the clock passes, one per delay."""
    clock = Clock()
    hub, _ = make_hub(tmp_path, clock, reveal_delay=3.0)
    start(hub)
    red, yellow, green = COLOURS[:3]
    n = 0
    for station, number in (("p1", 1), ("p2", 2), ("p3", 3)):
        n += 1
        tap(hub, station, KEYS.uid_for("mystery", None, number), n)
        deliver(hub, T.station(station, "input"), {"id": f"k{station}:1", "kind": "press"})
    for voter, targets in ((red, ("p2", "p3")), (yellow, ("p1", "p3")), (green, ("p1", "p2"))):
        for number, station in enumerate(targets, start=4):  # one key per number per voter
            n += 1
            tap(hub, station, KEYS.uid_for("vote", voter, number), n)
    table = hub.actors["t"].table
    assert table is not None and table.view(None)["phase"] == "reveal"
    clock.now += 2.9
    hub.submit(TimersDue())
    assert table.view(None)["revealed"] == []
    clock.now += 0.2
    hub.submit(TimersDue())
    assert len(table.view(None)["revealed"]) == 1


def test_one_hub_runs_two_independent_tables(tmp_path: Path) -> None:
    """Two tables on one hub: each has its own game, inputs and store rows."""
    configs = [TableConfig("t", ["p1", "p2", "p3"]), TableConfig("u", ["p1", "p2", "p3"])]
    hub = Hub(BrokerConfig(port=1), configs, tmp_path / "hub.db", keys=KEYS, clock=Clock())
    claimed(hub)
    hub.links.data.publish = lambda *a, **k: None  # type: ignore[method-assign,assignment]
    # One connection for both tables, and a will of its own for each.
    assert {a.client.will.topic for a in hub.actors.values() if a.client} == {
        "coffre/t/hub/status",
        "coffre/u/hub/status",
    }
    u = proto.Topics("u")
    start(hub)
    host(hub, {"cmd": "start", "game": "secret-identity", "players": 3}, u)
    tap(hub, "p1", KEYS.uid_for("mystery", None, 3), 1)
    deliver(
        hub,
        u.station("p1", "input"),
        {"id": "z:1", "kind": "tag", "uid": KEYS.uid_for("mystery", None, 5)},
    )
    t_table, u_table = hub.actors["t"].table, hub.actors["u"].table
    assert t_table is not None and u_table is not None
    assert (t_table.view(0)["my_mystery"], u_table.view(0)["my_mystery"]) == (3, 5)
    assert len(hub.store.events("t", 1)) == len(hub.store.events("u", 1)) == 1


def test_host_note_gives_its_line_back(tmp_path: Path) -> None:
    """'Game started' shows as the hub display's title, then gives it back to the game."""
    clock = Clock()
    hub, sent = make_hub(tmp_path, clock)
    start(hub)
    screens = [p for t, p in sent if t == T.host_screen]
    assert screens[-1]["title"] == "Game started"
    clock.now += 6
    hub.submit(Tick())
    screens = [p for t, p in sent if t == T.host_screen]
    assert screens[-1]["title"] != "Game started"


def _own_card_set(folder: Path) -> Path:
    """An owner's Identités cryptées set (the generic one relabelled) in ``folder``."""
    from rules._identites_cryptees_cards import package_set_json

    data = package_set_json("generic")
    data.update(name="mybox", label="Our box", generic=False)
    folder.mkdir(exist_ok=True)
    path = folder / "mybox.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_host_picks_a_card_set_from_the_table_directory(tmp_path: Path) -> None:
    """identites-cryptees.md, Card data: the table's card sets are offered on the panel; the chosen
    set is stored in the game's record, so a restarted hub replays without the file."""
    sets = tmp_path / "sets"
    path = _own_card_set(sets)
    config = TableConfig("t", ["p1", "p2", "p3", "p4"], card_sets=sets)
    hub = claimed(
        Hub(BrokerConfig(port=1), [config], tmp_path / "hub.db", keys=KEYS, clock=Clock())
    )
    hub.client.publish = lambda *a, **k: None  # type: ignore[method-assign]
    assert hub.actors["t"].menu.card_sets == ["generic", "mybox"]
    command = {"cmd": "start", "game": "identites-cryptees", "players": 4, "seed": 3}
    host(hub, {**command, "options": {"cards": "mybox", "first": 2}})
    table = hub.actors["t"].table
    assert table is not None and table.view(None)["table"]["cards"]["label"] == "Our box"
    assert table.view(None)["table"]["active"] == 2
    game = hub.actors["t"].record  # the record's options hold the cards themselves
    assert game is not None and game.options["cards"]["label"] == "Our box"
    before = table.state
    hub.store.close()
    path.unlink()
    again = claimed(
        Hub(BrokerConfig(port=1), [config], tmp_path / "hub.db", keys=KEYS, clock=Clock())
    )
    after = again.actors["t"].table
    assert after is not None and after.state == before


def test_identiquest_record_keeps_its_deck(tmp_path: Path) -> None:
    """The deck a game was set up with is in its record (not re-read at a restart)."""
    hub, _ = make_hub(tmp_path)
    command = {"cmd": "start", "game": "identiquest", "players": 3, "seed": 3}
    host(hub, {**command, "options": {"give": "top"}})
    record = hub.actors["t"].record
    assert record is not None and isinstance(record.options["deck"], dict)
    assert sum(record.options["deck"].values()) == 56


def test_a_broken_card_set_is_refused_on_the_hub_display(tmp_path: Path) -> None:
    """A bad file in the directory refuses the start with a short note; nothing stored."""
    sets = tmp_path / "sets"
    sets.mkdir()
    (sets / "broken.json").write_text("{", encoding="utf-8")
    config = TableConfig("t", ["p1", "p2", "p3", "p4"], card_sets=sets)
    hub = claimed(
        Hub(BrokerConfig(port=1), [config], tmp_path / "hub.db", keys=KEYS, clock=Clock())
    )
    hub.client.publish = lambda *a, **k: None  # type: ignore[method-assign]
    command = {"cmd": "start", "game": "identites-cryptees", "players": 4, "seed": 3}
    host(hub, {**command, "options": {"cards": "broken"}})
    assert hub.actors["t"].table is None
    actor = hub.actors["t"]
    note = refusal(actor.message, actor.message_params)  # spoken when the display shows it
    assert note == "Card set broken: bad file, see hub log"


def test_the_knob_scrolls_the_final_ranking_once_the_game_is_over(tmp_path: Path) -> None:
    """After the last move a station's knob still scrolls its ranking (a stored ui event,
    a new screen); any other input is refused: "The game is over", nothing stored."""
    stations = [f"p{i}" for i in range(1, 6)]
    hub = Hub(BrokerConfig(port=1), [TableConfig("t", stations)], tmp_path / "hub.db", keys=KEYS)
    sent: list[tuple[str, Any]] = []
    hub.client.publish = lambda topic, payload, retain=False, qos=1: sent.append(  # type: ignore[method-assign]
        (topic, json.loads(payload))
    )
    claimed(hub)
    host(hub, {"cmd": "start", "game": "incognito", "players": 5, "seed": 5})
    actor = hub.actors["t"]
    table = actor.table
    assert table is not None
    rng = random.Random(5)
    while not table.over:
        try:
            apply(hub.ctx, Batch(), actor, random_move(table, rng), None)
        except IllegalAction:
            continue
    stored = len(hub.store.events("t", 1))
    screens = [p for t, p in sent if t == T.station("p1", "screen")]
    assert "1-3/5" in screens[-1]["title"]
    deliver(hub, T.station("p1", "input"), {"id": "k1:1", "kind": "knob", "step": 1})
    assert acks(sent, "p1")[-1] == {"id": "k1:1", "ok": True, "message": ""}
    assert len(hub.store.events("t", 1)) == stored + 1
    screens = [p for t, p in sent if t == T.station("p1", "screen")]
    assert "2-4/5" in screens[-1]["title"]
    deliver(hub, T.station("p1", "input"), {"id": "k1:2", "kind": "press"})
    assert acks(sent, "p1")[-1]["message"] == "The game is over"
    assert len(hub.store.events("t", 1)) == stored + 1
