"""Table bindings: how each game meets the physical table (inputs, screens).

Each game's binding lives in ``firmware/hub/bindings/<module>.py`` and exposes
``make_binding(**settings) -> Binding``. Games whose binding module is missing
are simply not offered on the host panel.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from firmware.hub.table import Binding
from rules.core import BadOptions

_MODULES: dict[str, str] = {
    "secret-identity": "firmware.hub.bindings.secret_identity",
    "incognito": "firmware.hub.bindings.incognito",
    "identiquest": "firmware.hub.bindings.identiquest",
    "ultra-secret": "firmware.hub.bindings.ultra_secret",
    "identites-cryptees": "firmware.hub.bindings.identites_cryptees",
}


def bound_games() -> list[str]:
    """Games that have a table binding (the host menu offers these)."""
    return [g for g, m in _MODULES.items() if importlib.util.find_spec(m) is not None]


def binding_for(game_id: str, **settings: Any) -> Binding:
    """The binding for a game, configured with table settings (e.g. ``reveal_delay``)."""
    if game_id not in bound_games():
        raise BadOptions(f"No table binding for {game_id}")
    binding: Binding = importlib.import_module(_MODULES[game_id]).make_binding(**settings)
    return binding
