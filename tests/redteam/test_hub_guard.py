"""Red team, issue 22 (hub side): no careless or hostile input may cost a game or a table."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from firmware.hub.claim import Verdict, will_delay
from firmware.hub.config import TableConfig
from firmware.hub.events import ClaimDecided, Connected, Tick
from firmware.hub.inputs import BAD_SEQUENCE
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.lang import catalogue, refusal, speaking
from firmware.link.mqtt import BrokerConfig, Message
from tests.support.hubrig import KEYS, TABLE, Clock, Rig, T, voting_rig

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


# --- station ids -----------------------------------------------------------------------


def test_a_far_future_station_id_is_refused_and_moves_no_floor(tmp_path: Path) -> None:
    """`<boot>:10^9` from a station is refused as malformed under its id; once 600 other
    refusals have gone by, that station's real inputs are still answered, not "Too late"."""
    rig = Rig(tmp_path)
    rig.start()
    vote = {"kind": "tag", "uid": KEYS.uid_for("vote", "red", 1)}  # no vote in prepare
    rig.deliver(T.station("p1", "input"), {"id": "ab:1", **vote})
    rig.deliver(T.station("p1", "input"), {"id": "ab:1000000000", **vote})
    assert rig.acks("p1")[-1] == {"id": "ab:1000000000", "ok": False, "message": BAD_SEQUENCE}
    for n in range(600):
        rig.deliver(T.station("p2", "input"), {"id": f"b{n % 8}:{n + 1}", **vote})
    ack = rig.tap("p1", KEYS.uid_for("mystery", None, 3), "ab:2")
    assert ack == {"id": "ab:2", "ok": True, "message": ""}
    assert rig.table.view(0)["my_mystery"] == 3


def test_a_station_far_along_its_boot_is_believed_after_a_hub_restart(tmp_path: Path) -> None:
    """The last id of a boot comes from the store: a restarted hub takes the next one."""
    rig = Rig(tmp_path)
    rig.start()
    vote = {"kind": "tag", "uid": KEYS.uid_for("vote", "red", 1)}
    for n in range(0, 30_001, 5_000):
        rig.deliver(T.station("p1", "input"), {"id": f"ab:{n + 1}", **vote})
        assert rig.acks("p1")[-1]["message"] != BAD_SEQUENCE
    rig.close()
    again = Rig(tmp_path)
    ack = again.tap("p1", KEYS.uid_for("mystery", None, 3), "ab:30002")
    assert ack == {"id": "ab:30002", "ok": True, "message": ""}


# --- malformed payloads ------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        b'{"id":"ab:7","kind":"knob","step":1e999}',
        b'{"id":"ab:7","kind":"button","button":"\\ud800"}',
        b'{"kind":"tag","uid":"\\ud800x","id":"ab:7"}',
    ],
)
def test_a_malformed_input_is_answered_under_its_id(tmp_path: Path, payload: bytes) -> None:
    """Whatever else is wrong with a payload, a readable id gets the refusal addressed to it."""
    rig = Rig(tmp_path)
    rig.start()
    rig.deliver(T.station("p1", "input"), payload)
    ack = rig.acks("p1")[-1]
    assert ack["id"] == "ab:7" and ack["ok"] is False and ack["message"].startswith("Bad message")


LONG_ID = "cli-" + "7" * 36  # 40 characters: a valid host command id


@pytest.mark.parametrize(
    ("payload", "command_id"),
    [
        (b'{"cmd":"start","id":"%s","players":1e999}' % LONG_ID.encode(), LONG_ID),
        (b'{"cmd":"start","id":"%s","game":"\\ud800"}' % LONG_ID.encode(), LONG_ID),
        (b'{"cmd":"start","id":"%s","game":"No Such"}' % LONG_ID.encode(), LONG_ID),
        (b'{"cmd":"dance","id":"%s"}' % ("x" * 64).encode(), "x" * 64),
        (b'{"cmd":"start","id":"h:1","seed":1e999}', "h:1"),
    ],
)
def test_every_malformed_host_command_with_an_id_is_answered(
    tmp_path: Path, payload: bytes, command_id: str
) -> None:
    """A host command with an id of up to 64 characters is answered on host/ack under it,
    whatever else is wrong with it (the command line waits for that answer)."""
    rig = Rig(tmp_path)
    rig.deliver(T.host_command, payload)
    acks = host_acks(rig)
    assert len(acks) == 1 and acks[0]["ok"] is False
    assert acks[0]["id"] == command_id
    assert rig.hub.actors[TABLE].table is None


def test_a_host_refusal_with_fields_carries_its_id_and_fields_and_french_has_it(
    tmp_path: Path,
) -> None:
    """A host command's refusal with fields (too many players, a pairing that does not
    wait, a game with no binding) is the English line plus its message id and fields, and
    the French catalogue has that id (a console says it in French); one without fields and
    a station's ack are the same bytes as ever (no id, no fields)."""
    rig = Rig(tmp_path)
    rig.start(players=4)
    rig.host("pair", station="p2", code="1234")
    rig.host("refuse", station="p3")
    rig.host("start", game="chess", players=3)
    said = host_acks(rig)[-4:]
    assert [(a["ok"], a["message"]) for a in said] == [
        (False, "Only 3 stations here"),
        (False, "No pairing waits for p2"),
        (False, "No pairing waits for p3"),
        (False, "No table binding for chess"),
    ]
    assert [(a["msgid"], a["params"]) for a in said] == [
        ("Only {n} stations here", {"n": 3}),
        ("No pairing waits for {station}", {"station": "p2"}),
        ("No pairing waits for {station}", {"station": "p3"}),
        ("No table binding for {game}", {"game": "chess"}),
    ]
    french = catalogue("fr")
    for ack in said:
        assert french.gettext(ack["msgid"]) != ack["msgid"], ack
        with speaking("fr"):
            assert refusal(ack["msgid"], ack["params"]) != ack["message"], ack
    rig.host("next")
    assert host_acks(rig)[-1] == {
        "id": f"h:{rig.commands}",
        "ok": False,
        "message": "No game running",
    }
    rig.start()
    ack = rig.mystery("p1", 2)
    assert ack == {"id": ack["id"], "ok": True, "message": ""}


# --- station status flapping ---------------------------------------------------------------


def test_a_flapping_station_status_logs_a_line_per_state_and_redraws_rarely(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """2,000 retained online/lost statuses from one station at once: one log line per state,
    its screen sent again a handful of times (a burst the size of the table, then one a
    second); once it settles, what it settled on is shown."""
    clock = Clock()
    rig = Rig(tmp_path, clock=clock)
    rig.start()
    screen = T.station("p1", "screen")
    before = len([t for t, _p, _r in rig.sent if t == screen])
    with caplog.at_level(logging.INFO):
        for n in range(2000):
            state = "online" if n % 2 == 0 else "lost"
            rig.deliver(T.station("p1", "status"), {"state": state}, retain=True)
    lines = [r for r in caplog.records if "station p1 is" in r.getMessage()]
    assert len(lines) == 2
    rig.deliver(T.station("p1", "status"), {"state": "online"}, retain=True)
    clock.now += 2
    rig.hub.submit(Tick())
    assert len([t for t, _p, _r in rig.sent if t == screen]) - before <= len(rig.stations) + 4
    assert rig.last(screen) is not None  # sent again after the flapping
    assert "Offline" not in rig.last(T.host_screen)["title"]


# --- a failing disk --------------------------------------------------------------------------


def test_a_failing_disk_logs_resumed_once_not_once_per_tap(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Disk full: 30 taps, each batch rolled back and its table rebuilt, one "resumed" line."""
    rig = voting_rig(tmp_path)
    real = rig.hub.store.commit

    def full() -> None:
        raise sqlite3.OperationalError("database or disk is full")

    rig.hub.store.commit = full  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO):
        for n in range(30):
            assert rig.vote(0, "p2", 5 + n % 3)["ok"] is False
    rig.hub.store.commit = real  # type: ignore[method-assign]
    resumed = [r for r in caplog.records if r.getMessage().startswith("resumed ")]
    assert len(resumed) <= 1
    assert rig.table.view(0)["my_votes"] == []


# --- what goes out -----------------------------------------------------------------------------


def test_nothing_over_the_protocols_output_limit_is_published(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A public table grown past 16 KB (20,000-character card texts) is not published (one
    log line names it); the last good copy stays, inputs are still answered, the table runs."""
    rig = Rig(tmp_path)
    rig.start()
    sizes: list[tuple[str, int]] = []
    record = rig.hub.client.publish

    def measured(topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> object:
        sizes.append((topic, len(payload)))
        return record(topic, payload, retain=retain)

    rig.hub.client.publish = measured  # type: ignore[method-assign]
    table = rig.table
    real = table.public
    table.public = lambda: {**real(), "text": "x" * 20_000}  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR):
        assert rig.mystery("p1", 3)["ok"] and rig.mystery("p2", 4)["ok"]
    assert sizes and max(size for _t, size in sizes) <= proto.MAX_OUTPUT_BYTES
    assert not [t for t, _s in sizes if t == T.public]
    lines = [r for r in caplog.records if "not published" in r.getMessage()]
    assert len(lines) == 1 and T.public in lines[0].getMessage()
    table.public = real  # type: ignore[method-assign]
    assert rig.mystery("p3", 5)["ok"]
    assert [t for t, _s in sizes if t == T.public]  # published again once it fits


# --- a mistaken --take-over ----------------------------------------------------------------


OLD = proto.Claim(hub="~", run="old", host="old-pi", keepalive=3)


def taker(tmp_path: Path) -> tuple[Hub, Clock, list[tuple[str, object]]]:
    """A hub started with --take-over t, handed the table, connected; what it sends, kept."""
    clock = Clock()
    hub = Hub(
        BrokerConfig(port=1),
        [TableConfig(TABLE, ["p1", "p2", "p3"])],
        tmp_path / "taker.db",
        keys=KEYS,
        clock=clock,
        take_over=[TABLE],
    )
    sent: list[tuple[str, object]] = []
    client = hub.client
    client.publish = lambda topic, payload, retain=False, qos=1: sent.append(  # type: ignore[method-assign]
        (topic, json.loads(payload) if payload else None)
    )
    client.start = lambda: None  # type: ignore[method-assign]
    client.leave = lambda: sent.append(("left", None))  # type: ignore[method-assign]
    client.connected.set()
    hub.submit(ClaimDecided(Verdict(TABLE, taken_from=OLD)), Connected(TABLE))
    return hub, clock, sent


def tap(acked: list[str], n: int) -> Message:
    payload = proto.encode({"id": f"ab:{n}", "kind": "press"})
    return Message(T.station("p1", "input"), payload, ack=lambda: acked.append(f"ab:{n}"))


def test_a_mistaken_take_over_answers_no_input_while_the_owner_lives(tmp_path: Path) -> None:
    """--take-over while the owner runs: inputs in the overlap get no answer and no broker
    ack from the taker, which leaves as soon as the owner's live claim shows."""
    hub, clock, sent = taker(tmp_path)
    acked: list[str] = []
    hub.submit(tap(acked, 1), Tick())
    clock.now += 1
    hub.submit(tap(acked, 2), Tick())
    owner = proto.encode(proto.HubStatus("ready", claim=OLD))
    hub.submit(Message(T.hub_status, owner), Tick())  # live: the old owner is alive
    assert hub.actors[TABLE].state == "refused"
    clock.now += 60
    hub.submit(Tick())
    assert [t for t, _p in sent if t.endswith("/ack")] == [] and acked == []
    hub.store.close()


def test_a_take_over_answers_once_the_old_owner_is_known_gone(tmp_path: Path) -> None:
    """The old owner's will, or its will's delay gone by: what was held is answered once
    and acked to the broker after; later inputs at once."""
    for will in (True, False):
        (tmp_path / str(will)).mkdir()
        hub, clock, sent = taker(tmp_path / str(will))
        acked: list[str] = []
        hub.submit(tap(acked, 1), Tick())
        assert acked == []
        if will:
            lost = proto.encode(proto.HubStatus("lost", claim=OLD))
            hub.submit(Message(T.hub_status, lost), Tick())
        else:
            clock.now += will_delay(OLD) + 0.1
            hub.submit(Tick())
        answers = [p for t, p in sent if t == T.station("p1", "ack")]
        assert [a["id"] for a in answers] == ["ab:1"] and acked == ["ab:1"]  # type: ignore[index]
        hub.submit(tap(acked, 2))
        assert acked == ["ab:1", "ab:2"] and hub.actors[TABLE].state == "live"
        hub.store.close()
