"""Red team, whole table (real mosquitto + ACL, hub, mock stations): cheats and accidents."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.brokerconf import HUB_USER, TableAccess, station_user, write_broker_files
from firmware.hub.store import Store
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client
from firmware.tools.brokers import Mosquitto, free_port
from firmware.tools.simtable import TABLE, SimTable
from tests.support.sniffer import Sniffer
from tests.support.tables import TableFactory, director, drain, spy

T = proto.Topics(TABLE)


def voting(make_table: TableFactory, players: int = 3, seed: int = 9) -> SimTable:
    """A table in round 1's vote phase (bots prepared it through the devices)."""
    sim = make_table(players)
    bots = director(sim, seed=seed, stop_at=(1, "vote"))
    bots.start_game(players)
    bots.play()
    return sim


def colour(sim: SimTable, seat: int) -> str:
    return sim.table_config.seating().colours[seat]


def host_next(sim: SimTable, times: int = 1) -> None:
    """The host's next, each time waiting until the table moved."""
    for _ in range(times):
        before = sim.watch.public["version"]
        sim.next()
        sim.watch.wait(lambda p, v=before: p["version"] > v)


def seat_view(sim: SimTable, seat: int) -> dict[str, Any]:
    seats: list[dict[str, Any]] = sim.watch.public["view"]["seats"]
    return seats[seat]


def send_raw(sim: SimTable, station: str, payload: bytes, *, retain: bool = False) -> Any:
    """Publish with a station's own credentials and return the hub's ack (or None)."""
    client = spy(sim, station, [T.station(station, "ack")])
    time.sleep(0.1)
    client.publish(T.station(station, "input"), payload, retain=retain).wait_for_publish(2)
    try:
        msg = client.inbox.get(timeout=3)
    finally:
        client.stop()
    return json.loads(msg.payload) if msg is not None else None


# --- the broker's wall ----------------------------------------------------------------


def test_station_hears_nothing_of_sys_or_of_another_table(tmp_path: Path) -> None:
    """Two tables on one broker: a station's wildcards get neither $SYS nor the other table."""
    port = free_port()
    tables = [TableAccess("main", ["p1", "p2"]), TableAccess("side", ["p1", "p2"])]
    conf = write_broker_files(tmp_path / "broker", port, tables, stay_root=os.geteuid() == 0)
    broker = Mosquitto(conf, port)
    broker.start()
    passwords = {**tables[0].passwords, **tables[1].passwords}

    def login(user: str, subs: list[str]) -> Client:
        client = Client(BrokerConfig("127.0.0.1", port, user, passwords[user]), f"c-{user}", subs)
        client.start()
        assert client.wait_connected()
        return client

    try:
        wild = ["#", "$SYS/#", "+/+/+/+/+", "coffre/+/station/+/screen", "coffre/side/#"]
        spy_main = login(station_user("main", "p1"), wild)
        hub = login(HUB_USER, [])
        side, main = proto.Topics("side"), proto.Topics("main")
        secret = proto.encode(proto.Screen(rev=1, title="x", secret=proto.Secret(big="7")))
        for topic in (
            side.station("p1", "screen"),
            side.station("p1", "ack"),
            side.public,
            side.host_screen,
            main.station("p2", "screen"),
            main.station("p1", "screen"),
        ):
            hub.publish(topic, secret, retain=True).wait_for_publish(2)
        time.sleep(0.8)
        topics = {topic for topic, _ in drain(spy_main)}
        assert topics == {main.station("p1", "screen")}, topics
        # The same station id at the other table is another user: no crossing either way.
        spy_side = login(station_user("side", "p1"), [main.station("p1", "screen"), "#"])
        time.sleep(0.5)
        own = {side.station("p1", "screen"), side.station("p1", "ack"), side.public}
        assert {t for t, _ in drain(spy_side)} == own
        for client in (spy_main, spy_side, hub):
            client.stop()
    finally:
        broker.stop()


@pytest.mark.parametrize("name", ["p+1", "#", "p1/input", "../p2", "P1", "", "p" * 33, "é"])
def test_station_names_that_look_like_wildcards_or_paths_are_refused(name: str) -> None:
    """A station id that is a wildcard, a path or too long never reaches a topic or the ACL."""
    with pytest.raises(ValueError):
        TableAccess("main", ["p1", name])
    with pytest.raises(ValueError):
        T.station(name, "input")


# --- cheats with a station's own credentials --------------------------------------------


def test_retained_input_does_not_count_after_a_hub_restart(make_table: TableFactory) -> None:
    """p1 publishes a retained mystery tap while voting; a restarted hub must not lock it."""
    sim = voting(make_table)
    payload = proto.encode(
        {"id": "ret:1", "kind": "tag", "uid": sim.keys.uid_for("mystery", None, 8)}
    )
    ack = send_raw(sim, "p1", payload, retain=True)
    assert ack is not None and ack["ok"] is False  # mystery keys are refused while voting
    host_next(sim, 5)  # close the vote, open three safes, next round
    assert sim.watch.public["view"]["round"] == 2
    assert not seat_view(sim, 0)["mystery_locked"]
    sim.stop_hub()
    sim.start_hub()
    time.sleep(1.0)
    assert not seat_view(sim, 0)["mystery_locked"], "a key nobody tapped was locked"


def test_double_tap_does_not_show_the_vote_number_on_the_safe(make_table: TableFactory) -> None:
    """Red taps red 6 on yellow's station twice: yellow's glass must not read '6'."""
    sim = voting(make_table)
    uid = sim.keys.uid_for("vote", colour(sim, 0), 6)
    assert sim.tap("p2", uid).ok  # type: ignore[union-attr]
    ack = sim.tap("p2", uid)
    assert ack is not None and not ack.ok
    assert "6" not in ack.message, ack.message


def test_replayed_input_after_a_hub_restart_changes_nothing(make_table: TableFactory) -> None:
    """An input id committed before a hub restart, sent again after it: ok, nothing moves."""
    sim = voting(make_table)
    payload = proto.encode(
        {"id": "cheat:1", "kind": "tag", "uid": sim.keys.uid_for("vote", colour(sim, 0), 2)}
    )
    assert send_raw(sim, "p2", payload)["ok"]
    sim.stop_hub()
    sim.start_hub()
    assert sim.tap("p3", sim.keys.uid_for("vote", colour(sim, 0), 2)).ok  # type: ignore[union-attr]
    version = sim.watch.public["version"]
    events = len(Store(sim.store_path).events(TABLE, 1))
    assert send_raw(sim, "p2", payload) == {"id": "cheat:1", "ok": True, "message": ""}
    time.sleep(0.2)
    assert sim.watch.public["version"] == version
    assert len(Store(sim.store_path).events(TABLE, 1)) == events
    assert [s["votes_in"] for s in sim.watch.public["view"]["seats"]] == [0, 0, 1]


# --- accidents at the table --------------------------------------------------------------


def test_knob_spam_of_200_steps(make_table: TableFactory) -> None:
    """200 fast knob steps: every one answered, the count stays 1..3, the press confirms 3."""
    sim = make_table(3)
    director(sim).start_game(3)
    station = sim.stations["p1"]
    before = station.sent
    controls = sim.controls("p1")
    for _ in range(200):
        controls.turn(1)
    assert station.wait_settled(before + 199, 30)
    assert station.acks >= 200 and not station.pending
    hub = sim.hub
    assert hub is not None and hub.actors[TABLE].table is not None
    table = hub.actors[TABLE].table
    assert table.binding.cursor(table, 0) == 3  # type: ignore[attr-defined]
    ack = sim.gesture("p1", lambda c: c.press())
    assert ack is not None and ack.ok
    sim.watch.wait(lambda p: p["view"]["seats"][0]["pictos_placed"] == 3)


def test_tag_left_on_the_reader_across_a_phase_change(make_table: TableFactory) -> None:
    """A mystery key left lying on the reader from the vote does nothing by itself next round."""
    sim = voting(make_table)
    reader = sim.devices["p1"].reader
    uid = sim.keys.uid_for("mystery", None, 8)
    station = sim.stations["p1"]
    before = station.sent
    reader.present_tag(uid)  # type: ignore[attr-defined]
    assert station.wait_settled(before, 10)
    assert station.last_ack is not None and not station.last_ack.ok
    host_next(sim, 5)
    assert sim.watch.public["view"]["round"] == 2
    time.sleep(0.3)
    assert station.sent == before + 1  # still one read: the key never left
    assert not seat_view(sim, 0)["mystery_locked"]
    reader.remove_tag()  # type: ignore[attr-defined]
    time.sleep(0.1)
    assert sim.tap("p1", uid).ok  # type: ignore[union-attr]
    sim.watch.wait(lambda p: p["view"]["seats"][0]["mystery_locked"])


def test_same_key_on_two_stations_at_once(make_table: TableFactory) -> None:
    """Red 5 tapped on yellow and green almost together: both acked, one safe holds it."""
    sim = voting(make_table)
    uid = sim.keys.uid_for("vote", colour(sim, 0), 5)
    p2, p3 = sim.stations["p2"], sim.stations["p3"]
    b2, b3 = p2.sent, p3.sent
    sim.devices["p2"].reader.present_tag(uid)  # type: ignore[attr-defined]
    sim.devices["p3"].reader.present_tag(uid)  # type: ignore[attr-defined]
    assert p2.wait_settled(b2, 10) and p3.wait_settled(b3, 10)
    assert p2.last_ack is not None and p3.last_ack is not None
    assert p2.last_ack.ok and p3.last_ack.ok
    time.sleep(0.2)
    seats = sim.watch.public["view"]["seats"]
    assert seats[0]["votes_cast"] == 1
    assert seats[1]["votes_in"] + seats[2]["votes_in"] == 1
    hub = sim.hub
    assert hub is not None and hub.actors[TABLE].table is not None
    assert len(hub.actors[TABLE].table.view(0)["my_votes"]) == 1


def test_vote_racing_the_host_closing_the_vote(make_table: TableFactory) -> None:
    """A tap racing the host's next: acked ok means it is in the safe at reveal, else not."""
    sim = voting(make_table)
    uid = sim.keys.uid_for("vote", colour(sim, 0), 4)
    station = sim.stations["p2"]
    before = station.sent
    tapper = threading.Thread(target=sim.devices["p2"].reader.present_tag, args=(uid,))  # type: ignore[attr-defined]
    tapper.start()
    sim.next()
    tapper.join()
    assert station.wait_settled(before, 10)
    ack = station.last_ack
    assert ack is not None
    if not ack.ok:
        assert ack.message == "Voting is closed"
    sim.watch.wait(lambda p: p["view"]["phase"] == "reveal")
    host_next(sim, 2)  # open red's then yellow's safe
    yellow = sim.watch.public["view"]["revealed"][1]
    red_in_yellow = [v for v in yellow["votes"] if v["voter"] == 0]
    assert [v["number"] for v in red_in_yellow] == ([4] if ack.ok else [])


def test_one_tap_does_not_echo_through_every_station(make_table: TableFactory) -> None:
    """One vote: one input on the wire, no station status rewritten (hub/status is no rebirth)."""
    sim = voting(make_table, players=5)
    counter = Client(
        sim.broker.config(HUB_USER),
        "redteam-count",
        [T.all_station_status, T.all_station_inputs],
    )
    counter.start()
    assert counter.wait_connected()
    time.sleep(0.5)
    drain(counter)  # retained statuses
    assert sim.tap("p2", sim.keys.uid_for("vote", colour(sim, 0), 3)).ok  # type: ignore[union-attr]
    time.sleep(0.8)
    topics = [topic for topic, _ in drain(counter)]
    counter.stop()
    assert topics.count(T.station("p2", "input")) == 1, topics
    assert [t for t in topics if t.endswith("/status")] == [], topics


def test_abort_then_a_smaller_game_leaves_no_old_screen(make_table: TableFactory) -> None:
    """Abort a 4-player game mid-vote, start 3: the 4th station idles, flap open shows no key."""
    sim = make_table(4)
    bots = director(sim, seed=3, stop_at=(1, "vote"))
    bots.start_game(4)
    bots.play()
    sim.host({"cmd": "abort"})
    sim.watch.wait(lambda p: p.get("game") is None)
    sim.host({"cmd": "start", "game": "secret-identity", "players": 3})
    sim.watch.wait(lambda p: p.get("game") == "secret-identity" and len(p["seats"]) == 3)
    time.sleep(0.3)
    p4 = sim.stations["p4"]
    assert p4.screen is not None and p4.screen.secret is None
    assert "Waiting for the host" in p4.screen.lines
    sim.controls("p4").open_flap()
    time.sleep(0.2)
    ack = sim.tap("p4", sim.keys.uid_for("mystery", None, 2))
    assert ack is not None and ack.message == "Not in this game"
    p1 = sim.stations["p1"].screen
    assert p1 is not None and p1.secret is not None and "No key yet" in p1.secret.lines
    assert sim.watch.public["view"]["round"] == 1
    assert all(not s["mystery_locked"] for s in sim.watch.public["view"]["seats"])


def test_hub_killed_during_a_burst_of_taps_loses_no_acknowledged_input(
    make_table: TableFactory,
) -> None:
    """SIGKILL the hub while three stations tap away: every ok ack is in the store, once."""
    sim = make_table(4, hub_mode="process")
    bots = director(sim, seed=12, stop_at=(1, "vote"))
    bots.start_game(4)
    bots.play()
    watcher = Client(sim.broker.config(HUB_USER), "redteam-acks", [f"{T.base}/station/+/ack"])
    watcher.start()
    assert watcher.wait_connected()
    plan = [  # (voter, safe): every vote of seats 0..2
        (voter, safe) for voter in range(3) for safe in range(4) if safe != voter
    ]

    def tapper(voter: int) -> None:
        for v, safe in plan:
            if v == voter:
                uid = sim.keys.uid_for("vote", colour(sim, voter), safe + 1)
                sim.tap(sim.names[safe], uid, settle=False)
                time.sleep(0.03)

    threads = [threading.Thread(target=tapper, args=(v,)) for v in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(0.12)
    sim.kill_hub()
    for thread in threads:
        thread.join()
    sim.start_hub()
    for name in sim.names:
        assert sim.stations[name].wait_settled(0, 20), f"{name} still has unanswered inputs"
    time.sleep(0.3)
    acks = [json.loads(payload) for _, payload in drain(watcher)]
    watcher.stop()
    acked = {f"{TABLE}/{a['id']}" for a in acks if a["ok"]}
    store = Store(sim.store_path)
    rows = store._db.execute("SELECT source_id FROM events WHERE source_id IS NOT NULL").fetchall()
    stored = [r[0] for r in rows]
    assert len(stored) == len(set(stored))
    stored_ids = {s.split("/", 1)[0] + "/" + s.split("/", 2)[2] for s in stored}
    assert acked <= stored_ids, acked - stored_ids
    sim.watch.wait(lambda p: [s["votes_cast"] for s in p["view"]["seats"]] == [3, 3, 3, 0])
    log = (sim.workdir / "hub.log").read_text()
    # The log names the game it started ("secret-identity"): that name is public.
    public = log.lower().replace("secret-identity", "")
    assert "my_mystery" not in log and "secret" not in public


def test_an_eavesdropper_on_the_network_learns_no_secret(make_table: TableFactory) -> None:
    """Sniffing p1's connection shows neither p1's mystery key nor p1's broker password."""
    sim = make_table(3)
    director(sim).start_game(3)
    assert sim.tap("p1", sim.keys.uid_for("mystery", None, 7)).ok  # type: ignore[union-attr]
    relay = Sniffer(sim.broker.port)
    config = sim.broker.station_config("p1")
    via = dataclasses.replace(config, port=relay.port)  # the same station, via the relay
    client = Client(via, "redteam-p1-via-wifi", [T.station("p1", "screen")])
    client.start()
    assert client.wait_connected()
    msg = client.inbox.get(timeout=5)
    client.stop()
    relay.close()
    assert msg is not None and json.loads(msg.payload)["secret"]["big"] == "7"
    with relay.lock:
        wire = bytes(relay.seen)
    assert config.password is not None
    assert config.password.encode() not in wire, "the station's password crossed in clear"
    assert b'"big":"7"' not in wire, "p1's mystery key crossed in clear"


@pytest.mark.parametrize("victim", ["hub", "p2"])
def test_a_station_user_cannot_kick_others_off_by_client_id(
    make_table: TableFactory, victim: str
) -> None:
    """p1's credentials with the hub's (or p2's) client id must not disconnect it."""
    sim = make_table(3)
    client_id = f"coffre-hub-{TABLE}" if victim == "hub" else f"coffre-{TABLE}-{victim}"
    target = sim.hub.client if victim == "hub" else sim.stations[victim].client  # type: ignore[union-attr]
    assert target.connected.is_set()
    intruder = Client(sim.broker.station_config("p1"), client_id, [])
    intruder.start()
    intruder.wait_connected(3)
    time.sleep(0.3)
    kicked = not target.connected.is_set()
    intruder.stop()
    assert target.wait_connected(10)  # it comes back once the intruder leaves
    assert not kicked, f"{victim} was disconnected by p1's credentials"


def test_retained_host_command_does_not_wipe_the_game_on_restart(
    make_table: TableFactory,
) -> None:
    """The host's tool sends 'start' retained (mosquitto_pub -r): a hub restart still resumes."""
    sim = make_table(3)
    command = {"cmd": "start", "game": "secret-identity", "players": 3, "id": "r:1"}
    sim.watch.client.publish(T.host_command, proto.encode(command), retain=True).wait_for_publish(2)
    sim.watch.wait(lambda p: p.get("game") == "secret-identity")
    assert sim.tap("p1", sim.keys.uid_for("mystery", None, 4)).ok  # type: ignore[union-attr]
    sim.watch.wait(lambda p: p["view"]["seats"][0]["mystery_locked"])
    sim.stop_hub()
    sim.start_hub()
    time.sleep(1.0)
    game = Store(sim.store_path).current_game(TABLE)
    assert game is not None and game.game_no == 1, "the resumed game was replaced"
    assert seat_view(sim, 0)["mystery_locked"]


def test_host_display_says_when_a_station_drops_out(make_table: TableFactory) -> None:
    """p3's station loses power mid-vote: the hub display names it before the host says next."""
    sim = voting(make_table)
    status = Client(sim.broker.config(HUB_USER), "redteam-status", [T.station("p3", "status")])
    status.start()
    assert status.wait_connected()
    sim.stations["p3"].stop(crash=True)  # the socket drops: the broker sends p3's will
    deadline = time.monotonic() + 10
    state = ""
    while state != "lost" and time.monotonic() < deadline:
        msg = status.inbox.get(timeout=10)
        state = json.loads(msg.payload)["state"] if msg is not None else ""
    status.stop()
    assert state == "lost"
    time.sleep(0.5)
    shown = " ".join([sim.watch.host.get("title", ""), *sim.watch.host.get("lines", [])])
    assert "p3" in shown or "lost" in shown.lower() or "offline" in shown.lower(), shown
