"""How often someone may ask: a token bucket, shared by the hub's pairing and console
requests and the display's console door."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TokenBucket:
    """At most ``burst`` takes at once, then one every ``refill`` seconds (full at ``at``)."""

    burst: float
    refill: float
    at: float
    tokens: float = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = float(self.burst)

    def take(self, now: float) -> bool:
        """One token, if any is left at ``now``."""
        self.tokens = min(float(self.burst), self.tokens + (now - self.at) / self.refill)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True
