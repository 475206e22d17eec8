"""What the rules raise: a refused action, refused options, and the check behind the latter.

Both the engines' shared core (:mod:`rules.core`) and the games' declarations
(:mod:`rules.declare`) raise these, so they live below both; ``rules.core`` re-exports
them, where engines and callers import them from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: What fits on one line of a 128x64 OLED in the station's small font.
SCREEN_LINE = 21
#: A player-facing message is at most this long (three screen lines).
MESSAGE_MAX = 3 * SCREEN_LINE


class RulesError(Exception):
    """Root of every error the rules package raises."""


class IllegalAction(RulesError, ValueError):
    """An action the rules refuse; ``message`` is readable on a 128x64 screen.

    ``msgid`` is the refusal's stable id, an English text with ``{name}`` fields that
    ``params`` fill (``IllegalAction("Place 1 to {hi} pictos", hi=3)``): the table
    shows it in its own language from those two; ``message`` is the English text.
    """

    def __init__(self, msgid: str, /, **params: Any) -> None:
        message = msgid.format(**params) if params else msgid
        if len(message) > MESSAGE_MAX:
            raise ValueError(f"message too long for the screen: {message!r}")
        super().__init__(message)
        self.message = message
        self.msgid = msgid
        self.params = params


class BadOptions(RulesError, ValueError):
    """Options or a player count that the game cannot be set up with."""


def check_options(options: Mapping[str, Any], known: Iterable[str]) -> None:
    """Refuse an option the game does not have (a typo must not be silently ignored)."""
    unknown = set(options) - set(known)
    if unknown:
        raise BadOptions(f"Unknown option: {sorted(unknown)[0]}")
