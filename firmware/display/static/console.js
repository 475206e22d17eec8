// The host's console: ask for a session, wait for the host's yes, send writes.
// Every write is a POST carrying the session's CSRF token and a fresh nonce (a replay is
// refused by the display); undo and abort ask once more before they go.
(function () {
  "use strict";
  var main = document.querySelector("main");
  if (!main) return;
  var base = "/host/" + encodeURIComponent(main.dataset.table);
  var said = document.getElementById("said");
  // What the script says itself, in the page's language (the server writes them).
  var words = {};
  try { words = JSON.parse(main.dataset.words || "{}"); } catch (e) { words = {}; }
  function word(key, fallback) { return words[key] || fallback; }

  function say(text, place) {
    var line = (place && place.querySelector(".said")) || said;
    if (line) line.textContent = text || "";
  }

  function nonce() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    var a = new Uint8Array(16);
    crypto.getRandomValues(a);
    return Array.prototype.map.call(a, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function post(path, fields) {
    var body = new URLSearchParams(fields);
    body.set("csrf", main.dataset.csrf || "");
    body.set("nonce", nonce());
    return fetch(base + path, {method: "POST", body: body, credentials: "same-origin"})
      .then(function (r) {
        var kind = r.headers.get("Content-Type") || "";
        if (kind.indexOf("json") >= 0) return r.json().then(function (d) { d.status = r.status; return d; });
        return r.text().then(function (t) { return {ok: false, message: t, status: r.status}; });
      });
  }

  // Sign-in page.
  var ask = document.getElementById("ask");
  var code = document.getElementById("code");
  function poll() {
    fetch(base + "/ask", {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (d) {
      if (d.state === "waiting") { setTimeout(poll, 1000); return; }
      if (d.state === "taken") { location.reload(); return; }
      code.textContent = "";
      ask.disabled = false;
      say(d.message || {refused: word("refusedHost", "Refused by the host"),
           expired: word("expired", "Nobody answered: ask again"),
           two: word("two", "Two requests at once: both refused"),
           none: word("none", "Ask again")}[d.state] || d.state);
    });
  }
  if (ask) {
    ask.addEventListener("click", function () {
      ask.disabled = true;
      say("");
      fetch(base + "/ask", {method: "POST", credentials: "same-origin"})
        .then(function (r) { return r.json(); })
        .then(function (d) {
          if (!d.code) { ask.disabled = false; say(d.message); return; }
          code.textContent = d.code;
          say(word("shows", "The hub shows Console? {code}: press ok there").replace("{code}", d.code));
          setTimeout(poll, 1000);
        });
    });
  }

  // Console page. Undo and abort ask once more on the page itself (a browser may
  // suppress window.confirm, and then the yes would never come): the question shows
  // with its yes and no until one is pressed, another command is, or QUESTION_MS pass.
  var again = document.getElementById("again");
  var QUESTION_MS = 20000;
  var pending = null;
  function settle() {
    if (pending) clearTimeout(pending.timer);
    pending = null;
    if (again) again.hidden = true;
  }
  function question(d, name) {
    settle();
    again.querySelector("p").textContent = d.confirm;
    again.querySelector("button.yes").textContent = d.yes || word("yes", "Yes");
    pending = {name: name, timer: setTimeout(settle, QUESTION_MS)};
    again.hidden = false;
    say("");
  }
  if (again) {
    again.querySelector("button.yes").addEventListener("click", function () {
      var name = pending && pending.name;
      settle();
      if (name) command(name, true);
    });
    again.querySelector("button.no").addEventListener("click", settle);
  }
  function command(name, confirmed, place) {
    var fields = {cmd: name};
    if (confirmed) fields.confirm = "yes";
    else settle();
    // Next skips the step on the page, no other: a second tap (or another host's next)
    // lands after the table moved on and the hub refuses it.
    var now = document.getElementById("table-now");
    if (name === "next" && now && now.dataset.step) fields.step = now.dataset.step;
    post("/command", fields).then(function (d) {
      if (d.confirm && again) { question(d, name); return; }
      if (d.status === 401) { location.reload(); return; }
      say(d.message || (d.ok ? word("done", "Done") : word("refused", "Refused")), place);
      load();  // the step it led to, at once
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("button.cmd, button.backup"), function (b) {
    b.addEventListener("click", function () { command(b.dataset.cmd, false, b.closest(".care")); });
  });
  // The table's sound and language: each button sends its host command; the one pressed
  // is the one the hub says (when the page loads, once it said yes, at each refresh).
  function press(name, value) {
    Array.prototype.forEach.call(document.querySelectorAll("button.set"), function (b) {
      if (b.dataset.cmd === name) b.setAttribute("aria-pressed", b.dataset.value === value ? "true" : "false");
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("button.set"), function (b) {
    b.addEventListener("click", function () {
      var fields = {cmd: b.dataset.cmd};
      fields[b.dataset.cmd] = b.dataset.value;
      settle();
      post("/command", fields).then(function (d) {
        if (d.status === 401) { location.reload(); return; }
        if (d.ok) press(b.dataset.cmd, b.dataset.value);
        say(d.message || (d.ok ? word("done", "Done") : word("refused", "Refused")));
      });
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("button.revoke"), function (b) {
    b.addEventListener("click", function () {
      post("/revoke", {session: b.dataset.session}).then(function () { location.reload(); });
    });
  });
  // New game: only the picked game's fieldset shows and is sent.
  var form = document.getElementById("start");
  if (form) {
    var picker = form.querySelector("select[name=game]");
    var picked = function () {
      return form.querySelector("fieldset[data-game='" + picker.value + "']");
    };
    picker.addEventListener("change", function () {
      Array.prototype.forEach.call(form.querySelectorAll("fieldset"), function (f) {
        f.hidden = f.dataset.game !== picker.value;
      });
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var fields = {cmd: "start", game: picker.value};
      Array.prototype.forEach.call(picked().querySelectorAll("select, input"), function (c) {
        if (c.value !== "") fields[c.name] = c.value;
      });
      post("/command", fields).then(function (d) {
        if (d.status === 401) { location.reload(); return; }
        say(d.message || (d.ok ? word("done", "Done") : word("refused", "Refused")));
      });
    });
  }

  // Seats and the game: re-read every 2 s (a page's refresh does not keep a session alive).
  // A Pair with a code the page did not show before (a new request, a new code) waits
  // SETTLE_MS before it answers: the host's finger may have been on its way to what was
  // there (the panel's ok waits the same on a pairing just shown).
  var live = document.getElementById("live");
  var SETTLE_MS = 1500;
  function shownCodes() {
    var out = {};
    Array.prototype.forEach.call(live.querySelectorAll("form.pair[data-code]"), function (f) {
      out[f.dataset.station] = f.dataset.code;
    });
    return out;
  }
  function refresh() { load().then(function () { setTimeout(refresh, 2000); }); }
  function load() {
    if (!live) return Promise.resolve();
    return fetch(base + "/live", {credentials: "same-origin"}).then(function (r) {
      if (r.status === 401) { location.reload(); return null; }
      return r.ok ? r.text() : null;
    }).then(function (text) {
      var typing = live.contains(document.activeElement) && document.activeElement.tagName === "INPUT";
      if (text === null || typing) return;
      var before = shownCodes();
      live.innerHTML = text;
      Array.prototype.forEach.call(live.querySelectorAll("form.pair[data-code]"), function (f) {
        if (before[f.dataset.station] === f.dataset.code) return;
        var pair = f.querySelector("button[type=submit]");
        pair.disabled = true;
        setTimeout(function () { pair.disabled = false; }, SETTLE_MS);
      });
      var now = document.getElementById("table-now");
      if (now && now.dataset.sound) press("sound", now.dataset.sound);
      if (now && now.dataset.language) press("language", now.dataset.language);
      var download = document.getElementById("download"), last = document.querySelector(".last-backup");
      if (download && now) download.hidden = !now.dataset.backup;  // a sealed one is there
      if (last && now && now.dataset.last !== undefined) last.textContent = now.dataset.last;
    }).catch(function () {});
  }
  if (live) {
    setTimeout(refresh, 2000);
    live.addEventListener("submit", function (event) {
      var f = event.target.closest("form.pair");
      if (!f) return;
      event.preventDefault();
      post("/command", {cmd: "pair", station: f.dataset.station, code: f.elements.code.value})
        .then(function (d) { say(d.message || (d.ok ? word("paired", "Paired") : word("refused", "Refused"))); });
    });
    live.addEventListener("click", function (event) {
      var b = event.target.closest("button.refuse");
      if (!b) return;
      var f = b.closest("form.pair");
      post("/command", {cmd: "refuse", station: f.dataset.station})
        .then(function (d) { say(d.message || (d.ok ? word("refused", "Refused") : "")); });
    });
  }

  // The console's language: this session's choice, kept by the display.
  var language = document.getElementById("language");
  if (language) language.addEventListener("change", function () {
    post("/language", {language: language.value}).then(function (d) {
      if (d.ok) location.reload(); else say(d.message);
    });
  });

  var out = document.getElementById("signout");
  if (out) out.addEventListener("click", function () {
    post("/signout", {}).then(function () { location.reload(); });
  });
})();
