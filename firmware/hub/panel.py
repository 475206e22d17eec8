"""The host's panel on the hub: its buttons drive one table's menu at a time (the host
switches tables from the menu), and its display says when the hub's own link is down.
"""

from __future__ import annotations

from firmware.hub import backup_ask, console, pairing
from firmware.hub.actor import TableActor
from firmware.hub.context import Batch, HubContext
from firmware.hub.hostcmd import host_command
from firmware.hub.hostmenu import SwitchTable
from firmware.hub.publish import link_screen
from firmware.link.mqtt import LinkState


def pressed(ctx: HubContext, batch: Batch, button: str) -> None:
    """A press on the panel: for the table it drives, or a switch to another table."""
    actor = ctx.out.panel_actor
    if actor is None:
        return
    if actor.state == "refused":  # nothing to drive there: any button moves on
        switch(ctx, actor, -1 if button in ("back", "prev") else 1)
        return
    if pairing.panel(ctx, actor, button):  # "Pair p6? 4721": ok pairs it, back refuses it
        return
    if console.panel(ctx, actor, button):  # "Console? 4721": ok grants it, back refuses it
        return
    if backup_ask.panel(ctx, actor, button):  # the backup's key: ok once written down
        return
    table = actor.table
    if table is not None and table.over and actor.menu.dismissed is not table:
        if button == "ok":  # the final ranking gives way to the menu
            actor.menu.dismissed = table
            ctx.out.host(actor)
        return
    result = actor.menu.press(button, playing=actor.playing, now=ctx.clock())
    if isinstance(result, SwitchTable):
        switch(ctx, actor, result.step)
        return
    if result is not None:
        host_command(ctx, batch, actor, result)
    ctx.out.all(actor)  # the language may have changed: the idle stations too


def switch(ctx: HubContext, actor: TableActor, step: int) -> None:
    """The panel drives the next (or previous) of this hub's tables."""
    names = list(ctx.actors)
    shown = ctx.actors[names[(names.index(actor.config.name) + step) % len(names)]]
    if not shown.playing:
        shown.menu.row = shown.menu.table_row  # another ok moves on again
    ctx.out.panel_actor = shown
    pairing.shown_again(shown, ctx.clock())  # its code was not on the glass until now
    shown.console.hidden()  # nor its console request's
    ctx.out.host(shown)


def link_changed(ctx: HubContext, actor: TableActor) -> None:
    """The hub's own connection changed: a problem goes on the host's display at once
    (the client logs it); a good connection redraws the host screen on connect."""
    state = ctx.probe_state() if actor.state == "probing" else None
    if state is None:
        client = actor.client
        state = client.state if client is not None else LinkState("idle", "")
    if not state.ok:
        actor.echo_due = None  # no broker, no echo: asked again at the next connection
    if state.ok or state.state in ("idle", "stopped"):
        return
    if ctx.out.painter is not None and actor is ctx.out.panel_actor:
        ctx.out.painter.paint(*link_screen(actor, state, ctx.broker.host))
