"""A table's game on the hub: set up or resumed from the store, moved one checked event at a
time (a station's input, a host command, a timer), each stored before it counts.

Every function here runs on the hub's thread, inside the batch it is given (see
:class:`firmware.hub.context.Batch`): a write the store refuses breaks the batch, which
:mod:`firmware.hub.batches` then rolls back and answers "not saved".
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from firmware.hub.actor import TableActor
from firmware.hub.bindings import binding_for
from firmware.hub.context import Batch, HubContext
from firmware.hub.hostmenu import DEFAULT_SOUND, chosen_language, language_key, sound_key
from firmware.hub.store import GameRecord, StoreError
from firmware.hub.table import Seating, Table
from firmware.link.lang import N_
from firmware.link.protocol import SOUNDS
from rules.core import RulesError

log = logging.getLogger(__name__)

#: The answer to an input the store could not keep (the station may send it again).
NOT_SAVED = N_("Hub disk error: tell the host")

STORE_ERRORS = (sqlite3.Error, StoreError, OSError)


def apply(
    ctx: HubContext, batch: Batch, actor: TableActor, body: dict[str, Any], source_id: str | None
) -> None:
    """Check, commit, apply, publish. Raises IllegalAction and changes nothing."""
    table, record = actor.table, actor.record
    assert table is not None and record is not None
    checked = table.check(body)
    if not ctx.store.append(record.table_id, record.game_no, body, source_id):
        return  # a duplicate that raced past answer(): already applied
    batch.touch(actor)
    was_over = table.over
    table.commit(body, checked)
    noted = bool(actor.message)
    actor.message = ""  # a note about the last host command is stale once the game moves
    if table.over and not was_over:
        ctx.store.set_status(record.table_id, record.game_no, "over")
        log.info("%s: game %d (%s) is over", actor.config.name, record.game_no, record.game)
    try:
        actor.arm_timer(ctx.clock())
        # A ui event (a knob turn) repaints its own station only, unless it ends a note.
        ui = body.get("ui")
        seat = ui.get("seat") if isinstance(ui, dict) and not noted else None
        ctx.out.all(actor, seat=seat)
    except Exception:
        # Stored: the move counts and is acked; screens catch up on the next publish.
        log.exception("hub: publishing after %s failed", source_id or "an event")


def remember(
    ctx: HubContext,
    batch: Batch,
    actor: TableActor,
    source_id: str,
    ok: bool,
    message: str,
    *,
    keep: bool = False,
) -> None:
    """Keep an answer that is not an event; a failing disk breaks the batch, not the answer.

    ``keep``: for good (a host command's), never among the station refusals that are
    forgotten after REFUSALS_KEPT.
    """
    game_no = actor.record.game_no if actor.record is not None else 0
    try:
        ctx.store.remember(
            source_id, ok, message, table_id=actor.config.name, game_no=game_no, keep=keep
        )
    except STORE_ERRORS as exc:
        batch.broken = exc


def fire_timers(ctx: HubContext, batch: Batch) -> None:
    """Apply the timer events that are due, on every table this hub runs."""
    now = ctx.clock()
    for actor in ctx.live():
        if actor.timer_due is None or actor.timer_due > now or actor.timer_body is None:
            continue
        body = actor.timer_body
        actor.timer_due = None
        try:
            apply(ctx, batch, actor, body, None)
        except STORE_ERRORS as exc:
            batch.broken = exc
            actor.arm_timer(ctx.clock())  # try again when it is due again
        except Exception:
            actor.arm_timer(ctx.clock())
            raise


def resume(ctx: HubContext, actor: TableActor) -> None:
    """Rebuild the table's unfinished game (or its last finished one) from the store."""
    # The host's sound and language settings too (a batch that kept a new one may have been
    # rolled back).
    said = ctx.store.get_setting(sound_key(actor.config.name))
    actor.menu.sound = said if said in SOUNDS else DEFAULT_SOUND
    # The language the host chose, while hub.toml still says the one it overrode.
    chosen = ctx.store.get_setting(language_key(actor.config.name))
    actor.menu.language = chosen_language(chosen, actor.config.language)
    record = ctx.store.current_game(actor.config.name)
    if record is None:
        # A finished game stays on the screens (its ranking) until the next start.
        record = ctx.store.last_game(actor.config.name)
        if record is None or record.status != "over":
            return
    try:
        actor.table = new_table(ctx, actor, record)
    except RulesError as exc:
        log.error("cannot resume %s: %s", actor.config.name, exc)
        return
    actor.record = record
    actor.table.replay_events(ctx.store.events(record.table_id, record.game_no))
    # Also after every batch a failing disk rolled back: one line per LOG_EVERY, not 30.
    held = ctx.throttle.allow(("resumed", actor.config.name))
    if held is not None:
        log.info(
            "resumed %s game %d at v%d%s",
            actor.config.name,
            record.game_no,
            actor.table.state.version,
            f" (+{held} more)" if held else "",
        )
    actor.arm_timer(ctx.clock())


def new_table(ctx: HubContext, actor: TableActor, record: GameRecord) -> Table:
    """The stored game's table, seated as it was started."""
    seating = actor.config.seating()
    seating = Seating(record.seating, seating.colours[: len(record.seating)])
    binding = binding_for(record.game, reveal_delay=actor.config.reveal_delay)
    return Table(
        record.game, record.players, record.options, record.seed, seating, ctx.keys, binding
    )
