"""Headless Chromium (Debian's package, driven by Playwright) and the table display.

Playwright never downloads a browser here: it drives ``/usr/bin/chromium``. Pages get
a fixed viewport and a recorder of every fragment the display swaps in (version and
time), so tests can tell a page followed a game live and measure update latency.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from firmware.display.server import Display
from firmware.hub.brokerconf import SPECTATOR_USER
from firmware.tools.simtable import TABLE, SimTable

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--font-render-hinting=none",
]
VIEWPORT = {"width": 1280, "height": 720}

#: Runs in every page before its scripts: records (version, epoch ms) of each swap.
RECORDER = """
window.__seen = [];
new MutationObserver(function () {
  var s = document.querySelector('#live > section');
  if (s) window.__seen.push([s.dataset.version, performance.timeOrigin + performance.now()]);
}).observe(document, {childList: true, subtree: true});
"""


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium browser (fails with one line if the package is missing)."""
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run the README's test command (it installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def freeze_countdowns(sim: SimTable) -> None:
    """Slow the hub's clock 1000-fold: countdowns show but never tick (repeatable pages)."""
    import time

    assert sim.hub is not None
    start = time.monotonic()
    sim.hub.clock = lambda: start + (time.monotonic() - start) / 1000


def new_page(browser: Any, viewport: dict[str, int] | None = None) -> Any:
    page = browser.new_page(viewport=viewport or VIEWPORT)
    page.add_init_script(RECORDER)
    return page


def start_display(sim: SimTable, tables: list[str] | None = None, **kwargs: Any) -> Display:
    """A display process (in this process) following the table as the spectator user."""
    display = Display(
        sim.broker.config(SPECTATOR_USER), tables or [TABLE], host="127.0.0.1", port=0, **kwargs
    )
    display.start()
    sim.on_stop.append(display.stop)
    return display


def page_version(page: Any) -> int:
    value = page.evaluate(
        "(document.querySelector('#live > section') || {dataset: {}}).dataset.version"
    )
    return int(value or 0)


def wait_version(page: Any, version: int, timeout: float = 15) -> None:
    """Wait until the page shows the public table of ``version`` (or a later one)."""
    page.wait_for_function(
        "v => { var s = document.querySelector('#live > section');"
        " return s && Number(s.dataset.version) >= v; }",
        arg=version,
        timeout=timeout * 1000,
    )


def settled(page: Any, timeout: float = 15) -> None:
    """Wait until the page has fitted its type to what it shows, as a fresh page would
    (the display refits a quiet page a moment after its last update)."""
    page.wait_for_function(
        "() => document.documentElement.dataset.settled === 'yes'", timeout=timeout * 1000
    )


def screenshot(page: Any) -> Image.Image:
    import io

    data = page.screenshot(full_page=True, animations="disabled", caret="hide")
    return Image.open(io.BytesIO(data)).convert("RGB")


def count(page: Any, what: str) -> int:
    """One of the table page's own counts (display.js: ``fits``, ``kept``)."""
    return int(page.evaluate(f"document.documentElement.dataset.{what} || 0"))


def display_latency(workdir: Path, *, tables: int = 8, updates: int = 200) -> dict[str, float]:
    """Hub publish -> DOM change, in ms, with ``tables`` tables on one display process.

    A mosquitto with ``tables`` tables' users (TLS, ACL); the hub user publishes real
    ``public`` payloads round-robin; one browser page per table records when each version
    lands in its DOM. Returns count, p50, p99 and max (numbers to print, not to assert), and
    how many times the pages fitted their type in all while the updates came (``fits``, the
    pages' own count; each may fit once more when its updates stop).
    """
    import json
    import time

    from firmware.hub.brokerconf import HUB_USER, TableAccess, write_broker_files
    from firmware.link import protocol as proto
    from firmware.link.mqtt import BrokerConfig, Client
    from firmware.link.tls import CA_FILE
    from firmware.tools.brokers import Mosquitto, free_port
    from tests.support.playouts import playout, public_of

    names = [f"t{i + 1}" for i in range(tables)]
    shared = TableAccess(names[0], ["p1"])  # one hub and one spectator user for all tables
    users = {u: shared.passwords[u] for u in (HUB_USER, SPECTATOR_USER)}
    access = [shared] + [TableAccess(name, ["p1"], dict(users)) for name in names[1:]]
    port = free_port()
    conf_dir = workdir / "broker"
    conf = write_broker_files(
        conf_dir, port, access, stay_root=os.geteuid() == 0, tls_hostnames=["127.0.0.1"]
    )
    broker = Mosquitto(conf, port)
    broker.start()
    ca = str(conf_dir / CA_FILE)

    def config(user: str) -> BrokerConfig:
        return BrokerConfig("127.0.0.1", port, user, access[0].passwords[user], tls_ca=ca)

    # A real game's public tables, stamped with a fresh version each time.
    publics = [public_of("secret-identity", st) for st in playout("secret-identity", 5, 3)]
    hub = Client(config(HUB_USER), "bench-hub", [])
    hub.start()
    hub.wait_connected()
    display = Display(config(SPECTATOR_USER), names, host="127.0.0.1", port=0)
    display.start()
    sent: dict[tuple[str, int], float] = {}
    try:
        with chromium() as browser:
            pages = {}
            for name in names:
                page = new_page(browser)
                page.goto(f"{display.url}table/{name}")
                pages[name] = page
            time.sleep(0.5)
            fitted = [count(p, "fits") for p in pages.values()]
            for k in range(updates):
                name = names[k % tables]
                payload = dict(publics[k % len(publics)], version=1000 + k)
                sent[(name, 1000 + k)] = time.time() * 1000
                hub.publish(proto.Topics(name).public, json.dumps(payload).encode(), retain=True)
                time.sleep(0.02)
            last = {name: max(v for n, v in sent if n == name) for name in names}
            for name, page in pages.items():
                wait_version(page, last[name])
            seen = {name: page.evaluate("window.__seen") for name, page in pages.items()}
            fits = sum(count(p, "fits") for p in pages.values()) - sum(fitted)
            kept = sum(count(p, "kept") for p in pages.values())
    finally:
        display.stop()
        hub.stop()
        broker.stop()
    delays = []
    for name, marks in seen.items():
        first: dict[int, float] = {}
        for version, at in marks:
            first.setdefault(int(version), at)
        delays += [first[v] - t for (n, v), t in sent.items() if n == name and v in first]
    delays.sort()

    def pct(p: float) -> float:
        return delays[min(len(delays) - 1, int(p * len(delays)))]

    return {
        "updates": float(len(sent)),
        "seen": float(len(delays)),
        "fits": float(fits),
        "kept": float(kept),
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "max_ms": delays[-1],
    }


class StaticPage:
    """A browser tab that shows a rendered page as the display serves it (its stylesheet and
    script from ``firmware/display/static``), without a broker or a server."""

    BASE = "http://display.test/"

    def __init__(self, browser: Any, viewport: dict[str, int]) -> None:
        from firmware.display.server import STATIC

        self.static = STATIC
        self.html = ""
        self.page = browser.new_page(viewport=viewport)
        self.page.route(self.BASE + "**", self._serve)

    def _serve(self, route: Any) -> None:
        path = route.request.url[len(self.BASE) :]
        if path.startswith("static/"):
            route.fulfill(path=str(self.static / path[len("static/") :]))
        else:
            route.fulfill(body=self.html, content_type="text/html; charset=utf-8")

    def show(self, html: str) -> dict[str, int]:
        """Load ``html``; its scroll height and width once the page has laid itself out."""
        self.html = html
        self.page.goto(self.BASE + "table/main")
        self.page.wait_for_load_state("load")
        size: dict[str, int] = self.page.evaluate(
            "({height: document.documentElement.scrollHeight,"
            " width: document.documentElement.scrollWidth})"
        )
        return size
