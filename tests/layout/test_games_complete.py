"""Every registered game is whole: each piece a game needs exists, and a missing one fails
here with a message naming it (the safety net of docs/adding-a-game.md).

The registry is ``rules.GAMES``; each piece is found from the game's id by the same
convention the code uses (``secret-identity`` -> ``secret_identity``).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from rules import GAMES, get_game, get_info, stem
from rules.declare import GameInfo, Outcome, Side

ROOT = Path(__file__).resolve().parents[2]

PIECES = [
    "engine",
    "binding",
    "bot",
    "board",
    "catalogue",
    "docs",
    "goldens",
    "redeal",
    "readme",
    "summary",
]


def _has(module: str, *names: str) -> list[str]:
    """The attributes of ``module`` that are missing (all of them if it is missing)."""
    if importlib.util.find_spec(module) is None:
        return list(names) or ["the module"]
    loaded = importlib.import_module(module)
    return [n for n in names if not hasattr(loaded, n)]


def _engine(game: str) -> str | None:
    path = f"rules/{stem(game)}.py"
    missing = _has(f"rules.{stem(game)}", "INFO", "GAME")
    if missing:
        return f"{path} lacks {', '.join(missing)}"
    info = get_info(game)
    if not isinstance(info, GameInfo) or info.id != game:
        return f"{path}: INFO must be the GameInfo of {game}"
    if get_game(game).info is not info:
        return f"{path}: GAME.info must be INFO"
    return None


def _binding(game: str) -> str | None:
    missing = _has(f"firmware.hub.bindings.{stem(game)}", "make_binding")
    return (
        f"no table binding: firmware/hub/bindings/{stem(game)}.py with make_binding()"
        if missing
        else None
    )


def _bot(game: str) -> str | None:
    where = f"firmware/tools/bots/{stem(game)}.py"
    if _has(f"firmware.tools.bots.{stem(game)}", "Bot"):
        return f"no bots: {where} with class Bot"
    bot = importlib.import_module(f"firmware.tools.bots.{stem(game)}").Bot
    fields = getattr(bot, "__dataclass_fields__", {})
    missing = [name for name in ("start_game", "play") if not callable(getattr(bot, name, None))]
    missing += [] if "options" in fields else ["an options field (the host's game options)"]
    if missing:
        return f"{where}: Bot lacks {', '.join(missing)} (coffre sim and the tests use them)"
    return None


def _board(game: str) -> str | None:
    missing = _has(f"firmware.display.boards.{stem(game)}", "board", "log", "NARRATE")
    if missing:
        where = f"firmware/display/boards/{stem(game)}.py"
        return f"no table-display board: {where} lacks {', '.join(missing)}"
    return None


def declared_texts(info: GameInfo) -> list[str]:
    """Every text of a declaration the table reads (message ids)."""
    texts = [info.name, info.tie_break, info.summary]
    for phase in info.phases.values():
        texts += [phase.long, phase.short]
    for option in info.options:
        texts.append(option.label)
        texts += list(option.values.values())
    for band in info.bands:
        texts += [band.text, band.short]
    for outcome in info.outcomes.values():
        texts += [outcome.long, outcome.short]
    for side in info.side_words.values():
        texts += [t for t in (side.name, side.wins, side.word, side.letter) if t]
    return texts


def _french() -> dict[str, str]:
    path = ROOT / "firmware" / "link" / "locale" / "fr" / "LC_MESSAGES" / "coffre.po"
    with path.open("rb") as f:
        po = read_po(f, locale="fr")
    return {str(m.id): str(m.string) for m in po if isinstance(m.id, str) and m.string}


def _catalogue(game: str) -> str | None:
    french = _french()
    missing = [t for t in dict.fromkeys(declared_texts(get_info(game))) if t not in french]
    if missing:
        return (
            f"no French for {missing[:5]} in firmware/link/locale/fr "
            "(python -m firmware.tools.catalogue update, then translate)"
        )
    return None


def _docs(game: str) -> str | None:
    page = ROOT / "rules" / "docs" / f"{game}.md"
    if not page.is_file():
        return f"no rules page: rules/docs/{game}.md (named by the id, not the stem)"
    text = page.read_text(encoding="utf-8")
    undocumented = [o.name for o in get_info(game).options if f"`{o.name}`" not in text]
    if undocumented:
        return f"rules/docs/{game}.md does not document the options {undocumented}"
    return None


def _goldens(game: str) -> str | None:
    info = get_info(game)
    screens = ROOT / "tests" / "screens" / "golden"
    wanted = [
        screens / f"{game}-{n}p-{language}"
        for n in (info.min_players, info.max_players)
        for language in ("en", "fr")
    ]
    missing = [str(p.relative_to(ROOT)) for p in wanted if not p.is_dir() or not any(p.iterdir())]
    if missing:
        return (
            f"no golden screens {missing} (COFFRE_REGEN_GOLDEN=1 on tests/screens/test_golden.py, "
            "then look at them)"
        )
    playthroughs = list((ROOT / "tests" / "rules" / "golden").glob(f"{game}*.jsonl"))
    if not playthroughs:
        return (
            f"no golden playthrough tests/rules/golden/{game}*.jsonl (a golden test in "
            "tests/rules/ writes it with COFFRE_REGEN_GOLDEN=1; copy "
            "tests/rules/test_ultra_secret_golden.py)"
        )
    display = ROOT / "tests" / "platform" / "golden" / "display"
    pictures = [f"{game}{lang}-{end}.png" for lang in ("", "-fr") for end in ("start", "final")]
    missing = [name for name in pictures if not (display / name).is_file()]
    if missing:
        return (
            f"no table-display pictures {missing} in tests/platform/golden/display "
            "(COFFRE_REGEN_GOLDEN=1 on tests/platform/test_display_follow.py, then look at them)"
        )
    return None


#: The test helpers every game's ``tests/support/games/<stem>.py`` exposes, and what for.
HELPERS = {
    "redeal_for_seat": (
        "redeal_for_seat(state, seat, k): the state with what seat may not know dealt again "
        "from seed k, or None when nothing is hidden (tests/screens/test_no_leak.py)"
    ),
    "redeal_public": (
        "redeal_public(state, r): the state with what no seat shows the table dealt again "
        "from random.Random r, or state itself when nothing is hidden "
        "(tests/platform/test_display_no_leak.py)"
    ),
    "PUBLIC_PLAYERS": "PUBLIC_PLAYERS: the table size tests/platform/test_display_no_leak.py plays",
    "FOLLOW": (
        "FOLLOW = (players, table seed, bot seed, bot options): the game the bots play in "
        "tests/platform/test_display_follow.py"
    ),
}


def _redeal(game: str) -> str | None:
    missing = _has(f"tests.support.games.{stem(game)}", *HELPERS)
    if missing:
        wanted = "; ".join(HELPERS.get(name, name) for name in missing)
        return f"tests/support/games/{stem(game)}.py lacks {wanted}"
    return None


def _readme(game: str) -> str | None:
    info = get_info(game)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    if f"`{game}`" not in text:
        return f"README.md's list of games lacks `{game}` ({info.min_players}–{info.max_players})"
    return None


def _summary(game: str) -> str | None:
    """The game's rules on one card, for the idle table display (and the catalogue has
    its French: ``declared_texts`` lists it)."""
    info = get_info(game)
    if not info.summary.strip():
        return (
            f"rules/{stem(game)}.py: INFO has no summary "
            "(the game's rules on one card, for the idle table display)"
        )
    if len(info.summary) > SUMMARY_CHARS:
        return f"rules/{stem(game)}.py: INFO.summary is over {SUMMARY_CHARS} characters"
    return None


#: A summary fits one card on the idle TV page (the longest today is about 310).
SUMMARY_CHARS = 400


CHECKS = {
    "engine": _engine,
    "binding": _binding,
    "bot": _bot,
    "board": _board,
    "catalogue": _catalogue,
    "docs": _docs,
    "goldens": _goldens,
    "redeal": _redeal,
    "readme": _readme,
    "summary": _summary,
}


@pytest.mark.parametrize("piece", PIECES)
@pytest.mark.parametrize("game", GAMES)
def test_every_registered_game_has_every_piece(game: str, piece: str) -> None:
    """A registered game without one of its pieces fails, naming the piece and its file."""
    problem = CHECKS[piece](game)
    assert problem is None, f"{game}: {problem}"


def test_declared_texts_include_every_wording_of_the_ends_and_sides() -> None:
    """A team game's outcomes and side words need French like its name and phases do."""
    info = GameInfo(
        id="t",
        name="T",
        min_players=2,
        max_players=3,
        tie_break="tb",
        phases={},
        sides=True,
        outcomes={"won": Outcome("they won together", "They won")},
        side_words={"red": Side("Reds", "Reds win", "red", "R|side")},
        summary="S",
    )
    texts = declared_texts(info)
    wordings = ["they won together", "They won", "Reds", "Reds win", "red", "R|side"]
    assert [t for t in wordings if t not in texts] == []


def test_ids_are_protocol_safe_and_stems_unique() -> None:
    """Game ids fit the protocol's ``[a-z0-9-]{1,32}`` and no two share a file stem."""
    assert all(re.fullmatch(r"[a-z][a-z0-9-]{0,31}", g) for g in GAMES), GAMES
    assert len({stem(g) for g in GAMES}) == len(GAMES)


def _game_files() -> set[Path]:
    """The files that belong to one game or another (an id may appear in them freely:
    another game may use the same word for something of its own)."""
    own = set()
    for game in GAMES:
        s = stem(game)
        own |= {
            ROOT / "rules" / f"{s}.py",
            ROOT / "firmware" / "hub" / "bindings" / f"{s}.py",
            ROOT / "firmware" / "tools" / "bots" / f"{s}.py",
            ROOT / "firmware" / "display" / "boards" / f"{s}.py",
        }
    return own


@pytest.mark.parametrize("game", GAMES)
def test_a_game_id_is_spelled_in_at_most_one_shared_source_file(game: str) -> None:
    """Only the registry (rules/__init__.py) names a game among the shared modules; the
    games' own files and an engine's private helpers (rules/_*.py) are not shared."""
    shared = []
    for folder in ("rules", "firmware", "device", "hardware"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            private = path.parent.name == "rules" and re.match(r"_[a-z]", path.name)
            if path in _game_files() or private:
                continue
            if f'"{game}"' in path.read_text(encoding="utf-8"):
                shared.append(str(path.relative_to(ROOT)))
    assert shared == ["rules/__init__.py"], f"{game} is spelled in {shared}"
