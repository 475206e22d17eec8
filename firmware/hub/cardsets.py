"""Card sets at a table: a game's shipped sets and a group's own directory.

A game whose declaration has a ``cards`` option on the panel (Identités cryptées) lets a
group bring its own card set: a data file in a directory the hub's config names
(``[[table]] card_sets``); the host picks the set on the panel (see
``rules/docs/identites-cryptees.md``, "Card data"). The set's content goes into the
game's options, so the record never needs the file. The game's engine module reads the
files: ``card_sets()``, ``card_sets_in(folder)``, ``read_card_set(path)``, ``DataError``.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from typing import Any

from firmware.hub.config import TableConfig
from rules import GAMES, get_info, piece_module
from rules.core import IllegalAction

log = logging.getLogger(__name__)


def _cards_games() -> list[str]:
    """The games whose host picks a card set on the panel."""
    return [g for g in GAMES if any(o.kind == "cards" and o.panel for o in get_info(g).options)]


def _engine(game: str) -> Any:
    return importlib.import_module(piece_module("rules", game))


def card_set_names(config: TableConfig) -> list[str]:
    """The sets a host may pick at this table: the default first, then the rest."""
    names: set[str] = set()
    default = ""
    for game in _cards_games():
        engine = _engine(game)
        own = engine.card_sets_in(config.card_sets) if config.card_sets else {}
        names |= set(engine.card_sets()) | set(own)
        default = default or next(o.default for o in get_info(game).options if o.kind == "cards")
    return sorted(sorted(names), key=lambda n: n != default) or ["generic"]


def own_card_set(config: TableConfig, game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options with a set of the table's directory read in (it wins over a shipped
    set of the same name); other games' options are returned as they are."""
    out = dict(options)
    name = out.get("cards")
    if game not in _cards_games() or not isinstance(name, str) or config.card_sets is None:
        return out
    engine = _engine(game)
    path = engine.card_sets_in(config.card_sets).get(name)
    if path is None:
        return out
    try:
        out["cards"] = engine.read_card_set(path)
    except engine.DataError as exc:
        log.warning("hub: card set %s refused: %s", path, exc)
        raise IllegalAction("Card set {name}: bad file, see hub log", name=name[:20]) from None
    return out
