"""Station inputs and station status, on the hub's thread.

An input is validated, deduplicated on its id (QoS 1 may deliver twice, a station may
resend), translated through the game's table binding, checked against the rules and
stored (see :mod:`firmware.hub.moves`); its answer goes out once the batch is committed.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from firmware.hub.actor import TableActor
from firmware.hub.context import Batch, HubContext
from firmware.hub.health import status_reason
from firmware.hub.moves import NOT_SAVED, STORE_ERRORS, apply, remember
from firmware.hub.table import Table
from firmware.link import protocol as proto
from firmware.link.lang import refusal, speaking
from rules.core import IllegalAction

log = logging.getLogger(__name__)

#: How far ahead of a station's last input id (in the same boot) the next may be: a
#: station counts its inputs one by one from 1, so a far bigger jump is no real input,
#: and must not raise the floor that later answers its real ones "Too late".
MAX_SEQ_JUMP = 10_000
#: Answer to an id that jumps implausibly far ahead.
BAD_SEQUENCE = "Bad message: id out of sequence"


def station_input(
    ctx: HubContext, batch: Batch, actor: TableActor, station: str, payload: bytes
) -> None:
    """One input from a station: stored and applied, or refused; answered either way."""

    def ack(answer: proto.Ack) -> None:
        ctx.out.answer(actor, station, answer)  # sent once the batch is committed

    try:
        inp = proto.decode_input(payload)
    except proto.ProtocolError as exc:
        bad_payload(ctx, actor, station, exc)
        ack(proto.Ack(exc.id, False, str(exc)))
        return
    if station not in actor.config.stations:
        ack(proto.Ack(inp.id, False, say(actor, "Unknown station")))
        return
    source_id = f"{actor.config.name}/{station}/{inp.id}"
    placed = sequence(ctx, actor, station, inp.id)
    if placed == "jump":
        bad_payload(ctx, actor, station, proto.ProtocolError(BAD_SEQUENCE, inp.id))
        ack(proto.Ack(inp.id, False, BAD_SEQUENCE))  # not remembered: it moves no floor
        return
    # A new id has no answer yet: the store is asked only about one it may have seen.
    prior = ctx.store.answer(source_id) if placed == "seen?" else None
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
        apply(ctx, batch, actor, body, source_id)
    except IllegalAction as exc:
        # Remembered, so a late copy of this input gets this answer, not a new one;
        # answered even when the disk cannot remember it (in the table's language).
        message = say(actor, exc.msgid, exc.params)
        remember(ctx, batch, actor, source_id, False, message)
        ack(proto.Ack(inp.id, False, message))
        return
    except STORE_ERRORS as exc:
        batch.broken = exc
        ack(proto.Ack(inp.id, False, NOT_SAVED))
        return
    except Exception as exc:
        # A bug, not the player's fault: say so, keep the table as it was.
        if ctx.throttle.allow(("input bug", type(exc))) is not None:
            log.exception("hub: input %s from %s failed", inp.id, station)
        ack(proto.Ack(inp.id, False, say(actor, "Hub error: tell the host")))
        return
    ack(proto.Ack(inp.id, True, ""))


def sequence(
    ctx: HubContext, actor: TableActor, station: str, input_id: str
) -> Literal["new", "seen?", "jump"]:
    """Where an input id stands in its station's ids of that boot.

    - ``"jump"``: too far past the last one (see MAX_SEQ_JUMP), no real input;
    - ``"new"``: past every id of its stream this hub has seen or its store holds (the
      store's last one until this hub has seen one), so nothing has answered it yet;
    - ``"seen?"``: at or under that, or the store could not say: it may have an answer.

    Every station input passes here before the store keeps anything of it, and this hub
    alone writes its store, so the last id seen is never under one the store holds.
    """
    boot, _, seq = input_id.rpartition(":")
    stream = f"{actor.config.name}/{station}/{boot}"
    last = actor.last_seq.get(stream)
    if last is None:
        if len(actor.last_seq) > 4 * len(actor.config.stations) + 64:
            actor.last_seq.clear()  # old boots: asked of the store again if ever seen
        try:
            last = ctx.store.last_n(stream)
        except STORE_ERRORS:
            return "seen?"  # the disk's trouble is not the station's: its input goes on
    n = int(seq)
    if n > last + MAX_SEQ_JUMP:
        return "jump"
    actor.last_seq[stream] = max(last, n)
    return "new" if n > last else "seen?"


def station_status(ctx: HubContext, actor: TableActor, station: str, payload: bytes) -> None:
    """A station came online (it gets its screen again) or went away (the host sees it).

    A station whose status flaps (a bad link, a hostile client with its credentials) gets
    one log line per state every 10 s, and the screens it changes are soon drawn at most
    every STATUS_REDRAW seconds, the last state winning (see :func:`redraw_due`).
    """
    try:
        status = proto.decode_status(payload)
    except proto.ProtocolError as exc:
        bad_payload(ctx, actor, f"{station}/status", exc)
        return
    actor.reasons[station] = status_reason(status)
    changed = actor.station_states.get(station) != status.state
    if changed:
        actor.station_states[station] = status.state
        held = ctx.throttle.allow(("status", actor.config.name, station, status.state))
        if held is not None:
            level = logging.WARNING if status.state == "lost" else logging.INFO
            more = f" (+{held} more)" if held else ""
            log.log(level, "%s: station %s is %s%s", actor.config.name, station, status.state, more)
    if status.state == "online":
        actor.offline.discard(station)
        # Rebirth: make sure the station has its screen, even if retained ones were lost.
        actor.reborn.add(station)
    else:
        actor.offline.add(station)
        actor.reborn.discard(station)
    # A change of state and a mere "online again" draw at their own pace: a station that
    # says "online" often cannot hold back the news that it is gone.
    actor.status_pending.add((station, "state" if changed else "again"))
    redraw_due(ctx, actor, ctx.clock())


def redraw_due(ctx: HubContext, actor: TableActor, now: float) -> None:
    """Draw what station statuses changed: at once at a human pace, then (a station whose
    status flaps) one redraw per station every STATUS_REDRAW seconds at most, the last
    state winning; the hub's loop wakes for the next (see TableActor.status_due)."""
    ready = [key for key in actor.status_pending if actor.take_status_token(key, now)]
    if not ready:
        return
    for key in ready:
        actor.status_pending.discard(key)
        station = key[0]
        if station in actor.reborn:
            actor.reborn.discard(station)
            actor.published.pop(actor.topics.station(station, "screen"), None)
    ctx.out.all(actor)


def bad_payload(ctx: HubContext, actor: TableActor, source: str, exc: proto.ProtocolError) -> None:
    """One log line (throttled: a station cannot flood the log) for a payload refused."""
    ctx.throttle.warning(
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
