"""Emulated-chip helpers: reader events of a number of polls, pixel-exact image equality."""

from __future__ import annotations

from PIL import Image

from device.base import Reader, ReaderEvent


def events(reader: Reader, polls: int) -> list[ReaderEvent]:
    """The events of ``polls`` polls, Nones dropped."""
    return [e for e in (reader.poll() for _ in range(polls)) if e is not None]


def same(a: Image.Image, b: Image.Image) -> bool:
    """Pixel-exact equality of two images (ImageChops misreports mode "1")."""
    return a.size == b.size and a.convert("1").tobytes() == b.convert("1").tobytes()
