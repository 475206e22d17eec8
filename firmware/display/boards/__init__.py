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
    """Phase, round and whose turn it is: the same three for every game."""
    phase = phase_text(public)
    bits = [f"<b>{esc(phase)}</b>"] if phase else []
    round_, rounds = whole(public.get("round")), whole(public.get("rounds"))
    if round_ is not None and rounds is not None:
        bits.append(esc(_("round {n} of {of}", n=round_, of=rounds)))
    turn = whole(public.get("to_play"))
    if turn is not None and not public.get("over"):
        bits.append(_("{seat} to play", seat=names.chip(turn)))
    return " · ".join(bits)


def board(public: Public, names: Names) -> str:
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    return str(module.board(public, view, names)) if module else ""


def log_lines(public: Public, names: Names) -> list[str]:
    module = board_module(public.get("game"))
    view: dict[str, Any] = public.get("view") or {}
    return list(module.log(view, names)) if module else []
