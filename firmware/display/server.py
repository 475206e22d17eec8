"""The display's web server: pages rendered on the server, live by server-sent events.

``/`` is the overview of every table, ``/table/<name>`` one table's page. Each page is
whole at the first byte (a reload shows the current state at once) and then follows
``.../events``: on every change the server pushes the re-rendered fragment and the
page's few lines of JS swap it in. No CDN, no build step: CSS and JS come from
``static/`` in this package. aiohttp runs in its own thread with its own loop; the
feed's thread hands it snapshots with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from aiohttp import web

from firmware.display.feed import Feed, Snapshot
from firmware.display.render import overview_fragment, page, table_fragment
from firmware.link.lang import LANGUAGES, _, check_language, speaking
from firmware.link.mqtt import BrokerConfig

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
OVERVIEW = ""  # the stream key of the overview page


class Display:
    """Follows tables on the broker and serves their pages over HTTP."""

    def __init__(
        self,
        broker: BrokerConfig,
        tables: Sequence[str],
        *,
        host: str = "0.0.0.0",
        port: int = 8080,
        record: bool = False,
        language: str = LANGUAGES[0],
    ) -> None:
        self.tables = list(tables)
        #: The display's own language: the overview's heading, and any table whose hub has
        #: not said its language yet (each table's page follows its hub's ``language``).
        self.language = check_language(language)
        self.host, self.port = host, port
        self.fragments: dict[str, str] = {}
        #: With ``record``: every fragment pushed, per stream key (for the no-leak tests).
        self.record: dict[str, list[str]] | None = {} if record else None
        self._clients: dict[str, set[asyncio.Queue[str | None]]] = {}
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="display-web", daemon=True)
        self._runner: web.AppRunner | None = None
        self.feed = Feed(broker, self.tables, self._changed, self.language)
        for snap in self.feed.snapshots.values():
            self.fragments[snap.table] = table_fragment(snap)
        self.fragments[OVERVIEW] = self._overview_fragment()

    # --- life ---------------------------------------------------------------------------

    def start(self) -> None:
        """Serve in a background thread (returns once the port is listening)."""
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"the display could not listen on {self.host}:{self.port}")
        self.feed.start()

    def stop(self) -> None:
        self.feed.stop()
        if not self._thread.is_alive():
            return
        # Open streams end first (a browser would otherwise hold the shutdown).
        asyncio.run_coroutine_threadsafe(self._close_streams(), self._loop).result(5)
        if self._runner is not None:
            fut = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
            with contextlib.suppress(Exception):
                fut.result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    async def _close_streams(self) -> None:
        for queues in self._clients.values():
            for queue in queues:
                queue.put_nowait(None)
        await asyncio.sleep(0.05)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        return f"http://{host}:{self.port}/"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._listen())
        except OSError as err:
            log.error("display: cannot listen on %s:%s: %s", self.host, self.port, err)
            return
        self._ready.set()
        self._loop.run_forever()

    async def _listen(self) -> None:
        app = web.Application()
        app.add_routes(
            [
                web.get("/", self._overview),
                web.get("/events", self._events_overview),
                web.get("/table/{name}", self._table),
                web.get("/table/{name}/events", self._events_table),
                web.static("/static", STATIC),
            ]
        )
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        if self.port == 0:
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            self.port = sockets[0].getsockname()[1]

    # --- changes --------------------------------------------------------------------------

    def _changed(self, snap: Snapshot) -> None:
        """Called in the feed's thread: render there, push from the web loop."""
        table = table_fragment(snap)
        overview = self._overview_fragment()
        self._loop.call_soon_threadsafe(self._push, snap.table, table)
        self._loop.call_soon_threadsafe(self._push, OVERVIEW, overview)

    def _overview_fragment(self) -> str:
        return overview_fragment(list(self.feed.snapshots.values()), self.language)

    def _push(self, key: str, fragment: str) -> None:
        if self.fragments.get(key) == fragment:
            return
        self.fragments[key] = fragment
        if self.record is not None:
            self.record.setdefault(key, []).append(fragment)
        for queue in self._clients.get(key, set()):
            queue.put_nowait(fragment)

    # --- handlers ------------------------------------------------------------------------------

    async def _overview(self, _request: web.Request) -> web.Response:
        with speaking(self.language):
            title = _("coffre tables")
        body = page(title, self.fragments[OVERVIEW], stream="/events", language=self.language)
        return web.Response(text=body, content_type="text/html")

    async def _table(self, request: web.Request) -> web.Response:
        name = self._name(request)
        language = self.feed.snapshots[name].language
        body = page(
            f"coffre · {name}",
            self.fragments[name],
            stream=f"/table/{name}/events",
            language=language,
        )
        return web.Response(text=body, content_type="text/html")

    async def _events_overview(self, request: web.Request) -> web.StreamResponse:
        return await self._stream(request, OVERVIEW)

    async def _events_table(self, request: web.Request) -> web.StreamResponse:
        return await self._stream(request, self._name(request))

    def _name(self, request: web.Request) -> str:
        name = request.match_info["name"]
        if name not in self.tables:
            raise web.HTTPNotFound(text=f"no table {name} on this display")
        return name

    async def _stream(self, request: web.Request, key: str) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._clients.setdefault(key, set()).add(queue)
        try:
            # A (re)connecting page gets the current state at once.
            await response.write(sse(self.fragments[key]))
            while True:
                try:
                    fragment = await asyncio.wait_for(queue.get(), 15)
                except TimeoutError:
                    await response.write(b": keep-alive\n\n")
                    continue
                while fragment is not None and not queue.empty():
                    fragment = queue.get_nowait()  # a slow browser skips to the newest state
                if fragment is None:
                    break
                await response.write(sse(fragment))
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self._clients[key].discard(queue)
        return response


def sse(fragment: str) -> bytes:
    """One server-sent event carrying an HTML fragment."""
    lines = "".join(f"data: {line}\n" for line in fragment.split("\n"))
    return (lines + "\n").encode()
