"""Session-wide hooks: tests marked ``hardware`` run only on a station Pi."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HARDWARE_ENV = "COFFRE_HARDWARE"


def on_station_hardware() -> bool:
    """A Raspberry Pi with the station's parts, and the builder said so (COFFRE_HARDWARE=1)."""
    try:
        model = Path("/proc/device-tree/model").read_text(errors="replace")
    except OSError:
        return False
    return "Raspberry Pi" in model and os.environ.get(HARDWARE_ENV) == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``hardware`` are deselected (not skipped) off station hardware."""
    if on_station_hardware():
        return
    off = [i for i in items if i.get_closest_marker("hardware") is not None]
    if off:
        config.hook.pytest_deselected(items=off)
        items[:] = [i for i in items if i.get_closest_marker("hardware") is None]
