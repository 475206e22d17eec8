"""What the table display's page plays and says: its cue sheet, from ``public`` alone.

The page (``static/sound.js``) reads a hidden cue sheet in every fragment: one item per
game move (a version of ``public``), oldest first, each with at most one cue (a new phase,
the table now waiting on someone, a reveal, a player out, game over) and the words to say
(the feed's own lines for that move, then who the table now waits for). The page plays
only the moves newer than the last it played, so a fragment it never got (the server
skips to the newest state for a slow browser) loses no line, and a page opened mid-game
says nothing of the past.

The display keeps the few facts of each ``public`` it hears (:func:`remember`): the hub
publishes one ``public`` per move, so which moves changed the phase or the seat waited on
is known even when the page skipped their fragments. Everything here comes from the
public table: the page can say nothing a station keeps secret.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from firmware.display.boards import board_module, feed_lines
from firmware.display.parts import Names, esc, waiting_for, whole
from firmware.link.lang import _
from firmware.link.protocol import SOUNDS

#: The table's sound settings (the hub's ``public["sound"]``, which the host sets): nothing,
#: cues only, cues and spoken narration. A hub that does not say gets the default.
SETTINGS = SOUNDS
DEFAULT = "cues"
#: Moves the cue sheet carries, each with its own words: a page that got one fragment in
#: many (a busy screen shows only the newest of a burst) still says every move; one that
#: missed more would be saying the past, and skips the oldest.
MOVES = 32
#: Public event kinds that are a reveal or a player out, whatever the game.
EVENT_CUES = {
    "reveal": "reveal",
    "revealed": "reveal",
    "safe_opened": "reveal",
    "eliminated": "out",
    "unmasked": "out",
    "escaped": "out",
    "fugitive": "out",
}
#: Public events that say whose turn begins (kind -> the key naming the seat): a move that
#: has one needs no "Waiting for ..." after it.
TURNS = {"turn": "seat", "turn_started": "active"}
#: One cue a move: the weightiest of what happened.
WEIGHT = ("over", "out", "reveal", "wait", "phase")
#: The voice the page asks the browser for, per table language.
VOICES = {"en": "en-GB", "fr": "fr-FR"}

Moment = dict[str, Any]


def remember(moments: list[Moment], public: dict[str, Any]) -> None:
    """Note what ``public`` says of its move (called on every ``public`` the display hears,
    oldest first). A new game, or a lower version (an undo), starts the list again."""
    game = public.get("game")
    version = whole(public.get("version"))
    if not game or version is None:
        moments.clear()
        return
    view = public.get("view") if isinstance(public.get("view"), dict) else {}
    moment: Moment = {
        "game": str(game),
        "v": version,
        "step": f"{public.get('round') or ''}/{public.get('phase') or ''}",
        "wait": waited(public, view or {}),
        "over": bool(public.get("over")),
    }
    if moments and (moments[-1]["game"] != moment["game"] or moments[-1]["v"] > version):
        moments.clear()
    if moments and moments[-1]["v"] == version:
        moments.pop()  # the same move again (a countdown's second): no new move
    before = moments[-1] if moments else None
    # The move's own public events, kept with it: the hub's feed holds its last few events
    # only, and a page that got one fragment in many must still say every move. Events of
    # moves the hub published together come with the first move that follows them.
    since = before["v"] if before else -1
    moment["view"] = view or {}  # what the move's words read (a weapon dropped since)
    moment["events"] = [
        e
        for e in public.get("feed") or []
        if isinstance(e, dict) and since < (whole(e.get("version")) or 0) <= version
    ]
    # What changed since the move before (a new game's first move: a new phase).
    cues = set()
    if moment["over"] and not (before and before["over"]):
        cues.add("over")
    if before is None or moment["step"] != before["step"]:
        cues.add("phase")
    if set(moment["wait"]) - set(before["wait"] if before else []):
        cues.add("wait")
    moment["cues"] = sorted(cues)
    moments.append(moment)
    # A page reads the last MOVES moves only (:func:`moves`): older ones, each with its
    # whole view, would only grow the display's memory and every fragment's work.
    del moments[:-MOVES]
    del moments[:-MOVES]


def waited(public: dict[str, Any], view: dict[str, Any]) -> list[int]:
    """The seats the table waits on: the seat to play, else those a game lists as
    ``waiting`` in its public view (Ultra Secret's agents)."""
    if public.get("over"):
        return []
    turn = whole(public.get("to_play"))
    if turn is not None:
        return [turn]
    listed = view.get("waiting")
    if isinstance(listed, list):
        return sorted({s for s in (whole(x) for x in listed) if s is not None})
    return []


def setting(public: dict[str, Any]) -> str:
    said = public.get("sound")
    return said if isinstance(said, str) and said in SETTINGS else DEFAULT


def cue_sheet(
    public: dict[str, Any], moments: Sequence[Moment], names: Names, language: str
) -> str:
    """The hidden cue sheet of a table's fragment (spoken words in the table's language,
    which the caller is speaking)."""
    # Sounding, the button also says what the host's setting plays: the table reads from
    # the sofa whether it will hear the feed spoken or cues only.
    sound = setting(public)
    words = {
        "tap": _("Tap to turn the sound on"),
        "on": _("Cues and speech · tap to mute")
        if sound == "narration"
        else _("Cues only · tap to mute"),
        "off": _("Sound muted · tap to turn it on"),
        "host": _("The host turned the sound off"),
    }
    attrs = "".join(f' data-{k}="{esc(v)}"' for k, v in words.items())
    items = "".join(
        f'<li data-v="{m["v"]}" data-cue="{m["cue"]}">{esc(m["say"])}</li>'
        for m in moves(public, moments, names)
    )
    voice = VOICES.get(language, language)
    return (
        f'<div class="cues" hidden data-game="{esc(public.get("game") or "")}" '
        f'data-sound="{sound}" data-voice="{voice}"{attrs}>'
        f"<ol>{items}</ol></div>"
    )


def moves(public: dict[str, Any], moments: Sequence[Moment], names: Names) -> list[Moment]:
    """Each recent move: its version, its cue ("" for none) and what to say of it."""
    game = public.get("game")
    module = board_module(game)
    view: dict[str, Any] = public.get("view") or {}
    by_version: dict[int, list[dict[str, Any]]] = {}
    for event in public.get("feed") or []:
        if isinstance(event, dict) and whole(event.get("version")) is not None:
            by_version.setdefault(int(event["version"]), []).append(event)
    known = {m["v"]: m for m in moments if m["game"] == game}
    # Moves from the feed alone are those from before the display heard the game: later
    # ones are in a remembered move (a move the hub published with the next, in the next).
    first = min(known, default=None)
    older = {v for v in by_version if first is None or v < first}
    versions = sorted(older | set(known))[-MOVES:]
    out = []
    for v in versions:
        events = known[v]["events"] if v in known else by_version.get(v, [])
        seen = known[v]["view"] if v in known else view
        lines = []
        narrate = getattr(module, "NARRATE", None)
        if events and narrate is not None:
            merge = getattr(module, "MERGE", {})
            lines = [plain(line) for line in feed_lines(events, narrate, merge, seen, names)]
        cues = {EVENT_CUES[str(e.get("kind"))] for e in events if e.get("kind") in EVENT_CUES}
        moment = known.get(v)
        if moment is not None:
            cues.update(moment["cues"])
            told = {whole(e["data"].get(TURNS[str(e.get("kind"))])) for e in events if _turn(e)}
            if "wait" in cues and not moment["over"] and not set(moment["wait"]) <= told:
                lines.append(plain(waiting_for(moment["wait"], names)))
        cue = next((c for c in WEIGHT if c in cues), "")
        said = " ".join(sentence(line) for line in lines if line)
        out.append({"v": v, "cue": cue, "say": said})
    return out


_SWATCH = re.compile(r"<i>[^<]*</i>|<em class=\"off\">.*?</em>")
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


def _turn(event: dict[str, Any]) -> bool:
    """Whether ``event`` says whose turn begins."""
    return str(event.get("kind")) in TURNS and isinstance(event.get("data"), dict)


def sentence(line: str) -> str:
    """A line as a spoken sentence: ended by a full stop unless it has its own end."""
    return line if line.endswith((".", "!", "?", "…")) else line + "."


def plain(line: str) -> str:
    """A feed line's words without its markup: a chip's number swatch and its "station
    offline" note are pictures, not words to say."""
    text = html.unescape(_TAG.sub("", _SWATCH.sub("", line)))
    return _SPACE.sub(" ", text).strip()
