"""Benchmark the Secret Identity engine: full random 8-player games per second, and
the latency of one ``apply`` (median, p99, max), on one core.

Run: ``.venv/bin/python tests/bench/bench_secret_identity.py [seconds]``
"""

from __future__ import annotations

import random
import sys
import time

from rules.core import Action
from rules.secret_identity import GAME, SecretIdentityState, Vote


def pick(state: SecretIdentityState, rnd: random.Random) -> Action:
    """A random legal action; votes fill empty slots so rounds run to the end."""
    n = state.players
    if state.phase == "vote":
        empty = [(s, t) for s in range(n) for t in range(n) if s != t and not state.votes[s][t]]
        if empty:
            s, t = rnd.choice(empty)
            return Vote(s, t, rnd.choice([k for k in range(1, 9) if k not in state.votes[s]]))
    for actor in [*rnd.sample(range(n), n), None]:
        actions = GAME.legal_actions(state, actor)
        if actions:
            return rnd.choice(actions)
    raise AssertionError("stuck")


def play(options: dict[str, str], seed: int, rnd: random.Random, laps: list[float]) -> int:
    """One full 8-player game; appends the time of each apply to ``laps``."""
    state = GAME.setup(8, options, seed)
    steps = 0
    clock = time.perf_counter
    while not GAME.is_over(state):
        action = pick(state, rnd)
        t0 = clock()
        state, _ = GAME.apply(state, action)
        laps.append(clock() - t0)
        steps += 1
    return steps


def run(options: dict[str, str], seconds: float) -> None:
    rnd = random.Random(1)
    laps: list[float] = []
    games = steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        steps += play(options, games, rnd, laps)
        games += 1
    wall = time.perf_counter() - start
    laps.sort()
    p50, p99 = laps[len(laps) // 2], laps[int(len(laps) * 0.99)]
    label = f"{options['mode']}/{options['mystery']}"
    print(
        f"{label:<18} {games / wall:8.1f} games/s (incl. move choice)  "
        f"{steps / games:6.1f} actions/game  apply: median {p50 * 1e6:6.1f} us  "
        f"p99 {p99 * 1e6:6.1f} us  max {laps[-1] * 1e6:7.1f} us  "
        f"engine-only {games / sum(laps):8.1f} games/s"
    )


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    for mode in ("competitive", "coop"):
        for mystery in ("keys", "dealt"):
            run({"mode": mode, "mystery": mystery}, seconds)


if __name__ == "__main__":
    main()
