"""Each game's board on the table display, found by the game's id.

A game's board lives in ``firmware/display/boards/<stem>.py`` (its id with ``_`` for ``-``,
the registry's convention, see :mod:`rules`) and has ``board(public, view, names) -> str``
(HTML), ``log(view, names) -> list[str]`` (what happened, from the view alone: a display
that joined late) and ``NARRATE`` (each public event kind of the hub's feed -> its lines).
Optional: ``MERGE`` (seat-only kinds a run of which reads as one line), ``now`` (the one
thing that matters now), ``verdict`` (how the game ended, for the end box), ``rounds_text``
(the round worded the game's way), ``scores`` (each seat's score from the view) and
``notes`` (lines shown under the feed), ``side`` (a part of the board shown at the top
of the side column, where a wide board leaves room) and ``WIDE`` (True: the board needs
more of a wide screen's width than the side column). The
headline is the same for every game: ``public`` carries the phase, round and the seat the
table waits for under the same keys whatever the game. The display may not import the
rules, so it finds a board by the id alone; ``tests/test_games_complete.py`` checks that
every registered game has one.

Every word is the table's language (:mod:`firmware.link.lang`; the page is rendered while
speaking it): engine ids (outcomes, card places) go through each board's label maps, card
names and texts written per language (Identités cryptées) through ``in_language``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from firmware.display.parts import Names, Narration, Public, esc, waiting_for, whole
from firmware.link.lang import _

#: A game id as the protocol allows it (``public`` is never trusted to name a module).
_GAME_ID = re.compile(r"[a-z][a-z0-9-]{0,31}")


def board_module(game: object) -> ModuleType | None:
    """The board module of ``game``, or None when there is none (or the id is not one).

    The display never imports ``rules`` (it shows only what the hub made public), so this
    is the one place outside ``rules.piece_module`` that turns an id into a module name."""
    if not isinstance(game, str) or not _GAME_ID.fullmatch(game):
        return None
    try:
        return importlib.import_module(f"{__name__}.{game.replace('-', '_')}")
    except ModuleNotFoundError:
        return None


def phase_text(public: Public) -> str:
    """The phase in words (its message id comes with ``public``), else as it is."""
    labels = public.get("labels") or {}
    said = labels.get("phase") if isinstance(labels, dict) else None
    return _(str(said)) if said else str(public.get("phase") or "")


def headline(public: Public, names: Names) -> str:
    """Phase and round: the same for every game (a board may word its rounds, as
    Secret Identity's co-op turns, with ``rounds_text(public, view)``)."""
    phase = phase_text(public)
    bits = [f"<b>{esc(phase)}</b>"] if phase else []
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    worded = getattr(module, "rounds_text", None)
    said = worded(public, view) if worded else None
    round_, rounds = whole(public.get("round")), whole(public.get("rounds"))
    if said:
        bits.append(esc(said))
    elif round_ is not None and rounds is not None:
        bits.append(esc(_("round {n} of {of}", n=round_, of=rounds)))
    return " · ".join(bits)


def now_line(public: Public, names: Names) -> str:
    """The one thing that matters now, said large: a board's own ``now(public, view,
    names)`` (a declared shot, who a vote waits for), else who the table waits for."""
    if public.get("over"):
        return ""
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    own = getattr(module, "now", None)
    said = own(public, view, names) if own else ""
    if said:
        return str(said)
    turn = whole(public.get("to_play"))
    if turn is not None:
        return waiting_for([turn], names)
    return ""


def board(public: Public, names: Names) -> str:
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    return str(module.board(public, view, names)) if module else ""


def board_side(public: Public, names: Names) -> str:
    """The part of a board shown in the side column (``side(public, view, names)``), if any."""
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    own = getattr(module, "side", None)
    return str(own(public, view, names)) if own else ""


def board_wide(public: Public) -> bool:
    """Whether the game's board asks for more of the screen's width (``WIDE``)."""
    return bool(getattr(board_module(public.get("game")), "WIDE", False))


def seat_scores(public: Public) -> list[int] | None:
    """Each seat's score as the table shows it: ``public``'s scores, else a board's own
    reading of its view (``scores(view)``: Secret Identity's per-seat track), else None."""
    scores = public.get("scores")
    if isinstance(scores, list) and all(whole(v) is not None for v in scores) and scores:
        return [int(v) for v in scores]
    module = board_module(public.get("game"))
    own = getattr(module, "scores", None)
    view: dict[str, Any] = public.get("view") or {}
    said = own(view) if own else None
    return [int(v) for v in said] if said else None


def verdict(public: Public, names: Names) -> str:
    """How the game ended, in a board's words (``verdict(public, view, names)``), for the
    end box: a co-op band, the winning side, the fugitive's fate."""
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    own = getattr(module, "verdict", None)
    return str(own(public, view, names)) if own else ""


def log_lines(public: Public, names: Names) -> list[str]:
    """What happened: the hub's feed of public events, each said by the game's board
    (``NARRATE``: event kind -> lines), then what the board always shows (``notes``);
    a table with no feed yet (a display that joined late) shows the board's ``log``."""
    module = board_module(public.get("game"))
    if module is None:
        return []
    view: dict[str, Any] = public.get("view") or {}
    feed = [e for e in public.get("feed") or [] if isinstance(e, dict)]
    narrate = getattr(module, "NARRATE", None)
    if not feed or narrate is None:
        return list(module.log(view, names))
    lines = feed_lines(feed, narrate, getattr(module, "MERGE", {}), view, names)
    notes = getattr(module, "notes", None)
    return lines + (list(notes(view, names)) if notes else [])


def feed_lines(
    feed: list[dict[str, Any]],
    narrate: dict[str, Narration],
    merge: dict[str, Callable[[int, str], str]],
    view: dict[str, Any],
    names: Names,
) -> list[str]:
    """Each event in words; a run of the same seat-only event ("Red passes", "Blue
    passes") is one line ("Red, Blue pass"), until a seat comes again (the next phase)."""
    lines: list[str] = []
    run: list[int] = []
    run_kind = ""

    def close() -> None:
        if run:
            lines.append(merge[run_kind](len(run), names.list(run)))
            run.clear()

    for event in feed:
        kind = str(event.get("kind"))
        raw = event.get("data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        seat = whole(data.get("seat"))
        if kind in merge and seat is not None:
            if kind != run_kind or seat in run:  # a seat again: a new phase, a new line
                close()
                run_kind = kind
            run.append(seat)
            continue
        close()
        run_kind = ""
        said = narrate.get(kind)
        if said is None:  # an event kind this display does not know yet: said plainly
            lines.append(esc(kind))
            continue
        lines += [line for line in said(data, view, names) if line]
    close()
    return lines
