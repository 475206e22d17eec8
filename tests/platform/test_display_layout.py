"""Every registered game at its largest table, mid-game, at its busiest and at game over, in
Chromium at TV, tablet and phone sizes: a TV or tablet page needs no scrolling, a phone page
no sideways scrolling, and every seat and every fact of the page is on screen.

The tables come from the registry (:mod:`tests.support.display_samples`), never a list kept
by hand. Figures (page heights and widths) are in the assertion messages.
"""

from __future__ import annotations

import pytest

from firmware.display.parts import Names
from firmware.display.render import page, table_fragment
from firmware.hub.bindings import bound_games
from firmware.link.lang import speaking
from tests.support.browser import StaticPage, chromium, screenshot
from tests.support.display_samples import fragment, idle_snapshot, samples
from tests.support.golden import picture_problems

SIZES = {"tv": (1920, 1080), "tablet": (1024, 768), "phone": (390, 844)}

#: Every element that carries a fact, with its box and type size (checked on screen).
BOXES = """() => Array.from(document.querySelectorAll(
  '#live .chip, #live td, #live li, #live p, #live h1, #live h2, #live .countdown'))
  .filter(e => e.getClientRects().length)
  .map(e => { const r = e.getBoundingClientRect();
    return {what: e.textContent.slice(0, 40), left: r.left, right: r.right, top: r.top,
            bottom: r.bottom, font: parseFloat(getComputedStyle(e).fontSize)}; })"""

#: The smallest type a TV or tablet page may shrink to (px), to stay readable.
SMALLEST_FONT = 9


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("size", list(SIZES))
def test_every_game_fits_the_screen_with_every_seat_on_it(size: str, language: str) -> None:
    """TV and tablet: no scrolling at all; phone: no sideways scrolling; every seat named,
    every fact inside the screen, no type smaller than a TV can show."""
    width, height = SIZES[size]
    problems = []
    with chromium() as browser:
        tab = StaticPage(browser, {"width": width, "height": height})
        for sample in samples():
            public = sample.public
            got = tab.show(page("t", fragment(public, language), language=language))
            where = f"{sample.name} {size} {language}: {got['width']}x{got['height']}"
            if got["width"] > width:
                problems.append(f"{where} scrolls sideways")
            if size != "phone" and got["height"] > height:
                problems.append(f"{where} runs below the screen")
            text = tab.page.inner_text("#live")
            with speaking(language):
                names = Names(public)
                missing = [names.text(i) for i in range(len(names)) if names.text(i) not in text]
            if missing:
                problems.append(f"{where}: seats {missing} not on the page")
            problems += off_screen(tab, where, size)
    assert not problems, "\n".join(problems[:20])


def off_screen(tab: StaticPage, where: str, size: str) -> list[str]:
    """Each fact of the page outside the screen (a phone may run down), or in type too
    small for a TV."""
    width, height = SIZES[size]
    problems = []
    for box in tab.page.evaluate(BOXES):
        off = box["right"] > width + 0.5 or box["left"] < -0.5
        if size != "phone":
            off = off or box["bottom"] > height + 0.5
            if box["font"] < SMALLEST_FONT:
                problems.append(f"{where}: {box['what']!r} in {box['font']}px type")
        if off:
            problems.append(f"{where}: {box['what']!r} off screen {box}")
    return problems


@pytest.mark.parametrize("size", list(SIZES))
def test_the_idle_page_fits_with_the_menu_and_the_rules_card(size: str) -> None:
    """Between games, with a game picked on the panel (its rules card) or none known (every
    game's summary in the menu), in French and English: no scrolling on a TV or tablet, none
    sideways on a phone, every fact on screen."""
    width, height = SIZES[size]
    problems = []
    with chromium() as browser:
        tab = StaticPage(browser, {"width": width, "height": height})
        for language in ("en", "fr"):
            for picked in [None, *bound_games()]:
                snap = idle_snapshot(language, picked)
                got = tab.show(page("t", table_fragment(snap), language=language))
                where = f"idle {picked} {size} {language}: {got['width']}x{got['height']}"
                if got["width"] > width:
                    problems.append(f"{where} scrolls sideways")
                if size != "phone" and got["height"] > height:
                    problems.append(f"{where} runs below the screen")
                if picked and not tab.page.locator(".rules-card").is_visible():
                    problems.append(f"{where}: no rules card")
                problems += off_screen(tab, where, size)
    assert not problems, "\n".join(problems[:20])


def test_the_idle_page_pictures() -> None:
    """The idle page as a TV shows it in English (Ultra Secret picked: its rules card; the
    table's name, its address and QR code) and as a phone shows it in French (no pick
    known: every game's summary), against goldens."""
    problems = []
    with chromium() as browser:
        for name, size, language, picked in (
            ("idle-tv-en", "tv", "en", "ultra-secret"),
            ("idle-phone-fr", "phone", "fr", None),
        ):
            width, height = SIZES[size]
            tab = StaticPage(browser, {"width": width, "height": height})
            snap = idle_snapshot(language, picked)
            if size == "tv":  # the host named the table; the page shows its address and QR
                snap.name, snap.address = "The big table", "http://192.168.1.20:8080/table/main"
            tab.show(page("t", table_fragment(snap), language=language))
            problems += picture_problems(name, screenshot(tab.page))
    assert not problems, problems


#: The sound button's box and the idle page's closing hint's, as the screen shows them now.
SOUND_AND_HINT = """() => [document.getElementById('sound'), document.querySelector('.idle .note')]
  .map(e => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })"""


def crossing(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two boxes share any area."""
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and (b["top"] < a["bottom"])
    )


@pytest.mark.parametrize(("width", "height"), [(1920, 1080), (1280, 720), (1024, 768), (390, 844)])
def test_the_sound_button_never_covers_the_idle_hint(width: int, height: int) -> None:
    """Between games, in French and English, with a game picked or none, at every setting of
    the table's sound and every state of the button (to tap, sounding, muted, turned off by
    the host): the button in its corner and the host's hint at the foot of the page never
    share a pixel, the page at its top and (a phone scrolls) at its end."""
    problems = []
    states: set[str] = set()
    with chromium() as browser:
        tab = StaticPage(browser, {"width": width, "height": height})
        button = tab.page.locator("#sound")
        for language in ("en", "fr"):
            for picked in [None, *bound_games()]:
                for sound in ("cues", "narration", "off"):
                    snap = idle_snapshot(language, picked)
                    snap.public["sound"] = sound
                    tab.show(page("t", table_fragment(snap), language=language))
                    for press in range(3 if sound != "off" else 1):
                        if press:
                            button.click()
                        if not button.is_visible():
                            problems.append(f"{language} {picked} {sound}: no sound button")
                            continue
                        state = str(button.get_attribute("class"))
                        states.add(state)
                        for end in ("top", "end"):
                            if end == "end":
                                tab.page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
                            sound_box, hint_box = tab.page.evaluate(SOUND_AND_HINT)
                            if crossing(sound_box, hint_box):
                                problems.append(
                                    f"{width}x{height} {language} {picked} {sound} {state} at"
                                    f" its {end}: {button.inner_text()!r} {sound_box} covers"
                                    f" the hint {hint_box}"
                                )
                        tab.page.evaluate("window.scrollTo(0, 0)")
    assert states == {"tap", "on", "off", "host"}, states
    assert not problems, "\n".join(problems[:20])


def test_the_sound_button_leaves_a_phones_last_lines_readable() -> None:
    """A phone scrolls a game's page: at its end the sound button in its corner covers no
    fact (a seat, a line of the feed), in every game's samples, in French and English."""
    width, height = SIZES["phone"]
    problems = []
    with chromium() as browser:
        tab = StaticPage(browser, {"width": width, "height": height})
        button = tab.page.locator("#sound")
        for language in ("en", "fr"):
            for sample in samples():
                tab.show(page("t", fragment(sample.public, language), language=language))
                if not button.is_visible():
                    problems.append(f"{sample.name} {language}: no sound button")
                    continue
                tab.page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
                sound_box = tab.page.evaluate(SOUND_AND_HINT.replace(
                    ", document.querySelector('.idle .note')", ""))[0]  # fmt: skip
                for box in tab.page.evaluate(BOXES):
                    if crossing(sound_box, box):
                        problems.append(f"{sample.name} {language}: {box['what']!r} under it")
                tab.page.evaluate("window.scrollTo(0, 0)")
    assert not problems, "\n".join(problems[:20])
