"""Log lines the hub writes about trouble others cause: one per kind every few seconds.

Nothing a station or the host sends can make the hub write more than one log line per
kind of trouble every LOG_EVERY seconds; the next line says how many were held back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: One log line per kind of trouble at most this often (seconds).
LOG_EVERY = 10.0


class Throttle:
    """One log line per key every ``every`` seconds; the next one says how many were held."""

    def __init__(self, every: float = LOG_EVERY, clock: Callable[[], float] = time.monotonic):
        self.every = every
        self.clock = clock
        self._last: dict[Any, float] = {}
        self._held: dict[Any, int] = {}

    def allow(self, key: Any) -> int | None:
        """None: stay quiet; else the number of lines held back since the last one."""
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.every:
            self._held[key] = self._held.get(key, 0) + 1
            return None
        if len(self._last) > 1000:  # keys are few; never let them pile up
            self._last.clear()
            self._held.clear()
        self._last[key] = now
        return self._held.pop(key, 0)

    def warning(self, key: Any, text: str) -> None:
        held = self.allow(key)
        if held is not None:
            log.warning("%s%s", text, f" (+{held} more like it)" if held else "")

    def error(self, key: Any, text: str) -> None:
        held = self.allow(key)
        if held is not None:
            log.error("%s%s", text, f" (+{held} more like it)" if held else "")


def line(exc: BaseException) -> str:
    """An exception as one short line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
