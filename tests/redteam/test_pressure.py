"""Red team, hub under pressure (no broker): malformed floods, a full disk, batches, memory."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from device.mock import MockDisplay
from device.panel import MockPanel
from firmware.hub.config import TableConfig
from firmware.hub.events import Connected, PanelPress
from firmware.hub.moves import NOT_SAVED
from firmware.hub.service import Hub, HubRefused
from firmware.hub.store import REFUSALS_KEPT, TOO_LATE, Store
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from firmware.link.render import render_lines
from tests.support.hubrig import KEYS, TABLE, Clock, Rig, T, _Done, readable, voting_rig


def broken_input(input_id: str) -> bytes:
    return b'{"id":"' + input_id.encode() + b'","kind":"tag","uid":"04\xff\xfe"}'


def test_invalid_utf8_input_is_answered_under_its_id(tmp_path: Path) -> None:
    """Broken UTF-8 in an input's uid: refused readably, addressed to its id, nothing changes."""
    rig = voting_rig(tmp_path)
    before = (rig.table.state, len(rig.events()))
    rig.deliver(T.station("p1", "input"), broken_input("ab12:9"))
    ack = rig.acks("p1")[-1]
    assert ack["id"] == "ab12:9" and ack["ok"] is False and readable(ack["message"])
    assert (rig.table.state, len(rig.events())) == before


def test_a_flood_of_malformed_payloads_logs_a_few_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """300 broken inputs, statuses and host commands: each input answered; a few one-line logs."""
    rig = voting_rig(tmp_path)
    caplog.set_level(logging.INFO, logger="firmware")
    before = len(rig.acks("p2"))
    for i in range(100):
        rig.deliver(T.station("p2", "input"), broken_input(f"fl:{i}"))
        rig.deliver(T.station("p2", "status"), b'{"state":"online","fw":"\xc3"}')
        rig.deliver(T.host_command, b'{"cmd":"next","id":"\xff:1"}')
    acks = rig.acks("p2")[before:]
    assert [a["id"] for a in acks] == [f"fl:{i}" for i in range(100)]
    records = [r for r in caplog.records if r.name.startswith("firmware")]
    assert 0 < len(records) <= 6, [r.getMessage() for r in records]
    for record in records:
        assert record.exc_info is None and "\n" not in record.getMessage()


def test_a_refusal_is_answered_when_the_disk_is_full(tmp_path: Path) -> None:
    """The store cannot remember a refusal (disk full): the player still gets the refusal."""
    rig = voting_rig(tmp_path)

    def full(*_: Any, **__: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    rig.hub.store.remember = full  # type: ignore[method-assign]
    ack = rig.mystery("p1", 8)  # voting: a mystery key is refused
    assert ack["ok"] is False and readable(ack["message"]) and ack["message"] != NOT_SAVED
    assert rig.table.view(0)["my_mystery"] == 1


class _Acked:
    """A broker ack that checks, when called, that its input is already on disk."""

    def __init__(self, path: Path, source_id: str) -> None:
        self.path, self.source_id, self.committed = path, source_id, None

    def __call__(self) -> None:
        other = sqlite3.connect(self.path)  # another connection sees only what is committed
        row = other.execute("SELECT 1 FROM events WHERE source_id=?", (self.source_id,))
        self.committed = row.fetchone() is not None
        other.close()


def test_a_batch_is_one_commit_and_is_acked_to_the_broker_after_it(tmp_path: Path) -> None:
    """Four votes waiting together: one commit, four answers, each broker ack after the commit."""
    rig = voting_rig(tmp_path, players=4)
    commits = rig.hub.store.commits
    batch, checks = [], []
    for voter, safe in ((0, 1), (0, 2), (1, 0), (2, 3)):
        station = rig.stations[safe]
        input_id = f"bt{voter}:{safe}"
        check = _Acked(tmp_path / "hub.db", f"{TABLE}/{station}/{input_id}")
        uid = KEYS.uid_for("vote", ("red", "yellow", "green")[voter], safe + 1)
        payload = proto.encode({"id": input_id, "kind": "tag", "uid": uid})
        batch.append(Message(T.station(station, "input"), payload, ack=check))
        checks.append(check)
    rig.hub.submit(*batch)
    assert rig.hub.store.commits == commits + 1
    assert [c.committed for c in checks] == [True] * 4
    answers = [p for t, p, _ in rig.sent if t.endswith("/ack")][-4:]
    assert all(a["ok"] for a in answers)


def test_a_batch_the_disk_refuses_is_taken_back_whole(tmp_path: Path) -> None:
    """The commit fails: every tap of the batch is answered 'not saved', the table unchanged."""
    rig = voting_rig(tmp_path)
    state, events = rig.table.state, len(rig.events())
    real = rig.hub.store.commit

    def fail() -> None:
        rig.hub.store.rollback()
        raise sqlite3.OperationalError("disk I/O error")

    rig.hub.store.commit = fail  # type: ignore[method-assign]
    batch = [
        Message(T.station(st, "input"), proto.encode({"id": f"cf:{i}", "kind": "tag", "uid": uid}))
        for i, (st, uid) in enumerate(
            [("p2", KEYS.uid_for("vote", "red", 5)), ("p3", KEYS.uid_for("vote", "red", 6))]
        )
    ]
    rig.hub.submit(*batch)
    rig.hub.store.commit = real  # type: ignore[method-assign]
    answers = [p for t, p, _ in rig.sent if t.endswith("/ack")][-2:]
    assert answers == [{"id": f"cf:{i}", "ok": False, "message": NOT_SAVED} for i in range(2)]
    assert rig.table.state == state and len(rig.events()) == events
    again = rig.tap("p2", KEYS.uid_for("vote", "red", 5), "cf:0")  # the player taps again
    assert again["ok"] and rig.table.view(0)["my_votes"] == [{"safe": 1, "number": 5}]


def test_refusals_are_bounded_and_a_forgotten_one_stays_refused(tmp_path: Path) -> None:
    """Thousands of refusals keep a bounded memory; a late copy of the first is still refused."""
    rig = voting_rig(tmp_path)
    late = {"id": "old:1", "kind": "tag", "uid": KEYS.uid_for("mystery", None, 8)}
    rig.deliver(T.station("p1", "input"), late)  # voting: refused
    first = rig.acks("p1")[-1]
    assert first["ok"] is False
    for n in range(2, REFUSALS_KEPT + 300):
        assert not rig.tap("p1", KEYS.uid_for("mystery", None, 8), f"old:{n}")["ok"]
    record = rig.hub.actors[TABLE].record
    assert record is not None
    assert rig.hub.store.remembered(TABLE, record.game_no) <= REFUSALS_KEPT
    for _ in range(5):  # close the vote, open the three safes: the next round's prepare
        rig.host("next")
    assert rig.public()["view"]["phase"] == "prepare"
    rig.deliver(T.station("p1", "input"), late)  # the broker delivers the old copy again
    again = rig.acks("p1")[-1]
    assert again["id"] == "old:1" and again["ok"] is False
    assert again["message"] in (first["message"], TOO_LATE)
    assert rig.table.view(0)["my_mystery"] is None, "a refused tap counted later"


def test_store_floors_answer_forgotten_refusals(tmp_path: Path) -> None:
    """The store keeps the newest refusals word for word and refuses older copies as too late."""
    store = Store(tmp_path / "s.db")
    for n in range(1, REFUSALS_KEPT + 11):
        store.remember(f"t/p1/ab:{n}", False, f"no {n}", table_id="t", game_no=1)
    assert store.remembered("t", 1) == REFUSALS_KEPT
    assert store.answer("t/p1/ab:1") == (False, TOO_LATE)
    assert store.answer(f"t/p1/ab:{REFUSALS_KEPT + 10}") == (False, f"no {REFUSALS_KEPT + 10}")
    assert store.answer(f"t/p1/ab:{REFUSALS_KEPT + 11}") is None
    assert store.answer("t/p1/cd:1") is None  # another boot of the station: its own stream


def test_panel_commands_have_ids_and_count_once(tmp_path: Path) -> None:
    """A panel undo is stored with an id; the same command delivered again undoes nothing more."""
    rig = voting_rig(tmp_path)
    rig.vote(0, "p2", 5)
    rig.vote(0, "p3", 6)
    for _ in range(2):
        rig.hub.submit(PanelPress("back"))  # back twice: undo
    assert rig.table.view(0)["my_votes"] == [{"safe": 1, "number": 5}]
    rows = rig.hub.store._db.execute(
        "SELECT source_id FROM events WHERE source_id LIKE ?", (f"{TABLE}!host/panel%",)
    ).fetchall()
    assert len(rows) == 1
    panel_id = rows[0][0].split("!host/", 1)[1]
    rig.host("undo", id=panel_id)  # the same command again
    assert rig.table.view(0)["my_votes"] == [{"safe": 1, "number": 5}]


def test_second_hub_on_the_store_says_so_in_one_line(tmp_path: Path) -> None:
    """`coffre hub` on a store another hub holds exits 2 with one line, no traceback."""
    rig = Rig(tmp_path)
    config = tmp_path / "hub.toml"
    config.write_text(
        f'[store]\npath = "{tmp_path / "hub.db"}"\n[[table]]\nname = "{TABLE}"\n'
        'stations = ["p1", "p2", "p3"]\n'
    )
    run = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "hub", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    with pytest.raises(HubRefused, match="another hub"):
        Rig(tmp_path)
    rig.close()
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2
    assert len(lines) == 1 and "another hub" in lines[0], run.stderr


def test_a_stuck_hub_display_does_not_hold_up_the_answers(tmp_path: Path) -> None:
    """While the hub display hangs mid-frame, taps are answered; then it shows the last screen."""
    gate = threading.Event()
    display = MockDisplay(on_frame=lambda _: gate.wait(30))
    hub = Hub(
        BrokerConfig(port=1),
        [TableConfig(TABLE, ["p1", "p2", "p3"])],
        tmp_path / "hub.db",
        keys=KEYS,
        panel=MockPanel(display),
        clock=Clock(),
    )
    sent: list[tuple[str, bytes]] = []
    answered = threading.Event()

    def publish(topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> _Done:
        sent.append((topic, payload))
        if sum(t.endswith("/ack") for t, _ in sent) == 3:
            answered.set()
        return _Done()

    hub.client.publish = publish  # type: ignore[method-assign]

    def play() -> None:
        hub.submit(Connected(TABLE))
        start = {"cmd": "start", "game": "secret-identity", "players": 3, "seed": 5, "id": "h:1"}
        hub.submit(Message(T.host_command, proto.encode(start)))
        for i, station in enumerate(("p1", "p2", "p3")):
            tap = {"id": f"sd:{i}", "kind": "tag", "uid": KEYS.uid_for("mystery", None, i + 1)}
            hub.submit(Message(T.station(station, "input"), proto.encode(tap)))

    worker = threading.Thread(target=play, daemon=True)
    worker.start()
    try:
        assert answered.wait(10), "the hub waited for its display before answering"
    finally:
        gate.set()
    worker.join(10)
    assert hub.out.painter is not None and hub.out.painter.wait_idle()
    host = json.loads([p for t, p in sent if t == T.host_screen][-1])
    assert display.last is not None
    assert display.last.tobytes() == render_lines(host["title"], host["lines"]).tobytes()
    hub.store.close()


def test_views_are_built_once_per_state_and_not_for_a_knob_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tap builds each view (public and every seat's, the latter from the former) once;
    a knob turn rebuilds none."""
    rig = Rig(tmp_path)
    rig.connected()
    rig.start()
    calls: list[int | None] = []
    engine = rig.table.engine
    public_view, seat_view = engine.public_view, engine.seat_view

    def public(state: Any) -> Any:
        calls.append(None)
        return public_view(state)

    def seat(state: Any, seat: int, public: Any) -> Any:
        calls.append(seat)
        return seat_view(state, seat, public)

    monkeypatch.setattr(engine, "public_view", public)
    monkeypatch.setattr(engine, "seat_view", seat)
    monkeypatch.setattr(engine, "view", lambda *_: pytest.fail("a view built alone"))
    assert rig.knob("p1", 1)["ok"]
    assert calls == [], "a knob turn rebuilt views of a state that did not change"
    assert rig.mystery("p2", 4)["ok"]
    assert sorted(calls, key=lambda s: -1 if s is None else s) == [None, 0, 1, 2]
