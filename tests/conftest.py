"""Session-wide hooks: tests marked ``hardware`` run only on a station Pi, tests marked
``e2e`` (the clean-table run: root, the internet, minutes) only with ``COFFRE_E2E=1``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HARDWARE_ENV = "COFFRE_HARDWARE"
E2E_ENV = "COFFRE_E2E"


def on_station_hardware() -> bool:
    """A Raspberry Pi with the station's parts, and the builder said so (COFFRE_HARDWARE=1)."""
    try:
        model = Path("/proc/device-tree/model").read_text(errors="replace")
    except OSError:
        return False
    return "Raspberry Pi" in model and os.environ.get(HARDWARE_ENV) == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``hardware`` are deselected (not skipped) off station hardware, and
    those marked ``e2e`` unless ``COFFRE_E2E=1``."""
    markers = [] if on_station_hardware() else ["hardware"]
    if os.environ.get(E2E_ENV) != "1":
        markers.append("e2e")
    off = [i for i in items if any(i.get_closest_marker(m) for m in markers)]
    if off:
        config.hook.pytest_deselected(items=off)
        items[:] = [i for i in items if i not in off]
