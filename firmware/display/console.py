"""The host's console: ``/host/<table>`` on the display's web server, for a phone.

Nothing under ``/host/<table>`` answers without a session except the sign-in page and its
request (see :mod:`firmware.display.console_auth` for how one is granted, and
docs/host-guide.md for the threat model). Pages are rendered here whole; the page's small
script (``static/console.js``) asks, waits for the host's yes, and sends writes as POSTs
carrying the session's CSRF token and a fresh nonce.

What reaches the hub goes through a :class:`HubLink`: the request shown on the hub's
glass, and host commands (:class:`~firmware.link.protocol.HostCommand`, the nonce as
their id, so the hub deduplicates them as it does ``coffre host``'s).
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from firmware.display.console_auth import ConsoleDoor, Refused, Request, Session
from firmware.display.console_game import BadStart, games, start_command, start_form
from firmware.display.console_live import LastSeen, ago, live_fragment
from firmware.display.parts import french_spaces
from firmware.display.sealed_backup import newest
from firmware.display.spectator import Snapshot
from firmware.link import protocol as proto
from firmware.link.lang import LANGUAGES, N_, _, refusal, speaking

log = logging.getLogger(__name__)

SESSION_COOKIE = "coffre_console"
ASK_COOKIE = "coffre_ask"
#: Every console answer: never cached, never framed, no script but our own, no referrer.
HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: The commands a console sends and which of them ask once more before they go: the
#: question and its yes button. The page asks on itself, never with the browser's own
#: dialog (``window.confirm``): a browser may suppress a page's dialogs (a host who
#: ticked "don't let this page create more dialogs"; an in-app browser), and then the
#: yes never came and the undo or abort silently never went.
COMMANDS = ("start", "next", "undo", "abort", "pair", "refuse", "sound", "language", "backup")
CONFIRM = {
    "undo": (N_("Undo the last move?"), N_("Yes, undo")),
    "abort": (N_("Abort the game? It cannot be resumed."), N_("Yes, abort")),
}
#: The run buttons' words.
RUN = {"next": N_("Next"), "undo": N_("Undo"), "abort": N_("Abort")}
#: How each language names itself on the console's language choices.
LANGUAGE_NAMES = {"en": "English", "fr": "Français"}
#: The table's sound settings (firmware.link.protocol.SOUNDS) on the console's buttons.
SOUND_NAMES = {"off": N_("Off|sound"), "cues": N_("Cues only"), "narration": N_("Cues and speech")}
#: How often the console notes which seats are online (their "last seen").
LOOK_SECONDS = 2.0
#: After the hub did not take a report (not there, or a hub that does not know reports),
#: the console waits this long before the next, twice as long each time up to a minute:
#: an older hub logs each report it cannot read.
REPORT_RETRY_SECONDS = 5.0
REPORT_RETRY_MAX = 60.0
#: A browser's name in a report (``_device`` names are shorter).
LABEL_CHARS = 12
#: The page's words (marked here: a ``_()`` inside an f-string is not extracted).
T = {
    "host": N_("Host console"),
    "which": N_("Which table?"),
    "browser": N_("a browser"),
    "this": N_(" (this one)"),
    "signed": N_("signed in {ago}"),
    "seen": N_("last seen {ago}"),
    "end": N_("End"),
    "language": N_("Language"),
    "tables": N_("the table’s ({language})"),
    "game": N_("Game"),
    "no": N_("No"),
    "new": N_("New game"),
    "phones": N_("Signed-in phones"),
    "signout": N_("Sign out"),
    "title": N_("{table}: host console"),
    "ask": N_("Ask for the console"),
    "care": N_("Backups"),
    "backup": N_(
        "Or on the hub, onto a USB stick: not sealed, it holds the table's keys and every password:"
    ),
    "restore": N_("To put one back (it replaces the hub's files), on the hub:"),
    "make": N_("Make a backup"),
    "sealed": N_(
        "The hub makes it sealed: its key shows on the hub's screen only. Write it down: "
        "putting the backup back needs it."
    ),
    "download": N_("Download the sealed backup"),
    "unseal": N_("To put a sealed one back, on the hub (it asks for the key):"),
    "last": N_("Last backup: {ago} ({name})"),
    "none": N_("No backup made yet"),
    "table": N_("Table"),
    "sound": N_("Sound"),
    "speaks": N_("The table’s language"),
}
#: The commands the backups part shows (docs/backup.md).
BACKUP = "sudo coffre backup --out /media/usb/coffre-hub.tar.gz"
RESTORE = "sudo coffre restore /media/usb/coffre-hub.tar.gz"
UNSEAL = "sudo coffre restore coffre-backup-….sealed"


def last_backup(status: dict[str, Any], wall: float) -> str:
    """When the hub says its last backup was made (its status's ``backup``), in the
    language spoken now; empty when the hub says nothing (lost, or an older hub)."""
    if status.get("state") != "ready" or "backup" not in status:
        return ""
    stamp = status["backup"]
    if not isinstance(stamp, dict):
        return _(T["none"])
    at, name = stamp.get("at"), stamp.get("name")
    if not isinstance(at, int) or not isinstance(name, str):
        return _(T["none"])
    return _(T["last"], ago=ago(max(0.0, wall - at)), name=name)


def words() -> dict[str, str]:
    """What the page's script says itself, in the language spoken now."""
    return {
        "done": _("Done"),
        "refused": _("Refused"),
        "yes": _("Yes"),
        "shows": _("The hub shows Console? {code}: press ok there"),
        "refusedHost": _("Refused by the host"),
        "expired": _("Nobody answered: ask again"),
        "two": _("Two requests at once: both refused"),
        "none": _("Ask again"),
        "paired": _("Paired"),
    }


class HubLink(Protocol):
    """What the console needs of the hub (:class:`firmware.display.console_link.MqttHubLink`:
    the broker, as the table's host user)."""

    def ask(self, table: str, request: Request) -> Awaitable[tuple[bool, str]]:
        """Show the request's code on the hub's glass; True once the host granted it."""

    def withdraw(self, table: str, request: Request) -> None:
        """Take a request off the hub's glass (it ended here first)."""

    def command(self, table: str, cmd: proto.HostCommand) -> Awaitable[proto.Ack]:
        """Send a host command and wait for the hub's answer."""


class Reporter(Protocol):
    """A link that also tells the hub the table's signed-in phones (optional)."""

    def report(self, table: str, cmd: proto.HostCommand) -> Awaitable[list[str] | None]:
        """Send ``console-report``; the sessions the host ended from the hub, or None."""


class Console:
    """The routes of the host's console for the tables a display serves."""

    def __init__(
        self,
        tables: Sequence[str],
        link: HubLink | None,
        door: ConsoleDoor | None = None,
        backups: Path | None = None,
    ) -> None:
        self.tables = list(tables)
        #: Where root writes the sealed backups the console asks for (display.toml's
        #: [console] backups; None: none to download).
        self.backups = backups
        #: The table display's snapshot of a table (set by the display that serves this).
        self.snapshot: Callable[[str], Snapshot] | None = None
        self.link = link
        self.door = door or ConsoleDoor()
        #: Requests waiting for the hub's answer (kept so none is collected mid-wait).
        self._tasks: set[asyncio.Task[None]] = set()
        #: When each seat was last online, as this console saw it.
        self.seen = LastSeen()
        #: Per table: set when its sessions changed (the hub is told at once).
        self._changed: dict[str, asyncio.Event] = {}
        self._stopped = threading.Event()
        self._looker: threading.Thread | None = None

    def start(self) -> None:
        """Connect the link to the hub (if it is one that connects), and start noting
        which seats are online (each seat's "last seen", whether a phone looks or not)."""
        start = getattr(self.link, "start", None)
        if start is not None:
            start()
        self._looker = threading.Thread(target=self._look, name="console-seats", daemon=True)
        self._looker.start()

    def stop(self) -> None:
        self._stopped.set()
        stop = getattr(self.link, "stop", None)
        if stop is not None:
            stop()
        if self._looker is not None:
            self._looker.join(2)

    def _look(self) -> None:
        while not self._stopped.wait(LOOK_SECONDS):
            self._observe()

    def _observe(self) -> None:
        if self.snapshot is None:
            return
        now = self.door.clock()
        for table in self.tables:
            self.seen.observe(self.snapshot(table), now)

    def _language(self, table: str, session: Session | None = None) -> str:
        """What the console speaks: the session's choice, else the table's language."""
        if session is not None and session.language in LANGUAGES:
            return session.language
        if self.snapshot is not None:
            return self.snapshot(table).language
        return LANGUAGES[0]

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/host", self._index),
            web.get("/host/{table}", self._page),
            web.post("/host/{table}/ask", self._ask),
            web.get("/host/{table}/ask", self._asked),
            web.get("/host/{table}/live", self._live),
            web.post("/host/{table}/command", self._command),
            web.post("/host/{table}/revoke", self._revoke),
            web.post("/host/{table}/signout", self._signout),
            web.post("/host/{table}/language", self._set_language),
            web.get("/host/{table}/backup", self._download),
        ]

    # --- the host's side -------------------------------------------------------------
    # With a link, the hub answers each request (its panel's ok, ``coffre host console-ok``);
    # without one (a display with no host user), these are the only way to answer.

    def grant(self, table: str, code: str) -> str:
        return self.door.grant(table, code)

    def refuse(self, table: str) -> str:
        return self.door.refuse(table)

    async def _hear(self, table: str, request: Request) -> None:
        """Wait for the hub's answer to one request and apply it to that request only."""
        assert self.link is not None
        try:
            granted, message = await self.link.ask(table, request)
        except Exception:
            log.exception("console: the hub's answer to a request on %s failed", table)
            granted, message = False, "failed"
        if self.door.answer(request, granted, "" if granted else message):
            log.info("console: table %s's hub said %r to %s", table, message, request.address)

    # --- the hub's list of phones ---------------------------------------------------------
    # The hub lists the phones signed in and may end them (``coffre host console-end``):
    # the console reports a table's sessions once it has one, again whenever they change
    # and whenever the hub answers, and ends the ones the answer names.

    def _sessions_changed(self, table: str) -> None:
        if getattr(self.link, "report", None) is None:
            return
        changed = self._changed.get(table)
        if changed is None:
            changed = self._changed[table] = asyncio.Event()
            task = asyncio.get_running_loop().create_task(self._report(table, changed))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        changed.set()

    def _report_command(self, table: str) -> proto.HostCommand:
        """``console-report``: each session as ``[id, browser, signed in, last seen]``
        (whole seconds of the wall clock), short enough that a table's most sessions fit
        in one host command (protocol's MAX_INPUT_BYTES)."""
        now, wall = self.door.clock(), time.time()
        sessions = [
            [s.id, s.label[:LABEL_CHARS], int(wall - (now - s.born)), int(wall - (now - s.seen))]
            for s in sorted(self.door.of_table(table), key=lambda s: s.born)
        ]
        return proto.HostCommand(
            cmd="console-report",
            id=f"console-list-{uuid.uuid4().hex[:16]}",
            options={"sessions": sessions},
        )

    async def _report(self, table: str, changed: asyncio.Event) -> None:
        link: Reporter = self.link  # type: ignore[assignment]
        pause = REPORT_RETRY_SECONDS
        while True:
            changed.clear()
            sent = asyncio.ensure_future(link.report(table, self._report_command(table)))
            # Applied whenever it comes, even after a newer report went out.
            sent.add_done_callback(lambda done: self._ended(table, done))
            waiting = asyncio.ensure_future(changed.wait())
            await asyncio.wait({sent, waiting}, return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            if sent.done() and (sent.cancelled() or sent.exception() or sent.result() is None):
                await asyncio.sleep(pause)
                pause = min(2 * pause, REPORT_RETRY_MAX)
            elif sent.done():
                pause = REPORT_RETRY_SECONDS

    def _ended(self, table: str, done: asyncio.Future[list[str] | None]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        for session_id in done.result() or []:
            if self.door.revoke(table, session_id):
                log.info("console: session %s on %s ended from the hub", session_id, table)

    # --- helpers ------------------------------------------------------------------------

    def _table(self, request: web.Request) -> str:
        table = request.match_info["table"]
        if table not in self.tables:
            raise web.HTTPNotFound(text=f"no table {table} on this display", headers=HEADERS)
        return table

    @staticmethod
    def _address(request: web.Request) -> str:
        return request.remote or "?"

    def _session(self, request: web.Request, table: str) -> Session | None:
        session = self.door.session(request.cookies.get(SESSION_COOKIE), self._address(request))
        return session if session is not None and session.table == table else None

    @staticmethod
    def _cookie(request: web.Request, response: web.StreamResponse, name: str, value: str) -> None:
        table = request.match_info["table"]
        response.set_cookie(
            name,
            value,
            path=f"/host/{table}",
            httponly=True,
            samesite="Strict",
            secure=request.secure,
        )

    @staticmethod
    def _json(data: dict[str, object], status: int = 200) -> web.Response:
        return web.json_response(data, status=status, headers=HEADERS)

    def _say(
        self,
        table: str,
        session: Session | None,
        msgid: str,
        params: Mapping[str, Any] | None = None,
    ) -> str:
        """One line for the phone (a message id and its fields), in the console's language."""
        with speaking(self._language(table, session)):
            return refusal(msgid, params) if msgid else ""

    def _said(
        self,
        table: str,
        session: Session | None,
        data: dict[str, object],
        message: str,
        status: int = 200,
        params: Mapping[str, Any] | None = None,
    ) -> web.Response:
        """A JSON answer whose ``message`` (an id, its fields in ``params``) is said in
        the console's language."""
        said = self._say(table, session, message, params)
        return self._json({**data, "message": said}, status)

    def _write(self, request: web.Request, table: str, form: dict[str, str]) -> Session:
        """The session of a write that passes every check, else an HTTP error with one line."""
        try:
            session = self.door.check_write(
                request.cookies.get(SESSION_COOKIE),
                self._address(request),
                csrf=form.get("csrf", ""),
                nonce=form.get("nonce", ""),
                origin=request.headers.get("Origin"),
                expected_origin=self._origin(request),
            )
        except Refused as err:
            line = str(err)
            status = {"Sign in first": 401, "Already done": 409}.get(line, 403)
            raise _error(status, self._say(table, None, line)) from None
        if session.table != table:
            raise _error(401, self._say(table, None, N_("Sign in first")))
        return session

    # --- handlers -----------------------------------------------------------------------

    async def _index(self, _request: web.Request) -> web.Response:
        links = "".join(
            f'<li><a class="big" href="/host/{html.escape(t)}">{html.escape(t)}</a></li>'
            for t in self.tables
        )
        code = self._language(self.tables[0]) if self.tables else LANGUAGES[0]
        with speaking(code):
            body = f'<h1>{_(T["host"])}</h1><p>{_(T["which"])}</p><ul class="tables">{links}</ul>'
        return _page("coffre · host", body, code)

    async def _page(self, request: web.Request) -> web.Response:
        table = self._table(request)
        session = self._session(request, table)
        code = self._language(table, session)
        # The table's name for guests (display.toml's [names]), else its id, as on the TV.
        title = self.snapshot(table).title if self.snapshot is not None else table
        with speaking(code):
            if session is None:
                return _page(f"coffre · {title}", _sign_in(table, title), code)
            return _page(f"coffre · {title}", self._console(table, session, title), code)

    async def _ask(self, request: web.Request) -> web.Response:
        table = self._table(request)
        if request.headers.get("Origin") != self._origin(request):
            return self._said(table, None, {}, N_("Refused: not sent from this page"), 403)
        waiting = self.door.shown(table)
        try:
            asked, secret = self.door.ask(table, self._address(request))
        except Refused as err:
            if waiting is not None and waiting.state != "waiting" and self.link is not None:
                self.link.withdraw(table, waiting)  # two requests: off the hub's glass too
            return self._said(table, None, {}, str(err), 429)
        log.info("console: %s asks for table %s's console", self._address(request), table)
        if self.link is not None:
            task = asyncio.get_running_loop().create_task(self._hear(table, asked))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        response = self._json({"state": asked.state, "code": asked.code})
        self._cookie(request, response, ASK_COOKIE, secret)
        return response

    async def _asked(self, request: web.Request) -> web.Response:
        table = self._table(request)
        secret = request.cookies.get(ASK_COOKIE, "")
        label = request.headers.get("User-Agent", "")
        asked, token = self.door.state(secret, self._address(request), _device(label))
        if asked is None or asked.table != table:
            return self._json({"state": "none"})
        with speaking(self._language(table)):
            why = _(asked.why) if asked.why else ""
        response = self._json({"state": asked.state, "code": asked.code, "message": why})
        if token:
            self._sessions_changed(table)
            self._cookie(request, response, SESSION_COOKIE, token)
            response.del_cookie(ASK_COOKIE, path=f"/host/{table}")
            log.info("console: table %s's console granted to %s", table, asked.address)
        return response

    async def _command(self, request: web.Request) -> web.Response:
        table = self._table(request)
        form = {k: str(v) for k, v in (await request.post()).items()}
        session = self._write(request, table, form)
        cmd = form.get("cmd", "")
        if cmd not in COMMANDS:
            return self._said(table, session, {"ok": False}, N_("Unknown command"), 400)
        if cmd in CONFIRM and form.get("confirm") != "yes":
            question, yes = CONFIRM[cmd]
            with speaking(self._language(table, session)):
                return self._json({"ok": False, "confirm": _(question), "yes": _(yes)})
        if self.link is None:
            unreachable = N_("The console cannot reach the hub")
            return self._said(table, session, {"ok": False}, unreachable, 503)
        command_id = f"console-{form['nonce']}"
        try:
            if cmd == "start":
                command = start_command(form, command_id, self._menu(table))
            else:
                fields = {"cmd": cmd, "id": command_id}
                given = ("station", "code", "sound", "language", "step")
                fields.update({k: form[k] for k in given if form.get(k)})
                # Decoded as the hub decodes it: a bad station name or code is one line here.
                command = proto.decode_host_command(proto.encode(fields))
        except BadStart as err:
            return self._said(table, session, {"ok": False}, err.msgid, 400, err.params)
        except proto.ProtocolError as err:
            return self._said(table, session, {"ok": False}, str(err)[:63], 400)
        ack = await self.link.command(table, command)
        log.info("console: session %s on %s: %s -> %s", session.id, table, cmd, ack.ok)
        # The hub answers in English, with the message id and fields of an answer that has
        # fields: said in the console's language where the catalogue has the text.
        msgid, params = (ack.msgid, ack.params) if ack.msgid else (ack.message, {})
        return self._said(table, session, {"ok": ack.ok}, msgid, params=params)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        """The newest sealed backup in the backups folder, for a session: never a name from
        the request, never through a link (firmware/display/sealed_backup.py ``newest``)."""
        table = self._table(request)
        if self._session(request, table) is None:
            raise _error(401, self._say(table, None, N_("Sign in first")))
        site = request.headers.get("Sec-Fetch-Site", "same-origin")
        origin = request.headers.get("Origin")
        if site not in ("same-origin", "none") or origin not in (None, self._origin(request)):
            raise _error(403, self._say(table, None, N_("Refused: not sent from this page")))
        found = newest(self.backups) if self.backups is not None else None
        if found is None:
            text = self._say(table, None, N_("No sealed backup yet"))
            raise web.HTTPNotFound(text=text, headers=HEADERS)
        name, fd = found
        with os.fdopen(fd, "rb") as sealed:
            response = web.StreamResponse(
                headers={
                    **HEADERS,
                    "Content-Type": "application/octet-stream",
                    "Content-Disposition": f'attachment; filename="{name}"',
                }
            )
            response.content_length = os.fstat(sealed.fileno()).st_size
            await response.prepare(request)
            while chunk := sealed.read(1 << 16):
                await response.write(chunk)
        await response.write_eof()
        log.info("console: table %s: %s downloaded by %s", table, name, self._address(request))
        return response

    @staticmethod
    def _origin(request: web.Request) -> str:
        """This page's own origin, which every write and the download must come from."""
        return f"{request.scheme}://{request.host}"

    def _menu(self, table: str) -> list[Any]:
        """The games the hub offers on this table now (its ``public``'s menu)."""
        return games(self.snapshot(table).public) if self.snapshot is not None else []

    async def _live(self, request: web.Request) -> web.Response:
        table = self._table(request)
        session = self.door.session(
            request.cookies.get(SESSION_COOKIE), self._address(request), touch=False
        )
        if session is None or session.table != table:
            raise _error(401, self._say(table, None, N_("Sign in first")))
        if self.snapshot is None:
            return web.Response(text="", content_type="text/html", headers=HEADERS)
        return web.Response(
            text=self._live_part(table, session), content_type="text/html", headers=HEADERS
        )

    def _live_part(self, table: str, session: Session) -> str:
        assert self.snapshot is not None
        snap = self.snapshot(table)
        now = self.door.clock()
        self.seen.observe(snap, now)
        code = self._language(table, session)
        codes = getattr(self.link, "codes", None)  # a link that hears the hub's host screen
        with speaking(code):
            fragment = live_fragment(snap, self.seen, now, codes(table) if codes else None)
        fragment = french_spaces(fragment) if code == "fr" else fragment
        return fragment + self._said_now(table)

    async def _revoke(self, request: web.Request) -> web.Response:
        table = self._table(request)
        form = {k: str(v) for k, v in (await request.post()).items()}
        session = self._write(request, table, form)
        which = form.get("session", "")
        if not self.door.revoke(table, which):
            return self._said(table, session, {"ok": False}, N_("No such session"), 404)
        self._sessions_changed(table)
        log.info("console: session %s on %s revoked by %s", which, table, session.id)
        return self._said(table, session, {"ok": True}, N_("Session ended"))

    async def _signout(self, request: web.Request) -> web.Response:
        table = self._table(request)
        form = {k: str(v) for k, v in (await request.post()).items()}
        session = self._write(request, table, form)
        self.door.revoke(table, session.id)
        self._sessions_changed(table)
        response = self._said(table, session, {"ok": True}, N_("Signed out"))
        response.del_cookie(SESSION_COOKIE, path=f"/host/{table}")
        return response

    async def _set_language(self, request: web.Request) -> web.Response:
        """The session's language (empty: the table's)."""
        table = self._table(request)
        form = {k: str(v) for k, v in (await request.post()).items()}
        session = self._write(request, table, form)
        code = form.get("language", "")
        if code and code not in LANGUAGES:
            return self._said(table, session, {"ok": False}, N_("No such language"), 400)
        session.language = code
        return self._json({"ok": True, "message": ""})

    # --- pages --------------------------------------------------------------------------

    def _console(self, table: str, session: Session, title: str) -> str:
        """The console page, in the language spoken now."""
        esc = html.escape
        now = self.door.clock()
        rows = "".join(
            f'<li><span class="who">{esc(s.label or _(T["browser"]))}'
            f"{esc(_(T['this'])) if s.id == session.id else ''}"
            f"<small>{esc(_(T['signed'], ago=ago(now - s.born)))} · "
            f"{esc(_(T['seen'], ago=ago(now - s.seen)))}</small></span>"
            f'<button class="revoke" data-session="{s.id}">{esc(_(T["end"]))}</button></li>'
            for s in sorted(self.door.of_table(table), key=lambda s: s.born)
        )
        live = self._live_part(table, session) if self.snapshot is not None else ""
        buttons = "".join(
            f'<button class="cmd big" data-cmd="{c}">{esc(_(RUN[c]))}</button>' for c in RUN
        )
        choices = "".join(
            f'<option value="{c}"{" selected" if session.language == c else ""}>'
            f"{esc(LANGUAGE_NAMES.get(c, c))}</option>"
            for c in LANGUAGES
        )
        table_language = LANGUAGE_NAMES.get(self._language(table), "")
        said = last_backup(self.snapshot(table).status, time.time()) if self.snapshot else ""
        last = f'<p class="last-backup">{esc(said)}</p>'
        sealed = "" if self._sealed(table) else " hidden"
        language = (
            f'<label class="language"><span>{esc(_(T["language"]))}</span>'
            f'<select id="language"><option value="">'
            f"{esc(_(T['tables'], language=table_language))}</option>"
            f"{choices}</select></label>"
        )
        return (
            f'<main data-csrf="{esc(session.csrf)}" data-table="{esc(table)}" '
            f"data-words='{esc(json.dumps(words()), quote=True)}'>"
            f"<h1>{esc(title)}</h1>"
            f'<section class="run"><h2>{esc(_(T["game"]))}</h2><div class="row">{buttons}</div>'
            '<div id="again" class="again" role="alertdialog" hidden><p></p>'
            '<div class="choice"><button class="yes big"></button>'
            f'<button class="no big">{esc(_(T["no"]))}</button></div></div>'
            f'<p id="said" role="status"></p></section>'
            f'<div id="live">{live}</div>'
            f'<section class="new"><h2>{esc(_(T["new"]))}</h2>'
            f"{start_form(self._menu(table))}</section>"
            f"{self._settings(table)}"
            f'<section class="care"><h2>{esc(_(T["care"]))}</h2>{last}'
            f'<button class="backup big" data-cmd="backup">{esc(_(T["make"]))}</button>'
            f'<p class="said" role="status"></p><p>{esc(_(T["sealed"]))}</p>'
            f'<p id="download"{sealed}><a class="big" href="/host/{esc(table)}/backup" download>'
            f"{esc(_(T['download']))}</a></p>"
            f"<p>{esc(_(T['unseal']))}</p><pre><code>{esc(UNSEAL)}</code></pre>"
            f"<p>{esc(_(T['backup']))}</p><pre><code>{esc(BACKUP)}</code></pre>"
            f"<p>{esc(_(T['restore']))}</p><pre><code>{esc(RESTORE)}</code></pre></section>"
            f'<section class="sessions"><h2>{esc(_(T["phones"]))}</h2><ul>{rows}</ul>'
            f'<button id="signout" class="big">{esc(_(T["signout"]))}</button>{language}</section>'
            "</main>"
        )

    def _settings(self, table: str) -> str:
        """The table's sound and language, each a row of buttons that send its host command;
        the one the hub says now (its ``public``'s sound, its status's language) is pressed,
        and the page's refresh presses the one it says next (:meth:`_said_now`)."""
        esc = html.escape
        now = self._now(table)
        rows = [
            ("sound", T["sound"], {k: _(v) for k, v in SOUND_NAMES.items()}),
            ("language", T["speaks"], {c: LANGUAGE_NAMES.get(c, c) for c in LANGUAGES}),
        ]
        parts = [f'<section class="table-settings"><h2>{esc(_(T["table"]))}</h2>']
        for cmd, label, choices in rows:
            parts.append(f'<h3 id="{cmd}-label">{esc(_(label))}</h3>')
            parts.append(f'<div class="row" role="group" aria-labelledby="{cmd}-label">')
            for value, name in choices.items():
                pressed = "true" if now.get(cmd) == value else "false"
                parts.append(
                    f'<button class="set big" data-cmd="{cmd}" data-value="{esc(value)}" '
                    f'aria-pressed="{pressed}">{esc(name)}</button>'
                )
            parts.append("</div>")
        parts.append("</section>")
        return "".join(parts)

    def _now(self, table: str) -> dict[str, str]:
        """The table's sound and language as the hub says them now: none it does not say,
        nor any while it is not there (its ``public`` outlives it on the broker)."""
        if self.snapshot is None:
            return {}
        snap = self.snapshot(table)
        if not snap.hub_online:
            return {}
        public = snap.public
        said = {"sound": public.get("sound"), "language": snap.status.get("language")}
        if public.get("game") and not public.get("over"):
            # The step the host sees, which ``next`` carries (the hub skips only that one).
            said["step"] = proto.step(public.get("round"), public.get("phase"))
        return {k: v for k, v in said.items() if isinstance(v, str)}

    def _sealed(self, table: str) -> str:
        """The sealed backup the hub's status names, if this display has one to serve."""
        if self.snapshot is None or self.backups is None:
            return ""
        stamp = self.snapshot(table).status.get("backup")
        sealed = isinstance(stamp, dict) and stamp.get("sealed") is True
        return str(stamp.get("name", "")) if sealed and isinstance(stamp, dict) else ""

    def _said_now(self, table: str) -> str:
        """The table's sound and language for the page's refresh to press (a change from
        the panel, ``coffre host`` or another phone shows within a refresh), and its last
        backup (the download shows once a sealed one is there)."""
        care = {"backup": self._sealed(table)}
        if self.snapshot is not None:
            care["last"] = last_backup(self.snapshot(table).status, time.time())
        said = "".join(
            f' data-{k}="{html.escape(v, quote=True)}"'
            for k, v in {**self._now(table), **care}.items()
            if v
        )
        return f'<span id="table-now" hidden{said}></span>'


def _error(status: int, text: str) -> web.HTTPException:
    kinds: dict[int, type[web.HTTPException]] = {
        401: web.HTTPUnauthorized,
        403: web.HTTPForbidden,
        409: web.HTTPConflict,
    }
    return kinds[status](text=text, headers=HEADERS)


def _sign_in(table: str, title: str) -> str:
    """The sign-in page, in the language spoken now (``title``: the table's name)."""
    esc = html.escape
    how = _("Ask, then check that the hub’s screen shows the same code and press ok there.")
    return (
        f'<main data-table="{esc(table)}" '
        f"data-words='{esc(json.dumps(words()), quote=True)}'>"
        f"<h1>{esc(_(T['title'], table=title))}</h1>"
        f"<p>{esc(how)}</p>"
        f'<button id="ask" class="big">{esc(_(T["ask"]))}</button>'
        '<p id="code" class="code" aria-live="polite"></p>'
        '<p id="said" role="status"></p></main>'
    )


def _page(title: str, body: str, language: str = LANGUAGES[0]) -> web.Response:
    if language == "fr":
        body = french_spaces(body)
    text = (
        f'<!doctype html><html lang="{html.escape(language)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>"
        '<link rel="stylesheet" href="/static/display.css">'
        '<link rel="stylesheet" href="/static/console.css">'
        '<script src="/static/console.js" defer></script></head>'
        f"<body>{body}</body></html>"
    )
    return web.Response(text=text, content_type="text/html", headers=HEADERS)


def _device(agent: str) -> str:
    """A short name for a browser, to tell sessions apart in the list."""
    for name in ("iPhone", "iPad", "Android", "Windows", "Macintosh", "Linux"):
        if name in agent:
            return name
    return "a browser"
