"""What a table display page asks the browser to play and say, recorded.

:data:`EARS` runs in a page before its scripts and replaces the browser's sound with
recorders: ``AudioContext`` (suspended until a tap resumes it, as a browser's autoplay rule
keeps it) notes each cue's notes, grouped by the bus a cue plays through, and
``speechSynthesis`` notes each utterance. Speech ends at once unless the test holds it
(``window.__hold = true``; ``window.__finish()`` ends the utterance being spoken).
"""

from __future__ import annotations

from typing import Any

EARS = """
window.__heard = [];
window.__hold = false;
(function () {
  function Param() { this.values = []; }
  Param.prototype.setValueAtTime = function (v) { this.values.push(v); return this; };
  Param.prototype.linearRampToValueAtTime = Param.prototype.setValueAtTime;
  Param.prototype.exponentialRampToValueAtTime = Param.prototype.setValueAtTime;
  function Node(ctx) { this.ctx = ctx; this.out = null; this.group = null; }
  Node.prototype.connect = function (n) {
    this.out = n;
    if (n === this.ctx.destination) {
      this.group = {kind: "cue", notes: []};
      window.__heard.push(this.group);
    }
    return n;
  };
  Node.prototype.disconnect = function () {};
  function Ctx() {
    this.state = "suspended";
    this.currentTime = 0;
    this.destination = {};
    this.onstatechange = null;
  }
  Ctx.prototype.resume = function () { this.state = "running"; return Promise.resolve(); };
  Ctx.prototype.createGain = function () {
    var n = new Node(this);
    n.gain = new Param();
    return n;
  };
  Ctx.prototype.createOscillator = function () {
    var n = new Node(this);
    n.frequency = new Param();
    n.type = "sine";
    n.start = function () {
      var at = n;
      while (at && !at.group) at = at.out;
      if (at) at.group.notes.push(n.frequency.values[0]);
    };
    n.stop = function () {};
    return n;
  };
  window.AudioContext = Ctx;
  window.webkitAudioContext = Ctx;
  var speaking = [];
  var synth = {
    getVoices: function () {
      return [{lang: "en-US", name: "English (America)"},
              {lang: "en-GB", name: "English (Great Britain)"},
              {lang: "fr-CA", name: "French (Canada)"}, {lang: "fr-FR", name: "French (France)"}];
    },
    speak: function (u) {
      var voice = u.voice && u.voice.name;
      window.__heard.push({kind: "say", text: u.text, lang: u.lang, voice: voice});
      if (window.__hold) speaking.push(u); else if (u.onend) u.onend({});
    },
    cancel: function () { speaking = []; }
  };
  window.__finish = function () { var u = speaking.shift(); if (u && u.onend) u.onend({}); };
  Object.defineProperty(window, "speechSynthesis", {value: synth, configurable: true});
  window.SpeechSynthesisUtterance = function (text) {
    this.text = text; this.lang = ""; this.voice = null; this.onend = null; this.onerror = null;
  };
})();
"""


def heard(page: Any) -> list[str]:
    """What the page played and said, in order: ``cue <name>`` (named from the page's own
    table of cues, by their notes) and ``say <language>: <text>``."""
    records = page.evaluate("window.__heard")
    cues = page.evaluate("window.coffreSound.CUES")
    by_notes = {tuple(round(n[0], 2) for n in notes): name for name, notes in cues.items()}
    out = []
    for r in records:
        if r["kind"] == "say":
            out.append(f"say {r['lang']}: {r['text']}")
        else:
            notes = tuple(round(f, 2) for f in r["notes"])
            out.append(f"cue {by_notes.get(notes, notes)}")
    return out


def voices(page: Any) -> set[str]:
    """The voices the page asked for (by name), over everything it said."""
    records = page.evaluate("window.__heard")
    return {str(r["voice"]) for r in records if r["kind"] == "say"}
