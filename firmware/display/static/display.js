// coffre table display: swap in each fragment the server pushes; tick countdowns.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var url = live && live.dataset.stream;
  if (url) {
    var source = new EventSource(url);  // reconnects by itself after a drop
    source.onmessage = function (e) {
      live.innerHTML = e.data;
      live.dataset.updated = String(Date.now());
      live.classList.remove("stale");
    };
    source.onerror = function () { live.classList.add("stale"); };
  }
  // The hub republishes a running countdown every second; between two, count down here.
  setInterval(function () {
    var nodes = document.querySelectorAll(".countdown[data-left]");
    for (var i = 0; i < nodes.length; i++) {
      var left = Math.max(0, parseInt(nodes[i].dataset.left, 10) - 1);
      nodes[i].dataset.left = String(left);
      nodes[i].querySelector("b").textContent = String(left);
    }
  }, 1000);
})();
