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
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from aiohttp import web

from firmware.display.address import own_address
from firmware.display.feed import Feed, Snapshot
from firmware.display.render import overview_fragment, page, table_fragment
from firmware.link.lang import LANGUAGES, _, check_language, speaking
from firmware.link.mqtt import BrokerConfig

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
OVERVIEW = ""  # the stream key of the overview page
#: Open event streams one client address may hold (a TV, a few phones behind one NAT).
STREAMS_PER_ADDRESS = 16
#: Open event streams in all: well under the unit's LimitNOFILE (4096), so a crowd of idle
#: connections can never take the file descriptors the page and the broker need.
STREAMS_TOTAL = 512
#: A stream ends after this long (the page's EventSource reconnects at once and gets the
#: current state), so a forgotten or half-open one cannot hold a slot for ever.
STREAM_SECONDS = 600.0
#: A write a client does not take within this long ends its stream (a dead peer).
WRITE_SECONDS = 30.0
#: One log line per kind of trouble at most this often.
LOG_EVERY = 10.0


class _Throttled(logging.Filter):
    """Let one record per message kind through every LOG_EVERY seconds (a flood of refused
    streams or accept errors must not flood the journal)."""

    def __init__(self, keys: Sequence[str]) -> None:
        super().__init__()
        self.keys = tuple(keys)
        self.last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        key = next((k for k in self.keys if k in text), None)
        if key is None:
            return True
        now = time.monotonic()
        if now - self.last.get(key, -LOG_EVERY) < LOG_EVERY:
            return False
        self.last[key] = now
        return True


_THROTTLE = _Throttled(("refused a stream", "accept", "Too many open files"))
log.addFilter(_THROTTLE)
logging.getLogger("asyncio").addFilter(_THROTTLE)


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
        streams_per_address: int = STREAMS_PER_ADDRESS,
        streams_total: int = STREAMS_TOTAL,
        stream_seconds: float = STREAM_SECONDS,
        names: Mapping[str, str] | None = None,
        address: str = "",
    ) -> None:
        self.tables = list(tables)
        #: Each table's name for guests, and the address phones open (empty: found at start).
        self.names, self.address = dict(names or {}), address
        #: The display's own language: the overview's heading, and any table whose hub has
        #: not said its language yet (each table's page follows its hub's ``language``).
        self.language = check_language(language)
        self.host, self.port = host, port
        self.fragments: dict[str, str] = {}
        #: With ``record``: every fragment pushed, per stream key (for the no-leak tests).
        self.record: dict[str, list[str]] | None = {} if record else None
        self._clients: dict[str, set[asyncio.Queue[str | None]]] = {}
        self.streams_per_address, self.streams_total = streams_per_address, streams_total
        self.stream_seconds = stream_seconds
        #: Open streams per client address.
        self.open_streams: dict[str, int] = {}
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
        self._describe()
        self.feed.start()

    def _describe(self) -> None:
        """Each table's name and its page's address (the port is known now), before the
        feed runs: the idle page shows them, with a QR code of the address."""
        base = self.address or own_address(self.feed.client.config.host, self.port, self.host)
        for table, snap in self.feed.snapshots.items():
            snap.name = self.names.get(table, "")
            snap.address = f"{base}table/{table}" if base else ""
            self.fragments[table] = table_fragment(snap)
        self.fragments[OVERVIEW] = self._overview_fragment()

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
        address = request.remote or "?"
        if (
            self.open_streams.get(address, 0) >= self.streams_per_address
            or sum(self.open_streams.values()) >= self.streams_total
        ):
            log.warning(
                "display: refused a stream from %s (%d open from it, %d in all)",
                address,
                self.open_streams.get(address, 0),
                sum(self.open_streams.values()),
            )
            raise web.HTTPServiceUnavailable(
                text="Too many open pages here; close some and reload.",
                headers={"Retry-After": "10"},
            )
        self.open_streams[address] = self.open_streams.get(address, 0) + 1
        try:
            return await self._serve_stream(request, key)
        finally:
            self.open_streams[address] -= 1
            if not self.open_streams[address]:
                del self.open_streams[address]

    async def _serve_stream(self, request: web.Request, key: str) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        response.force_close()  # a stream that ends closes its connection too
        await response.prepare(request)
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._clients.setdefault(key, set()).add(queue)
        ends = time.monotonic() + self.stream_seconds

        async def write(data: bytes) -> None:
            await asyncio.wait_for(response.write(data), WRITE_SECONDS)

        try:
            # A (re)connecting page gets the current state at once.
            await write(sse(self.fragments[key]))
            quiet = 0.0
            while (left := ends - time.monotonic()) > 0:
                transport = request.transport
                if transport is None or transport.is_closing():
                    break  # the page went away: its slot is free at once
                try:
                    fragment = await asyncio.wait_for(queue.get(), min(1.0, left))
                except TimeoutError:
                    quiet += 1.0
                    if quiet >= 15:
                        quiet = 0.0
                        await write(b": keep-alive\n\n")
                    continue
                while fragment is not None and not queue.empty():
                    fragment = queue.get_nowait()  # a slow browser skips to the newest state
                if fragment is None:
                    break
                await write(sse(fragment))
        except (ConnectionResetError, asyncio.CancelledError, TimeoutError):
            pass
        finally:
            self._clients[key].discard(queue)
        return response


def sse(fragment: str) -> bytes:
    """One server-sent event carrying an HTML fragment."""
    lines = "".join(f"data: {line}\n" for line in fragment.split("\n"))
    return (lines + "\n").encode()
