"""The hub's side of the host's console: a phone's request, shown on the glass, answered by
the host (docs/host-guide.md).

The display sends ``console`` (a :class:`~firmware.link.protocol.HostCommand` with the
code its phone shows) as the table's host user. The hub holds it, shows ``Console? 4721``
and answers that command's id on ``host/ack`` only when the request ends: ``Console
granted`` on the host's yes (the panel's ok once the request has been on the glass
:data:`SETTLE_SECONDS`, or ``console-ok 4721`` with the code the host compared), a
refusal otherwise (back, ``console-refuse``, :data:`REQUEST_SECONDS` without an answer,
two requests at once). The limits are the display's and the pairing's: one request per
table (a second refuses both), a cooldown after a request that ended without a grant,
a token bucket per table.

The hub holds no session: sessions are the display's (its cookies), so a grant is one
answer and nothing is stored. The display reports its signed-in phones
(``console-report``, held until the host ends one or :data:`HOLD_SECONDS` pass), which
``console-sessions`` lists and ``console-end ID`` (or ``all``) ends; the panel's menu
lists them too and ends one with that same command (firmware/hub/hostmenu.py). One
table's requests and phones are data (:mod:`firmware.hub.console_state`, on the table's
actor); this module answers them on ``host/ack``. Nothing of it is stored: a restarted
hub hears the phones at the display's next report.
"""

from __future__ import annotations

import logging
import re
import time
from typing import TYPE_CHECKING, Any

from firmware.hub.console_state import GRANTED, HOLD_SECONDS, Answer, ConsoleRequests, Phone
from firmware.hub.hostmenu import SignedIn
from firmware.link import protocol as proto
from firmware.link.lang import N_

if TYPE_CHECKING:
    from firmware.hub.actor import TableActor
    from firmware.hub.context import HubContext

__all__ = ["GRANTED", "HOLD_SECONDS", "ConsoleRequests", "command", "panel", "show", "tick"]

log = logging.getLogger(__name__)

#: A session's id as the display makes them (console_auth: 4 random bytes in hex).
SESSION_ID = re.compile(r"^[0-9a-f]{8}$")


def phones(options: dict[str, Any]) -> list[Phone] | None:
    """The phones a ``console-report`` carries (``options["sessions"]``: each ``[id,
    browser, signed in, last seen]``, times in seconds of the display's wall clock), None
    if it is not such a list."""
    listed = options.get("sessions")
    if not isinstance(listed, list):
        return None
    out = []
    for item in listed:
        if not (isinstance(item, list) and len(item) == 4):
            return None
        sid, label, born, seen = item
        if not (isinstance(sid, str) and SESSION_ID.match(sid) and isinstance(label, str)):
            return None
        if not all(isinstance(t, int) and not isinstance(t, bool) for t in (born, seen)):
            return None
        out.append(Phone(sid, label[:12], float(born), float(seen)))
    return out


def listing(found: list[Phone], wall: float) -> str:
    """The phones in one line: ``2: a1b2c3d4 iPhone 12m, e5f6a7b8 Linux 1m`` (ids, what
    browser, minutes since each was last seen), cut to fit an answer."""
    if not found:
        return "No phone is signed in"
    each = ", ".join(f"{p.id} {p.label or '?'} {max(0, int(wall - p.seen) // 60)}m" for p in found)
    return f"{len(found)}: {each}"[:64]


# --- the hub's side: host commands, the panel, the tick ---------------------------------

#: What ``console-end`` says, as the glass shows it.
END_NOTES = {
    "Phone signed out": N_("Phone signed out"),
    "Phones signed out": N_("Phones signed out"),
    "No such phone": N_("No such phone"),
    "No phone is signed in": N_("No phone is signed in"),
}


def show(ctx: HubContext, actor: TableActor) -> bool:
    """The panel's menu follows the phones the hub last heard of (its "Phones: N" row and
    page, minutes since each was last seen included); True if what it shows changed."""
    wall = time.time()
    return actor.menu.show_phones(
        [
            SignedIn(p.id, p.label, max(0, int(wall - p.seen) // 60))
            for p in actor.console.signed_in(ctx.clock())
        ]
    )


def _answer(ctx: HubContext, actor: TableActor) -> Answer:
    def answer(cmd_id: str, ok: bool, message: str) -> None:
        log.info("%s: console request %s: %s", actor.config.name, cmd_id, message)
        ctx.out.answer(actor, None, proto.Ack(cmd_id, ok, message))

    return answer


def command(ctx: HubContext, actor: TableActor, cmd: proto.HostCommand) -> tuple[bool, str] | None:
    """``console``, ``console-ok`` or ``console-refuse``: the answer to send now (None: a
    request, answered when it ends). Nothing is stored: a request lives while it waits."""
    now = ctx.clock()
    answer = _answer(ctx, actor)
    if cmd.cmd == "console-report":
        found = phones(cmd.options)
        if found is None:
            return False, "A console report needs its sessions"
        actor.console.reported(cmd.id, found, now, answer)
        show(ctx, actor)
        return None
    if cmd.cmd == "console-sessions":
        return True, listing(actor.console.signed_in(now), time.time())
    if cmd.cmd == "console-end":
        if cmd.station is None:
            return False, "console-end needs a phone's id (or all)"
        said = actor.console.end(cmd.station, now, answer)
        show(ctx, actor)
        ctx.out.note(actor, END_NOTES.get(said[1], said[1]))
        return said
    if cmd.cmd == "console":
        if cmd.code is None:
            return False, "A console request needs its code"
        actor.console.ask(cmd.id, cmd.code, now, answer)
        return None
    if cmd.cmd == "console-ok":
        if cmd.code is None:
            return False, "console-ok needs the code on the phone"
        return actor.console.ok(cmd.code, now, answer)
    return actor.console.refuse(now, answer)


def panel(ctx: HubContext, actor: TableActor, button: str) -> bool:
    """The panel's ok grants and back refuses the console request on the glass; True if
    the press was for it (a request just shown is only shown)."""
    if actor.console.waiting is None or button not in ("ok", "back"):
        return False
    now = ctx.clock()
    answer = _answer(ctx, actor)
    if button == "ok":
        actor.console.ok(None, now, answer)
    else:
        actor.console.refuse(now, answer)
    ctx.out.host(actor)
    return True


def tick(ctx: HubContext, actor: TableActor, now: float) -> None:
    """A request nobody answered ends (the phone is told), and leaves the glass; a report
    held long enough is answered (the display reports again); phones the display stopped
    reporting leave the menu."""
    actor.console.release(now, _answer(ctx, actor))
    if show(ctx, actor):
        ctx.out.host(actor)
    if actor.console.waiting is None:
        return
    actor.console.expire(now, _answer(ctx, actor))
    if actor.console.waiting is None:
        ctx.out.host(actor)
