"""The table display read from a sofa: every registered game, mid-game, at its busiest and
at game over, in Chromium.

At 1920x1080 no visible text is under 24 px (the ten-foot floor: Android TV's smallest
text is 12sp at 960x540 dp, tvOS's smallest style 23 pt) and the page uses the screen
(its content spans most of its width and height). On a 1024x768 tablet no word breaks
across two lines (a score-track token, a header, a French " :" left alone on a line).
The games come from the registry (:mod:`tests.support.display_samples`).
"""

from __future__ import annotations

import pytest

from firmware.display.render import page
from tests.support.browser import StaticPage, chromium
from tests.support.display_samples import fragment, samples

#: The smallest type a 1080p TV may show (px).
TV_FLOOR = 24
#: The share of the screen's width and height the content must span on a TV.
FILLED = 0.70

#: Every visible text node of the page, and every seat number the stylesheet draws: its
#: text and its computed type size.
TEXTS = """() => {
  const out = [];
  const walk = document.createTreeWalker(document.getElementById('live'), NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const box = range.getBoundingClientRect();
    const style = getComputedStyle(n.parentElement);
    if (!box.width || !box.height || style.visibility === 'hidden') continue;
    out.push({text: n.textContent.trim().slice(0, 40), font: parseFloat(style.fontSize)});
  }
  for (const e of document.querySelectorAll('#live [data-n]')) {  // a seat's drawn number
    if (!e.getClientRects().length) continue;
    const style = getComputedStyle(e, '::before');
    out.push({text: 'number ' + e.dataset.n, font: parseFloat(style.fontSize)});
  }
  return out;
}"""

#: The box round every visible leaf of the page.
CONTENT = """() => {
  let left = Infinity, top = Infinity, right = -Infinity, bottom = -Infinity;
  for (const e of document.querySelectorAll('#live *')) {
    if (e.children.length) continue;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    left = Math.min(left, r.left); top = Math.min(top, r.top);
    right = Math.max(right, r.right); bottom = Math.max(bottom, r.bottom);
  }
  return {width: right - left, height: bottom - top};
}"""

#: Each word laid over more than one line (words split at breaking spaces only: "H3 :"
#: joined by a no-break space is one word; a hyphen ends a word, as "sous-" may end a
#: line), and each text that starts with a French high punctuation mark on a line below
#: the element before it (a colon alone at a line's start).
SPLIT = """() => {
  const out = [];
  const lineOf = r => Math.round(r.top + r.height / 2);
  const walk = document.createTreeWalker(document.getElementById('live'), NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const text = n.textContent;
    const word = /[^ \\t\\n-]+-?/g;
    for (let m = word.exec(text); m; m = word.exec(text)) {
      const range = document.createRange();
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
      const lines = new Set(rects.map(r => Math.round(r.top)));
      if (lines.size > 1) out.push('"' + m[0] + '" split over ' + lines.size + ' lines');
    }
    const lead = /^[ \\u00a0]*[:;!?»]/.exec(text);
    const before = n.previousSibling;
    if (lead && before && before.nodeType === 1) {
      const range = document.createRange();
      range.setStart(n, 0);
      range.setEnd(n, lead[0].length);
      const mark = Array.from(range.getClientRects()).filter(r => r.width > 0).pop();
      const last = Array.from(before.getClientRects()).pop();
      if (mark && last && mark.top >= last.bottom - 1) {
        out.push('"' + text.trim().slice(0, 20) + '" starts a line after "' +
                 before.textContent.trim().slice(-20) + '"');
      }
    }
  }
  return out;
}"""


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_tv_shows_no_text_under_24px_and_uses_the_screen(language: str) -> None:
    """1920x1080, every game mid-game, at its busiest and at game over: the smallest visible
    text is 24 px or more, the page does not scroll, its content spans most of the screen."""
    width, height = 1920, 1080
    problems = []
    seen = set()
    with chromium() as browser:
        tab = StaticPage(browser, {"width": width, "height": height})
        for sample in samples():
            seen.add(sample.moment)
            got = tab.show(page("t", fragment(sample.public, language), language=language))
            where = f"{sample.name} {language}"
            if got["height"] > height or got["width"] > width:
                problems.append(f"{where}: the page is {got['width']}x{got['height']}")
            texts = tab.page.evaluate(TEXTS)
            small = [t for t in texts if t["font"] < TV_FLOOR]
            if not texts:
                problems.append(f"{where}: no text on the page")
            for text in small[:3]:
                problems.append(f"{where}: {text['text']!r} in {text['font']:.1f} px type")
            box = tab.page.evaluate(CONTENT)
            if box["width"] < FILLED * width or box["height"] < FILLED * height:
                problems.append(
                    f"{where}: the content spans {box['width']:.0f}x{box['height']:.0f} px"
                    f" of {width}x{height}"
                )
    assert {"mid", "over"} <= seen, seen
    assert not problems, "\n".join(problems[:30])


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_tablet_never_breaks_a_word_over_two_lines(language: str) -> None:
    """1024x768, every game mid-game, at its busiest and at game over: no score-track token,
    header or name splits inside a word, and no French colon starts a line on its own."""
    problems = []
    with chromium() as browser:
        tab = StaticPage(browser, {"width": 1024, "height": 768})
        for sample in samples():
            tab.show(page("t", fragment(sample.public, language), language=language))
            problems += [f"{sample.name} {language}: {said}" for said in tab.page.evaluate(SPLIT)]
    assert not problems, "\n".join(problems[:30])
