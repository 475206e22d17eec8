"""Fixtures: emulated stations (real drivers over emulated chips), closed after each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from device.emulated import EmulatedStation, open_emulated_station


@pytest.fixture
def station() -> Iterator[EmulatedStation]:
    """One emulated station on its own virtual board."""
    st = open_emulated_station()
    try:
        yield st
    finally:
        st.close()
