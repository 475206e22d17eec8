"""Drawing screens: secret gating, toasts, line fitting."""

from __future__ import annotations

from PIL import Image

from firmware.link.protocol import Screen, Secret
from firmware.link.render import CHARS, HEIGHT, MENU_INDENT, WIDTH, fit, menu_rows, render, scrolled


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


LABELS = ["Pass (stay)", "Inf G3 park monument", "Inf H1 Red hotel", "Inf F1 airport", "Sheet >"]


def test_a_long_menu_label_wraps_whole_onto_indented_rows() -> None:
    """Every option is read whole: past 19 characters it goes on over an indented row."""
    rows = menu_rows(LABELS, 1)
    assert rows == [
        "  Pass (stay)",
        "> Inf G3 park",
        f"{MENU_INDENT}monument",
        "  Inf H1 Red hotel",
    ]
    assert all(len(row) <= CHARS for row in rows)


def test_the_menu_window_follows_the_cursor_to_the_end() -> None:
    """The cursor's option is always in sight, with the one before it; at the end of the
    menu the window is full; a smaller room (a news line above) shows fewer."""
    wrapped = ["  Inf G3 park", f"{MENU_INDENT}monument"]
    assert menu_rows(LABELS, 0) == ["> Pass (stay)", *wrapped, "  Inf H1 Red hotel"]
    assert menu_rows(LABELS, 2) == [*wrapped, "> Inf H1 Red hotel", "  Inf F1 airport"]
    assert menu_rows(LABELS, 3) == ["  Inf H1 Red hotel", "> Inf F1 airport", "  Sheet >"]
    assert menu_rows(LABELS, 4) == [f"  {x}" for x in LABELS[2:4]] + ["> Sheet >"]
    assert menu_rows(LABELS, 2, room=2) == ["> Inf H1 Red hotel", "  Inf F1 airport"]


def test_a_scrolled_list_says_where_it_is_in_its_title() -> None:
    """A ranking longer than the glass: the rows from the top asked, the marker in the title."""
    rows = [f"{i}. seat{i}" for i in range(1, 9)]
    assert scrolled("Red Over", ["You: #2"], rows, 0) == (
        "Red Over      1-3/8 ▼",
        ["You: #2", *rows[:3]],
    )
    title, lines = scrolled("Red Over", ["You: #2"], rows, 99)
    assert title.endswith("6-8/8 ▲") and lines[1:] == rows[5:]
    assert scrolled("Red Over", ["You: #2"], rows[:3], 0) == ("Red Over", ["You: #2", *rows[:3]])
