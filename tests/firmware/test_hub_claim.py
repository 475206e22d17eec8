"""The ownership guard, driven directly: identities, claims, races (no broker)."""

from __future__ import annotations

import itertools
import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.claim import REPAINT_SECONDS, ClaimProbe, Verdict
from firmware.hub.config import TableConfig
from firmware.hub.events import Connected, Tick
from firmware.hub.hostmenu import HostMenu, SwitchTable
from firmware.hub.service import Hub, HubRefused
from firmware.hub.store import Store
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from hardware.keys import load_keyset

KEYS = load_keyset()
T = proto.Topics("t")


def test_a_store_keeps_its_identity_where_it_lives(tmp_path: Path) -> None:
    """Opened again in place: the same token and hub id (the broker session survives)."""
    store = Store(tmp_path / "hub.db")
    first = store.identity()
    store.close()
    again = Store(tmp_path / "hub.db").identity()
    assert (again.hub, again.token, again.copied_from) == (first.hub, first.token, None)


def test_a_copied_store_makes_itself_a_new_identity(tmp_path: Path) -> None:
    """A copy (another path; on a cloned card, another board) is another hub to the broker."""
    store = Store(tmp_path / "hub.db")
    first = store.identity()
    store.close()
    shutil.copy(tmp_path / "hub.db", tmp_path / "copy.db")
    copy = Store(tmp_path / "copy.db").identity()
    assert copy.hub != first.hub and copy.token != first.token
    assert copy.copied_from is not None
    assert "made at" in copy.moved(tmp_path / "copy.db")
    # The copy now lives where it is: no second warning, no third identity.
    assert Store(tmp_path / "copy.db").identity().token == copy.token
    assert Store(tmp_path / "hub.db").identity().token == first.token


def test_a_store_from_before_keeps_its_token(tmp_path: Path) -> None:
    """A store that had a token but no home yet keeps it (no lost broker session)."""
    store = Store(tmp_path / "hub.db")
    assert store.setting("client_token", "cafe") == "cafe"
    assert store.identity().token == "cafe"


def rig(tmp_path: Path) -> tuple[Hub, list[tuple[str, Any]]]:
    hub = Hub(BrokerConfig(port=1), [TableConfig("t", ["p1", "p2", "p3"])], tmp_path / "h.db")
    sent: list[tuple[str, Any]] = []
    hub.client.publish = lambda topic, payload, retain=False, qos=1: sent.append(  # type: ignore[method-assign]
        (topic, json.loads(payload) if payload else None)
    )
    hub.client.leave = lambda: sent.append(("left", None))  # type: ignore[method-assign]
    hub.submit(Connected("t"))
    return hub, sent


def status_from(hub: str, run: str = "r", state: str = "ready") -> bytes:
    claim = proto.Claim(hub=hub, run=run, host="elsewhere")
    return proto.encode(proto.HubStatus(state, claim=claim))  # type: ignore[arg-type]


def test_the_claim_goes_out_first_and_names_this_hub(tmp_path: Path) -> None:
    hub, sent = rig(tmp_path)
    topic, payload = sent[0]
    assert topic == T.hub_status and payload["state"] == "ready"
    assert payload["claim"]["hub"] == hub.claim.hub and payload["claim"]["run"] == hub.claim.run
    assert "token" not in json.dumps(payload) and hub.client.client_id.split("-")[
        -1
    ] not in json.dumps(payload)


def test_a_race_lost_leaves_the_table_and_publishes_nothing_more(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A live claim of a lower identity: this hub leaves the table (cleanly, no will)."""
    hub, sent = rig(tmp_path)
    hub.submit(Message(T.hub_status, status_from("0")))  # "0" < any hex id but "0…"
    assert hub.actors["t"].state == "refused" and sent[-1] == ("left", None)
    count = len(sent)
    hub.submit(Message(T.host_command, proto.encode({"cmd": "start", "players": 3, "id": "h:1"})))
    hub.submit(Message(T.station("p1", "input"), b'{"id":"a:1","kind":"press"}'))
    assert len(sent) == count
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "table t" in errors[0].message and "hub 0 " in errors[0].message
    assert hub.gave_up is not None and "no table left" in hub.gave_up


def test_a_race_won_sends_the_table_again(tmp_path: Path) -> None:
    """A live claim of a higher identity: this hub keeps the table and repaints it all."""
    hub, sent = rig(tmp_path)
    del sent[:]
    hub.submit(Message(T.hub_status, status_from("~")))  # "~" sorts after every hex id
    assert hub.actors["t"].state == "live"
    topics = [t for t, _p in sent]
    assert topics[0] == T.hub_status and T.station("p1", "screen") in topics


def test_a_goodbye_or_an_old_will_does_not_overwrite_a_live_claim(tmp_path: Path) -> None:
    """Another run's lost / disconnected (an old will of ours, a hub that left): ours again."""
    hub, sent = rig(tmp_path)
    for payload in (
        status_from(hub.claim.hub, "old", "lost"),
        status_from("0", "x", "disconnected"),
        b"",
    ):
        del sent[:]
        hub.submit(Message(T.hub_status, payload))
        assert [t for t, _p in sent] == [T.hub_status] and sent[0][1]["claim"][
            "run"
        ] == hub.claim.run
    del sent[:]
    echo = hub.actors["t"].published[T.hub_status]
    hub.submit(Message(T.hub_status, echo))  # our own: nothing to do
    assert sent == [] and hub.actors["t"].state == "live"


def test_the_table_row_switches_tables_and_prev_does_in_a_game() -> None:
    m = HostMenu(["secret-identity"], max_players=5, tables=["a", "b"], table="a")
    assert m.press("prev", playing=False, now=0) is None  # up from the first row: the last
    # The last row, then the hint line that says what ok does there.
    assert m.row == m.table_row and m.lines(0)[-2:] == ["> Table: a 1/2", "ok: next table"]
    assert m.press("ok", playing=False, now=0) == SwitchTable(1)
    assert m.press("back", playing=False, now=0) == SwitchTable(-1)
    assert m.press("prev", playing=True, now=0) == SwitchTable(1)
    single = HostMenu(["secret-identity"], max_players=5, tables=["a"], table="a")
    single.press("prev", playing=False, now=0)
    assert single.row == single.start_row  # one table: no Table row
    assert single.press("prev", playing=True, now=0) is None


def test_the_probe_takes_over_only_the_tables_it_is_told_to(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A claim still on the broker: refused after the will delay, unless the host said
    --take-over for that table (then free at once, the old claim named in the log)."""
    decided: list[Verdict] = []
    ticks = itertools.count(0, 100)  # each look at the clock: 100 s later
    me = proto.Claim(hub="f" * 16, run="me", host="here")
    probe = ClaimProbe(
        BrokerConfig(port=1),
        ["t", "u"],
        me,
        decided.append,
        clock=lambda: next(ticks),
        take_over={"t"},
    )
    for table in ("t", "u"):
        probe.client.inbox.put(Message(proto.Topics(table).hub_status, status_from("0"), True))
    probe.client.inbox.put(Message("!synced", b""))
    probe._run()
    stale = proto.Claim(hub="0", run="r", host="elsewhere")
    assert decided == [Verdict("t", taken_from=stale), Verdict("u", owner=stale)]
    assert decided[0].free and not decided[1].free
    taking = [r.message for r in caplog.records if r.levelno == logging.WARNING]
    assert len(taking) == 1 and "table t" in taking[0] and "hub 0 on elsewhere" in taking[0]
    assert "--take-over u" in decided[1].line()


def test_a_taken_over_table_ignores_the_stale_claim_but_not_its_hub_alive(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The retained copy of the claim taken over does not count; the same claim sent live
    (its hub was alive after all) makes this hub leave, even where it would win a race."""
    hub, sent = rig(tmp_path)
    hub.actors["t"].taken_from = proto.Claim(hub="~", run="r", host="elsewhere")  # "~": the higher
    del sent[:]
    hub.submit(Message(T.hub_status, status_from("~"), True))  # retained: left behind
    assert hub.actors["t"].state == "live"
    assert sent[0][0] == T.hub_status and sent[0][1]["claim"]["run"] == hub.claim.run
    assert sent[0][1]["claim"]["took"] == "r"  # the hub it took over from can tell
    hub.submit(Message(T.hub_status, status_from("~")))  # live: that hub is alive
    assert hub.actors["t"].state == "refused" and sent[-1] == ("left", None)
    errors = [r.message for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "is alive after all and keeps it" in errors[0]


def test_a_hub_alive_keeps_a_table_another_was_told_to_take_over(tmp_path: Path) -> None:
    """A claim that took the table over from this very run (a mistaken --take-over): this
    hub keeps the table even where the other would win a race, sends it all again at once
    and once more a little later (the other hub's last screens may land in between)."""
    hub, sent = rig(tmp_path)
    now = [100.0]
    hub.clock = lambda: now[0]
    taker = proto.Claim(hub="0", run="t", host="there", took=hub.claim.run)  # "0": the lower
    del sent[:]
    hub.submit(Message(T.hub_status, proto.encode(proto.HubStatus("ready", claim=taker))))
    assert hub.actors["t"].state == "live"
    topics = [t for t, _p in sent]
    assert topics[0] == T.hub_status and T.station("p1", "screen") in topics
    del sent[:]
    now[0] += 1.0
    hub.submit(Tick())
    assert sent == []  # not yet
    now[0] += REPAINT_SECONDS
    hub.submit(Tick())
    topics = [t for t, _p in sent]
    assert topics[0] == T.hub_status and T.station("p1", "screen") in topics


def test_take_over_names_a_table_of_this_hub(tmp_path: Path) -> None:
    with pytest.raises(HubRefused, match="--take-over u: this hub has no such table"):
        Hub(
            BrokerConfig(port=1),
            [TableConfig("t", ["p1", "p2", "p3"])],
            tmp_path / "h.db",
            take_over=["u"],
        )
