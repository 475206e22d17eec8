// coffre table display: swap in each fragment the server pushes; tick countdowns; on a wide
// screen (a TV, a tablet) scale the type so the page fills the screen without scrolling:
// a TV cannot scroll, and a page that leaves half the screen empty is read from a sofa.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var url = live && live.dataset.stream;
  var root = document.documentElement;
  var wide = window.matchMedia("(min-width: 900px) and (min-aspect-ratio: 1/1)");
  // The stylesheet's smallest type is 1rem: the root never goes under a 45th of a 1080p
  // screen's height (24 px, the ten-foot floor), less on a smaller screen (held closer: 12 px
  // on a 768-pixel tablet), nor over LARGEST times the stylesheet's own size.
  var FLOOR = 45;
  var LARGEST = 1.6;
  var KEPT = 3;  // feed lines a page always shows
  var SHRUNK = 0.9;  // a page this much shorter than when fitted gets its type fitted anew
  var SETTLE = 500;  // ms without an update after which the type is fitted anew

  // Too big: the page scrolls, or a word is wider than its box (boxes that never split a
  // word are listed in NARROW: a tile of a drawn board, a square of the score track).
  var NARROW = ".tile, .track li";
  function overflows() {
    if (root.scrollHeight > window.innerHeight || root.scrollWidth > window.innerWidth) {
      return true;
    }
    var boxes = document.querySelectorAll(NARROW);
    for (var i = 0; i < boxes.length; i++) {
      if (boxes[i].scrollWidth > boxes[i].clientWidth + 1) return true;
    }
    return false;
  }

  function size(px) { root.style.fontSize = px.toFixed(2) + "px"; }

  // The smallest root font size a screen of this height may show.
  function floor(base) {
    var tall = window.innerHeight;
    return Math.min(base, (tall / FLOOR) * Math.min(1, tall / 1080));
  }

  function height() { return document.body.getBoundingClientRect().height; }

  // The body's height when the type was last fitted (0: not fitted at this screen size),
  // and the smallest type that fit allowed.
  var fitted = 0, least = 0, fits = 0, kept = 0;

  // The largest root font size (every size in the stylesheet is in rem or em) that fits,
  // between the floor and LARGEST times the stylesheet's. A page's height grows about as
  // its type: a first guess from the height at the stylesheet's size, then a bisection in
  // a window round it (each step is a layout: six or seven in all, not a dozen).
  function fit() {
    fitted = 0;
    fits += 1;  // how often the page fitted its type, and kept it (data-fits, data-kept)
    root.dataset.fits = String(fits);
    root.style.fontSize = "";
    if (!wide.matches) return;
    var base = parseFloat(window.getComputedStyle(root).fontSize);
    var tall = window.innerHeight;
    var lo = floor(base), hi = base * LARGEST;
    least = lo;
    var guess = base * tall / Math.max(1, height());
    guess = Math.min(hi, Math.max(lo, guess));
    var top = Math.min(hi, guess * 1.08), bottom = Math.max(lo, guess * 0.88);
    size(top);
    if (!overflows()) {
      if (top >= hi) { fitted = height(); return; }
      lo = top;  // more room than guessed: bisect above
    } else {
      hi = top;
      size(bottom);
      if (overflows()) hi = bottom; else lo = bottom;
    }
    for (var k = 0; k < 5; k++) {
      var mid = (lo + hi) / 2;
      size(mid);
      if (overflows()) hi = mid; else lo = mid;
    }
    size(lo);
    trim();
    fitted = height();
  }

  // Still too long at the smallest type: the feed keeps its newest lines that fit.
  function trim() {
    var lines = document.querySelectorAll(".log li");
    for (var i = 0; i < lines.length - KEPT && overflows(); i++) lines[i].hidden = true;
  }

  // After a new fragment: the type fitted to the last one mostly fits this one too (a
  // move changes a line or two), and a fit is a dozen layouts: one at every update of a
  // fast game, with several tables on one screen, keeps the page behind the table, drawing
  // one update in three. The type is kept while the page neither overflows nor shrank by a
  // tenth since the fit; only a page that did is fitted anew. Once the updates stop for
  // SETTLE ms the page is fitted anew anyway: a quiet page has the type a fresh one would
  // (and says so: data-settled on the root).
  var settle = 0;
  function settled() { fit(); root.dataset.settled = "yes"; }
  function refit() {
    window.clearTimeout(settle);
    delete root.dataset.settled;
    settle = window.setTimeout(settled, SETTLE);
    if (!wide.matches || !fitted) { fit(); return; }
    if (!overflows()) {
      if (height() > fitted * SHRUNK) { root.dataset.kept = String(++kept); return; }
    } else if (parseFloat(root.style.fontSize) <= least + 0.01) {
      trim();  // already the smallest type: only the feed can give room
      return;
    }
    fit();
  }

  // The ring empties from the most seconds seen on this countdown to none.
  var most = 0;
  function ring() {
    var node = document.querySelector(".countdown[data-left]");
    if (!node) { most = 0; return; }
    var left = parseInt(node.dataset.left, 10);
    most = Math.max(most, left);
    var arc = node.querySelector(".ring-arc");
    var part = most > 0 ? (100 * left) / most : 0;
    if (arc) arc.setAttribute("stroke-dasharray", part.toFixed(1) + " 100");
    node.querySelector("b").textContent = String(left);
  }

  function shown() { ring(); refit(); }

  if (url) {
    var source = new EventSource(url);  // reconnects by itself after a drop
    var lost = document.getElementById("lost");
    // An update is shown at once; the rest of a burst that lands before the next frame
    // shows its newest only (one swap a frame): a slow screen never falls
    // behind the table.
    var pending = null, waiting = false;
    function swap() {
      var data = pending;
      pending = null;
      live.innerHTML = data;
      live.dataset.updated = String(Date.now());
      live.classList.remove("stale");
      if (lost) lost.hidden = true;
      shown();
    }
    function frame() {
      waiting = false;
      if (pending !== null) swap();
    }
    source.onmessage = function (e) {
      pending = e.data;
      if (waiting) return;
      waiting = true;
      swap();
      window.requestAnimationFrame(frame);
    };
    // The page lost its stream: dim what it shows (it may be out of date) and say why.
    source.onerror = function () {
      live.classList.add("stale");
      if (lost) lost.hidden = false;
      refit();
    };
  }
  window.addEventListener("resize", fit);
  if (document.fonts && document.fonts.ready) document.fonts.ready.then(fit);
  settled();
  ring();
  // The hub republishes a running countdown every second; between two, count down here.
  setInterval(function () {
    var node = document.querySelector(".countdown[data-left]");
    if (!node) return;
    node.dataset.left = String(Math.max(0, parseInt(node.dataset.left, 10) - 1));
    ring();
  }, 1000);
})();
