"""``coffre display``: the table display's program, from its config file to its exit status.

It serves the page until SIGTERM or SIGINT. The web server needs aiohttp (the "display"
extra), imported only once the config file has been read, so a config mistake is told
first even where the extra is missing.
"""

from __future__ import annotations

import threading
from typing import Any

from firmware.display.config import load_display
from firmware.link.process import fail, stop_on_signal


def main(args: Any) -> int:
    """Serve the display of ``args.config`` until a stop signal; the exit status."""
    with stop_on_signal() as stop:
        return serve(args, stop)


def serve(args: Any, stop: threading.Event) -> int:
    """Serve the display until ``stop`` is set."""
    settings = load_display(args.config)
    from firmware.display.server import Display  # aiohttp: the "display" extra

    port = settings.port if args.port is None else args.port
    language = settings.language if args.language is None else args.language
    console = None
    if settings.console is not None:
        from firmware.display.console import Console
        from firmware.display.console_link import MqttHubLink

        link = MqttHubLink(settings.console, settings.tables)
        console = Console(settings.tables, link, backups=settings.backups)
    display = Display(
        settings.broker,
        settings.tables,
        host=settings.host,
        port=port,
        language=language,
        names=settings.names,
        address=settings.address,
        console=console,
    )
    try:
        display.start()
    except RuntimeError as err:
        return fail(f"display: {err}", 1)
    print(f"table display on {display.url} for {', '.join(settings.tables)}", flush=True)
    stop.wait()
    display.stop()
    return 0
