"""Secrets stay on their own station's topic, behind the broker's ACL."""

from __future__ import annotations

import json
import time
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from firmware.hub.brokerconf import station_user
from firmware.link import protocol as proto
from firmware.link.tls import client_context
from firmware.tools.simtable import TABLE
from tests.support.tables import (
    TableFactory,
    director,
    drain,
    leaves,
    spy,
)

SECRET_KEYS = {"secret", "my_mystery", "my_votes", "free_keys", "answer"}


def opened_safe_shown(pub: dict[str, Any], event: dict[str, Any]) -> bool:
    """A feed event carrying key numbers is an opened safe the public view shows too."""
    if event.get("kind") != "safe_opened":
        return False
    said = {k: v for k, v in event["data"].items() if k not in ("scores", "team_score")}
    view = pub.get("view") or {}
    shown = list(view.get("revealed") or [])
    for done in view.get("history") or []:
        shown += done.get("safes") or [done]  # a round's safes, or a co-op turn
    return said in shown


def test_station_user_hears_only_its_own_topics_over_a_whole_game(
    make_table: TableFactory,
) -> None:
    """Station p1, subscribed to '#', gets no other seat's screen, ack or secret."""
    sim = make_table(5)
    t = proto.Topics(TABLE)
    listener = spy(sim, "p1", ["#", t.station("p2", "screen"), f"{t.base}/station/+/ack"])
    bots = director(sim, seed=5)
    bots.start_game(5)
    bots.play()
    time.sleep(0.3)
    messages = drain(listener)
    listener.stop()

    allowed = {
        t.station("p1", "screen"),
        t.station("p1", "ack"),
        t.public,
        t.hub_status,
        t.station("p1", "status"),
    }
    topics = {topic for topic, _ in messages}
    assert t.public in topics and t.station("p1", "screen") in topics
    assert topics <= allowed, topics - allowed

    publics = [json.loads(p) for topic, p in messages if topic == t.public]
    assert len(publics) > 50
    for pub in publics:
        for path, value in leaves(pub):
            assert not SECRET_KEYS & set(path), path
            if path[-1] in ("mystery", "number") and isinstance(value, int):
                # Key numbers appear only in safes already opened: the feed's too, each
                # said by an opened safe that the public table shows (revealed or history).
                if path[0] == "feed":
                    assert opened_safe_shown(pub, pub["feed"][int(path[1])]), path
                    continue
                assert "revealed" in path or "history" in path, path
        view = pub.get("view") or {}
        if view.get("phase") in ("prepare", "vote"):
            assert view.get("revealed") == []
    for topic, payload in messages:
        if topic == t.station("p1", "ack"):
            assert set(json.loads(payload)) == {"id", "ok", "message"}


def test_public_reveals_a_safe_only_when_it_opens(make_table: TableFactory) -> None:
    """During the reveal, public shows the mystery key of opened safes only, in seat order."""
    sim = make_table(3)
    bots = director(sim, seed=2, stop_at=(1, "reveal"))
    bots.start_game(3)
    bots.play()
    truth = bots.record[1]["mystery"]
    for opened in range(3):
        before = sim.watch.public["version"]
        view = sim.watch.public["view"]
        assert [s["safe"] for s in view["revealed"]] == list(range(opened))
        text = json.dumps(view)
        for safe in range(opened, 3):
            assert f'"safe": {safe}, "mystery"' not in text
        sim.next()
        sim.watch.wait(lambda p, v=before: p["version"] > v)
        last = sim.watch.public["view"]["revealed"][-1]
        assert last["safe"] == opened and last["mystery"] == truth[opened]


def test_a_station_cannot_speak_for_another(make_table: TableFactory) -> None:
    """p1's credentials cannot publish p2's input: the broker drops it, nothing changes."""
    sim = make_table(3)
    bots = director(sim, seed=2, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    before = sim.watch.public["version"]
    forger = spy(sim, "p1", [])
    red_vote = sim.keys.uid_for("vote", "red", 4)
    payload = proto.encode({"id": "forged:1", "kind": "tag", "uid": red_vote})
    forger.publish(proto.Topics(TABLE).station("p2", "input"), payload).wait_for_publish(2)
    time.sleep(0.5)
    forger.stop()
    assert sim.watch.public["version"] == before
    assert sim.watch.public["view"]["seats"][1]["votes_in"] == 0


def test_anonymous_and_wrong_password_are_refused(make_table: TableFactory) -> None:
    """The broker refuses anonymous clients and bad passwords."""
    sim = make_table(3)
    for user, password in ((None, None), (station_user(TABLE, "p1"), "wrong")):
        client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"x-{user}")
        codes: list[Any] = []
        client.on_connect = lambda c, u, f, rc, p, codes=codes: codes.append(rc)
        if user:
            client.username_pw_set(user, password)
        if sim.broker.tls_ca:  # the fixture's mosquitto speaks TLS only
            client.tls_set_context(client_context(sim.broker.tls_ca))
        client.connect("127.0.0.1", sim.broker.port)
        client.loop_start()
        deadline = time.monotonic() + 5
        while not codes and time.monotonic() < deadline:
            time.sleep(0.02)
        client.loop_stop()
        client.disconnect()
        assert codes and codes[0].is_failure, (user, codes)


def test_a_station_cannot_forge_screens_or_the_public_table(make_table: TableFactory) -> None:
    """p1 publishing on p2's screen, on public or on host/command reaches nobody."""
    sim = make_table(3)
    t = proto.Topics(TABLE)
    victim = spy(sim, "p2", [t.station("p2", "screen"), t.public])
    time.sleep(0.3)
    drain(victim)  # the retained copies
    forger = spy(sim, "p1", [])
    fake = proto.encode(proto.Screen(rev=99, title="Forged", lines=("Tap red key 3",)))
    for topic, payload in (
        (t.station("p2", "screen"), fake),
        (t.public, b'{"game":"forged"}'),
        (t.host_command, b'{"cmd":"abort"}'),
    ):
        forger.publish(topic, payload, retain=True).wait_for_publish(2)
    time.sleep(0.5)
    forger.stop()
    assert drain(victim) == []
    victim.stop()
    assert sim.stations["p2"].screen is not None
    assert sim.stations["p2"].screen.title != "Forged"
    assert sim.watch.public.get("game") != "forged"
