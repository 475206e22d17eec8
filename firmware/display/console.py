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
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from aiohttp import web

from firmware.display.console_auth import ConsoleDoor, Refused, Request, Session
from firmware.display.console_game import BadStart, games, start_command, start_form
from firmware.display.console_live import live_fragment
from firmware.display.spectator import Snapshot
from firmware.link import protocol as proto

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
COMMANDS = ("start", "next", "undo", "abort", "pair", "refuse")
CONFIRM = {
    "undo": ("Undo the last move?", "Yes, undo"),
    "abort": ("Abort the game? It cannot be resumed.", "Yes, abort"),
}


class HubLink(Protocol):
    """What the console needs of the hub (:class:`firmware.display.console_link.MqttHubLink`:
    the broker, as the table's host user)."""

    def ask(self, table: str, request: Request) -> Awaitable[tuple[bool, str]]:
        """Show the request's code on the hub's glass; True once the host granted it."""

    def withdraw(self, table: str, request: Request) -> None:
        """Take a request off the hub's glass (it ended here first)."""

    def command(self, table: str, cmd: proto.HostCommand) -> Awaitable[tuple[bool, str]]:
        """Send a host command and wait for the hub's answer."""


class Console:
    """The routes of the host's console for the tables a display serves."""

    def __init__(
        self,
        tables: Sequence[str],
        link: HubLink | None,
        door: ConsoleDoor | None = None,
    ) -> None:
        self.tables = list(tables)
        #: The table display's snapshot of a table (set by the display that serves this).
        self.snapshot: Callable[[str], Snapshot] | None = None
        self.link = link
        self.door = door or ConsoleDoor()
        #: Requests waiting for the hub's answer (kept so none is collected mid-wait).
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        """Connect the link to the hub (if it is one that connects)."""
        start = getattr(self.link, "start", None)
        if start is not None:
            start()

    def stop(self) -> None:
        stop = getattr(self.link, "stop", None)
        if stop is not None:
            stop()

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

    def _write(self, request: web.Request, table: str, form: dict[str, str]) -> Session:
        """The session of a write that passes every check, else an HTTP error with one line."""
        try:
            session = self.door.check_write(
                request.cookies.get(SESSION_COOKIE),
                self._address(request),
                csrf=form.get("csrf", ""),
                nonce=form.get("nonce", ""),
                origin=request.headers.get("Origin"),
                expected_origin=f"{request.scheme}://{request.host}",
            )
        except Refused as err:
            line = str(err)
            status = {"Sign in first": 401, "Already done": 409}.get(line, 403)
            raise _error(status, line) from None
        if session.table != table:
            raise _error(401, "Sign in first")
        return session

    # --- handlers -----------------------------------------------------------------------

    async def _index(self, _request: web.Request) -> web.Response:
        links = "".join(
            f'<li><a class="big" href="/host/{html.escape(t)}">{html.escape(t)}</a></li>'
            for t in self.tables
        )
        body = f'<h1>Host console</h1><p>Which table?</p><ul class="tables">{links}</ul>'
        return _page("coffre · host", body)

    async def _page(self, request: web.Request) -> web.Response:
        table = self._table(request)
        session = self._session(request, table)
        if session is None:
            return _page(f"coffre · {table} · sign in", _sign_in(table))
        return _page(f"coffre · {table} · host", self._console(table, session))

    async def _ask(self, request: web.Request) -> web.Response:
        table = self._table(request)
        if request.headers.get("Origin") != f"{request.scheme}://{request.host}":
            return self._json({"message": "Refused: not sent from this page"}, 403)
        waiting = self.door.shown(table)
        try:
            asked, secret = self.door.ask(table, self._address(request))
        except Refused as err:
            if waiting is not None and waiting.state != "waiting" and self.link is not None:
                self.link.withdraw(table, waiting)  # two requests: off the hub's glass too
            return self._json({"message": str(err)}, 429)
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
        response = self._json({"state": asked.state, "code": asked.code, "message": asked.why})
        if token:
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
            return self._json({"ok": False, "message": "Unknown command"}, 400)
        if cmd in CONFIRM and form.get("confirm") != "yes":
            question, yes = CONFIRM[cmd]
            return self._json({"ok": False, "confirm": question, "yes": yes})
        if self.link is None:
            return self._json({"ok": False, "message": "The console cannot reach the hub"}, 503)
        command_id = f"console-{form['nonce']}"
        try:
            if cmd == "start":
                command = start_command(form, command_id, self._menu(table))
            else:
                fields = {"cmd": cmd, "id": command_id}
                fields.update({k: form[k] for k in ("station", "code") if form.get(k)})
                # Decoded as the hub decodes it: a bad station name or code is one line here.
                command = proto.decode_host_command(proto.encode(fields))
        except (BadStart, proto.ProtocolError) as err:
            return self._json({"ok": False, "message": str(err)[:63]}, 400)
        ok, message = await self.link.command(table, command)
        log.info("console: session %s on %s: %s -> %s", session.id, table, cmd, ok)
        return self._json({"ok": ok, "message": message})

    def _menu(self, table: str) -> list[Any]:
        """The games the hub offers on this table now (its ``public``'s menu)."""
        return games(self.snapshot(table).public) if self.snapshot is not None else []

    async def _live(self, request: web.Request) -> web.Response:
        table = self._table(request)
        session = self.door.session(
            request.cookies.get(SESSION_COOKIE), self._address(request), touch=False
        )
        if session is None or session.table != table:
            raise _error(401, "Sign in first")
        if self.snapshot is None:
            return web.Response(text="", content_type="text/html", headers=HEADERS)
        fragment = live_fragment(self.snapshot(table))
        return web.Response(text=fragment, content_type="text/html", headers=HEADERS)

    async def _revoke(self, request: web.Request) -> web.Response:
        table = self._table(request)
        form = {k: str(v) for k, v in (await request.post()).items()}
        session = self._write(request, table, form)
        which = form.get("session", "")
        if not self.door.revoke(table, which):
            return self._json({"ok": False, "message": "No such session"}, 404)
        log.info("console: session %s on %s revoked by %s", which, table, session.id)
        return self._json({"ok": True, "message": "Session ended"})

    async def _signout(self, request: web.Request) -> web.Response:
        table = self._table(request)
        form = {k: str(v) for k, v in (await request.post()).items()}
        session = self._write(request, table, form)
        self.door.revoke(table, session.id)
        response = self._json({"ok": True, "message": "Signed out"})
        response.del_cookie(SESSION_COOKIE, path=f"/host/{table}")
        return response

    # --- pages --------------------------------------------------------------------------

    def _console(self, table: str, session: Session) -> str:
        rows = "".join(
            f"<li><span>{html.escape(s.label or 'a browser')}"
            f"{' (this one)' if s.id == session.id else ''}</span>"
            f'<button class="revoke" data-session="{s.id}">End</button></li>'
            for s in sorted(self.door.of_table(table), key=lambda s: s.born)
        )
        live = live_fragment(self.snapshot(table)) if self.snapshot is not None else ""
        buttons = "".join(
            f'<button class="cmd big" data-cmd="{c}">{c.capitalize()}</button>'
            for c in ("next", "undo", "abort")
        )
        return (
            f'<main data-csrf="{html.escape(session.csrf)}" data-table="{html.escape(table)}">'
            f"<h1>{html.escape(table)}</h1>"
            f'<section class="run"><h2>Game</h2><div class="row">{buttons}</div>'
            '<div id="again" class="again" role="alertdialog" hidden><p></p>'
            '<div class="choice"><button class="yes big"></button>'
            '<button class="no big">No</button></div></div>'
            f'<p id="said" role="status"></p></section>'
            f'<div id="live">{live}</div>'
            f'<section class="new"><h2>New game</h2>{start_form(self._menu(table))}</section>'
            f'<section class="sessions"><h2>Signed-in phones</h2><ul>{rows}</ul>'
            f'<button id="signout" class="big">Sign out</button></section></main>'
        )


def _error(status: int, text: str) -> web.HTTPException:
    kinds: dict[int, type[web.HTTPException]] = {
        401: web.HTTPUnauthorized,
        403: web.HTTPForbidden,
        409: web.HTTPConflict,
    }
    return kinds[status](text=text, headers=HEADERS)


def _sign_in(table: str) -> str:
    return (
        f'<main data-table="{html.escape(table)}"><h1>{html.escape(table)}: host console</h1>'
        "<p>Ask, then check that the hub's screen shows the same code and press ok there.</p>"
        '<button id="ask" class="big">Ask for the console</button>'
        '<p id="code" class="code" aria-live="polite"></p>'
        '<p id="said" role="status"></p></main>'
    )


def _page(title: str, body: str) -> web.Response:
    text = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
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
