"""Several ``coffre hub`` processes on one real mosquitto: one hub per table, always.

Each hub is a real process with its own hub.toml and store; the broker is mosquitto with
passwords and an ACL. What a second hub sends is seen two ways: on the wire (it talks to
the broker through a recording hop, so a PUBLISH or a persistent CONNECT from it would be
there) and on the table (a watcher subscribed to ``coffre/<table>/#``).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from device.mock import MockDisplay
from device.panel import MockPanel
from firmware.hub.claim import REPAINT_SECONDS
from firmware.hub.config import TableConfig
from firmware.hub.service import Hub
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client, Message
from firmware.tools.brokers import Mosquitto
from hardware.keys import load_keyset
from tests.support.brokers import acl_mosquitto
from tests.support.golden import frame_problems
from tests.support.sniffer import PacketHop

KEYS = load_keyset()
STATIONS = ["p1", "p2", "p3"]
EX_CONFIG = 78
#: Users of the test broker: each hub user on its topics (ACL), and the tester everywhere.
ACL = {
    "hub": ["coffre/#"],
    "hub-b": ["coffre/b1/#"],  # a hub user allowed on table b1 only
    "tester": ["coffre/#"],
}


# --- the broker, the hubs, the wire -------------------------------------------------------


@dataclass
class Broker:
    port: int
    process: Mosquitto

    def config(self, user: str, port: int | None = None) -> BrokerConfig:
        return BrokerConfig("127.0.0.1", port or self.port, user, f"pw-{user}")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    acl = {user: "".join(f"topic readwrite {t}\n" for t in topics) for user, topics in ACL.items()}
    mosq = acl_mosquitto(tmp_path / "broker", acl)
    yield Broker(mosq.port, mosq)
    mosq.stop()


class Wire(PacketHop):
    """A TCP hop to the broker that keeps, per connection, what the client sent."""

    def published(self) -> list[str]:
        """The topics of every PUBLISH the client sent."""
        return [
            body[2 : 2 + int.from_bytes(body[:2], "big")].decode()
            for k, _f, body in self.packets()
            if k == 3
        ]

    def connects(self) -> list[tuple[str, bool]]:
        """(client id, clean session) of every CONNECT the client sent."""
        out = []
        for kind, _flags, body in self.packets():
            if kind == 1:
                name_len = int.from_bytes(body[:2], "big")
                at = 2 + name_len + 1  # protocol name, level
                connect_flags = body[at]
                id_at = at + 3  # flags, keepalive
                id_len = int.from_bytes(body[id_at : id_at + 2], "big")
                out.append((body[id_at + 2 : id_at + 2 + id_len].decode(), bool(connect_flags & 2)))
        return out


@dataclass
class HubProcess:
    """A ``coffre hub`` process with its own folder, hub.toml and store."""

    folder: Path
    tables: list[str]
    broker: BrokerConfig
    store: Path | None = None
    proc: subprocess.Popen[bytes] | None = None
    #: More of ``coffre hub``'s options.
    options: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.store = self.store or self.folder / "hub.sqlite3"

    @property
    def config(self) -> Path:
        return self.folder / "hub.toml"

    @property
    def log(self) -> Path:
        return self.folder / "hub.log"

    def write_config(self) -> None:
        b = self.broker
        lines = [
            "[broker]",
            f'host = "{b.host}"',
            f"port = {b.port}",
            f'username = "{b.username}"',
            f'password = "{b.password}"',
            "[store]",
            f'path = "{self.store}"',
            "[panel]",
            'backend = "none"',
        ]
        for table in self.tables:
            # Its "stations" are the test's own clients, not coffre stations: no seat health.
            lines += ["[[table]]", f'name = "{table}"', f"stations = {json.dumps(STATIONS)}"]
            lines.append("watch_seats = false")
        self.config.write_text("\n".join(lines) + "\n")

    def start(self) -> HubProcess:
        if not self.config.exists():
            self.write_config()
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    *(sys.executable, "-m", "firmware.cli", "hub"),
                    *("--config", str(self.config), *self.options),
                ],
                stdout=out,
                stderr=out,
            )
        return self

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_exit(self, timeout: float = 30) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Table:
    """Everything said on one or more tables, and a station's and a host's gestures."""

    broker: BrokerConfig
    tables: list[str]
    inbox: queue.Queue[Message | None] = field(default_factory=queue.Queue)
    messages: list[Message] = field(default_factory=list)
    retained: dict[str, bytes] = field(default_factory=dict)
    changed: threading.Condition = field(default_factory=threading.Condition)
    seq: int = 0

    def __post_init__(self) -> None:
        self.client = Client(
            self.broker,
            f"tester-{os.urandom(4).hex()}",
            [f"coffre/{t}/#" for t in self.tables],
            inbox=self.inbox,
        )
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Table:
        self.client.start()
        assert self.client.wait_connected(10)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.client.stop()

    def _run(self) -> None:
        while (msg := self.inbox.get()) is not None:
            with self.changed:
                self.messages.append(msg)
                self.retained[msg.topic] = msg.payload
                self.changed.notify_all()

    def wait(self, check: Callable[[], Any], timeout: float = 20, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not (result := check()):
                left = deadline - time.monotonic()
                assert left > 0, f"timed out waiting for {what or check}"
                self.changed.wait(min(left, 0.2))
            return result

    def status(self, table: str) -> dict[str, Any]:
        raw = self.retained.get(proto.Topics(table).hub_status)
        return json.loads(raw) if raw else {}

    def wait_owner(self, table: str, timeout: float = 30) -> dict[str, Any]:
        """The claim of the hub that runs ``table`` once it is ready."""
        status = self.wait(
            lambda: self.status(table).get("state") == "ready" and self.status(table),
            timeout,
            f"a hub on {table}",
        )
        claim: dict[str, Any] = status["claim"]
        return claim

    def host(self, table: str, cmd: str, **fields: Any) -> dict[str, Any]:
        """A host command with an id; its answer."""
        self.seq += 1
        cid = f"h{self.seq}"
        t = proto.Topics(table)
        self.client.publish(t.host_command, proto.encode({"cmd": cmd, "id": cid, **fields}))
        answers = self.wait(lambda: self.answers(t.host_ack, cid), what=f"{cmd} on {table}")
        return answers[0]

    def tap(self, table: str, station: str, uid: str) -> str:
        """A station's tag on its reader; the input's id."""
        self.seq += 1
        iid = f"s{station.replace('-', '')}:{self.seq}"
        payload = {"id": iid, "kind": "tag", "uid": uid}
        self.client.publish(proto.Topics(table).station(station, "input"), proto.encode(payload))
        return iid

    def answers(self, topic: str, iid: str) -> list[dict[str, Any]]:
        out = []
        for msg in list(self.messages):
            if msg.topic == topic and msg.payload:
                data = json.loads(msg.payload)
                if data.get("id") == iid:
                    out.append(data)
        return out

    def play_round(self, table: str, count: int = 6) -> None:
        """``count`` taps on ``table``, each answered exactly once (once things are quiet)."""
        t = proto.Topics(table)
        sent = []
        for n in range(count):
            station = STATIONS[n % len(STATIONS)]
            sent.append((t.station(station, "ack"), self.tap(table, station, mystery(n))))
        for topic, iid in sent:
            self.wait(lambda topic=topic, iid=iid: self.answers(topic, iid), what=iid)
        time.sleep(0.5)  # a second answer, if any, has had time to come
        for topic, iid in sent:
            assert len(self.answers(topic, iid)) == 1, (iid, self.answers(topic, iid))


def mystery(n: int) -> str:
    return KEYS.uid_for("mystery", None, 1 + n % 5)


@pytest.fixture
def rig(tmp_path: Path, broker: Broker) -> Iterator[Callable[..., Any]]:
    """Make hubs, wires and table watchers; everything is stopped at the end."""
    made: list[Any] = []

    def make(kind: str, *args: Any, **kwargs: Any) -> Any:
        if kind == "hub":
            name, tables = args
            user = kwargs.pop("user", "hub")
            port = kwargs.pop("port", None)
            thing: Any = HubProcess(tmp_path / name, tables, broker.config(user, port), **kwargs)
        elif kind == "wire":
            thing = Wire(broker.port)
        else:
            thing = Table(broker.config("tester"), list(args)).start()
        made.append(thing)
        return thing

    yield make
    for thing in reversed(made):
        if isinstance(thing, HubProcess):
            thing.stop()
        elif isinstance(thing, Wire | Table):
            (thing.close if isinstance(thing, Wire) else thing.stop)()


def start_game(table: Table, name: str) -> None:
    answer = table.host(name, "start", game="secret-identity", players=3, seed=3)
    assert answer["ok"], answer


def screens(table: Table, name: str) -> dict[str, bytes]:
    t = proto.Topics(name)
    return {s: table.retained.get(t.station(s, "screen"), b"") for s in STATIONS}


def clone_store(source: Path, target: Path) -> None:
    """Copy a live store as a cloned card would: the database and its write-ahead log."""
    for suffix in ("", "-wal"):
        if Path(f"{source}{suffix}").exists():
            shutil.copy(f"{source}{suffix}", f"{target}{suffix}")


def token(store: Path) -> str:
    with sqlite3.connect(store) as db:
        row = db.execute("SELECT value FROM settings WHERE key='client_token'").fetchone()
    return str(row[0])


# --- the tests ------------------------------------------------------------------------------


def test_disjoint_hubs_play_at_once_with_one_answer_per_input(rig: Any) -> None:
    """Two hubs, three tables: each table has one owner and every tap one answer."""
    watch = rig("table", "t1", "t2", "t3")
    a = rig("hub", "a", ["t1", "t2"]).start()
    b = rig("hub", "b", ["t3"]).start()
    claims = {t: watch.wait_owner(t) for t in ("t1", "t2", "t3")}
    assert claims["t1"]["hub"] == claims["t2"]["hub"] != claims["t3"]["hub"]
    for name in ("t1", "t2", "t3"):
        start_game(watch, name)
    for name in ("t1", "t2", "t3"):
        watch.play_round(name)
    assert a.running() and b.running()


@pytest.mark.parametrize("store", ["own", "copied"])
def test_a_second_hub_on_an_owned_table_is_refused_and_publishes_nothing(
    rig: Any, store: str
) -> None:
    """The same hub.toml copied (with a store of its own, or a copy of the owner's): the
    second hub never publishes on the table, never kicks the owner, says why and exits."""
    watch = rig("table", "t1")
    owner = rig("hub", "owner", ["t1"]).start()
    claim = watch.wait_owner("t1")
    start_game(watch, "t1")
    watch.play_round("t1")
    before_screens, before_status = screens(watch, "t1"), watch.status("t1")
    seen = len(watch.messages)
    wire = rig("wire")
    second = rig("hub", "second", ["t1"], port=wire.port)
    if store == "copied":
        clone_store(owner.store, second.store)  # a cloned SD card: the owner's store
    second.start()
    assert second.wait_exit(60) == EX_CONFIG
    log = second.text()
    errors = [line for line in log.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "t1" in errors[0] and claim["hub"] in errors[0], log
    assert "coffre: hub: no table left to run" in log
    assert wire.published() == []  # not one PUBLISH, on any topic
    assert all(clean for _id, clean in wire.connects())  # never the persistent session
    if store == "copied":
        assert "new broker identity" in log
        assert all(token(owner.store) not in cid for cid, _clean in wire.connects())
    # Nothing on the table came from it: the owner's claim, screens, one answer per tap.
    assert watch.status("t1") == before_status
    assert screens(watch, "t1") == before_screens
    assert not [m for m in watch.messages[seen:] if m.topic.endswith("/hub/status")]
    watch.play_round("t1")
    assert owner.running()
    assert "Broker lost" not in owner.text() and "disconnected" not in owner.text()


def test_a_cloned_store_takes_a_new_identity_and_never_kicks_the_first_hub(rig: Any) -> None:
    """A copy of the store runs another table beside the first hub: its own client id."""
    watch = rig("table", "t1", "t2")
    first = rig("hub", "first", ["t1"]).start()
    watch.wait_owner("t1")
    start_game(watch, "t1")
    wire = rig("wire")
    clone = rig("hub", "clone", ["t1", "t2"], port=wire.port)
    clone_store(first.store, clone.store)
    clone.start()
    clone_claim = watch.wait_owner("t2")
    assert clone_claim["hub"] != watch.status("t1")["claim"]["hub"]
    watch.wait(lambda: "leaves it alone" in clone.text(), 30, "t1 refused by the clone")
    start_game(watch, "t2")
    for name in ("t1", "t2"):
        watch.play_round(name)
    ids = [cid for cid, clean in wire.connects() if not clean]
    assert ids and all(token(first.store) not in cid for cid in ids)
    assert all("-t1-" not in cid for cid in ids)  # t1: only the probe's clean session
    assert token(clone.store) != token(first.store)
    assert "Broker lost" not in first.text() and "disconnected" not in first.text()
    assert first.running() and clone.running()


def test_a_killed_hub_takes_its_table_back_and_resumes(rig: Any) -> None:
    """SIGKILL (no goodbye: the will says lost), restart on the same store: the same hub
    identity takes the table back at once and the game goes on."""
    watch = rig("table", "t1")
    hub = rig("hub", "hub", ["t1"]).start()
    claim = watch.wait_owner("t1")
    start_game(watch, "t1")
    watch.play_round("t1", 3)
    version = json.loads(watch.retained[proto.Topics("t1").public])["version"]
    hub.kill()
    watch.wait(lambda: watch.status("t1").get("state") == "lost", 20, "the will")
    hub.start()
    again = watch.wait_owner("t1")
    assert again["hub"] == claim["hub"] and again["run"] != claim["run"]
    assert json.loads(watch.retained[proto.Topics("t1").public])["version"] == version
    watch.play_round("t1", 3)


def test_two_hubs_started_at_once_leave_one_owner(rig: Any) -> None:
    """A race for a table: exactly one hub keeps it, the other leaves; no flapping."""
    watch = rig("table", "t1")
    x = rig("hub", "x", ["t1"])
    y = rig("hub", "y", ["t1"])
    x.start(), y.start()
    loser = None
    deadline = time.monotonic() + 60
    while loser is None and time.monotonic() < deadline:
        loser = next((h for h in (x, y) if not h.running()), None)
        time.sleep(0.1)
    assert loser is not None and loser.wait_exit() == EX_CONFIG
    winner = y if loser is x else x
    claim = watch.wait_owner("t1")
    time.sleep(2)
    assert watch.status("t1")["claim"] == claim and winner.running()
    start_game(watch, "t1")
    watch.play_round("t1")


def test_a_hub_the_broker_does_not_allow_on_a_table_refuses_it(rig: Any) -> None:
    """The ACL gives this hub's user table b1 only: t1 is refused, b1 runs."""
    watch = rig("table", "t1", "b1")
    hub = rig("hub", "b", ["t1", "b1"], user="hub-b").start()
    watch.wait_owner("b1")
    watch.wait(lambda: "t1: the broker does not let" in hub.text(), 40, "t1 refused")
    assert hub.running()
    assert watch.status("t1") == {}  # nothing reached the table
    start_game(watch, "b1")
    watch.play_round("b1")


# --- the panel of a hub with several tables --------------------------------------------------


def glass(hub: Hub, panel: MockPanel) -> Image.Image:
    """What the hub display shows once the hub has handled every press so far."""
    time.sleep(0.3)
    assert hub.out.painter is not None and hub.out.painter.wait_idle(5)
    display = panel.display
    assert isinstance(display, MockDisplay) and display.last is not None
    return display.last.copy()


def test_the_panel_switches_between_the_hubs_tables(
    rig: Any, broker: Broker, tmp_path: Path
) -> None:
    """One panel, three tables: the glass names the table it drives, the Table row and
    (in a game) prev switch, a start from the panel starts that table only, and a table
    another hub runs shows why it is refused."""
    watch = rig("table", "t1", "t2", "t3")
    # Another hub on t3, named the same at every run (the refusal screen shows it).
    first = Hub(broker.config("hub"), [TableConfig("t3", STATIONS)], tmp_path / "t3.sqlite3")
    first.claim = first.out.claim = proto.Claim(hub="c0ffee01", run="1", host="pi-bar", keepalive=3)
    first.start()
    other = watch.wait_owner("t3")
    panel = MockPanel()
    five = [*STATIONS, "p4", "p5"]  # the menu offers 5 players at first
    tables = [TableConfig(name, five, seed=3) for name in ("t1", "t2", "t3")]
    hub = Hub(broker.config("hub"), tables, tmp_path / "panel.sqlite3", keys=KEYS, panel=panel)
    hub.start()
    try:
        mine = {watch.wait_owner(t)["hub"] for t in ("t1", "t2")}
        assert mine == {hub.claim.hub} != {other["hub"]}
        shown = [glass(hub, panel)]  # t1's menu, its name in the title
        panel.press("prev")  # from the first row up to the last: "Table: t1 1/3"
        shown.append(glass(hub, panel))
        panel.press("ok")  # to t2
        watch.wait(lambda: hub.out.panel_actor is hub.actors["t2"], 5, "the switch")
        shown.append(glass(hub, panel))
        panel.press("prev")  # up to Start
        panel.press("ok")  # starts t2's game, not t1's
        watch.wait(
            lambda: json.loads(watch.retained.get(proto.Topics("t2").public, b"{}")).get("game")
        )
        assert json.loads(watch.retained[proto.Topics("t1").public])["game"] is None
        shown.append(glass(hub, panel))  # t2's game, its name in the title
        watch.wait(lambda: hub.actors["t3"].state == "refused", 30, "t3 refused")
        panel.press("prev")  # in a game, prev moves on: t3, refused
        watch.wait(lambda: hub.out.panel_actor is hub.actors["t3"], 5, "the switch")
        shown.append(glass(hub, panel))
        panel.press("ok")  # any button moves on from a refused table: back to t1
        watch.wait(lambda: hub.out.panel_actor is hub.actors["t1"], 5, "the switch")
        watch.play_round("t2")
        assert watch.status("t3")["claim"] == other  # nothing of this hub's on t3
        problems = frame_problems("multi-hub-panel", shown)
        assert not problems, problems
    finally:
        hub.stop()
        first.stop()


def test_a_claim_left_by_a_hub_gone_for_good_is_taken_over_only_when_asked(rig: Any) -> None:
    """The broker kept a hub's retained "ready" but never sent its will (it restarted with
    its persistence while that hub was away): a hub refuses the table and says how to take
    it over; started with --take-over it runs the table, one answer per tap."""
    watch = rig("table", "t1")
    gone = proto.Claim(hub="0" * 16, run="gone", host="old-pi", keepalive=1)
    stale = proto.encode(proto.HubStatus("ready", claim=gone))
    watch.client.publish(proto.Topics("t1").hub_status, stale, retain=True).wait_for_publish(5)
    watch.wait(lambda: watch.status("t1").get("claim", {}).get("run") == "gone")
    refused = rig("hub", "new", ["t1"]).start()
    assert refused.wait_exit(60) == EX_CONFIG
    assert "if that hub is gone for good: coffre hub --take-over t1" in refused.text()
    assert watch.status("t1")["claim"]["run"] == "gone"  # it published nothing
    taker = rig("hub", "new", ["t1"], options=["--take-over", "t1"]).start()
    claim = watch.wait(
        lambda: (
            watch.status("t1").get("claim", {}).get("run") not in (None, "gone")
            and watch.status("t1")["claim"]
        )
    )
    assert claim["hub"] != gone.hub
    assert "taking it over from hub " + gone.hub + " on old-pi" in taker.text()
    start_game(watch, "t1")
    watch.play_round("t1")
    assert taker.running()


def test_a_mistaken_take_over_leaves_the_live_hub_its_game(rig: Any) -> None:
    """--take-over given while the owner still runs: the owner keeps the table and its game
    (whichever identity is the lower), the other hub leaves, and every tap still gets
    exactly one answer; the stations end on the owner's screens."""
    watch = rig("table", "t1")
    owner = rig("hub", "owner", ["t1"]).start()
    claim = watch.wait_owner("t1")
    start_game(watch, "t1")
    watch.play_round("t1")
    before = shown(screens(watch, "t1"))
    taker = rig("hub", "taker", ["t1"], options=["--take-over", "t1"]).start()
    assert taker.wait_exit(60) == EX_CONFIG
    assert "is alive after all and keeps it" in taker.text()
    assert "was told to take it over from this hub" in owner.text()
    time.sleep(REPAINT_SECONDS + 1.0)  # the owner's second repaint is out
    assert watch.status("t1")["claim"]["run"] == claim["run"]
    assert shown(screens(watch, "t1")) == before
    watch.play_round("t1")
    assert owner.running()


def shown(raw: dict[str, bytes]) -> dict[str, Any]:
    """What each station shows (its screen, less the revision a repaint counts up)."""
    return {s: {k: v for k, v in json.loads(b).items() if k != "rev"} for s, b in raw.items()}
