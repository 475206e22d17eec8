"""Each game's board on the table display, found by the game's id.

A game's board lives in ``firmware/display/boards/<stem>.py`` (its id with ``_`` for ``-``,
the registry's convention, see :mod:`rules`) and has ``board(public, view, names) -> str``
(HTML) and ``log(view, names) -> list[str]`` (what happened, one HTML line each). The
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
from types import ModuleType
from typing import Any

from firmware.display.parts import Names, Public, esc, whole
from firmware.link.lang import _

#: A game id as the protocol allows it (``public`` is never trusted to name a module).
_GAME_ID = re.compile(r"[a-z][a-z0-9-]{0,31}")


def board_module(game: object) -> ModuleType | None:
    """The board module of ``game``, or None when there is none (or the id is not one)."""
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


def waiting_for(seats: list[int], names: Names) -> str:
    """ "Waiting for Blue" (the hold-up named), or for several seats."""
    return _("Waiting for {seats}", seats=names.list(seats)) if seats else ""


def board(public: Public, names: Names) -> str:
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    return str(module.board(public, view, names)) if module else ""


def verdict(public: Public, names: Names) -> str:
    """How the game ended, in a board's words (``verdict(public, view, names)``), for the
    end box: a co-op band, the winning side, the fugitive's fate."""
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    own = getattr(module, "verdict", None)
    return str(own(public, view, names)) if own else ""


def log_lines(public: Public, names: Names) -> list[str]:
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    return list(module.log(view, names)) if module else []
