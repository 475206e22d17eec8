"""The host asks for a backup (``backup``, from the console or ``coffre host``); its key
shows on the hub's glass, and nowhere else.

The hub never reads ``ca.key``: it writes a request (firmware/hub/backup_request.py) in
hub.toml's ``[backup] dir`` and root makes the archive, sealed with a key the hub made.
The hub keeps that key in memory only: not in the store, the log, ``host/screen``,
``public``, ``hub/status`` or any answer, since every host user reads those and the
display carries them over the venue's Wi-Fi. Once the stamp of a sealed backup made
since the ask appears (firmware/hub/backup_stamp.py), the panel's glass shows the key
(it waits behind a pairing's or a phone's code) until the host presses ok; then it is
forgotten. One ask per :data:`RATE_SECONDS`, whoever asks: a signed-in phone cannot fill
the card (root keeps the newest three archives anyway).
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING

from firmware.hub import backup_request, health
from firmware.hub.backup_state import Asked
from firmware.hub.sealed import new_key
from firmware.link import protocol as proto
from firmware.link.lang import N_

if TYPE_CHECKING:
    from firmware.hub.actor import TableActor
    from firmware.hub.context import HubContext

log = logging.getLogger(__name__)

#: The shortest time between two asks (any table, any asker).
RATE_SECONDS = 600.0
#: How often the hub looks for root's stamp while an ask waits.
LOOK_SECONDS = 2.0
#: How long the hub waits for root's backup before it forgets the key (see the journal).
WAIT_SECONDS = 600.0
#: An ok this soon after the key came on the glass was meant for what was there before.
SETTLE_SECONDS = 1.5
ASKED = N_("Backup asked: the key shows on the hub")


def command(ctx: HubContext, actor: TableActor, cmd: proto.HostCommand) -> proto.Ack:
    """``backup``: the request written for root, the key kept; or a one-line refusal."""
    backups = ctx.out.backups
    now = ctx.clock()
    asked = backups.asked
    if asked is not None and asked.cmd_id == cmd.id and asked.table == actor.config.name:
        return proto.answer(cmd.id, True, ASKED)  # a resent command: asked once
    if backups.folder is None:
        return proto.answer(cmd.id, False, N_("No backup folder: see [backup] in hub.toml"))
    if backups.last is not None and now - backups.last < RATE_SECONDS:
        wait = math.ceil((RATE_SECONDS - (now - backups.last)) / 60)
        return proto.answer(cmd.id, False, N_("Next backup in {minutes} min"), {"minutes": wait})
    key = new_key()
    try:
        backup_request.ask(backups.folder, backup_request.Request(key=key, table=actor.config.name))
    except OSError as exc:
        log.error("%s: backup not asked: %s", actor.config.name, exc)
        return proto.answer(cmd.id, False, N_("Backup not asked: see the hub's log"))
    backups.asked = Asked(key, actor.config.name, cmd.id, now, time.time())
    backups.last = now
    actor.backup_due = now + LOOK_SECONDS
    log.info("%s: backup asked (its key shows on the panel once it is made)", actor.config.name)
    ctx.out.note(actor, N_("Backup asked"))
    return proto.answer(cmd.id, True, ASKED)


def tick(ctx: HubContext, now: float) -> None:
    """While an ask waits: root's stamp seen -> the key on the glass; too long -> the key
    forgotten (root's journal says why)."""
    backups = ctx.out.backups
    asked = backups.asked
    actor = ctx.actors.get(asked.table) if asked is not None else None
    if asked is None or asked.shown_at is not None or actor is None:
        return
    if asked.made(ctx.out.backup):
        asked.shown_at = now
        actor.backup_due = None
        log.info("%s: backup made; its key shows on the panel until ok", asked.table)
        if ctx.out.panel_actor is not None:
            ctx.out.host(ctx.out.panel_actor)
    elif now - asked.at > WAIT_SECONDS:
        backups.asked = None
        actor.backup_due = None
        log.error("%s: no sealed backup came: see journalctl -u coffre-backup", asked.table)
        ctx.out.note(actor, N_("Backup failed"))
        ctx.out.host(actor)
    else:
        actor.backup_due = now + LOOK_SECONDS


def panel(ctx: HubContext, actor: TableActor, button: str) -> bool:
    """While the key is on the glass, ok (not one within SETTLE_SECONDS of it appearing)
    takes it off and forgets it; the other buttons wait. True if the press was for it."""
    backups = ctx.out.backups
    asked = backups.asked
    if asked is None or backups.glass(lambda: health.code_waits(actor)) is None:
        return False
    assert asked.shown_at is not None
    if button == "ok" and ctx.clock() - asked.shown_at >= SETTLE_SECONDS:
        backups.asked = None
        log.info("%s: the backup's key was written down (ok)", asked.table)
        ctx.out.host(actor)
    return True
