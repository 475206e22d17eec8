"""A venue on one mosquitto, as ``coffre broker-config`` sets it up: each hub's user only
on its own tables, each table's host user only on its table, the spectator on every
table's ``public`` and ``hub/status``; re-runs keep every credential and the CA; the
venue file's mistakes are one line.

"Sees nothing" is proved without sleeping: the forbidden message is published (and
acknowledged by the broker) before an allowed marker that the same subscriber then
receives; the broker delivers to one subscriber in order, so the forbidden one would
have arrived first.
"""

from __future__ import annotations

import itertools
import queue
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.hub.brokerconf import (
    SPECTATOR_USER,
    VENUE_FILE,
    Venue,
    host_user,
    hub_user,
    read_credentials,
    station_user,
)
from firmware.hub.certs import TlsFiles, write_tls_files
from firmware.hub.config import TableConfig
from firmware.hub.service import Hub
from firmware.hub.store import Store
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client
from firmware.link.pairing import enrol_user
from firmware.link.tls import CA_FILE, CERT_FILE, KEY_FILE
from firmware.tools import host
from firmware.tools.brokers import BrokerSetup, free_port, serve, start_venue_broker
from firmware.tools.simtable import PublicWatcher

GAME = "secret-identity"
#: Two hubs: bar plays t1 and t2, hall plays t3.
VENUE = Venue(
    {"bar": ["t1", "t2"], "hall": ["t3"]},
    {"t1": ["p1", "p2"], "t2": ["p1"], "t3": ["p1", "p2", "p3"]},
    venue_host=True,
)
VENUE_TOML = """\
venue_host = true

[[hub]]
name = "bar"

[[hub]]
name = "hall"

[[table]]
name = "t1"
hub = "bar"
stations = ["p1", "p2"]

[[table]]
name = "t3"
hub = "hall"
stations = ["p1", "p2", "p3"]
"""


_ids = itertools.count()


@pytest.fixture
def venue(tmp_path: Path) -> Iterator[BrokerSetup]:
    broker = start_venue_broker(tmp_path, VENUE)
    yield broker
    broker.stop()


def login(broker: BrokerSetup, user: str, subscriptions: list[str]) -> Client:
    client = Client(broker.config(user), f"test-{user}-{next(_ids)}", subscriptions)
    client.start()
    assert client.wait_connected(10), user
    return client


def until(client: Client, marker: bytes) -> list[tuple[str, bytes]]:
    """Every message before ``marker`` (whose payload says it is the last)."""
    seen = []
    while True:
        msg = client.inbox.get(timeout=10)
        assert msg is not None
        if msg.payload == marker:
            return seen
        if not msg.payload.startswith(READY):
            seen.append((msg.topic, msg.payload))


READY = b"ready-"


def ready(spy: Client, via: Client, topic: str) -> list[tuple[str, bytes]]:
    """Wait until ``spy``'s subscriptions are in force (SUBSCRIBE goes out on connecting, but
    another connection's message may overtake it): ``via`` publishes on ``topic``, which
    ``spy`` reads, until ``spy`` gets it. Returns what came first (retained messages)."""
    seen = []
    for attempt in range(100):
        publish(via, topic, READY + str(attempt).encode())
        try:
            while (msg := spy.inbox.get(timeout=0.1)) is not None:
                if msg.payload.startswith(READY):
                    return seen
                seen.append((msg.topic, msg.payload))
        except queue.Empty:
            continue
    raise AssertionError(f"{spy.client_id}'s subscriptions never took effect")


def publish(client: Client, topic: str, payload: bytes, *, retain: bool = False) -> None:
    """Publish and wait for the broker's answer (it has routed or dropped the message)."""
    client.publish(topic, payload, retain=retain).wait_for_publish(5)


def every_topic(table: str, stations: list[str]) -> list[str]:
    t = proto.Topics(table)
    ours = [t.public, t.hub_status, t.host_command, t.host_screen, t.host_ack]
    leaves = ("input", "status", "screen", "ack")
    return ours + [t.station(s, leaf) for s in stations for leaf in leaves]


# --- who may use which topics --------------------------------------------------------------


def test_a_hubs_user_cannot_write_or_read_another_hubs_tables(venue: BrokerSetup) -> None:
    """hub-bar writing on t3 reaches nobody; hub-bar subscribing to t3 (or #) gets nothing
    of t3, while each hub's own table works both ways."""
    t1, t3 = proto.Topics("t1"), proto.Topics("t3")
    hall = login(venue, hub_user("hall"), [f"{t3.base}/#"])
    assert ready(hall, hall, t3.public) == []
    bar = login(venue, hub_user("bar"), [])
    for topic in every_topic("t3", VENUE.stations["t3"]):
        publish(bar, topic, b"from bar", retain=True)
    publish(hall, t3.public, b"marker")
    assert until(hall, b"marker") == [], "hub bar's messages reached hub hall's table"

    publish(hall, t3.station("p1", "screen"), b"secret of t3", retain=True)
    publish(hall, t3.public, b"t3 public", retain=True)
    spy = login(venue, hub_user("bar"), ["#", f"{t3.base}/#", "coffre/+/public", t1.public])
    assert ready(spy, spy, t1.public) == [], "hub bar got hub hall's retained messages"
    publish(hall, t3.hub_status, b"t3 status")
    publish(spy, t1.public, b"marker")
    assert until(spy, b"marker") == [], "hub bar read hub hall's table"
    for client in (hall, bar, spy):
        client.stop()


def test_the_spectator_reads_every_tables_public_and_hub_status_only(venue: BrokerSetup) -> None:
    """Retained messages on every topic of every table: the spectator's wildcards get the
    ``public`` and ``hub/status`` of each table, nothing else, and it cannot write."""
    hubs = {hub: login(venue, hub_user(hub), []) for hub in VENUE.hubs}
    for hub, tables in VENUE.hubs.items():
        for table in tables:
            for topic in every_topic(table, VENUE.stations[table]):
                publish(hubs[hub], topic, topic.encode(), retain=True)
    spectator = login(venue, SPECTATOR_USER, ["#", "coffre/#", "coffre/+/host/+", "$SYS/#"])
    seen = ready(spectator, hubs["bar"], proto.Topics("t1").public)
    publish(spectator, proto.Topics("t1").public, b"forged", retain=True)
    publish(hubs["bar"], proto.Topics("t1").public, b"marker")
    seen += until(spectator, b"marker")
    want = [(t.public, t.hub_status) for t in map(proto.Topics, VENUE.tables())]
    # (overlapping subscriptions may bring a message twice: compare the topics)
    assert {topic for topic, _ in seen} == {x for pair in want for x in pair}
    assert all(payload == topic.encode() for topic, payload in seen), "a write got through"
    for client in (*hubs.values(), spectator):
        client.stop()


def test_one_tables_host_cannot_command_another_table(
    venue: BrokerSetup,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two real hubs: host-t1's start on t3 never reaches t3's hub, host-t3's does; ``coffre
    host --table t3`` finds host-t3 in broker-config's folder by default."""
    hubs = [
        Hub(venue.config(hub_user("bar")), [TableConfig("t1", ["p1", "p2"])], tmp_path / "b.db"),
        Hub(venue.config(hub_user("hall")), [TableConfig("t3", ["p1", "p2", "p3"])],
            tmp_path / "h.db"),
    ]  # fmt: skip
    watch = PublicWatcher(venue.config(SPECTATOR_USER), "t3")
    for hub in hubs:
        hub.start()
    watch.start()
    try:
        watch.wait_hub_ready()
        t3 = proto.Topics("t3")
        intruder = login(venue, host_user("t1"), [t3.host_ack, proto.Topics("t1").public])
        bar = login(venue, hub_user("bar"), [])
        ready(intruder, bar, proto.Topics("t1").public)
        bar.stop()
        start = proto.HostCommand(cmd="start", game=GAME, players=3, id="from-t1")
        publish(intruder, t3.host_command, proto.encode(start))
        # After the dropped start: a command of t3's own host, answered by t3's hub.
        ack = host.send(venue.config(host_user("t3")), "t3", proto.HostCommand(cmd="next", id="n1"))
        assert ack == proto.Ack("n1", False, "No game running")
        assert Store(tmp_path / "h.db").current_game("t3") is None, "t1's host started t3"
        got = []
        while not intruder.inbox.empty():
            msg = intruder.inbox.get_nowait()
            got += [msg.topic] if msg is not None and msg.topic.startswith(t3.base) else []
        assert got == [], "host-t1 read t3's answers"
        intruder.stop()

        # On the broker's machine broker-config's folder is found without --broker-dir.
        monkeypatch.setattr(host, "BROKER_DIR", venue.conf_dir)
        assert main(["host", "--port", str(venue.port), "--table", "t3", "next"]) == 1
        assert capsys.readouterr().out == "t3: next refused: No game running\n"
        base = ["host", "--broker-dir", str(venue.conf_dir), "--port", str(venue.port)]
        status = main([*base, "--table", "t3", "start", "--game", GAME, "--players", "3"])
        assert (status, capsys.readouterr().out) == (0, "t3: start done: Game started\n")
        watch.wait(lambda p: p.get("game") == GAME)
        as_t1 = [*base, "--username", host_user("t1"), "--table", "t3", "abort"]
        assert main(as_t1) == host.EX_UNAVAILABLE
        assert capsys.readouterr().err == (
            f"coffre: table t3: no hub on this broker has it (or user {host_user('t1')} "
            "may not see it)\n"
        )
        assert watch.public.get("game") == GAME, "the game runs on"
    finally:
        watch.stop()
        for hub in hubs:
            hub.stop()


# --- re-runs keep what works ------------------------------------------------------------


def broker_config(out: Path, *args: str) -> int:
    return main(["broker-config", "--out", str(out), "--hostname", "127.0.0.1", *args])


def tls_of(out: Path) -> TlsFiles:
    return TlsFiles(out / CA_FILE, out / CERT_FILE, out / KEY_FILE)


def refused(out: Path, port: int, passwords: dict[str, str]) -> list[str]:
    """The users of ``passwords`` that a mosquitto on ``out``'s files refuses."""
    broker = serve(out, port, tls_of(out))
    try:
        bad = []
        for user, password in passwords.items():
            config = BrokerConfig("127.0.0.1", port, user, password, tls_ca=str(out / CA_FILE))
            client = Client(config, f"rerun-{user}", [])
            client.start()
            if not client.wait_connected(5):
                bad.append(user)
            client.stop()
        return bad
    finally:
        broker.stop()


def test_re_runs_keep_every_credential_and_the_ca(tmp_path: Path) -> None:
    """The same venue again, plus a table, minus a station: every user still described
    logs in with its first password, the removed station does not, ca.crt is the same."""
    out, port, venue_file = tmp_path / "broker", free_port(), tmp_path / "venue.toml"
    venue_file.write_text(VENUE_TOML)
    port_args = ("--port", str(port), "--venue", str(venue_file))
    assert broker_config(out, *port_args) == 0
    first, ca = read_credentials(out), (out / CA_FILE).read_bytes()
    assert refused(out, port, first) == []

    assert broker_config(out, *port_args) == 0
    assert read_credentials(out) == first
    venue_file.write_text(
        VENUE_TOML + '\n[[table]]\nname = "t4"\nhub = "hall"\nstations = ["p1"]\n'
    )
    assert broker_config(out, *port_args) == 0
    added = read_credentials(out)
    assert {u: added[u] for u in first} == first
    assert set(added) - set(first) == {host_user("t4"), station_user("t4", "p1"), enrol_user("t4")}
    venue_file.write_text(VENUE_TOML.replace('"p1", "p2", "p3"', '"p1", "p3"'))
    assert broker_config(out, *port_args) == 0
    gone = station_user("t3", "p2")
    assert not (out / "credentials" / f"{gone}.password").exists()
    dropped = {gone, host_user("t4"), station_user("t4", "p1"), enrol_user("t4")}  # t4 too
    assert set(refused(out, port, added)) == dropped
    assert (out / CA_FILE).read_bytes() == ca


def old_install(out: Path) -> dict[str, str]:
    """A folder as the single-table broker-config wrote it (before venues): one password
    file per user, the CA with its key, no venue.toml."""
    users = ["hub", "host", "spectator", "main.p1", "main.p2"]
    (out / "credentials").mkdir(parents=True, mode=0o700)
    for user in users:
        (out / "credentials" / f"{user}.password").write_text(f"old-{user}-secret\n")
    write_tls_files(out, ["127.0.0.1"], keep_ca=True)
    return {user: f"old-{user}-secret" for user in users}


@pytest.mark.parametrize("how", ["options", "venue"])
def test_an_install_from_before_venues_keeps_every_credential(tmp_path: Path, how: str) -> None:
    """Re-run on an old single-table folder, with the same options or with a venue file
    that adds a hub: hub, host, spectator and the stations log in with their old
    passwords, the CA is the same, and the old hub still plays its table."""
    out, port = tmp_path / "broker", free_port()
    old = old_install(out)
    ca = (out / CA_FILE).read_bytes()
    if how == "options":
        args = ["--table", "main", "--stations", "p1,p2"]
    else:
        (tmp_path / "v.toml").write_text(
            'venue_host = true\n[[hub]]\nname = "hub"\n[[hub]]\nname = "bar"\n'
            '[[table]]\nname = "main"\nhub = "hub"\nstations = ["p1", "p2"]\n'
            '[[table]]\nname = "t2"\nhub = "bar"\nstations = ["p1"]\n'
        )
        args = ["--venue", str(tmp_path / "v.toml")]
    assert broker_config(out, "--port", str(port), *args) == 0
    assert (out / CA_FILE).read_bytes() == ca
    assert {u: read_credentials(out)[u] for u in old} == old
    assert refused(out, port, old) == []
    acl = (out / "acl").read_text()
    assert "user hub\ntopic readwrite coffre/main/#\n" in acl
    assert "user host\ntopic write coffre/main/host/command\n" in acl
    assert (out / VENUE_FILE).is_file()


def test_several_tables_from_the_options_and_a_table_of_another_hub(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--table t1,t2`` gives both tables their users; ``--table`` on a table that a venue
    file gave to another hub is one line and changes nothing."""
    out = tmp_path / "broker"
    assert broker_config(out, "--no-tls", "--table", "t1,t2", "--stations", "p1,p2") == 0
    users = set(read_credentials(out))
    assert {station_user(t, s) for t in ("t1", "t2") for s in ("p1", "p2")} <= users
    assert {"hub", "host", host_user("t1"), host_user("t2")} <= users
    assert 'username = "hub"' in capsys.readouterr().out

    (tmp_path / "v.toml").write_text(VENUE_TOML)
    assert broker_config(out, "--no-tls", "--venue", str(tmp_path / "v.toml")) == 0
    printed = capsys.readouterr().out
    assert 'username = "hub-bar"' in printed and 'username = "hub-hall"' in printed
    assert "removed (their password files are deleted): table t2" in printed
    assert "moved: table t1 to hub bar\n" in printed
    before = snapshot(out)
    assert broker_config(out, "--no-tls", "--table", "t3", "--stations", "p1") == 64
    assert capsys.readouterr().err == (
        "coffre: broker-config: table t3 is played by hub hall: change it in a venue file "
        "(--venue)\n"
    )
    assert snapshot(out) == before


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- the venue file's mistakes ------------------------------------------------------------

BAR = '[[hub]]\nname = "bar"\n'
HUBS = BAR + '[[hub]]\nname = "hall"\n'


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (BAR + '[[table]]\nname = "t1"\nhub = "bar"\nseats = ["p1"]\n',
         "unknown key seats in [[table]] 1"),
        (HUBS + '[[table]]\nname = "t1"\nhub = "bar"\n[[table]]\nname = "t1"\nhub = "hall"\n',
         "table t1 is owned by two hubs: bar and hall"),
        (BAR + '[[table]]\nname = "t1"\nhub = "bar"\nstations = ["p1", "p2", "p1"]\n',
         "table t1: station p1 is listed twice"),
        (HUBS + '[[table]]\nname = "t1"\nhub = "pub"\n',
         "table t1: unknown hub pub (hubs: bar, hall)"),
        ('[[hub]]\nname = "bar"\ntables = ["t1"]\n',
         "unknown key tables in [[hub]] 1 (a table names its hub)"),
        (HUBS + '[[table]]\nname = "t1"\nhub = "bar"\n', "hub hall plays no table"),
        (BAR + '[[table]]\nname = "T 1"\nhub = "bar"\n',
         "bad table 'T 1': use a-z, 0-9 and '-', at most 32"),
    ],
)  # fmt: skip
def test_a_venue_files_mistake_is_one_line_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, error: str
) -> None:
    """Exit 78 (EX_CONFIG), one line naming the file and the mistake, the folder as it was."""
    out, bad = tmp_path / "broker", tmp_path / "bad.toml"
    (tmp_path / "good.toml").write_text(VENUE_TOML)
    assert broker_config(out, "--no-tls", "--venue", str(tmp_path / "good.toml")) == 0
    capsys.readouterr()
    before = snapshot(out)
    bad.write_text(text)
    assert broker_config(out, "--no-tls", "--venue", str(bad)) == 78
    assert capsys.readouterr() == ("", f"coffre: {bad}: {error}\n")
    assert snapshot(out) == before


def test_the_example_venue_file_is_valid() -> None:
    """deploy/venue.toml, the documented example, reads as two hubs and three tables."""
    from firmware.hub.brokerconf import read_venue

    root = Path(__file__).resolve().parents[2]
    example = read_venue(root / "deploy" / "venue.toml")
    assert example.hubs == {"bar": ["t1", "t2"], "hall": ["t3"]} and example.venue_host
