"""The table hears the game: a whole game of each game in each language with the display
open, what the page plays and says recorded (tests/support/hearing.py) and held to a text
golden per game and language (tests/platform/golden/sound/<game>-<lang>.txt)."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from firmware.link.lang import _, speaking
from firmware.tools.bots import bot_class
from firmware.tools.simtable import TABLE, SimTable
from rules import GAMES as REGISTERED
from tests.support.browser import (
    chromium,
    freeze_countdowns,
    new_page,
    start_display,
    wait_version,
)
from tests.support.games import game_support
from tests.support.golden import STATION_GOLDEN, regenerating
from tests.support.hearing import EARS, heard, voices
from tests.support.tables import TableFactory

SOUND_GOLDEN = STATION_GOLDEN / "sound"
#: game -> (players, table seed, bot seed, bot options): the games the display tests follow.
GAMES: dict[str, tuple[int, int, int, dict[str, Any]]] = {
    g: game_support(g).FOLLOW for g in REGISTERED
}


def table_sound(sim: SimTable, level: str) -> None:
    """The host sets the table's sound (a host command, as ``coffre host ... sound`` sends
    it); the hub publishes it in ``public``."""
    sim.host({"cmd": "sound", "sound": level})
    sim.watch.wait(lambda p: p.get("sound") == level)


def open_page(browser: Any, sim: SimTable, language: str) -> Any:
    display = start_display(sim)
    page = new_page(browser)
    page.add_init_script(EARS)
    page.goto(f"{display.url}table/{TABLE}")
    with speaking(language):
        page.get_by_text(_("Waiting for the host to start a game.")).wait_for()
    return page


def words(language: str, key: str) -> str:
    texts = {
        "tap": "Tap to turn the sound on",
        "on": "Cues and speech · tap to mute",
        "cues": "Cues only · tap to mute",
        "off": "Sound muted · tap to turn it on",
    }
    with speaking(language):
        return _(texts[key])


def play(sim: SimTable, game: str, page: Any) -> dict[str, Any]:
    players, _seed, bot_seed, options = GAMES[game]
    bot = bot_class(game)(sim, sim.watch, random.Random(bot_seed), say=lambda _: None, **options)
    bot.start_game(players)
    final: dict[str, Any] = bot.play()
    wait_version(page, final["version"])
    page.locator(".ranking").wait_for()
    time.sleep(0.5)  # the last fragment's cue and words
    return final


def golden_problems(name: str, script: list[str]) -> list[str]:
    path = SOUND_GOLDEN / f"{name}.txt"
    text = "\n".join(script) + "\n"
    if regenerating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return [f"regenerated {path}: review, then rerun"]
    if not path.exists():
        return [f"no golden {path} (run with COFFRE_REGEN_GOLDEN=1)"]
    want = path.read_text(encoding="utf-8").splitlines()
    if want != script:
        first = next(
            (i for i, (a, b) in enumerate(zip(want, script, strict=False)) if a != b),
            min(len(want), len(script)),
        )
        got = script[first] if first < len(script) else "(end)"
        wanted = want[first] if first < len(want) else "(end)"
        return [f"{name}: line {first + 1} is {got!r}, golden says {wanted!r}"]
    return []


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("game", list(REGISTERED))
def test_a_narrated_game_sounds_as_its_golden(
    make_table: TableFactory, game: str, language: str
) -> None:
    """Narration on, the page tapped once: every move's cue and the feed's own lines, in
    the table's voice, in order, as the golden script (countdown ticks left out: they
    follow the clock, tested on their own)."""
    players, seed, _bot_seed, _options = GAMES[game]
    sim = make_table(players, seed=seed, language=language)
    table_sound(sim, "narration")
    if game == "incognito":
        freeze_countdowns(sim)
    with chromium() as browser:
        page = open_page(browser, sim, language)
        button = page.locator("#sound")
        assert button.inner_text() == words(language, "tap")
        button.click()
        page.wait_for_function("document.getElementById('sound').className === 'on'")
        assert button.inner_text() == words(language, "on")
        play(sim, game, page)
        script = [line for line in heard(page) if line != "cue tick"]
        named = voices(page)
    voice = {"en": "en-GB", "fr": "fr-FR"}[language]
    said = [line for line in script if line.startswith("say ")]
    assert said and all(line.startswith(f"say {voice}: ") for line in said)
    assert named == {"English (Great Britain)" if language == "en" else "French (France)"}
    assert script.count("cue over") == 1 and script[-1].startswith(("cue over", "say "))
    problems = golden_problems(f"{game}-{language}", script)
    assert not problems, problems


def test_nothing_sounds_before_the_tap_and_muted_is_silent(make_table: TableFactory) -> None:
    """A page nobody tapped plays and says nothing through a whole game, and says in words
    that it needs a tap; tapped then muted, it is silent again; unmuted, it sounds."""
    game = "secret-identity"
    players, seed, _bot_seed, _options = GAMES[game]
    sim = make_table(players, seed=seed, language="fr")
    table_sound(sim, "narration")
    with chromium() as browser:
        page = open_page(browser, sim, "fr")
        button = page.locator("#sound")
        assert button.inner_text() == "Touchez pour activer le son"
        play(sim, game, page)
        assert page.evaluate("window.__heard") == []
        assert button.inner_text() == "Touchez pour activer le son"
        button.click()  # on
        page.wait_for_function("document.getElementById('sound').className === 'on'")
        button.click()  # muted
        assert button.inner_text() == words("fr", "off")
        play(sim, game, page)
        assert page.evaluate("window.__heard") == []
        button.click()  # on again
        assert button.inner_text() == words("fr", "on")
        play(sim, game, page)
        assert any(line.startswith("say fr-FR") for line in heard(page))


def test_cues_only_says_nothing_and_off_plays_nothing(make_table: TableFactory) -> None:
    """The table's setting rules the page: "cues" plays cues and never speaks; "off" is
    silent and the button says the host turned it off."""
    game = "secret-identity"
    players, seed, _bot_seed, _options = GAMES[game]
    sim = make_table(players, seed=seed, language="en")
    table_sound(sim, "cues")
    with chromium() as browser:
        page = open_page(browser, sim, "en")
        page.locator("#sound").click()
        page.wait_for_function("document.getElementById('sound').className === 'on'")
        assert page.locator("#sound").inner_text() == words("en", "cues")
        play(sim, game, page)
        script = heard(page)
        assert "cue over" in script and not any(line.startswith("say") for line in script)
        table_sound(sim, "off")
        play(sim, game, page)
        assert heard(page) == script
        assert page.locator("#sound").inner_text() == "The host turned the sound off"


def test_path_of_goldens() -> None:
    """Every registered game has a golden script in each language."""
    missing = [
        f"{g}-{lang}"
        for g in REGISTERED
        for lang in ("en", "fr")
        if not (SOUND_GOLDEN / f"{g}-{lang}.txt").exists()
    ]
    assert not missing, missing
    assert isinstance(SOUND_GOLDEN, Path)
