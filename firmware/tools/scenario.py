"""``coffre play``: apply a scenario of JSON actions to an engine, print the result.

Hosts use it to replay a disputed game; anyone can poke an engine from outside.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from rules import GAMES, get_game, get_info
from rules.core import RulesError, decode_action

EXIT_ILLEGAL = 2
EXIT_NO_INPUT = 66  # sysexits.h EX_NOINPUT: the scenario file is missing or unreadable


def parse_options(pairs: Iterable[str], game_id: str | None = None) -> dict[str, Any]:
    """Turn ``key=value`` strings into options, typed by the game's declaration (a flag
    takes ``yes``/``no`` too); values are JSON when they parse. An option the game does
    not declare is kept as given, for the engine to refuse by name."""
    declared = {o.name: o for o in get_info(game_id).options} if game_id in GAMES else {}
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise SystemExit(f"option must be key=value: {pair}")
        if key in declared:
            options[key] = declared[key].from_text(raw)
            continue
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


def run_scenario(
    game_id: str,
    players: int,
    seed: int,
    options: Mapping[str, Any],
    lines: Iterable[str],
    out: TextIO,
) -> int:
    """Apply each non-blank line as an action; print the outcome as JSON."""
    game = get_game(game_id)
    try:
        state = game.setup(players, options, seed)
    except RulesError as exc:
        print(json.dumps({"error": str(exc)}), file=out)
        return EXIT_ILLEGAL
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            state, _ = game.apply(state, decode_action(game, text))
        except RulesError as exc:
            print(json.dumps({"error": str(exc), "line": number}), file=out)
            return EXIT_ILLEGAL
    result = {
        "game": game_id,
        "version": state.version,
        "over": game.is_over(state),
        "scores": game.scores(state),
        "ranking": game.ranking(state),
        "public": game.view(state, None),
    }
    print(json.dumps(result, ensure_ascii=False, sort_keys=True), file=out)
    return 0


def main(args: Any) -> int:
    """Entry point for the ``play`` subcommand (``args`` from argparse)."""
    options = parse_options(args.option or [], args.game)
    if args.scenario and args.scenario != "-":
        try:
            with open(args.scenario, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
            print(f"coffre: cannot read the scenario {args.scenario}: {why}", file=sys.stderr)
            return EXIT_NO_INPUT
        return run_scenario(args.game, args.players, args.seed, options, lines, sys.stdout)
    return run_scenario(args.game, args.players, args.seed, options, sys.stdin, sys.stdout)
