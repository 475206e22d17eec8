// coffre table display: swap in each fragment the server pushes; tick countdowns; on a wide
// screen (a TV, a tablet) shrink the type until the whole page fits: a TV cannot scroll.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var url = live && live.dataset.stream;
  var root = document.documentElement;
  var wide = window.matchMedia("(min-width: 900px) and (min-aspect-ratio: 1/1)");
  var SMALLEST = 0.4;  // of the stylesheet's type size: still legible on a 1080p TV

  function overflows() {
    return root.scrollHeight > window.innerHeight || root.scrollWidth > window.innerWidth;
  }

  // Bisect the root font size (every size in the stylesheet is in rem) until it fits.
  function fit() {
    root.style.fontSize = "";
    if (!wide.matches || !overflows()) return;
    var base = parseFloat(window.getComputedStyle(root).fontSize);
    var lo = SMALLEST, hi = 1;
    for (var k = 0; k < 9; k++) {
      var mid = (lo + hi) / 2;
      root.style.fontSize = (base * mid).toFixed(2) + "px";
      if (overflows()) hi = mid; else lo = mid;
    }
    root.style.fontSize = (base * lo).toFixed(2) + "px";
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

  function shown() { ring(); fit(); }

  if (url) {
    var source = new EventSource(url);  // reconnects by itself after a drop
    source.onmessage = function (e) {
      live.innerHTML = e.data;
      live.dataset.updated = String(Date.now());
      live.classList.remove("stale");
      shown();
    };
    source.onerror = function () { live.classList.add("stale"); };
  }
  window.addEventListener("resize", fit);
  if (document.fonts && document.fonts.ready) document.fonts.ready.then(fit);
  shown();
  // The hub republishes a running countdown every second; between two, count down here.
  setInterval(function () {
    var node = document.querySelector(".countdown[data-left]");
    if (!node) return;
    node.dataset.left = String(Math.max(0, parseInt(node.dataset.left, 10) - 1));
    ring();
  }, 1000);
})();
