"""Drawing screens: secret gating, toasts, line fitting."""

from __future__ import annotations

from PIL import Image

from firmware.link.protocol import Screen, Secret
from firmware.link.render import CHARS, HEIGHT, WIDTH, fit, render


def lit(image: Image.Image) -> int:
    """How many pixels are on."""
    return sum(1 for v in image.convert("L").tobytes() if v)


def test_secret_shows_only_when_asked() -> None:
    """The secret part replaces the body only while the flap is open (show_secret)."""
    screen = Screen(rev=1, title="Red", lines=("public",), secret=Secret(title="Key", big="7"))
    closed = render(screen, show_secret=False)
    opened = render(screen, show_secret=True)
    assert closed.size == (WIDTH, HEIGHT) and closed.mode == "1"
    assert closed.tobytes() != opened.tobytes()
    no_secret = Screen(rev=1, title="Red", lines=("public",))
    assert render(no_secret, show_secret=True).tobytes() == closed.tobytes()


def test_rendering_is_deterministic() -> None:
    """Same model, same pixels (golden screens rely on it)."""
    screen = Screen(rev=3, title="T", lines=("a", "b", "c", "d", "e"))
    assert (
        render(screen, show_secret=False).tobytes() == render(screen, show_secret=False).tobytes()
    )


def test_toast_is_drawn_over_the_bottom() -> None:
    """An ack message appears boxed at the bottom of the screen."""
    screen = Screen(rev=1, title="T", lines=())
    plain = render(screen, show_secret=False)
    toasted = render(screen, show_secret=False, toast="That's your own safe")
    bottom = (0, HEIGHT - 20, WIDTH, HEIGHT)
    assert lit(plain.crop(bottom)) == 0 < lit(toasted.crop(bottom))


def test_fit_cuts_long_lines() -> None:
    """Lines longer than the screen end with '~'."""
    assert fit("x" * 30) == "x" * (CHARS - 1) + "~"
    assert fit("short") == "short"


def test_text_outside_the_font_is_spelled_not_fatal() -> None:
    """Characters the Latin-1 font lacks are spelled out or replaced, never raised on."""
    screen = Screen(rev=1, title="Œuvre ☃", lines=("cœur “quoted” — 東京",), secret=Secret(big="œ"))
    for show in (False, True):
        image = render(screen, show_secret=show, toast="déjà vu… ✓")
        assert image.size == (WIDTH, HEIGHT)
    assert fit("cœur") == "coeur"
