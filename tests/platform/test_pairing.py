"""Pairing and every seat's health, whole-table: a real mosquitto (TLS, broker-config's
files), the hub, stations that pair over the enrol user (docs/pairing.md)."""

from __future__ import annotations

import stat
import threading
import time

import pytest

from device.base import ReaderError
from device.factory import open_station
from device.mock import MockDisplay
from firmware.hub import pairing as hub_pairing
from firmware.hub.brokerconf import read_credentials
from firmware.hub.pairing import SETTLE_SECONDS
from firmware.link import pairing as pair
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client
from firmware.station import pairing as station_pairing
from firmware.station.boot import Boot, Started
from firmware.station.config import load_station
from firmware.station.service import Station
from firmware.tools.host import status as host_status
from tests.support.pairing import (
    TABLE,
    Glass,
    Rig,
    T,
    drain,
    latest,
    next_reply,
    pair_in_background,
    rig_fixture,
    stranger,
)

__all__ = ["rig_fixture"]  # the fixture "rig"


def test_pairing_confirmed_gives_the_station_its_password_and_ca_and_it_plays(rig: Rig) -> None:
    """The station shows a code, the hub display shows "Pair p1? <same code>", the host
    confirms: the station stores its own password and the table's CA (0600), the broker
    is reloaded (not restarted), and the station connects and gets the hub's screen."""
    screens, statuses = rig.watch(T.host_screen), rig.watch(T.hub_status)
    config = rig.station_toml("p1")
    glass, result, _stop, thread = pair_in_background(config)
    code = glass.code()
    latest(screens, T.host_screen, f"Pair p1? {code}")
    status = latest(statuses, T.hub_status, '"pairing"')
    assert status["stations"]["p1"] == {"state": "pairing"}  # type: ignore[index]
    ack = rig.host("pair", "p1", code=code)
    assert ack.ok, ack
    thread.join(15)
    assert result == [True]
    folder = config.parent
    for name in ("station.password", "ca.crt"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    assert (folder / "ca.crt").read_text() == (rig.broker.conf_dir / "ca.crt").read_text()  # type: ignore[operator]
    password = (folder / "station.password").read_text().strip()
    assert read_credentials(rig.broker.conf_dir)[f"{TABLE}.p1"] == password  # type: ignore[arg-type]
    assert len(rig.reloads) == 1
    assert "Paired" in glass.lines
    settings = load_station(config)
    station = Station(settings.broker, TABLE, "p1", open_station(None, "mock"))
    rig.started.append(station)
    station.start()
    assert station.wait_screen(15)
    latest(statuses, T.hub_status, '"p1":{"state":"online"}')


def test_the_panel_ok_confirms_the_code_it_shows(rig: Rig) -> None:
    """On the hub's own panel, ok while "Pair p2? NNNN" is shown pairs p2."""
    screens = rig.watch(T.host_screen)
    glass, result, _stop, thread = pair_in_background(rig.station_toml("p2"))
    latest(screens, T.host_screen, f"Pair p2? {glass.code()}")
    time.sleep(SETTLE_SECONDS)  # the host looks at both codes before pressing
    rig.panel.press("ok")
    thread.join(15)
    assert result == [True]
    latest(screens, T.host_screen, "p2 paired")


def test_pairing_refused_is_one_line_on_both_screens_and_gives_nothing(rig: Rig) -> None:
    """The host refuses: the station says "Refused by the host", the hub display
    "p1: pairing refused", and no password file is written."""
    screens = rig.watch(T.host_screen)
    config = rig.station_toml("p1")
    before = read_credentials(rig.broker.conf_dir)  # type: ignore[arg-type]
    glass, result, _stop, thread = pair_in_background(config)
    glass.code()
    ack = rig.host("refuse", "p1")
    assert ack.ok, ack
    thread.join(15)
    assert result == [False]
    assert "Refused by the host" in glass.lines
    latest(screens, T.host_screen, "p1: pairing refused")
    assert not (config.parent / "station.password").exists()
    assert read_credentials(rig.broker.conf_dir) == before  # type: ignore[arg-type]
    assert rig.reloads == []


def test_pairing_expires_and_says_so_on_both_screens(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody confirms: the pairing expires, "Pairing expired" on the station and
    "p3: pairing expired" on the hub; a late confirmation pairs nothing."""
    monkeypatch.setattr(pair, "PAIR_SECONDS", 1.5)
    screens = rig.watch(T.host_screen)
    config = rig.station_toml("p3")
    glass, result, _stop, thread = pair_in_background(config)
    glass.code()
    thread.join(15)
    assert result == [False]
    assert "Pairing expired" in glass.lines
    latest(screens, T.host_screen, "p3: pairing expired")
    ack = rig.host("pair", "p3")
    assert not ack.ok and "No pairing waits" in ack.message
    assert not (config.parent / "station.password").exists()


def test_a_stranger_cannot_pair_without_the_host_nor_read_a_granted_password(rig: Rig) -> None:
    """A stranger asking to be p2 gets a challenge and a code, nothing more, until the
    host confirms (it does not); reading p1's granted reply gives a box it cannot open
    (the password is not in it in clear); it reads no station's screen."""
    spy = stranger(rig)
    private, public = pair.keypair()
    nonce = b"\x01" * 16
    commit = pair.commitment(public, nonce)
    hello = pair.Request("hello", "s1", pub=pair.b64(public), commit=commit, suite=pair.SUITE)
    spy.publish(pair.enrol_topic(TABLE, "p2", "request"), pair.encode(hello))
    challenge = pair.decode_reply(next_reply(spy, "p2/reply"))
    assert challenge.step == "challenge" and challenge.ca.startswith("-----BEGIN CERTIFICATE")
    spy.publish(
        pair.enrol_topic(TABLE, "p2", "request"),
        pair.encode(pair.Request("reveal", "s1", nonce=pair.b64(nonce))),
    )
    # Meanwhile the real p1 pairs, with the host's yes.
    config = rig.station_toml("p1")
    glass, result, _stop, thread = pair_in_background(config)
    assert rig.host("pair", "p1", code=glass.code()).ok
    thread.join(15)
    assert result == [True]
    password = (config.parent / "station.password").read_text().strip()
    granted = pair.decode_reply(next_reply(spy, "p1/reply", step="granted"))
    assert password.encode() not in granted.box.encode()
    with pytest.raises(pair.BoxError):
        pair.unseal(private, pair.unb64(granted.box))
    # The stranger's own request never got credentials: no reply but the challenge.
    assert len(rig.reloads) == 1  # p1's grant only
    assert not any(m.topic.endswith("p2/reply") for m in drain(spy))
    assert all(not m.topic.endswith("/screen") for m in drain(spy))


def test_a_station_with_the_first_hand_written_box_is_told_to_update(rig: Rig) -> None:
    """A hello that names no box (the first version's, which no hub seals now) is refused
    with one line ("Update this station"), the hub display says the seat failed; nothing
    waits for the host."""
    screens = rig.watch(T.host_screen)
    spy = stranger(rig)
    _, public = pair.keypair()
    old = pair.Request("hello", "v1", pub=pair.b64(public), commit="00")
    spy.publish(pair.enrol_topic(TABLE, "p3", "request"), pair.encode(old))
    reply = pair.decode_reply(next_reply(spy, "p3/reply"))
    assert (reply.step, reply.reason) == ("refused", "Update this station")
    latest(screens, T.host_screen, "p3: pairing failed")
    assert not rig.host("pair", "p3").ok


def test_two_requests_for_one_seat_are_both_refused(rig: Rig) -> None:
    """A stranger asking to be p1 while p1 pairs: both refused ("Two requests"), on
    the station's glass and the hub display; nobody is paired."""
    screens = rig.watch(T.host_screen)
    glass, result, _stop, thread = pair_in_background(rig.station_toml("p1"))
    glass.code()
    spy = stranger(rig)
    _, public = pair.keypair()
    hello = pair.Request("hello", "evil", pub=pair.b64(public), commit="00", suite=pair.SUITE)
    spy.publish(pair.enrol_topic(TABLE, "p1", "request"), pair.encode(hello))
    thread.join(15)
    assert result == [False]
    assert "Two requests" in glass.lines
    latest(screens, T.host_screen, "p1: two requests, refused")
    assert not rig.host("pair", "p1").ok


def test_every_seats_health_and_start_with_a_seat_missing(rig: Rig) -> None:
    """p1 online, p2 never seen, p3 in error with its own reason: hub/status says each,
    the hub display lists the seats not ready; start with them refuses once and names
    them, the same start again goes ahead; p1 stopping shows offline."""
    screens, statuses = rig.watch(T.host_screen), rig.watch(T.hub_status)
    passwords = read_credentials(rig.broker.conf_dir)  # type: ignore[arg-type]
    p1 = Station(
        BrokerConfig(
            "127.0.0.1",
            rig.broker.port,
            "main.p1",
            passwords["main.p1"],
            tls_ca=str(rig.broker.tls_ca),
        ),
        TABLE,
        "p1",
        open_station(None, "mock"),
    )
    rig.started.append(p1)
    p1.start()
    assert p1.wait_screen(15)
    p3 = Client(
        BrokerConfig(
            "127.0.0.1",
            rig.broker.port,
            "main.p3",
            passwords["main.p3"],
            tls_ca=str(rig.broker.tls_ca),
        ),
        "p3-client",
        [],
    )
    rig.started.append(p3)
    p3.start()
    assert p3.wait_connected(10)
    error = proto.StationStatus(state="error", reason="no reader")
    p3.publish(T.station("p3", "status"), proto.encode(error), retain=True)
    status = latest(statuses, T.hub_status, '"error"')
    assert status["stations"] == {
        "p1": {"state": "online"},
        "p2": {"state": "never-seen"},
        "p3": {"state": "error", "reason": "no reader"},
    }
    latest(screens, T.host_screen, "Not ready: p2 p3")
    refused = rig.host("start", game="secret-identity", players=3)
    assert not refused.ok
    assert "p2 p3" in refused.message and "Start again" in refused.message
    again = rig.host("start", game="secret-identity", players=3)
    assert again.ok, again
    p1.stop()
    status = latest(statuses, T.hub_status, '"p1":{"state":"offline"}')
    assert status["stations"]["p2"] == {"state": "never-seen"}  # type: ignore[index]


def test_a_station_service_pairs_at_boot_then_starts(rig: Rig) -> None:
    """``coffre station --retry`` as the unit runs it (Boot with pairing): with no password
    file nor ca.crt it pairs, the host's ok on the panel grants it, and it starts with
    the files it was given."""
    screens = rig.watch(T.host_screen)
    config = rig.station_toml("p3")
    glass = MockDisplay()
    boot = Boot(
        config,
        open_devices=lambda _pins, _backend: open_station(None, "mock"),
        open_display=lambda _pins, _backend: glass,
        retry_seconds=1,
        pair=True,
    )
    stop = threading.Event()
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(boot.run(stop)), daemon=True)
    thread.start()
    latest(screens, T.host_screen, "Pair p3? ")
    time.sleep(SETTLE_SECONDS)  # the host looks at both codes before pressing
    rig.panel.press("ok")
    thread.join(20)
    stop.set()
    assert outcome and isinstance(outcome[0], Started), outcome
    started = outcome[0]
    assert (
        started.settings.broker.password == (config.parent / "station.password").read_text().strip()
    )
    assert glass.frames, "the code was never drawn on the glass"


def test_a_station_whose_reader_does_not_answer_says_so_to_the_hub(rig: Rig) -> None:
    """A paired station whose reader fails at start: its retained status says error with
    its own reason, hub/status carries it, the hub display names it."""
    screens, statuses = rig.watch(T.host_screen), rig.watch(T.hub_status)
    config = rig.station_toml("p2")
    password = read_credentials(rig.broker.conf_dir)["main.p2"]  # type: ignore[arg-type]
    (config.parent / "station.password").write_text(password + "\n")
    (config.parent / "ca.crt").write_bytes(rig.broker.tls_ca.read_bytes())  # type: ignore[union-attr]

    def no_reader(_pins: object, _backend: str | None) -> object:
        raise ReaderError("no reader")

    boot = Boot(
        config,
        open_devices=no_reader,  # type: ignore[arg-type]
        open_display=lambda _pins, _backend: MockDisplay(),
        retry_seconds=0.5,
        pair=True,
    )
    stop = threading.Event()
    thread = threading.Thread(target=boot.run, args=(stop,), daemon=True)
    thread.start()
    try:
        status = latest(statuses, T.hub_status, '"error"')
        assert status["stations"]["p2"] == {"state": "error", "reason": "no reader"}  # type: ignore[index]
        latest(screens, T.host_screen, "Not ready: p1 p2 p3")
    finally:
        stop.set()
        thread.join(10)


def test_coffre_host_status_shows_the_code_and_every_seat(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    """`coffre host status` prints the hub display ("Pair p1? <code>") and each seat's
    health, as the host reads them away from the hub."""
    screens = rig.watch(T.host_screen)
    glass, _result, stop, thread = pair_in_background(rig.station_toml("p1"))
    code = glass.code()
    latest(screens, T.host_screen, f"Pair p1? {code}")
    assert host_status(rig.broker.config("host"), TABLE, 10) == 0
    out = capsys.readouterr().out
    assert f"main: hub ready: Pair p1? {code}" in out
    assert "  p1: pairing" in out and "  p2: never-seen" in out
    stop.set()
    thread.join(15)


def test_a_stale_hello_without_its_reveal_costs_the_station_one_round(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hello that never revealed (one the broker kept while the hub was down) is not
    replaced by the station's newer one (a replacement is a fresh guess at the code):
    both are refused on the station's glass and the hub display, the seat cools down, and
    the station's next ask pairs with the host's ok."""
    monkeypatch.setattr(hub_pairing, "SEAT_COOLDOWN", 1.0)
    screens = rig.watch(T.host_screen)
    spy = stranger(rig)
    _, public = pair.keypair()
    old = pair.Request("hello", "old", pub=pair.b64(public), commit="00", suite=pair.SUITE)
    spy.publish(pair.enrol_topic(TABLE, "p2", "request"), pair.encode(old))
    assert pair.decode_reply(next_reply(spy, "p2/reply")).session == "old"
    glass, result, stop = Glass(), [], threading.Event()
    config = rig.station_toml("p2")

    def run() -> None:
        result.append(station_pairing.pair_until_done(config, glass, stop, again=1.5))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    latest(screens, T.host_screen, "p2: two requests, refused")
    code = glass.code(timeout=20)
    assert "Two requests" in glass.lines
    assert rig.host("pair", "p2", code=code).ok
    thread.join(15)
    stop.set()
    assert result == [True]


def test_a_refused_station_asks_again_once_its_seat_has_cooled_down() -> None:
    """After a refusal the hub gives the seat no challenge for SEAT_COOLDOWN seconds; the
    station's own next ask comes no sooner, so an honest station is not told "Too soon"."""
    assert hub_pairing.SEAT_COOLDOWN <= station_pairing.AGAIN_SECONDS


def test_every_waiting_code_is_on_the_host_screen_and_in_coffre_host_status(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    """p1 asks, then p2: the hub display's title names p1's code only, but the host screen
    (which only host users read) carries both codes, and again whenever one goes (p2
    refused, p1 granted); `coffre host status` prints each beside its seat."""
    screens = rig.watch(T.host_screen)
    first, result1, _stop1, thread1 = pair_in_background(rig.station_toml("p1"))
    code1 = first.code()
    assert latest(screens, T.host_screen, f"Pair p1? {code1}")["pairing"] == {"p1": code1}
    second, result2, _stop2, thread2 = pair_in_background(rig.station_toml("p2"))
    code2 = second.code()
    both = latest(screens, T.host_screen, f'"p2":"{code2}"')
    assert both["pairing"] == {"p1": code1, "p2": code2}
    assert both["title"] == f"Pair p1? {code1}"  # the glass shows the first seat's
    assert host_status(rig.broker.config("host"), TABLE, 10) == 0
    out = capsys.readouterr().out
    assert f"  p1: pairing, code {code1}\n" in out and f"  p2: pairing, code {code2}\n" in out
    assert "  p3: never-seen\n" in out
    assert rig.host("refuse", "p2").ok
    latest(screens, T.host_screen, f'"pairing":{{"p1":"{code1}"}}')  # p2's went, p1's stays
    assert rig.host("pair", "p1", code=code1).ok
    now = latest(rig.watch(T.host_screen), T.host_screen, '"title"')  # the retained one
    assert "pairing" not in now, now  # being granted (or granted): it waits no more
    assert "pairing" not in latest(screens, T.host_screen, '"title":"p1 paired"')
    thread1.join(15)
    thread2.join(15)
    assert (result1, result2) == ([True], [False])
