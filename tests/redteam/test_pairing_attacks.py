"""Attacks on pairing from the venue's Wi-Fi: the enrol user's password is public, so
anyone may ask to be any seat, read every reply and send as many hellos as a fast script
can (docs/pairing.md's threat model). A real mosquitto with TLS and the ACL, the hub, the
host on the panel or the command line."""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from device.factory import open_station
from firmware.cli import main
from firmware.hub import pairing as hub_pairing
from firmware.hub.brokerconf import SPECTATOR_USER, read_credentials
from firmware.link import pairing as pair
from firmware.link.mqtt import BrokerConfig, Client, LinkState
from firmware.station.service import Station
from firmware.tools.host import status as host_status
from tests.support.pairing import (
    SEATS,
    TABLE,
    Asker,
    Rig,
    T,
    drain,
    latest,
    pair_in_background,
    rig_fixture,
    stranger,
)

__all__ = ["rig_fixture"]  # the fixture "rig"


@dataclass
class Ground:
    """What a grinding run got."""

    hellos: int = 0
    challenges: int = 0
    matched: bool = False
    seconds: float = 0.0


def grind(asker: Asker, seats: list[str], seconds: float, target: str | None = None) -> Ground:
    """Hellos with fresh sessions, round the seats, for ``seconds``: each challenge is a
    guess at ``target`` (he works his code out and reveals only a match)."""
    out = Ground()
    start = time.monotonic()
    while time.monotonic() - start < seconds and not out.matched:
        seat = seats[out.hellos % len(seats)]
        session = f"grind-{out.hellos}"
        asker.hello(seat, session)
        out.hellos += 1
        reply = asker.reply(session)
        if reply is None or reply.step != "challenge":
            continue
        out.challenges += 1
        if target is not None and asker.code(reply) == target:
            asker.reveal(seat, session)
            out.matched = True
    out.seconds = time.monotonic() - start
    return out


def test_grinding_hellos_never_gets_the_code_on_the_stations_glass(rig: Rig) -> None:
    """A station asks to be p1 and is a little slow to reveal (a Pi on a busy Wi-Fi); the
    attacker, who reads every reply, answers its challenge with his own hello, then sends
    hellos with fresh sessions, working out each time whether the hub's code would be the
    one on the station's glass. His first hello refuses both requests, on the station and
    on the hub display; the seat then gives no challenge for SEAT_COOLDOWN seconds, so
    in the whole run he gets at most one guess (1 in 10,000) and is never paired."""
    screens = rig.watch(T.host_screen)
    station, attacker = Asker(stranger(rig)), Asker(stranger(rig))
    station.hello("p1", "station")
    challenge = station.reply("station")
    assert challenge is not None and challenge.step == "challenge"
    glass = station.code(challenge)  # what the real station's glass shows
    seconds = 4.0
    run = grind(attacker, ["p1"], seconds, target=glass)
    station.reveal("p1", "station")  # too late: its request was refused
    print(
        f"\ngrinding p1 for {run.seconds:.1f} s: {run.hellos} hellos, "
        f"{run.challenges} challenges, matched: {run.matched}"
    )
    bound = 1 + int(run.seconds / hub_pairing.SEAT_COOLDOWN)
    assert run.challenges <= bound, f"{run.challenges} guesses in {run.seconds:.1f} s"
    assert not run.matched
    told = station.reply("station")
    assert told is not None and (told.step, told.reason) == ("refused", "Two requests")
    latest(screens, T.host_screen, "p1: two requests, refused")
    assert rig.reloads == []
    assert not rig.host("pair", "p1", code=glass).ok


def test_grinding_every_seat_is_bounded_by_the_tables_bucket(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the seats' cooldown made short, the attacker goes round every seat: the table
    as a whole gives TABLE_BURST challenges, then one every TABLE_REFILL seconds (made
    short here too, to see it refill)."""
    monkeypatch.setattr(hub_pairing, "SEAT_COOLDOWN", 0.2)
    monkeypatch.setattr(hub_pairing, "TABLE_REFILL", 1.0)
    run = grind(Asker(stranger(rig)), list(SEATS), 4.0)
    bound = hub_pairing.TABLE_BURST + run.seconds / hub_pairing.TABLE_REFILL
    print(
        f"\ngrinding {len(SEATS)} seats for {run.seconds:.1f} s: {run.hellos} hellos, "
        f"{run.challenges} challenges (bound {bound:.1f})"
    )
    assert run.challenges <= bound
    assert run.challenges >= hub_pairing.TABLE_BURST  # the bucket, not something else
    assert rig.reloads == []


def test_ok_grants_the_request_shown_not_one_revealed_just_before(rig: Rig) -> None:
    """p2 pairs, "Pair p2? X" is on the hub display and the host is about to press ok; 300 ms
    before the press an attacker reveals a request for p1, which comes first in seat
    order. The press grants nobody (the screen just changed: it shows p1's request); the
    attacker gets no grant and the broker's users are unchanged."""
    screens = rig.watch(T.host_screen)
    glass, result, stop, thread = pair_in_background(rig.station_toml("p2"))
    code = glass.code()
    latest(screens, T.host_screen, f"Pair p2? {code}")
    attacker = Asker(stranger(rig))
    attacker.hello("p1", "evil")
    challenge = attacker.reply("evil")
    assert challenge is not None and challenge.step == "challenge"
    time.sleep(hub_pairing.SETTLE_SECONDS)  # the host has been looking at p2's code
    attacker.reveal("p1", "evil")
    time.sleep(0.3)
    before = (rig.broker.conf_dir / "passwd").read_bytes()  # type: ignore[operator]
    rig.panel.press("ok")
    latest(screens, T.host_screen, f"Pair p1? {attacker.code(challenge)}")
    assert attacker.reply("evil", timeout=2.0) is None  # no grant, no refusal: still shown
    assert rig.reloads == []
    assert (rig.broker.conf_dir / "passwd").read_bytes() == before  # type: ignore[operator]
    assert result == []  # p2 still waits for the host
    stop.set()
    thread.join(15)


def test_pair_with_the_code_compared_refuses_another_request(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    """The host reads p1's glass and runs `coffre host pair p1 <that code>`; meanwhile the
    request waiting for p1 is an attacker's (another code). Refused in one line, the
    attacker is not granted; the hub display still shows his request for the host to
    refuse."""
    attacker = Asker(stranger(rig))
    attacker.hello("p1", "evil")
    challenge = attacker.reply("evil")
    assert challenge is not None and challenge.step == "challenge"
    attacker.reveal("p1", "evil")
    theirs = attacker.code(challenge)
    latest(rig.watch(T.host_screen), T.host_screen, f"Pair p1? {theirs}")
    glass = f"{(int(theirs) + 1) % 10_000:04d}"  # what the real p1 would show: not his
    cli = ["host", "--table", TABLE, "--broker", "127.0.0.1", "--port", str(rig.broker.port)]
    cli += ["--username", "host", "--broker-dir", str(rig.broker.conf_dir)]
    status = main([*cli, "pair", "p1", glass])
    out, err = capsys.readouterr()
    assert status == 1, (out, err)
    assert out.strip() == f"{TABLE}: pair refused: p1 asks with another code: not paired"
    assert attacker.reply("evil", timeout=1.0) is None
    assert rig.reloads == []
    assert main([*cli, "pair", "p1"]) == 78  # no code: refused before anything is sent
    assert "pair needs the station and the code" in capsys.readouterr().err


def test_one_hello_for_an_online_seat_changes_neither_its_health_nor_a_start(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every station online; one anonymous hello for p2, never revealed. hub/status keeps
    p2 online (the request shown beside it, as `coffre host status` prints it) and a start
    goes ahead at once."""
    statuses = rig.watch(T.hub_status)
    passwords = read_credentials(rig.broker.conf_dir)  # type: ignore[arg-type]
    for seat in SEATS:
        user = f"{TABLE}.{seat}"
        config = BrokerConfig(
            "127.0.0.1", rig.broker.port, user, passwords[user], tls_ca=str(rig.broker.tls_ca)
        )
        station = Station(config, TABLE, seat, open_station(None, "mock"))
        rig.started.append(station)
        station.start()
        assert station.wait_screen(15)
    online = '"p1":{"state":"online"},"p2":{"state":"online"},"p3":{"state":"online"}'
    latest(statuses, T.hub_status, online)
    attacker = Asker(stranger(rig))
    attacker.hello("p2", "evil")
    reply = attacker.reply("evil")
    assert reply is not None and reply.step == "challenge"
    status = latest(statuses, T.hub_status, '"asking":true')
    assert status["stations"]["p2"] == {"state": "online", "asking": True}  # type: ignore[index]
    assert host_status(rig.broker.config("host"), TABLE, 10) == 0
    assert "  p2: online, a pairing request waits\n" in capsys.readouterr().out
    ack = rig.host("start", game="secret-identity", players=3)
    assert ack.ok, ack


def test_a_grant_that_cannot_be_sealed_changes_no_password(rig: Rig) -> None:
    """An attacker asks to be p1 with a low-order key (all zeros: no box can be sealed to
    it); the host, seeing "Pair p1? NNNN", presses ok. The hub says the pairing failed, and
    the broker's password file, the credentials kept and the broker are as they were."""
    screens = rig.watch(T.host_screen)
    conf = rig.broker.conf_dir
    assert conf is not None
    before = {p.name: p.read_bytes() for p in [conf / "passwd", *(conf / "credentials").iterdir()]}
    attacker = Asker(stranger(rig))
    attacker.public = bytes(32)
    attacker.hello("p1", "zero")
    challenge = attacker.reply("zero")
    assert challenge is not None and challenge.step == "challenge"
    attacker.reveal("p1", "zero")
    latest(screens, T.host_screen, f"Pair p1? {attacker.code(challenge)}")
    time.sleep(hub_pairing.SETTLE_SECONDS)  # the host compares (a careless one: ok)
    rig.panel.press("ok")
    latest(screens, T.host_screen, "p1: pairing failed")
    after = {p.name: p.read_bytes() for p in [conf / "passwd", *(conf / "credentials").iterdir()]}
    assert after == before
    assert rig.reloads == []


def first_login(config: BrokerConfig, timeout: float = 10.0) -> LinkState:
    """The broker's first answer to one login (connected, or why not)."""
    states: queue.Queue[LinkState] = queue.Queue()
    client = Client(config, f"first-{os.urandom(4).hex()}", [], on_state=states.put, quiet=True)
    client.start()
    try:
        while True:
            state = states.get(timeout=timeout)
            if state.state != "connecting":
                return state
    finally:
        client.stop()


def test_a_new_stations_first_login_is_taken(rig: Rig) -> None:
    """The broker reloads a little after the password file changes (on a Pi a systemd
    path unit does it: here, a SIGHUP 0.6 s later). The grant follows the reload: the
    station's very first login with what it was granted is taken."""
    door = rig.hub.pairing
    assert door is not None
    now_reload = door.reload
    door.reload = lambda: threading.Timer(0.6, now_reload).start()
    config = rig.station_toml("p3")
    glass, result, _stop, thread = pair_in_background(config)
    assert rig.host("pair", "p3", code=glass.code()).ok
    thread.join(15)
    assert result == [True]
    password = (config.parent / "station.password").read_text().strip()
    login = BrokerConfig(
        "127.0.0.1", rig.broker.port, f"{TABLE}.p3", password, tls_ca=str(config.parent / "ca.crt")
    )
    state = first_login(login)
    assert state.ok, state


def _strings(data: Any) -> Iterator[tuple[bool, str]]:
    """Every key (True) and string value (False) in a decoded JSON payload."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield True, str(key)
            yield from _strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value)
    elif isinstance(data, str):
        yield False, data


def _names_a_code(payload: bytes, codes: list[str]) -> bool:
    """Whether a payload says one of ``codes`` as a code is said (a value of its own, or
    "Pair p1? 4721" on a screen), or has a ``pairing`` field. Digits inside a longer
    token (a nonce, a certificate) are not a code said."""
    try:
        data = json.loads(payload)
    except ValueError:
        return any(code.encode() in payload for code in codes)
    for key, text in _strings(data):
        if (key and text == "pairing") or any(text == c or f" {c}" in text for c in codes):
            return True
    return False


def test_a_waiting_code_reaches_host_users_only(rig: Rig) -> None:
    """A station asks to be p1 and someone on the Wi-Fi to be p3: the host user reads
    both codes on the host screen. The enrol user (whose password is public), a station's
    user and the spectator, each subscribed to everything, read no code: not on
    ``public``, ``hub/status``, a screen or a reply; nor any station's request, from which
    a code is made."""
    host = rig.watch("#", "coffre/#", user="host-main")
    enrol = stranger(rig)
    enrol.subscribe(["#", "coffre/#"])
    others = {"enrol": enrol}
    for user in (f"{TABLE}.p2", SPECTATOR_USER):
        others[user] = rig.watch("#", "coffre/#", user=user)
    glass, _result, stop, thread = pair_in_background(rig.station_toml("p1"))
    attacker = Asker(stranger(rig))
    attacker.hello("p3", "evil")
    challenge = attacker.reply("evil")
    assert challenge is not None and challenge.step == "challenge"
    attacker.reveal("p3", "evil")
    codes = [glass.code(), attacker.code(challenge)]
    both = latest(host, T.host_screen, f'"pairing":{{"p1":"{codes[0]}","p3":"{codes[1]}"}}')
    assert _names_a_code(json.dumps(both).encode(), codes)  # the check can say yes
    time.sleep(1.0)  # whatever the hub sent meanwhile reaches every listener
    for user, client in others.items():
        seen = drain(client)
        topics = {m.topic for m in seen}
        heard = pair.enrol_topic(TABLE, "p1", "reply") if user == "enrol" else T.hub_status
        assert heard in topics, (user, topics)  # subscribed to everything it may read
        leaked = [m.topic for m in seen if _names_a_code(m.payload, codes)]
        assert leaked == [], (user, leaked)
        assert not any(t.endswith("/request") for t in topics), (user, topics)
    stop.set()
    thread.join(15)
