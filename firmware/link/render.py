"""Drawing screen models onto a 128x64 monochrome image.

Uses Pillow's built-in bitmap font so a screen renders to the same pixels on
every machine (golden PNGs compare exactly).

A line of text seen a second time is drawn into a mask and pasted from then on
(:class:`LineMasks`): a station redraws the same title bar and prompts over and over,
and at a Zero's CPU share drawing the lines through ImageDraw costs ~1.5 ms a screen.
A mask holds the very pixels ``ImageDraw.text`` lights, so a pasted line equals a
drawn one.
"""

from __future__ import annotations

import textwrap
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from firmware.link.protocol import Screen

WIDTH, HEIGHT = 128, 64
LINE_H = 12
CHAR_W = 6
#: The glass's columns: every text a station shows is cut or wrapped to this.
CHARS = 21
BODY_LINES = 4
#: Scroll markers: the font has no arrows, so :func:`render` draws these two itself.
DOWN, UP = "▼", "▲"
_ARROWS = (DOWN, UP)


#: How many distinct lines (and big secret words) masks are kept for, least recently
#: used dropped first: a game's screens use a few dozen; a mask is ~1-2 KB (Pillow keeps
#: a byte a pixel), so ~1 MB at most.
LINE_CACHE = 512
BIG_CACHE = 32
#: Room around a line drawn into its mask, so a glyph that reached left of or above its
#: origin would be kept too (the bitmap font has none: a guard, not a need).
_PAD = 8
#: How much the secret's big word is magnified.
BIG_SCALE = 4


@lru_cache(maxsize=1)
def font() -> ImageFont.ImageFont:
    return ImageFont.load_default_imagefont()


#: Letters the bitmap font (Latin-1) lacks, spelled with ones it has.
_SPELL = {"œ": "oe", "Œ": "OE", "’": "'", "‘": "'", "“": '"', "”": '"', "…": "...", "–": "-"}


def glass(text: str) -> str:
    """``text`` in characters the station's Latin-1 font can draw ("cœur" -> "coeur")."""
    if text.isascii():
        return text
    out = []
    for char in text:
        if char in _ARROWS:
            out.append(char)
            continue
        char = _SPELL.get(char, char)
        if char.encode("latin-1", "ignore").decode("latin-1") != char:
            plain = unicodedata.normalize("NFKD", char).encode("latin-1", "ignore")
            char = plain.decode("latin-1") or "?"
        out.append(char)
    return "".join(out)


#: The pixels a line may take: it is drawn from x = 1 (:func:`render`).
LINE_ROOM = WIDTH - 1


def drawn_width(text: str) -> int:
    """How many pixels wide ``text`` is as the glass draws it, before any cut: its
    drawable characters in the bitmap font, each scroll arrow a character's width."""
    shown = glass(text)
    arrows = sum(shown.count(a) for a in _ARROWS)
    plain = "".join(c for c in shown if c not in _ARROWS)
    return int(font().getlength(plain)) + arrows * CHAR_W


def fit(text: str, width: int = CHARS) -> str:
    """A line in drawable characters, cut to what fits on the screen."""
    text = glass(text)
    return text if len(text) <= width else text[: width - 1] + "~"


def wrap(text: str, count: int, width: int = CHARS) -> list[str]:
    """Words of ``text`` on at most ``count`` lines; what does not fit ends the last one."""
    rows: list[str] = [""]
    for word in text.split():
        if rows[-1] and len(rows[-1]) + 1 + len(word) > width:
            if len(rows) == count:
                rows[-1] = rows[-1] + " " + word
                continue
            rows.append("")
        rows[-1] = f"{rows[-1]} {word}".strip()
    return rows


def scroll_marker(top: int, shown: int, total: int) -> str:
    """ "1-3/6 ▼": which rows of a list are on the screen, and which way the rest lies."""
    if total <= shown:
        return ""
    last = min(total, top + shown)
    arrow = DOWN if last < total else UP
    rows = f"{top + 1}" if last == top + 1 else f"{top + 1}-{last}"  # a page: "3/4"
    return f"{rows}/{total} {arrow}"


def scroll_title(title: str, top: int, shown: int, total: int) -> str:
    """A title bar with the list's scroll marker at its right end."""
    return marked_title(title, scroll_marker(top, shown, total))


def marked_title(title: str, marker: str, cut: str = "~") -> str:
    """``title`` with ``marker`` at the right end of the bar (the title cut, ending in
    ``cut``, where both do not fit); ``title`` as it is without a marker."""
    if not marker:
        return title
    room = CHARS - len(marker) - 1
    head = glass(title)
    head = head if len(head) <= room else head[: room - 1] + cut
    return f"{head:<{room}} {marker}"


def window(items: list[str], top: int, shown: int) -> tuple[list[str], int]:
    """The ``shown`` items from ``top`` (kept in range) and the top actually used."""
    top = max(0, min(top, len(items) - shown))
    return items[top : top + shown], top


def shrink(line: Callable[[str], str], value: str) -> str:
    """``line(value)`` with ``value`` (a seat's or card's name) cut, marked with ".", until
    the line fits the glass: a long name gives way, the rest (round, phase) stays whole."""
    text = line(value)
    while len(glass(text)) > CHARS and len(value) > 3:  # as drawn: "œ" takes two
        value = value[:-1]
        text = line(value.rstrip() + ".")
    return text


def shrink_names(text: str, names: list[str]) -> str:
    """``text`` with the longest of the seat ``names`` it holds cut (marked ".") until it
    fits the glass: every other word of it stays whole."""
    shown = {n: n for n in names}
    while len(glass(text)) > CHARS:
        present = [n for n in names if shown[n] in text and len(shown[n].rstrip(".")) > 3]
        if not present:
            break
        longest = max(present, key=lambda n: len(shown[n]))
        cut = shown[longest].rstrip(".")[:-1].rstrip() + "."
        text, shown[longest] = text.replace(shown[longest], cut), cut
    return text


def first_fitting(forms: list[str], width: int = CHARS) -> str:
    """The first of ``forms`` (longest wording first) that fits ``width`` as drawn, else the
    last: "Turn 3: was 5, not 2" where it fits, "T3: was 5, not 2" where it does not."""
    return next((form for form in forms if len(glass(form)) <= width), forms[-1])


def titled(headings: list[str], suffix: str) -> str:
    """A title bar: the first of ``headings`` that fits before ``suffix`` (a clock, a page
    or cursor count); if none does, the last one cut with "~" (a cut the fit tests see,
    never a silent one)."""
    room = CHARS - len(suffix)
    for heading in headings:
        if len(glass(heading)) <= room:
            return f"{glass(heading)}{suffix}"
    return f"{fit(headings[-1], room)}{suffix}"


def scrolled(title: str, head: list[str], rows: list[str], top: int) -> tuple[str, list[str]]:
    """A screen whose ``rows`` (a ranking, a result list) scroll under fixed ``head`` lines:
    the title, with the marker ("1-3/8 ▼") when the rows do not all fit, and the lines."""
    shown, top = window(rows, top, BODY_LINES - len(head))
    return scroll_title(title, top, len(shown), len(rows)), [*head, *shown]


def scroll_room(head: int, rows: int) -> int:
    """The largest top a list of ``rows`` under ``head`` fixed lines scrolls to."""
    return max(0, rows - (BODY_LINES - head))


#: A menu option's wrapped lines start under its text, past the "> " of the cursor.
MENU_INDENT = "    "


def menu_rows(labels: list[str], cursor: int, room: int = BODY_LINES) -> list[str]:
    """A knob menu on ``room`` lines: "> " marks the cursor's option, and an option longer
    than a row wraps onto indented lines, so every label is read whole. The window keeps
    the cursor's option, and the one before it when there is room, in sight."""
    blocks = [
        textwrap.wrap(
            glass(label),
            CHARS,
            initial_indent="> " if i == cursor else "  ",
            subsequent_indent=MENU_INDENT,
            break_on_hyphens=False,  # "Lance-roquettes" is one word: it wraps whole
        )
        or ["> " if i == cursor else ""]
        for i, label in enumerate(labels)
    ]
    start = max(0, cursor - 1)
    while start < cursor and sum(len(b) for b in blocks[start : cursor + 1]) > room:
        start += 1
    end, used = start, 0
    while end < len(blocks) and used + len(blocks[end]) <= room:
        used += len(blocks[end])
        end += 1
    while start > 0 and end > cursor and used + len(blocks[start - 1]) <= room:
        start -= 1
        used += len(blocks[start])
    if end <= cursor:  # the cursor's option alone is longer than the screen
        return blocks[cursor][:room]
    return [row for block in blocks[start:end] for row in block]


def fit_list(head: str, items: list[str], width: int = CHARS) -> str:
    """``head`` and as many ``items`` as fit, then "+N" for the rest ("Waiting: Red Yel +3")."""
    line = head.rstrip()
    for i, item in enumerate(items):
        rest = len(items) - i - 1
        tail = f" +{rest}" if rest else ""
        if len(glass(f"{line} {item}{tail}")) > width:
            return f"{line} +{len(items) - i}"
        line = f"{line} {item}"
    return line


def packed(head: str, items: list[str], width: int = CHARS) -> list[str]:
    """``head`` then the items, as many a row as fit whole (an item never splits): the
    rows a screen or a hub page lists ("Votes: Grn #1 Blu #5" / "Red #3")."""
    rows = [head]
    for item in items:
        if len(glass(f"{rows[-1]} {item}")) > width:
            rows.append(item)
        else:
            rows[-1] = f"{rows[-1]} {item}"
    return rows


def blank() -> Image.Image:
    return Image.new("1", (WIDTH, HEIGHT), 0)


def render(screen: Screen, *, show_secret: bool, toast: str | None = None) -> Image.Image:
    """The image a station shows for ``screen`` (secret only if ``show_secret``)."""
    img = blank()
    draw = ImageDraw.Draw(img)
    secret = screen.secret if show_secret else None
    title = secret.title if secret and secret.title else screen.title
    draw.rectangle((0, 0, WIDTH - 1, LINE_H - 1), fill=255)
    put_line(img, (1, 0), fit(title), fill=0, draw=draw)
    if secret is not None:
        _secret_body(img, draw, secret.big, secret.lines)
    else:
        for i, line in enumerate(screen.lines[:BODY_LINES]):
            put_line(img, (1, LINE_H + 1 + i * LINE_H), fit(line), fill=255, draw=draw)
    if toast:
        _toast(img, draw, toast)
    return img


def _secret_body(
    img: Image.Image, draw: ImageDraw.ImageDraw, big: str, lines: tuple[str, ...]
) -> None:
    top = LINE_H + 1
    if big:
        scaled = big_word(glass(big), HEIGHT - top)
        img.paste(scaled, ((WIDTH - scaled.width) // 2, top))
        return
    for i, line in enumerate(lines[:BODY_LINES]):
        put_line(img, (1, top + i * LINE_H), fit(line), fill=255, draw=draw)


@lru_cache(maxsize=BIG_CACHE)
def big_word(text: str, height: int) -> Image.Image:
    """``text`` (drawable characters) magnified :data:`BIG_SCALE` times, cut to ``height``
    rows: the secret's big word (shared: paste it, never draw on it)."""
    glyphs = Image.new("1", (CHAR_W * len(text), 11), 0)
    ImageDraw.Draw(glyphs).text((0, 0), text, font=font(), fill=255)
    size = (glyphs.width * BIG_SCALE, glyphs.height * BIG_SCALE)
    scaled = glyphs.resize(size, Image.Resampling.NEAREST)
    return scaled.crop((0, 0, scaled.width, min(scaled.height, height)))


def _toast(img: Image.Image, draw: ImageDraw.ImageDraw, text: str) -> None:
    """An ack message boxed over the bottom of the screen (two lines at most)."""
    words = glass(text).split()
    rows: list[str] = [""]
    for word in words:
        candidate = f"{rows[-1]} {word}".strip()
        if len(candidate) <= CHARS - 1 or not rows[-1]:
            rows[-1] = fit(candidate, CHARS - 1)
        elif len(rows) < 2:
            rows.append(fit(word, CHARS - 1))
        else:
            rows[-1] = fit(rows[-1] + " " + word, CHARS - 1)
            break
    height = len(rows) * LINE_H + 3
    top = HEIGHT - height
    draw.rectangle((0, top, WIDTH - 1, HEIGHT - 1), fill=0, outline=255)
    for i, row in enumerate(rows):
        put_line(img, (3, top + 2 + i * LINE_H), row, fill=255, draw=draw)


#: A line's mask: where its lit box starts (from where it is drawn) and the box's pixels.
Mask = tuple[tuple[int, int], Image.Image]


def line_mask(text: str) -> Mask | None:
    """The pixels :func:`draw_line` lights for ``text`` at (0, 0): the offset of their box
    and a mode "1" mask of it (None: it lights none).

    Drawn on a canvas of the screen's size (and :data:`_PAD` around): whatever of a line
    could show at any place on the screen is in it.
    """
    canvas = Image.new("1", (WIDTH + 2 * _PAD, HEIGHT + 2 * _PAD), 0)
    draw_line(ImageDraw.Draw(canvas), (_PAD, _PAD), text, fill=255)
    box = canvas.getbbox()
    if box is None:
        return None
    return (box[0] - _PAD, box[1] - _PAD), canvas.crop(box)


class LineMasks:
    """Lines put on screens: drawn straight the first time a text is seen, pasted from its
    mask from the second time on (a mask costs about three direct draws to make, so a
    text shown once costs what it did before the masks). At most ``size`` masks and
    ``size`` texts seen once are kept, least recently used dropped first. Thread-safe
    (the simulator renders from several threads); the masks are shared: never drawn on.
    """

    def __init__(self, size: int = LINE_CACHE) -> None:
        self.size = size
        self._masks: OrderedDict[str, Mask | None] = OrderedDict()
        self._once: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def put(
        self,
        img: Image.Image,
        xy: tuple[int, int],
        text: str,
        *,
        fill: int,
        draw: ImageDraw.ImageDraw | None = None,
    ) -> None:
        """``text`` on ``img`` at ``xy`` exactly as :func:`draw_line` draws it (``draw``:
        the image's ImageDraw, if the caller has one)."""
        with self._lock:
            known = text in self._masks
            if known:
                self._masks.move_to_end(text)
                got = self._masks[text]
            else:
                again = text in self._once
                if again:
                    del self._once[text]
                else:
                    self._keep(self._once, text, None)
        if not known:
            if not again:
                draw_line(draw or ImageDraw.Draw(img), xy, text, fill=fill)
                return
            got = line_mask(text)
            with self._lock:
                self._keep(self._masks, text, got)
        if got is not None:
            (dx, dy), mask = got
            img.paste(fill, (xy[0] + dx, xy[1] + dy), mask)

    def _keep(self, table: OrderedDict[str, Any], text: str, value: Any) -> None:
        table[text] = value
        table.move_to_end(text)
        while len(table) > self.size:
            table.popitem(last=False)

    def sizes(self) -> tuple[int, int]:
        """(masks kept, texts seen once kept)."""
        with self._lock:
            return len(self._masks), len(self._once)

    def clear(self) -> None:
        """Forget every mask and every text seen."""
        with self._lock:
            self._masks.clear()
            self._once.clear()


#: The station's (and the hub display's) lines.
LINES = LineMasks()
#: ``text`` on ``img`` at ``xy`` as :func:`draw_line` draws it (see :class:`LineMasks`).
put_line = LINES.put


def draw_line(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, *, fill: int) -> None:
    """A line in the bitmap font, with the scroll arrows drawn as small triangles."""
    if not any(a in text for a in _ARROWS):
        draw.text(xy, text, font=font(), fill=fill)
        return
    x, y = xy
    for char in text:
        if char == DOWN:
            draw.polygon([(x, y + 3), (x + 4, y + 3), (x + 2, y + 7)], fill=fill)
        elif char == UP:
            draw.polygon([(x, y + 7), (x + 4, y + 7), (x + 2, y + 3)], fill=fill)
        else:
            draw.text((x, y), char, font=font(), fill=fill)
        x += CHAR_W


def render_lines(title: str, lines: list[str]) -> Image.Image:
    """A plain title + lines screen (the hub display, menus)."""
    return render(Screen(rev=0, title=title, lines=tuple(lines)), show_secret=False)
