"""Pairing on the station: ask the hub to join, show the code, store what it grants.

A station whose ``station.toml`` names a password file or a ``ca.crt`` that is not there
yet pairs instead of waiting for someone to copy them (docs/pairing.md): it dials the
broker as the table's enrol user, shows "Pair code 4721" on its glass, and once the host
confirms the same code on the hub it writes its password and the table's CA (0600, the
service's own) where ``station.toml`` says, then starts as usual. A refused or expired
pairing is one line on the glass, and the station asks again a little later.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from firmware.link import pairing as pair
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client

log = logging.getLogger("coffre.station")

#: How long to wait for the hub's challenge before saying the hub does not answer.
HELLO_WAIT = 20.0
#: How often the hello is sent again meanwhile (the hub may be starting).
HELLO_EVERY = 5.0
#: Seconds before asking again after a refused or expired pairing: no shorter than the
#: hub's cooldown of a seat after such a pairing (firmware.hub.pairing.SEAT_COOLDOWN).
AGAIN_SECONDS = 30.0
#: How long past the challenge's time the station waits for the host's answer: the
#: hub's grant may follow the host's yes by up to 10 s (it goes out once the broker takes
#: the new password).
ANSWER_MARGIN = 15.0

Show = Callable[[str, list[str]], None]


@dataclass(frozen=True)
class Wanted:
    """What a station needs to pair, read from its (unchecked) ``station.toml``."""

    table: str
    station: str
    host: str
    port: int
    username: str
    password_file: Path
    ca_file: Path | None


def wanted(config: Path) -> Wanted | None:
    """The pairing this config calls for: its password file or ``ca.crt`` is missing and
    it names a table, a station and a broker (None: nothing to pair, or a mistake that
    the normal start reports)."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
        station, broker = data["station"], data.get("broker", {})
        table, sid = proto.check_name(station["table"], "table"), proto.check_name(station["id"])
        password_file = Path(broker["password_file"])
        ca = broker.get("ca_file")
        ca_file = Path(ca) if isinstance(ca, str) else None
        host = str(broker.get("host", "127.0.0.1"))
        port = int(broker.get("port", 8883 if ca_file else 1883))
        username = str(broker.get("username", f"{table}.{sid}"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError):
        return None
    if password_file.is_file() and (ca_file is None or ca_file.is_file()):
        return None
    return Wanted(table, sid, host, port, username, password_file, ca_file)


def enrol(want: Wanted, show: Show, stop: threading.Event) -> pair.Grant | str:
    """One pairing: the grant, or the one line that says why not."""
    private, public = pair.keypair()
    nonce, session = os.urandom(16), os.urandom(8).hex()
    reply_topic = pair.enrol_topic(want.table, want.station, "reply")
    request_topic = pair.enrol_topic(want.table, want.station, "request")
    config = BrokerConfig(
        host=want.host,
        port=want.port,
        username=pair.enrol_user(want.table),
        password=pair.ENROL_PASSWORD,
        tls_unverified=want.ca_file is not None,
    )
    client = Client(config, f"coffre-enrol-{want.table}-{want.station}-{session}", [reply_topic])
    title = f"coffre {want.station}"
    show(title, ["Pairing: asking", f"{want.host}..."])
    client.start()
    try:
        hello = pair.hello(session, public, nonce)
        challenge = _await(
            client, session, stop, HELLO_WAIT, resend=(request_topic, pair.encode(hello))
        )
        if isinstance(challenge, str):
            return challenge
        if challenge.step != "challenge":
            return challenge.reason or "Refused"
        try:
            hub_nonce = pair.unb64(challenge.nonce, 16)
        except proto.ProtocolError:
            return "Pairing failed"
        code = pair.pair_code(public, challenge.ca, nonce, hub_nonce)
        client.publish(request_topic, pair.encode(pair.reveal(session, nonce)))
        log.info("%s: pairing code %s: confirm it on the hub", want.station, code)
        show(title, [f"Pair code {code}", "Confirm it on", "the hub", f"Seat {want.station}"])
        answer = _await(client, session, stop, challenge.expires_in + ANSWER_MARGIN)
        if isinstance(answer, str):
            return "Pairing expired" if answer == "Hub not answering" else answer
        if answer.step != "granted":
            return answer.reason or "Refused"
        try:
            grant = msgspec.json.decode(
                pair.unseal(private, pair.unb64(answer.box)), type=pair.Grant
            )
        except (pair.BoxError, proto.ProtocolError, msgspec.MsgspecError):
            return "Pairing failed"
        if grant.ca.strip() != challenge.ca.strip():
            return "Pairing failed"  # not the CA the code was made with
        return grant
    finally:
        client.stop()


def _await(
    client: Client,
    session: str,
    stop: threading.Event,
    seconds: float,
    resend: tuple[str, bytes] | None = None,
) -> pair.Reply | str:
    """The next reply of this session, or why none came."""
    deadline = time.monotonic() + seconds
    sent_at = -HELLO_EVERY
    while not stop.is_set():
        now = time.monotonic()
        if now >= deadline:
            return "Hub not answering"
        if resend is not None and client.subscribed.is_set() and now - sent_at >= HELLO_EVERY:
            client.publish(*resend)  # after the SUBACK: the reply cannot pass us by
            sent_at = now
        try:
            msg = client.inbox.get(timeout=0.2)
        except queue.Empty:
            continue
        if msg is None:
            return "Stopped"
        try:
            reply = pair.decode_reply(msg.payload)
        except proto.ProtocolError:
            continue
        if reply.session == session:
            return reply
    return "Stopped"


def store(want: Wanted, grant: pair.Grant) -> None:
    """Write the password and the CA where ``station.toml`` says, 0600."""
    _private(want.password_file, grant.password + "\n")
    if want.ca_file is not None:
        _private(want.ca_file, grant.ca if grant.ca.endswith("\n") else grant.ca + "\n")
    if grant.username != want.username:
        log.warning(
            "%s: station.toml's username is %s but the hub paired %s: fix [broker] username",
            want.station,
            want.username,
            grant.username,
        )


def _private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


def pair_until_done(
    config: Path, show: Show, stop: threading.Event, *, again: float | None = AGAIN_SECONDS
) -> bool:
    """Pair while the config calls for it: True once paired (or nothing to pair), False
    when stopped, or refused with ``again`` None (one attempt)."""
    while not stop.is_set():
        want = wanted(config)
        if want is None:
            return True
        outcome = enrol(want, show, stop)
        if isinstance(outcome, pair.Grant):
            store(want, outcome)
            log.info("%s: paired with table %s", want.station, want.table)
            show(f"coffre {want.station}", ["Paired", "Starting..."])
            return True
        if stop.is_set():
            return False
        log.warning("%s: pairing: %s", want.station, outcome)
        after = ["Asking again soon"] if again is not None else []
        show(f"coffre {want.station}", [outcome, *after])
        if again is None or stop.wait(again):
            return False
    return False
