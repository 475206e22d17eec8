"""The station's line masks and big words: a pasted line is the drawn one, pixel for
pixel, wherever it lands, and the caches stay bounded."""

from __future__ import annotations

import random
from typing import Any

import pytest
from PIL import Image, ImageDraw

import firmware.link.render as rendering
from firmware.link.protocol import Screen, Secret
from firmware.link.render import (
    BIG_CACHE,
    DOWN,
    HEIGHT,
    LINE_CACHE,
    LINES,
    UP,
    WIDTH,
    LineMasks,
    big_word,
    draw_line,
    glass,
    render,
)

#: Letters the font has, ones it spells or lacks, the scroll arrows, and a newline.
ALPHABET = "abcxyzABCXYZ0189 .,:;!?~#+-/()'éèàçÉÀœŒ’…€ñ" + DOWN + UP + "\n"


def random_text(rng: random.Random, longest: int = 30) -> str:
    """A line of up to ``longest`` characters from :data:`ALPHABET`."""
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest)))


def random_screen(rng: random.Random) -> tuple[Screen, bool, str | None]:
    """A screen model with random texts, maybe a secret (lines or a big word), maybe a toast."""
    secret = None
    if rng.random() < 0.5:
        # A big word is a number or a short word: no arrows, no newline.
        big = "".join(rng.choice("0123456789ABCéœ") for _ in range(rng.randint(0, 5)))
        lines = tuple(random_text(rng) for _ in range(rng.randint(0, 5)))
        secret = Secret(title=random_text(rng), big=big, lines=lines)
    screen = Screen(
        rev=1,
        title=random_text(rng),
        lines=tuple(random_text(rng) for _ in range(rng.randint(0, 5))),
        secret=secret,
    )
    toast = random_text(rng, 50) if rng.random() < 0.3 else None
    return screen, rng.random() < 0.6, toast


def drawn(img: Image.Image, xy: tuple[int, int], text: str, *, fill: int, **_: Any) -> None:
    """The line drawn straight onto the image: what :func:`put_line` did before its masks."""
    draw_line(ImageDraw.Draw(img), xy, text, fill=fill)


def test_a_pasted_line_equals_the_drawn_one_anywhere() -> None:
    """On a random picture, a line put at any place (edges too, either colour) the first
    time (drawn), the second (its mask made) and the third (pasted) lights and clears
    exactly the pixels drawing it there does."""
    rng = random.Random(27)
    lines = LineMasks()
    for _ in range(400):
        background = Image.frombytes("1", (WIDTH, HEIGHT), rng.randbytes(WIDTH * HEIGHT // 8))
        text = glass(random_text(rng))  # render passes lines through glass() first
        xy = (rng.randint(0, WIDTH - 1), rng.randint(0, HEIGHT - 1))
        fill = rng.choice((0, 255))
        reference = background.copy()
        drawn(reference, xy, text, fill=fill)
        for sighting in (1, 2, 3):
            put = background.copy()
            lines.put(put, xy, text, fill=fill)
            assert put.tobytes() == reference.tobytes(), (text, xy, fill, sighting)


def test_cached_render_equals_uncached_over_random_screens(monkeypatch: pytest.MonkeyPatch) -> None:
    """500 random screens (titles, lines, secrets, big words, toasts) rendered three times
    over (lines drawn, then their masks made, then pasted) give the same pixels as with
    every line drawn afresh."""
    rng = random.Random(4)
    models = [random_screen(rng) for _ in range(500)]
    LINES.clear()
    big_word.cache_clear()
    passes = [
        [render(s, show_secret=open_, toast=toast).tobytes() for s, open_, toast in models]
        for _ in range(3)
    ]
    assert LINES.sizes()[0] > 0  # masks were made and used
    monkeypatch.setattr(rendering, "put_line", drawn)
    monkeypatch.setattr(rendering, "big_word", big_word.__wrapped__)
    fresh = [render(s, show_secret=open_, toast=toast).tobytes() for s, open_, toast in models]
    for rendered in passes:
        assert rendered == fresh


def test_the_caches_never_grow_past_their_bound() -> None:
    """More distinct lines (each put twice, so each gets a mask) and big words than the
    caches hold leave each at its bound."""
    lines = LineMasks(size=16)
    img = Image.new("1", (WIDTH, HEIGHT))
    for i in range(100):
        for _ in range(2):
            lines.put(img, (1, 1), f"line {i}", fill=255)
        lines.put(img, (1, 1), f"once {i}", fill=255)
    assert lines.sizes() == (16, 16)
    assert LINES.size == LINE_CACHE
    big_word.cache_clear()
    for i in range(BIG_CACHE + 10):
        big_word(f"{i}", HEIGHT)
    assert big_word.cache_info().currsize == BIG_CACHE


def test_a_shared_mask_is_not_changed_by_use() -> None:
    """A mask pasted many times, in both colours and over both backgrounds, still puts the
    line exactly as drawing it does (nothing drew on the shared mask)."""
    lines = LineMasks()
    for i in range(6):
        fill = 255 * (i % 2)
        lines.put(Image.new("1", (WIDTH, HEIGHT), 255 - fill), (2, 3 + i), "Your turn", fill=fill)
    for fill in (0, 255):
        put, reference = (Image.new("1", (WIDTH, HEIGHT), 255 - fill) for _ in range(2))
        lines.put(put, (1, 20), "Your turn", fill=fill)
        drawn(reference, (1, 20), "Your turn", fill=fill)
        assert put.tobytes() == reference.tobytes()
