"""Table bindings: how each game meets the physical table (inputs, screens)."""

from __future__ import annotations

from typing import Any

from firmware.table import Binding
from rules.core import BadOptions


def bound_games() -> list[str]:
    """Games that have a table binding (the host menu offers these)."""
    return ["secret-identity"]


def binding_for(game_id: str, **settings: Any) -> Binding:
    """The binding for a game, configured with table settings."""
    if game_id == "secret-identity":
        from firmware.bindings.secret_identity import SecretIdentityBinding

        return SecretIdentityBinding(reveal_delay=float(settings.get("reveal_delay", 0.0)))
    raise BadOptions(f"No table binding for {game_id}")
