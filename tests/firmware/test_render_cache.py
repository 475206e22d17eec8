"""The station's line masks and big words: a pasted line is the drawn one, pixel for
pixel, wherever it lands, and the caches stay bounded."""

from __future__ import annotations

import random

import pytest
from PIL import Image, ImageDraw

import firmware.link.render as rendering
from firmware.link.protocol import Screen, Secret
from firmware.link.render import (
    BIG_CACHE,
    DOWN,
    HEIGHT,
    LINE_CACHE,
    UP,
    WIDTH,
    big_word,
    draw_line,
    glass,
    line_mask,
    put_line,
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


def drawn(img: Image.Image, xy: tuple[int, int], text: str, *, fill: int) -> None:
    """The line drawn straight onto the image: what :func:`put_line` did before its masks."""
    draw_line(ImageDraw.Draw(img), xy, text, fill=fill)


def test_a_pasted_line_equals_the_drawn_one_anywhere() -> None:
    """On a random picture, a line pasted from its mask at any place (edges too, either
    colour) lights and clears exactly the pixels drawing it there does."""
    rng = random.Random(27)
    for _ in range(600):
        background = Image.frombytes("1", (WIDTH, HEIGHT), rng.randbytes(WIDTH * HEIGHT // 8))
        text = glass(random_text(rng))  # render passes lines through glass() first
        xy = (rng.randint(0, WIDTH - 1), rng.randint(0, HEIGHT - 1))
        fill = rng.choice((0, 255))
        pasted, reference = background.copy(), background.copy()
        put_line(pasted, xy, text, fill=fill)
        drawn(reference, xy, text, fill=fill)
        assert pasted.tobytes() == reference.tobytes(), (text, xy, fill)


def test_cached_render_equals_uncached_over_random_screens(monkeypatch: pytest.MonkeyPatch) -> None:
    """500 random screens (titles, lines, secrets, big words, toasts) render to the same
    pixels with the masks, warm or cold, as with every line drawn afresh."""
    rng = random.Random(4)
    models = [random_screen(rng) for _ in range(500)]
    line_mask.cache_clear()
    big_word.cache_clear()
    cold = [render(s, show_secret=open_, toast=toast).tobytes() for s, open_, toast in models]
    warm = [render(s, show_secret=open_, toast=toast).tobytes() for s, open_, toast in models]
    monkeypatch.setattr(rendering, "put_line", drawn)
    monkeypatch.setattr(rendering, "big_word", big_word.__wrapped__)
    fresh = [render(s, show_secret=open_, toast=toast).tobytes() for s, open_, toast in models]
    assert cold == fresh
    assert warm == fresh


def test_the_caches_never_grow_past_their_bound() -> None:
    """More distinct lines and big words than the caches hold leave each at its bound."""
    line_mask.cache_clear()
    big_word.cache_clear()
    for i in range(LINE_CACHE + 100):
        line_mask(f"line {i}")
    for i in range(BIG_CACHE + 10):
        big_word(f"{i}", HEIGHT)
    assert line_mask.cache_info().currsize == LINE_CACHE
    assert big_word.cache_info().currsize == BIG_CACHE


def test_a_shared_mask_is_not_changed_by_rendering() -> None:
    """Rendering over and over (both colours, toasts) leaves a line's mask as it was made."""
    line_mask.cache_clear()
    got = line_mask("Your turn")
    assert got is not None
    before = got[1].tobytes()
    for _ in range(3):
        render(Screen(rev=1, title="Your turn", lines=("Your turn",)), show_secret=False)
        render(Screen(rev=1, title="x", lines=()), show_secret=False, toast="Your turn")
    assert line_mask("Your turn") is got
    assert got[1].tobytes() == before
