"""Station inputs and station status, on the hub's thread.

An input is validated, deduplicated on its id (QoS 1 may deliver twice, a station may
resend), translated through the game's table binding, checked against the rules and
stored (see :mod:`firmware.hub.play`); its answer goes out once the batch is committed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from firmware.hub.actor import TableActor
from firmware.hub.events import Batch
from firmware.hub.health import status_reason
from firmware.hub.play import NOT_SAVED, STORE_ERRORS, apply, remember
from firmware.hub.table import Table
from firmware.link import protocol as proto
from firmware.link.lang import refusal, speaking
from rules.core import IllegalAction

if TYPE_CHECKING:
    from firmware.hub.service import Hub

log = logging.getLogger(__name__)


def station_input(hub: Hub, batch: Batch, actor: TableActor, station: str, payload: bytes) -> None:
    """One input from a station: stored and applied, or refused; answered either way."""

    def ack(answer: proto.Ack) -> None:
        hub.out.answer(actor, station, answer)  # sent once the batch is committed

    try:
        inp = proto.decode_input(payload)
    except proto.ProtocolError as exc:
        bad_payload(hub, actor, station, exc)
        ack(proto.Ack(exc.id, False, str(exc)))
        return
    if station not in actor.config.stations:
        ack(proto.Ack(inp.id, False, say(actor, "Unknown station")))
        return
    source_id = f"{actor.config.name}/{station}/{inp.id}"
    prior = hub.store.answer(source_id)
    if prior is not None:
        # Delivered again (QoS 1, a resend): the same answer, and nothing applied twice.
        ack(proto.Ack(inp.id, *prior))
        return
    table = actor.table
    try:
        if table is None or actor.record is None:
            raise IllegalAction("No game: ask the host")
        if station not in table.seating.stations[: table.players]:
            raise IllegalAction("Not in this game")
        seat = table.seating.stations.index(station)
        body = after_game(table, seat, inp)
        if "ui" in body and table.ui_noop(body):
            ack(proto.Ack(inp.id, True, ""))
            return  # a knob against its stop: nothing to store
        apply(hub, batch, actor, body, source_id)
    except IllegalAction as exc:
        # Remembered, so a late copy of this input gets this answer, not a new one;
        # answered even when the disk cannot remember it (in the table's language).
        message = say(actor, exc.msgid, exc.params)
        remember(hub, batch, actor, source_id, False, message)
        ack(proto.Ack(inp.id, False, message))
        return
    except STORE_ERRORS as exc:
        batch.broken = exc
        ack(proto.Ack(inp.id, False, NOT_SAVED))
        return
    except Exception as exc:
        # A bug, not the player's fault: say so, keep the table as it was.
        if hub.throttle.allow(("input bug", type(exc))) is not None:
            log.exception("hub: input %s from %s failed", inp.id, station)
        ack(proto.Ack(inp.id, False, say(actor, "Hub error: tell the host")))
        return
    ack(proto.Ack(inp.id, True, ""))


def station_status(hub: Hub, actor: TableActor, station: str, payload: bytes) -> None:
    """A station came online (it gets its screen again) or went away (the host sees it)."""
    try:
        status = proto.decode_status(payload)
    except proto.ProtocolError as exc:
        bad_payload(hub, actor, f"{station}/status", exc)
        return
    actor.reasons[station] = status_reason(status)
    if actor.station_states.get(station) != status.state:
        actor.station_states[station] = status.state
        level = logging.WARNING if status.state == "lost" else logging.INFO
        log.log(level, "%s: station %s is %s", actor.config.name, station, status.state)
    if status.state == "online":
        actor.offline.discard(station)
        # Rebirth: make sure the station has its screen, even if retained ones were lost.
        actor.published.pop(actor.topics.station(station, "screen"), None)
        hub.out.all(actor)
    else:
        actor.offline.add(station)
        hub.out.all(actor)  # hub/status carries every seat's health


def bad_payload(hub: Hub, actor: TableActor, source: str, exc: proto.ProtocolError) -> None:
    """One log line (throttled: a station cannot flood the log) for a payload refused."""
    hub.throttle.warning(
        ("bad", actor.config.name, source), f"hub: {actor.config.name}/{source}: {exc}"
    )


def say(actor: TableActor, msgid: str, params: dict[str, Any] | None = None) -> str:
    """A refusal or notice in the table's language."""
    with speaking(actor.language):
        return refusal(msgid, params)


def after_game(table: Table, seat: int, inp: proto.Input) -> dict[str, Any]:
    """The event a station's input means; once the game is over, only a knob that scrolls
    the final ranking still means one (anything else: "The game is over")."""
    if not table.over:
        return table.binding.translate(table, seat, inp)
    try:
        body = table.binding.translate(table, seat, inp)
    except IllegalAction:
        body = {}
    if "ui" not in body:
        raise IllegalAction("The game is over")
    return body
