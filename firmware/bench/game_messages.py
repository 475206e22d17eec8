"""What one whole game played by bots sends through the broker, by kind
(``tests/bench/bench_venue.py --game``)."""

from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

from firmware.bench.sniffer import INPUT_KINDS, Sniffer
from firmware.hub.brokerconf import HUB_USER
from firmware.tools.bots.secret_identity import Director
from firmware.tools.simtable import SimTable


@dataclass
class GameMessages:
    """What one whole game played by bots sends through the broker, by kind."""

    players: int
    messages: dict[str, int]

    @property
    def inputs(self) -> int:
        return sum(n for kind, n in self.messages.items() if kind in INPUT_KINDS)

    @property
    def per_input(self) -> float:
        sent = sum(n for kind, n in self.messages.items() if kind not in INPUT_KINDS)
        return sent / self.inputs if self.inputs else float("nan")

    def line(self) -> str:
        kinds = sorted(self.messages, key=lambda k: -self.messages[k])
        split = ", ".join(f"{k} {self.messages[k]}" for k in kinds)
        return (
            f"a {self.players}-player Secret Identity game by bots: {self.inputs} inputs and "
            f"commands, the hub sent {self.per_input:.2f} messages per input ({split})"
        )


def game_messages(players: int = 8, seed: int = 1) -> GameMessages:
    """Bots play one whole game on a real table (TLS, ACL, the hub in its own process)
    while a sniffer with the hub's user counts every message on the table."""
    sim = SimTable(
        players=players,
        workdir=Path(tempfile.mkdtemp(prefix="coffre-game-")),
        embedded=False,
        seed=seed,
        hub_mode="process",
    )
    sim.start()
    try:
        sim.watch.wait_hub_ready()
        sniffer = Sniffer(sim.broker.config(HUB_USER))
        bots = Director(sim, sim.watch, random.Random(seed), say=lambda _: None)
        bots.start_game(players)
        bots.play()
        return GameMessages(players, sniffer.counts())
    finally:
        sim.stop()
