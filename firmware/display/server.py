"""The display's web server: pages rendered on the server, live by server-sent events.

``/`` is the overview of every table, ``/table/<name>`` one table's page. Each page is
whole at the first byte (a reload shows the current state at once) and then follows
``.../events``: on every change the server pushes the re-rendered fragment and the
page's few lines of JS swap it in. No CDN, no build step: CSS and JS come from
``static/`` in this package. aiohttp runs in its own thread with its own loop; the
feed's thread hands it snapshots with ``call_soon_threadsafe``.

The port is open to the whole venue network, so every connection is counted per client
address before aiohttp sees it, and every connection that does not ask for anything is
closed after IDLE_SECONDS (threat model: docs/running-a-table.md, "The table display").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from aiohttp import web

from firmware.display.address import own_address
from firmware.display.console import Console
from firmware.display.render import overview_fragment, page, table_fragment
from firmware.display.spectator import Snapshot, Spectator
from firmware.link.lang import LANGUAGES, _, check_language, speaking
from firmware.link.mqtt import BrokerConfig

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
OVERVIEW = ""  # the stream key of the overview page
#: Open connections one client address may hold: a TV or a few phones behind one NAT, each
#: page with its event stream and a browser's handful of parallel fetches. The rest are
#: answered 503 and closed at once, before aiohttp reads a byte.
CONNECTIONS_PER_ADDRESS = 32
#: Descriptors kept out of the connections' reach: the broker's link, logs, the static files
#: being sent, and the BACKLOG connections asyncio accepts in one go before any is counted.
RESERVED_FILES = 256
#: A connection must send a whole request head within this long of opening, and its next
#: one within this long of the last answer (aiohttp's keep-alive timeout): idle and
#: byte-by-byte ("slowloris") connections end.
IDLE_SECONDS = 10.0
#: Connections the kernel may queue before the display accepts them. asyncio also accepts
#: up to this many in one go before any is counted, so it must stay well inside
#: RESERVED_FILES (a backlog of 1,024 lets one burst take every descriptor under a 1,024
#: limit).
BACKLOG = 128
#: Open event streams one client address may hold.
STREAMS_PER_ADDRESS = 16
#: Open event streams in all (each is a connection, also counted below the connection cap).
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


_THROTTLE = _Throttled(
    (
        "refused a stream",
        "refused a connection",
        "closed the oldest",
        "no request head",
        "accept",
        "Too many open files",
    )
)
log.addFilter(_THROTTLE)
logging.getLogger("asyncio").addFilter(_THROTTLE)


def raise_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit and return it.

    The systemd unit sets ``LimitNOFILE``; ``coffre display`` started by hand gets the
    shell's soft limit (often 1,024) although the hard limit allows more."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as err:
            log.warning("display: cannot raise the open-file limit to %d: %s", target, err)
            return soft
        log.info("display: open-file limit raised from %d to %d (the hard limit)", soft, target)
        return target
    return soft


_REFUSED_TEXT = b"Too many connections from here; close some pages and reload.\n"
#: The answer to a connection past its address's share (it is closed right after).
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Retry-After: 10\r\n"
    b"Connection: close\r\n"
    b"Content-Length: %d\r\n\r\n" % len(_REFUSED_TEXT)
) + _REFUSED_TEXT


class _Door:
    """Counts connections per client address at accept, before aiohttp builds anything.

    A connection past ``per_address`` is answered :data:`REFUSED` and closed. When
    ``total`` are open, a newcomer takes the place of the oldest connection of the address
    holding the most, if that is more than its own address holds (a crowd from many
    addresses loses its own connections, not the TV's); otherwise it is refused."""

    def __init__(
        self,
        factory: Callable[[], asyncio.Protocol],
        *,
        per_address: int,
        total: int,
        idle_seconds: float,
    ) -> None:
        self.factory = factory
        self.per_address, self.total = per_address, total
        self.idle_seconds = idle_seconds
        #: Open connections per client address, oldest first.
        self.open: dict[str, list[_Gate]] = {}
        self.count = 0

    def __call__(self) -> _Gate:
        return _Gate(self)

    def admit(self, gate: _Gate) -> bool:
        mine = self.open.get(gate.address, [])
        if len(mine) >= self.per_address:
            log.warning(
                "display: refused a connection from %s (%d open from it, %d in all)",
                gate.address,
                len(mine),
                self.count,
            )
            return False
        if self.count >= self.total:
            # Of equally heavy addresses, the one that connected last: a crowd churns, a TV
            # holds its stream.
            heaviest = max(self.open.values(), key=lambda gates: (len(gates), gates[-1].born))
            if len(heaviest) <= len(mine):
                log.warning(
                    "display: refused a connection from %s (%d open in all)",
                    gate.address,
                    self.count,
                )
                return False
            oldest = heaviest[0]
            log.warning(
                "display: closed the oldest of %d connections from %s for one from %s",
                len(heaviest),
                oldest.address,
                gate.address,
            )
            self.leave(oldest)
            oldest.close()
        self.open.setdefault(gate.address, []).append(gate)
        self.count += 1
        return True

    def leave(self, gate: _Gate) -> None:
        mine = self.open.get(gate.address)
        if mine is None or gate not in mine:
            return
        mine.remove(gate)
        self.count -= 1
        if not mine:
            del self.open[gate.address]


class _Gate(asyncio.Protocol):
    """One accepted connection: admitted by the :class:`_Door`, then handed to aiohttp's
    protocol (every call passed on). Until the first request head is whole (a blank line),
    it holds a timer: aiohttp's keep-alive timeout covers the time between requests, and
    only its newest releases also the time before the first."""

    def __init__(self, door: _Door) -> None:
        self.door = door
        self.born = time.monotonic()
        self.address = "?"
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self.head_seen = False
        self.tail = b""
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple) and peer:
            self.address = str(peer[0])
        if not self.door.admit(self):
            transport.write(REFUSED)
            transport.close()
            return
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(self.door.idle_seconds, self._late)
        self.inner = self.door.factory()
        self.inner.connection_made(transport)

    def _late(self) -> None:
        self.timer = None
        if not self.head_seen:
            log.warning(
                "display: closed a connection from %s: no request head in %.0f s",
                self.address,
                self.door.idle_seconds,
            )
            self.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()  # its descriptor is free at once, nothing is owed to it

    def data_received(self, data: bytes) -> None:
        if not self.head_seen:
            seen = self.tail + data
            if b"\r\n\r\n" in seen or b"\n\n" in seen:
                self.head_seen = True
                self.tail = b""
                if self.timer is not None:
                    self.timer.cancel()
                    self.timer = None
            else:
                self.tail = seen[-3:]
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.inner is None:
            return
        self.door.leave(self)
        self.inner.connection_lost(exc)


class _GatedSite(web.BaseSite):
    """aiohttp's TCP site with a :class:`_Door` in front of its protocol."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, door: _Door) -> None:
        super().__init__(runner)
        self.host, self.port, self.door = host, port, door

    @property
    def name(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        self._server = server = await loop.create_server(
            self.door, self.host, self.port, backlog=BACKLOG
        )
        if server.sockets:
            self.port = server.sockets[0].getsockname()[1]


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
        connections_per_address: int = CONNECTIONS_PER_ADDRESS,
        connections_total: int | None = None,
        idle_seconds: float = IDLE_SECONDS,
        names: Mapping[str, str] | None = None,
        address: str = "",
        console: Console | None = None,
    ) -> None:
        self.tables = list(tables)
        #: The host's console under ``/host`` (docs/host-guide.md); None: no ``/host``.
        self.console = console
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
        self.connections_per_address = connections_per_address
        #: None: the open-file limit less :data:`RESERVED_FILES` (known once started).
        self.connections_total = connections_total
        self.idle_seconds = idle_seconds
        self._door: _Door | None = None
        #: Open streams per client address.
        self.open_streams: dict[str, int] = {}
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="display-web", daemon=True)
        self._runner: web.AppRunner | None = None
        self.spectator = Spectator(broker, self.tables, self._changed, self.language)
        if console is not None:
            console.snapshot = lambda table: self.spectator.snapshots[table]
        for snap in self.spectator.snapshots.values():
            self.fragments[snap.table] = table_fragment(snap)
        self.fragments[OVERVIEW] = self._overview_fragment()

    # --- life ---------------------------------------------------------------------------

    def start(self) -> None:
        """Serve in a background thread (returns once the port is listening)."""
        _THROTTLE.last.clear()  # a display's first trouble of each kind is always logged
        files = raise_file_limit()
        if self.connections_total is None:
            self.connections_total = max(files - RESERVED_FILES, self.connections_per_address)
        log.info(
            "display: up to %d open files; up to %d connections, %d per address, "
            "each idle at most %.0f s",
            files,
            self.connections_total,
            self.connections_per_address,
            self.idle_seconds,
        )
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"the display could not listen on {self.host}:{self.port}")
        self._describe()
        self.spectator.start()
        if self.console is not None:
            self.console.start()

    def _describe(self) -> None:
        """Each table's name and its page's address (the port is known now), before the
        feed runs: the idle page shows them, with a QR code of the address."""
        base = self.address or own_address(self.spectator.client.config.host, self.port, self.host)
        for table, snap in self.spectator.snapshots.items():
            snap.name = self.names.get(table, "")
            snap.address = f"{base}table/{table}" if base else ""
            self.fragments[table] = table_fragment(snap)
        self.fragments[OVERVIEW] = self._overview_fragment()

    def stop(self) -> None:
        self.spectator.stop()
        if self.console is not None:
            self.console.stop()
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
        if self.console is not None:
            app.add_routes(self.console.routes())
        self._runner = web.AppRunner(
            app,
            access_log=None,
            shutdown_timeout=1,
            keepalive_timeout=self.idle_seconds,
            handler_cancellation=True,  # a page that went away ends its stream at once
        )
        await self._runner.setup()
        server = self._runner.server
        assert server is not None and self.connections_total is not None
        self._door = _Door(
            server,
            per_address=self.connections_per_address,
            total=self.connections_total,
            idle_seconds=self.idle_seconds,
        )
        site = _GatedSite(self._runner, self.host, self.port, self._door)
        await site.start()
        self.port = site.port

    @property
    def connections(self) -> dict[str, int]:
        """Open connections per client address (read it from the web loop's thread, or
        accept a snapshot that may be a moment old)."""
        door = self._door
        return {} if door is None else {a: len(g) for a, g in list(door.open.items())}

    # --- changes --------------------------------------------------------------------------

    def _changed(self, snap: Snapshot) -> None:
        """Called in the feed's thread: render there, push from the web loop."""
        table = table_fragment(snap)
        overview = self._overview_fragment()
        self._loop.call_soon_threadsafe(self._push, snap.table, table)
        self._loop.call_soon_threadsafe(self._push, OVERVIEW, overview)

    def _overview_fragment(self) -> str:
        return overview_fragment(list(self.spectator.snapshots.values()), self.language)

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
        language = self.spectator.snapshots[name].language
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
            refused = web.Response(
                status=503,
                text="Too many open pages here; close some and reload.",
                headers={"Retry-After": "10"},
            )
            refused.force_close()  # the refused connection is not kept for another request
            return refused
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
        except (ConnectionResetError, TimeoutError):
            pass
        finally:
            self._clients[key].discard(queue)
        return response


def sse(fragment: str) -> bytes:
    """One server-sent event carrying an HTML fragment."""
    lines = "".join(f"data: {line}\n" for line in fragment.split("\n"))
    return (lines + "\n").encode()
