"""Fixtures: emulated stations (real drivers over emulated chips), closed after each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PIL import Image

from device.base import Reader, ReaderEvent
from device.emulated import EmulatedStation, open_emulated_station


@pytest.fixture
def station() -> Iterator[EmulatedStation]:
    """One emulated station on its own virtual board."""
    st = open_emulated_station()
    try:
        yield st
    finally:
        st.close()


def events(reader: Reader, polls: int) -> list[ReaderEvent]:
    """The events of ``polls`` polls, Nones dropped."""
    return [e for e in (reader.poll() for _ in range(polls)) if e is not None]


def same(a: Image.Image, b: Image.Image) -> bool:
    """Pixel-exact equality of two images (ImageChops misreports mode "1")."""
    return a.size == b.size and a.convert("1").tobytes() == b.convert("1").tobytes()
