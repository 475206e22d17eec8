"""HIL fixtures: whole tables whose stations run their real reader/display backends
(Mfrc522Reader, Ssd1306Display over luma) on emulated MFRC522/SSD1306 chips, with the
hub on a real mosquitto (ACL on)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from firmware.tools.simtable import SimTable

TableFactory = Callable[..., "SimTable"]


@pytest.fixture(scope="session")
def _need_mosquitto() -> None:
    from firmware.tools.brokers import find_mosquitto

    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed: the HIL suite runs the hub on a real broker")


@pytest.fixture
def emulated_table(tmp_path: Path, _need_mosquitto: None) -> Iterator[TableFactory]:
    """Start tables on mosquitto whose stations are emulated chips under real drivers."""
    from tests.support.tables import table_factory

    yield from table_factory(tmp_path, device_backend="emulated")
