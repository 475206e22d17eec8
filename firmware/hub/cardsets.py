"""Identités cryptées card sets at a table: shipped ones and a group's own directory.

Decision (identites-cryptees.md, Card data): a group's card set is a data file in a directory the
hub's config names (``[[table]] card_sets``); the host picks the set on the panel.
The set's content goes into the game's options, so the record never needs the file.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from firmware.hub.config import TableConfig
from rules.core import IllegalAction
from rules.identites_cryptees import DataError, card_sets, card_sets_in, read_card_set

log = logging.getLogger(__name__)

GAME = "identites-cryptees"


def card_set_names(config: TableConfig) -> list[str]:
    """The sets a host may pick at this table: ``generic`` first, then the rest."""
    own = card_sets_in(config.card_sets) if config.card_sets else {}
    names = sorted(set(card_sets()) | set(own))
    return sorted(names, key=lambda n: n != "generic")


def own_card_set(config: TableConfig, game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options with a set of the table's directory read in (it wins over a shipped
    set of the same name); other games' options are returned as they are."""
    out = dict(options)
    name = out.get("cards")
    if game != GAME or not isinstance(name, str) or config.card_sets is None:
        return out
    path = card_sets_in(config.card_sets).get(name)
    if path is None:
        return out
    try:
        out["cards"] = read_card_set(path)
    except DataError as exc:
        log.warning("hub: card set %s refused: %s", path, exc)
        raise IllegalAction("Card set {name}: bad file, see hub log", name=name[:20]) from None
    return out
