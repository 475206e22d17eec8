"""Starting a station, with whatever stops it shown on its own glass.

A station Pi has no screen but its OLED: when its service cannot start (a typo in
``station.toml``, a password file or ``ca.crt`` not there yet, a reader that does not
answer) the reason goes on the glass as well as in the journal, as long as the display
itself works. Then:

- a file that is missing or unreadable, or a part that does not answer: with
  ``--retry SECONDS`` (the unit passes ``--retry 5``) the station waits and tries again
  (the file gets copied or handed over, the loose wire gets pushed back), telling systemd
  it is alive meanwhile, and starts by itself once everything is there. Without it (a
  person at a terminal wants the answer now) it stops as below;
- a mistake in a file (an unknown key, a bad name, an unknown backend, a bad pin map):
  retrying cannot fix it, so the station stops with exit status 78 (the unit does not
  restart it) and *leaves the reason lit* on the glass (the SSD1306 keeps its picture
  while powered). After fixing it: ``sudo systemctl restart coffre-station``.

Which display shows a problem that came before the config was read: the backend and pin
map the file names if they can be read at all, else ``$COFFRE_DEVICE_BACKEND`` (the unit
sets ``real``) and the packaged pin map.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import tomllib
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from device.base import DeviceError, Display, StationDevices
from device.factory import UnknownBackend, open_station, open_station_display
from firmware.link import notify
from firmware.link.config import EX_CONFIG, ConfigError, MissingFile
from firmware.link.render import CHARS, wrap
from firmware.station.config import StationSettings, load_station
from hardware.pins import PinMapError, StationPins, load_station_pins

log = logging.getLogger("coffre.station")

#: Seconds between two attempts when a file or a part is missing (the unit's --retry).
RETRY_SECONDS = 5.0
#: Lines of the glass the reason may take (the title and the last line are ours).
REASON_LINES = 3


@dataclass(frozen=True)
class Problem:
    """Why the station cannot start, and whether waiting may fix it."""

    message: str
    retry: bool
    #: The exit status when not retrying: 78 for files, 1 for the hardware.
    status: int = EX_CONFIG
    #: A shorter text for the glass (default: the message).
    short: str | None = None


@dataclass
class Started:
    """What a successful start gives: the settings and the opened parts."""

    settings: StationSettings
    devices: StationDevices


OpenDevices = Callable[[StationPins | None, str | None], StationDevices]
OpenDisplay = Callable[[StationPins | None, str | None], Display]


def glass_lines(problem: Problem, *, retry: bool, width: int = CHARS) -> list[str]:
    """The reason, folders dropped from paths, on :data:`REASON_LINES` lines, then what
    happens next: "Retrying..." or what to do."""
    text = problem.short or problem.message
    text = re.sub(r"(?<![\w.])/(?:[\w.-]+/)+([\w.-]+)", r"\1", text)
    lines = wrap(text, REASON_LINES, width)
    lines.append("Retrying..." if retry else "Fix it, then restart")
    return lines


def classify(exc: BaseException) -> Problem | None:
    """A start-up failure as a :class:`Problem`, or None for a bug (not ours to hide)."""
    if isinstance(exc, MissingFile):
        return Problem(str(exc), retry=True, short=f"{exc.path.name} {exc.reason}")
    if isinstance(exc, ConfigError | UnknownBackend | PinMapError):
        return Problem(str(exc), retry=False)
    if isinstance(exc, DeviceError):
        return Problem(f"hardware: {exc}", retry=True, status=1)
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return Problem(f"this install lacks {exc.name}: pip install 'coffre[station]'", retry=False)
    return None


class Boot:
    """Tries to start a station until it can (or must give up), the reason on the glass.

    ``open_devices`` and ``open_display`` open the parts (tests pass mock ones).
    """

    def __init__(
        self,
        config: str | Path,
        pins: str | Path | None = None,
        *,
        open_devices: OpenDevices = open_station,
        open_display: OpenDisplay = open_station_display,
        retry_seconds: float | None = None,
        pair: bool = False,
    ) -> None:
        """``pair``: a missing password file or ``ca.crt`` is asked of the hub (pairing,
        docs/pairing.md) instead of waited for."""
        self.pair = pair
        self.config = Path(config)
        self.pins_file = Path(pins) if pins is not None else None
        self.open_devices = open_devices
        self.open_display = open_display
        self.retry_seconds = retry_seconds
        #: The display opened alone to show a problem (closed once the station starts).
        self.display: Display | None = None
        self.problems: list[Problem] = []
        #: The settings, once they read (a later problem is then told to the hub too).
        self.settings: StationSettings | None = None
        self._status_link: Any = None
        #: The status the hub was last told (topic, payload), said again at each connection.
        self._status: tuple[str, bytes] | None = None
        self.attempts = 0

    def attempt(self) -> Started | Problem:
        """One try: the settings, the pin map, the parts."""
        self.attempts += 1
        try:
            settings = load_station(self.config)
            self.settings = settings
            pins = load_station_pins(self.pins_file or settings.pins)
            if self.display is not None:  # the real parts need the I2C bus back
                self.display.close()
                self.display = None
            return Started(settings, self.open_devices(pins, settings.backend))
        except Exception as exc:
            problem = classify(exc)
            if problem is None:
                raise
            return problem

    def run(self, stop: threading.Event) -> Started | int:
        """Try until started (the parts, for the caller to run the station on), or an exit
        status: the problem's (``retry_seconds`` None, or a mistake in a file), 0 when
        stopped while waiting."""
        watchdog: notify.Watchdog | None = None
        try:
            while True:
                if self.pair and self._needs_pairing():
                    if watchdog is None:  # pairing waits for the host: alive meanwhile
                        notify.ready()
                        watchdog = notify.Watchdog().__enter__()
                    if not self._paired(stop):
                        return 0 if stop.is_set() else EX_CONFIG
                outcome = self.attempt()
                if isinstance(outcome, Started):
                    return outcome
                retry = outcome.retry and self.retry_seconds is not None
                self._report(outcome, retry)
                if not retry or self.retry_seconds is None:
                    if self.display is not None:
                        self.display.leave()
                        self.display = None
                    return outcome.status
                if watchdog is None:  # alive and waiting: systemd must not restart us
                    notify.ready()
                    watchdog = notify.Watchdog().__enter__()
                if stop.wait(self.retry_seconds):
                    return 0
        finally:
            if self._status_link is not None:
                self._status_link.stop()
                self._status_link = None
            if watchdog is not None:
                watchdog.__exit__(None, None, None)
            if self.display is not None and stop.is_set():
                self.display.close()
                self.display = None

    def _report(self, problem: Problem, retry: bool) -> None:
        """Log a new problem (once, not every retry) and draw it on the glass."""
        if not self.problems or self.problems[-1] != problem:
            if retry:
                log.error("%s; retrying every %g s", problem.message, self.retry_seconds)
            self.problems.append(problem)
        # Every time, not only when the problem changes: new settings need a new link.
        self._tell_hub(problem)
        self._show(problem, retry)

    def _show(self, problem: Problem, retry: bool) -> None:
        title = "coffre " + (self._station_id() or "station")
        self.show_lines(title, glass_lines(problem, retry=retry))

    def _tell_hub(self, problem: Problem) -> None:
        """A part that does not answer, once the settings read: the station's retained
        status says ``error`` and the reason, so the hub lists the seat (firmware.hub.health).

        The status link says it again at every (re)connection: a broker restored from a
        backup, or restarted without its retained messages, would otherwise list the seat
        as never seen. New settings (a re-pairing's password) get a new link."""
        settings = self.settings
        if settings is None or not problem.retry:
            return
        from firmware.link import protocol as proto
        from firmware.link.mqtt import Client

        topic = proto.Topics(settings.table).station(settings.id, "status")
        reason = (problem.short or problem.message).removeprefix("hardware: ")[:64]
        status = (topic, proto.encode(proto.StationStatus(state="error", reason=reason)))
        link = self._status_link
        if link is not None and link.config != settings.broker:
            link.stop()
            link = self._status_link = None
        if link is not None and status == self._status:
            return  # said, and said again at every connection
        self._status = status
        if link is None:
            client_id = f"coffre-{settings.table}-{settings.id}-{os.urandom(4).hex()}"
            # Its first connection says it (see _restate): nothing is queued before.
            self._status_link = Client(settings.broker, client_id, [], on_connected=self._restate)
            self._status_link.start()
        elif link.connected.is_set():
            link.publish(topic, status[1], retain=True)

    def _restate(self) -> None:
        """On the status link's every (re)connection (paho's thread): the status again."""
        link, status = self._status_link, self._status
        if link is not None and status is not None:
            link.publish(status[0], status[1], retain=True)

    def show_lines(self, title: str, lines: list[str]) -> None:
        """Draw a few lines on the glass (opened alone if need be), if there is one."""
        from firmware.link.render import render_lines

        if self.display is None:
            backend, pins = self._display_choice()
            try:
                self.display = self.open_display(pins, backend)
            except Exception as exc:  # no glass to write on: the journal has the line
                log.debug("no display to show the problem on: %s", exc)
                return
        with suppress(DeviceError):
            self.display.show(render_lines(title, lines))

    def _needs_pairing(self) -> bool:
        from firmware.station.pairing import wanted

        return wanted(self.config) is not None

    def _paired(self, stop: threading.Event) -> bool:
        """Pair if the config calls for it (see firmware.station.pairing); False when it
        did not pair and will not try again (stopped, or refused with no --retry)."""
        from firmware.station import pairing

        again = pairing.AGAIN_SECONDS if self.retry_seconds is not None else None
        return pairing.pair_until_done(self.config, self.show_lines, stop, again=again)

    def _raw(self) -> dict[str, Any]:
        """As much of ``station.toml`` as reads as TOML, unchecked ({} if nothing)."""
        try:
            data = tomllib.loads(self.config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
            return {}
        station = data.get("station")
        return station if isinstance(station, dict) else {}

    def _station_id(self) -> str | None:
        value = self._raw().get("id")
        return value if isinstance(value, str) and len(value) <= 12 else None

    def _display_choice(self) -> tuple[str | None, StationPins | None]:
        """The backend and pin map for a display opened before the config is usable."""
        raw = self._raw()
        backend = raw.get("backend")
        backend = backend if backend in ("real", "mock", "emulated") else None
        pins_file = self.pins_file or raw.get("pins")
        try:
            pins = load_station_pins(pins_file if isinstance(pins_file, str | Path) else None)
        except (PinMapError, OSError):
            pins = load_station_pins()
        return backend, pins
