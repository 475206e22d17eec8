"""Table ownership on the running hub: one live hub per table (see :mod:`firmware.hub.claim`).

The probe's verdict connects a table or leaves it alone; once connected, the hub watches
the table's hub status: its own claim coming back (the broker lets it on the table),
another hub's claim (a race, settled alike on both sides), or the hub it took the table
over from alive after all. A refused table gets nothing more from this hub. A table taken
over (``--take-over``) holds its inputs and commands, unanswered and not acked to the
broker, until the old owner is known gone: its will or goodbye, or its will's delay past
this hub's claim with no word from it; a mistaken take-over answers nothing.
"""

from __future__ import annotations

import contextlib
import logging

from firmware.hub.actor import TableActor
from firmware.hub.claim import ECHO_SECONDS, REPAINT_SECONDS, Verdict, read_status, will_delay
from firmware.hub.context import HubContext
from firmware.hub.events import Connected, Denied, LinkChanged
from firmware.hub.panel import link_changed
from firmware.link import protocol as proto
from firmware.link.lang import N_
from firmware.link.mqtt import Message

log = logging.getLogger(__name__)

#: Inputs a table being taken over holds at most (the broker's in-flight window holds
#: QoS 1 ones back long before).
HELD_MOST = 1000


def claimed(ctx: HubContext, verdict: Verdict) -> None:
    """The probe decided a table: connect to it, or leave it alone."""
    actor = ctx.actors[verdict.table]
    if not verdict.free:
        refuse(ctx, actor, verdict)
        return
    actor.state = "live"
    actor.taken_from = verdict.taken_from
    # A --take-over may be a mistake: answer nothing until the old owner is known gone.
    actor.holding = verdict.taken_from is not None
    assert actor.client is not None
    actor.client.start()


def link_event(ctx: HubContext, event: Connected | LinkChanged | Denied) -> None:
    """A connection's news: the probe's link, or a table's (up, changed, a subscription
    refused). A table's connection comes up only once the probe found the table free."""
    if event.table is None:  # the probe's link: shown while the panel's table waits for it
        shown = ctx.out.panel_actor
        if shown is not None and shown.state == "probing":
            link_changed(ctx, shown)
        return
    actor = ctx.actors[event.table]
    if isinstance(event, Connected) and actor.state == "probing":
        actor.state = "live"  # a client connects only once its table is claimed
    if actor.state != "live":
        return  # refused (its client's last words), or not claimed yet
    if isinstance(event, LinkChanged):
        link_changed(ctx, actor)
    elif isinstance(event, Denied):
        refuse(ctx, actor, Verdict(actor.config.name, denied=True))
    else:
        connected(ctx, actor)


def connected(ctx: HubContext, actor: TableActor) -> None:
    """The table's connection is up: its claim first, then everything it shows, again."""
    actor.published.clear()
    # Its claim must come back: a broker whose ACL drops what this hub writes shows it
    # nothing (see tick).
    if actor.client is not None and actor.client.connected.is_set():
        actor.echo_due = ctx.clock() + ECHO_SECONDS
    if actor.holding and actor.hold_until is None:
        # The old owner, if alive, sees the claim this hub sends now and says so at once; if
        # its link is dead but not yet noticed, the broker sends its will by then.
        actor.hold_until = ctx.clock() + will_delay(actor.taken_from)
    ctx.out.all(actor, hub_ready=True)


def hub_status(
    ctx: HubContext, actor: TableActor, payload: bytes, *, retained: bool = False
) -> None:
    """The table's hub status as the broker has it: ours, or another hub's claim."""
    if payload == actor.published.get(actor.topics.hub_status):
        actor.echo_due = None  # our own: the broker lets this hub on the table
        return
    status = read_status(payload)
    claim = status.claim if status is not None else None
    ours = ctx.claim()
    if claim is not None and claim.hub == ours.hub:
        if claim.run == ours.run:
            actor.echo_due = None  # an earlier status of ours
            return
    elif claim is not None and claim.same_run(actor.taken_from):
        if not retained and status is not None and status.state == "ready":
            # The hub this one was told to take the table over from is alive: it keeps it.
            refuse(ctx, actor, Verdict(actor.config.name, owner=claim, taken_from=claim))
            return
        # Else the stale copy this hub took the table over from, or that hub's goodbye.
        if not retained and status is not None and status.state != "ready" and actor.holding:
            actor.hold_until = ctx.clock()  # its will or goodbye: it is gone, answer now
    elif status is not None and status.state == "ready" and claim is not None:
        if claim.took == ours.run:
            why = "was told to take it over from this hub, which is alive"
        elif ours.beats(claim):  # two hubs claimed it at once: both decide alike
            why = "claimed it too (this hub's identity is the lower)"
        else:
            refuse(ctx, actor, Verdict(actor.config.name, owner=claim))
            return
        log.warning(
            "hub: table %s: hub %s on %s %s; this hub keeps it and sends the table's screens again",
            actor.config.name,
            claim.hub,
            claim.host,
            why,
        )
        actor.published.clear()
        actor.repaint_due = ctx.clock() + REPAINT_SECONDS
    # Another hub's goodbye, an old will of ours, a cleared status: ours stands.
    ctx.out.all(actor, hub_ready=True)


def tick(ctx: HubContext, actor: TableActor, now: float) -> bool:
    """Time passed: give the table up if the broker never echoed its claim (False: the
    table is refused now), or send it all again once another hub's claim is gone."""
    if actor.echo_due is not None and now >= actor.echo_due:
        refuse(ctx, actor, Verdict(actor.config.name, denied=True))
        return False
    if actor.repaint_due is not None and now >= actor.repaint_due:
        actor.repaint_due = None
        actor.published.clear()
        ctx.out.all(actor, hub_ready=True)
    return True


def hold(actor: TableActor, msg: Message) -> bool:
    """Keep an input or command of a table being taken over, unanswered and not acked to
    the broker, until the old owner is known gone (True: held)."""
    if not actor.holding:
        return False
    if len(actor.held_inputs) < HELD_MOST:
        actor.held_inputs.append(msg)  # beyond: dropped unacked (the broker sends it again)
    return True


def release_due(actor: TableActor, now: float) -> list[Message]:
    """The held inputs, once the old owner of a table taken over is known gone."""
    if not actor.holding or actor.hold_until is None or now < actor.hold_until:
        return []
    actor.holding = False
    held, actor.held_inputs = actor.held_inputs, []
    if held:
        log.info("hub: table %s: the hub it took over from is gone; answering", actor.config.name)
    return held


def goodbye(ctx: HubContext) -> None:
    """The hub stops: "disconnected" on every table it runs (its claim ends, no will)."""
    for actor in ctx.live():
        if actor.client is None or not actor.client.connected.is_set():
            continue  # no broker: nobody to say goodbye to (the will says "lost")
        # Straight to the client: the hub thread may be holding a batch's messages.
        info = actor.client.publish(
            actor.topics.hub_status,
            proto.encode(proto.HubStatus(state="disconnected", claim=ctx.claim())),
            retain=True,
        )
        with contextlib.suppress(RuntimeError, ValueError):
            info.wait_for_publish(2)


def refuse(ctx: HubContext, actor: TableActor, verdict: Verdict) -> None:
    """Leave a table: nothing more is published on it, said in the log and on the panel."""
    if actor.state == "refused":
        return
    log.error("hub: %s", verdict.line())
    if actor.state == "live" and actor.client is not None:
        actor.client.leave()  # a clean DISCONNECT: no will overwrites the owner's claim
    actor.state, actor.refused = "refused", verdict
    actor.timer_due = actor.echo_due = actor.repaint_due = None
    actor.holding, actor.held_inputs = False, []  # never answered, never acked: the owner's
    panel = ctx.out.panel_actor
    if panel is not None and panel is not actor:
        ctx.out.note(panel, N_("Table {table} refused: see log"), {"table": verdict.table})
        ctx.out.host(panel)
    ctx.out.host(actor)
    if all(a.state == "refused" for a in ctx.actors.values()):
        lines = "; ".join(a.refused.line() for a in ctx.actors.values() if a.refused is not None)
        ctx.give_up(f"hub: no table left to run: {lines}")
