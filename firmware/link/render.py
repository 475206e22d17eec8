"""Drawing screen models onto a 128x64 monochrome image.

Uses Pillow's built-in bitmap font so a screen renders to the same pixels on
every machine (golden PNGs compare exactly).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

from firmware.link.protocol import Screen

WIDTH, HEIGHT = 128, 64
LINE_H = 12
CHARS = 21
BODY_LINES = 4


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
        char = _SPELL.get(char, char)
        if char.encode("latin-1", "ignore").decode("latin-1") != char:
            plain = unicodedata.normalize("NFKD", char).encode("latin-1", "ignore")
            char = plain.decode("latin-1") or "?"
        out.append(char)
    return "".join(out)


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


def blank() -> Image.Image:
    return Image.new("1", (WIDTH, HEIGHT), 0)


def render(screen: Screen, *, show_secret: bool, toast: str | None = None) -> Image.Image:
    """The image a station shows for ``screen`` (secret only if ``show_secret``)."""
    img = blank()
    draw = ImageDraw.Draw(img)
    secret = screen.secret if show_secret else None
    title = secret.title if secret and secret.title else screen.title
    draw.rectangle((0, 0, WIDTH - 1, LINE_H - 1), fill=255)
    draw.text((1, 0), fit(title), font=font(), fill=0)
    if secret is not None:
        _secret_body(img, draw, secret.big, secret.lines)
    else:
        for i, line in enumerate(screen.lines[:BODY_LINES]):
            draw.text((1, LINE_H + 1 + i * LINE_H), fit(line), font=font(), fill=255)
    if toast:
        _toast(draw, toast)
    return img


def _secret_body(
    img: Image.Image, draw: ImageDraw.ImageDraw, big: str, lines: tuple[str, ...]
) -> None:
    top = LINE_H + 1
    if big:
        big = glass(big)
        glyphs = Image.new("1", (6 * len(big), 11), 0)
        ImageDraw.Draw(glyphs).text((0, 0), big, font=font(), fill=255)
        scaled = glyphs.resize((glyphs.width * 4, glyphs.height * 4), Image.Resampling.NEAREST)
        scaled = scaled.crop((0, 0, scaled.width, min(scaled.height, HEIGHT - top)))
        img.paste(scaled, ((WIDTH - scaled.width) // 2, top))
        return
    for i, line in enumerate(lines[:BODY_LINES]):
        draw.text((1, top + i * LINE_H), fit(line), font=font(), fill=255)


def _toast(draw: ImageDraw.ImageDraw, text: str) -> None:
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
        draw.text((3, top + 2 + i * LINE_H), row, font=font(), fill=255)


def render_lines(title: str, lines: list[str]) -> Image.Image:
    """A plain title + lines screen (the hub display, menus)."""
    return render(Screen(rev=0, title=title, lines=tuple(lines)), show_secret=False)
