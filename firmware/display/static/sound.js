// coffre table display: the table hears the game. Every fragment the server pushes carries a
// hidden cue sheet (firmware/display/sound.py): the last moves, each with a cue and the words
// to say. This script plays each move newer than the last it played, once, in order: a short
// sound made here with Web Audio (no file, no download) and, when the table's setting is
// narration, the feed's own lines spoken by the browser in the table's language. At most one
// move waits behind the one being spoken: a newer move replaces it (the table hears the
// present, never a backlog). The last five seconds of a countdown tick. Browsers keep a page
// silent until someone taps it: the button says so in words, and after that it mutes.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) return;
  var Context = window.AudioContext || window.webkitAudioContext;
  var KEY = "coffre-sound-muted";

  // Each cue: notes of [frequency in Hz, start in s, length in s]. Six tunes unlike each
  // other in shape, not only pitch: up, twice the same, one high click, an arpeggio, down,
  // a fanfare.
  var CUES = {
    phase: [[523.25, 0, 0.18], [783.99, 0.16, 0.3]],
    wait: [[880, 0, 0.12], [880, 0.2, 0.16]],
    tick: [[1318.51, 0, 0.06]],
    reveal: [[659.25, 0, 0.14], [830.61, 0.12, 0.14], [987.77, 0.24, 0.4]],
    out: [[392, 0, 0.22], [261.63, 0.2, 0.5]],
    over: [[523.25, 0, 0.15], [659.25, 0.15, 0.15], [783.99, 0.3, 0.15], [1046.5, 0.45, 0.7]]
  };
  var GAP = 0.12;  // s between two cues of one fragment (moves a slow page got together)

  var ctx = null;
  var muted = false;
  try { muted = window.localStorage.getItem(KEY) === "1"; } catch (e) { muted = false; }
  var played = null;  // the newest move played (or passed over); null: none seen yet
  var queued = null;  // the one move waiting to be said
  var speaking = false;
  var ticked = null;  // the countdown second last ticked

  var button = document.createElement("button");
  button.type = "button";
  button.id = "sound";
  button.hidden = true;
  document.body.appendChild(button);

  function sheet() { return live.querySelector(".cues"); }
  function enabled() { return ctx !== null && ctx.state === "running"; }
  function setting() { var s = sheet(); return s ? s.dataset.sound : "off"; }
  function audible(words) {
    if (!enabled() || muted) return false;
    return words ? setting() === "narration" : setting() !== "off";
  }

  function label() {
    var s = sheet();
    if (!s || !Context) { button.hidden = true; return; }
    var state = setting() === "off" ? "host" : !enabled() ? "tap" : muted ? "off" : "on";
    button.hidden = false;
    button.className = state;
    button.textContent = s.dataset[state] || "";
  }

  function cue(name, delay) {
    var notes = CUES[name];
    if (!notes) return 0;
    var t0 = ctx.currentTime + delay, end = 0;
    var bus = ctx.createGain();  // one bus a cue: its notes end together
    bus.gain.setValueAtTime(0.5, t0);
    bus.connect(ctx.destination);
    notes.forEach(function (n) {
      var at = t0 + n[1], osc = ctx.createOscillator(), env = ctx.createGain();
      osc.type = "triangle";
      osc.frequency.setValueAtTime(n[0], at);
      env.gain.setValueAtTime(0.0001, at);
      env.gain.exponentialRampToValueAtTime(0.8, at + 0.015);
      env.gain.exponentialRampToValueAtTime(0.0001, at + n[2]);
      osc.connect(env);
      env.connect(bus);
      osc.start(at);
      osc.stop(at + n[2] + 0.02);
      end = Math.max(end, n[1] + n[2]);
    });
    return end;
  }

  function voice(lang) {
    var voices = window.speechSynthesis.getVoices() || [];
    var base = lang.split("-")[0];
    for (var i = 0; i < voices.length; i++) if (voices[i].lang === lang) return voices[i];
    for (var j = 0; j < voices.length; j++) {
      if ((voices[j].lang || "").split(/[-_]/)[0] === base) return voices[j];
    }
    return null;
  }

  function say(text, lang) {
    if (!text || !window.speechSynthesis) return;
    queued = {text: text, lang: lang};  // an older move still waiting is dropped
    next();
  }

  function next() {
    if (speaking || !queued) return;
    var item = queued;
    queued = null;
    speaking = true;
    var u = new window.SpeechSynthesisUtterance(item.text);
    u.lang = item.lang;
    var v = voice(item.lang);
    if (v) u.voice = v;
    u.onend = u.onerror = function () { speaking = false; next(); };
    window.speechSynthesis.speak(u);
  }

  function moves(s) {
    var items = s.querySelectorAll("li[data-v]");
    var out = [];
    for (var i = 0; i < items.length; i++) {
      out.push({v: Number(items[i].dataset.v), cue: items[i].dataset.cue,
                say: items[i].textContent});
    }
    return out;
  }

  // A new fragment: play what moved since the last one played.
  function heard() {
    label();
    var s = sheet();
    if (!s) return;
    var list = moves(s);
    var newest = list.length ? list[list.length - 1].v : -1;
    if (!s.dataset.game) { played = -1; return; }  // between games: the next game from its start
    // Opened mid-game, silent (not enabled, muted, sound off) or taken back (an undo): pass
    // over what the page has not played, so it never catches up on the past.
    if (played === null || newest < played || !audible(false)) { played = newest; return; }
    var delay = 0;
    list.forEach(function (m) {
      if (m.v <= played) return;
      if (m.cue) delay += cue(m.cue, delay) + GAP;
      if (audible(true)) say(m.say, s.dataset.voice);
    });
    played = newest;
  }

  // The last five seconds of a countdown: seen (the clock turns red and beats) and heard
  // (one tick a second, whether the second comes from the hub or the page's own count).
  function tick() {
    var node = live.querySelector(".countdown[data-left]");
    var left = node ? parseInt(node.dataset.left, 10) : null;
    if (node) node.classList.toggle("last", left > 0 && left <= 5);
    if (left !== null && left > 0 && left <= 5 && left !== ticked && audible(false)) cue("tick", 0);
    ticked = left;
  }

  button.addEventListener("click", function () {
    if (!Context || setting() === "off") return;
    if (!enabled()) {
      if (ctx === null) ctx = new Context();
      muted = false;
      var s = sheet();
      var list = s ? moves(s) : [];
      played = list.length ? list[list.length - 1].v : played;  // from now on, not the past
      ctx.resume().then(label, label);
    } else {
      muted = !muted;
      if (muted) { queued = null; if (window.speechSynthesis) window.speechSynthesis.cancel(); }
    }
    try { window.localStorage.setItem(KEY, muted ? "1" : "0"); } catch (e) { /* private mode */ }
    label();
  });

  // A browser that lets this page sound at once (a kiosk TV started to allow it) needs no tap.
  if (Context) {
    try { ctx = new Context(); } catch (e) { ctx = null; }
    if (ctx && ctx.onstatechange !== undefined) ctx.onstatechange = label;
  }
  new MutationObserver(function (records) {
    var swapped = records.some(function (r) { return r.type === "childList" && r.target === live; });
    if (swapped) heard();
    tick();
  }).observe(live, {childList: true, subtree: true, attributes: true,
                   attributeFilter: ["data-left"]});
  heard();
  window.coffreSound = {CUES: CUES};
})();
