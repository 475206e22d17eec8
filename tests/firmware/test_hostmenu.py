"""The host panel menu."""

from __future__ import annotations

import pytest

from firmware.hub.bindings import bound_games
from firmware.hub.hostmenu import (
    CONFIRM_SECONDS,
    HOLD_SECONDS,
    HostMenu,
    SignedIn,
    SwitchTable,
    option_text,
)
from firmware.link.lang import speaking
from firmware.link.render import CHARS, glass


def menu() -> HostMenu:
    return HostMenu(
        ["secret-identity", "incognito"],
        max_players=8,
    )


def test_choose_players_and_start() -> None:
    """next moves the cursor, ok changes the value, ok on Start starts."""
    m = menu()
    assert m.press("next", playing=False, now=0) is None
    for _ in range(2):
        m.press("ok", playing=False, now=0)
    assert m.players == 7
    m.press("prev", playing=False, now=0)
    m.press("prev", playing=False, now=0)  # wraps round to Start
    assert m.row == m.start_row
    cmd = m.press("ok", playing=False, now=0)
    assert cmd is not None and (cmd.cmd, cmd.game, cmd.players) == ("start", "secret-identity", 7)
    assert cmd.options == {"mode": "competitive", "mystery": "keys"}


def test_a_table_of_three_stations_starts_a_three_player_game() -> None:
    """The default count never exceeds the stations: ok on Start at a 3-seat table works."""
    m = HostMenu(["secret-identity"], max_players=3)
    assert m.players == 3
    m.row = m.start_row
    cmd = m.press("ok", playing=False, now=0)
    assert cmd is not None and (cmd.cmd, cmd.players) == ("start", 3)


def test_player_count_wraps_within_the_game_limits() -> None:
    """The player count cycles within what the chosen game allows."""
    m = menu()
    m.press("next", playing=False, now=0)
    seen = set()
    for _ in range(10):
        m.press("ok", playing=False, now=0)
        seen.add(m.players)
    assert seen == set(range(3, 9))
    m.press("prev", playing=False, now=0)
    m.press("ok", playing=False, now=0)  # switch to incognito: clamp to 3..6
    assert m.games[m.game] == "incognito" and 3 <= m.players <= 6


def test_next_in_game_is_immediate() -> None:
    """During a game, next sends the host's next at once."""
    cmd = menu().press("next", playing=True, now=0)
    assert cmd is not None and cmd.cmd == "next"


def test_undo_and_abort_need_a_second_press() -> None:
    """back and stop act only when pressed twice within the confirm window."""
    m = menu()
    assert m.press("stop", playing=True, now=0) is None
    assert m.prompt(1) == "Again to abort game"
    cmd = m.press("stop", playing=True, now=1)
    assert cmd is not None and cmd.cmd == "abort"
    assert m.press("back", playing=True, now=10) is None
    assert m.press("back", playing=True, now=10 + CONFIRM_SECONDS + 1) is None  # too late: re-armed
    cmd = m.press("back", playing=True, now=10 + CONFIRM_SECONDS + 2)
    assert cmd is not None and cmd.cmd == "undo"


def test_menu_lines_mark_the_cursor() -> None:
    """The idle menu shows the current row with '>'."""
    m = menu()
    m.press("next", playing=False, now=0)
    assert m.lines(0)[1].startswith("> Players")


def test_game_options_on_the_panel() -> None:
    """The host picks co-op and dealt numbers on the panel; Start carries them."""
    m = menu()
    for button in ("next", "next", "ok", "next", "ok", "next", "next", "next"):
        m.press(button, playing=False, now=0)
    assert m.row == m.start_row
    assert m.lines(0)[-2:] == ["> Start", "ok: start the game"] and len(m.lines(0)) == 4
    cmd = m.press("ok", playing=False, now=0)
    assert cmd is not None and cmd.options == {"mode": "coop", "mystery": "dealt"}
    for _ in range(3):  # up past Sound and Language
        m.press("prev", playing=False, now=0)
    m.press("ok", playing=False, now=0)  # dealt -> keys again
    assert m.options()["mystery"] == "keys"


def test_language_row_asks_the_hub_and_the_menu_speaks_what_it_keeps() -> None:
    """The language row asks the hub for the other language (a host command with its own
    id, as the Sound row does) and changes nothing itself; once the hub has kept it, the
    menu speaks it."""
    m = menu()
    m.row = m.language_row
    with speaking(m.language):
        assert m.lines(0)[-2:] == ["> Language: English", "ok:change next:down"]
    ok = m.press("ok", playing=False, now=0)
    back = m.press("back", playing=False, now=0)
    assert ok is not None and not isinstance(ok, SwitchTable)
    assert back is not None and not isinstance(back, SwitchTable)
    assert (ok.cmd, ok.language, back.cmd, back.language) == ("language", "fr", "language", "fr")
    assert ok.id != back.id
    assert m.language == "en"  # the hub's to change
    m.language = ok.language  # what firmware.hub.hostcmd.set_language does
    with speaking(m.language):
        assert m.lines(0)[-2:] == ["> Langue : français", "ok:changer suiv.:bas"]
        assert m.title() == "Nouvelle partie    ▲▼"  # rows above and below the glass
    assert m.state()["language"] == "fr"


def test_menu_names_games_and_options_not_ids() -> None:
    """The host reads game names and option words, never ids like secret-identity."""
    m = menu()
    m.game = 1
    m.language = "fr"
    with speaking("fr"):
        assert m.lines(0)[0] == "> Incognito"
        assert "  Mots : français" in m.lines(0)
        m.row = 3  # the menu scrolls: three rows and the hint line on the glass
        assert "> Chrono : 5 s" in m.lines(0)
        m.row = 0
    m.game = 0
    with speaking("en"):
        assert m.lines(0)[0] == "> Secret Identity"
        assert m.lines(0)[2] == "  Mode: competitive"


def test_each_game_keeps_its_own_options() -> None:
    """Switching games shows that game's options; coming back keeps the earlier choice."""
    m = menu()
    m.row = 2
    m.press("ok", playing=False, now=0)  # SI: coop
    m.row = 0
    m.press("ok", playing=False, now=0)  # to incognito
    assert m.options() == {"lang": "en", "countdown": 5}  # the table speaks English
    m.press("back", playing=False, now=0)  # back to SI
    assert m.options()["mode"] == "coop"


@pytest.mark.parametrize("language", ["en", "fr"])
def test_incognito_words_follow_the_table_language_until_the_host_picks(language: str) -> None:
    """At an English table Start carries English words, at a French one French words; the
    language row moves them along until the host picks the words row himself."""
    m = menu()
    m.game = 1
    m.language = language
    m.row = m.start_row
    cmd = m.press("ok", playing=False, now=0)
    assert cmd is not None and cmd.options["lang"] == language
    other = "fr" if language == "en" else "en"
    m.language = other
    assert m.options()["lang"] == other
    m.row = 2  # the words row: one press picks the other language, and it stays
    m.press("ok", playing=False, now=0)
    assert m.options()["lang"] == language
    m.language = language  # a table language change no longer moves the host's pick
    m.language = other
    assert m.options()["lang"] == language


def _ic_menu(card_sets: list[str] | None = None) -> HostMenu:
    m = HostMenu(
        ["identites-cryptees"],
        max_players=10,
        card_sets=card_sets or ["generic"],
    )
    m.players = 6
    return m


def _set(m: HostMenu, option: str, times: int) -> None:
    """Move to the row of ``option`` and press ok ``times``."""
    m.row = 2 + [option.name for option, _ in m.option_rows].index(option)
    for _ in range(times):
        m.press("ok", playing=False, now=0)


def test_identites_cryptees_panel_offers_first_player_cards_and_legion() -> None:
    """identites-cryptees.md, Options: first player, card set and Legion option on the panel."""
    m = _ic_menu(["generic", "mybox"])
    assert [option.name for option, _ in m.option_rows] == [
        "interrupt_window", "first", "cards", "legion_loyalty",
    ]  # fmt: skip
    assert m.options() == {
        "interrupt_window": 5, "first": 0, "cards": "generic", "legion_loyalty": False,
    }  # fmt: skip
    _set(m, "first", 3)
    _set(m, "cards", 1)
    _set(m, "legion_loyalty", 1)
    m.row = m.start_row
    cmd = m.press("ok", playing=False, now=0)
    assert cmd is not None and cmd.options == {
        "interrupt_window": 5, "first": 3, "cards": "mybox", "legion_loyalty": True,
    }  # fmt: skip


def test_first_player_follows_the_player_count() -> None:
    """The first player is a seat of the game; the Legion row only from 6 players."""
    m = _ic_menu()
    _set(m, "first", 5)
    assert m.options()["first"] == 5
    m.players = 4
    assert m.options()["first"] in range(4)
    assert "legion_loyalty" not in m.options()


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_row_of_every_game_fits_the_hub_display_whole(language: str) -> None:
    """Each game, each value of each option, the cursor on it: one whole line of the glass
    (the hub display would cut a longer one: "Compte à rebours :~" did)."""
    menu = HostMenu(
        sorted(bound_games()), max_players=16, language=language, tables=["t1", "t2"], table="t1"
    )
    rows: set[str] = set()
    with speaking(language):
        for game in range(len(menu.games)):
            menu.game = game
            rows.update(menu._rows())
            menu.players = 16  # every option the panel offers, every value of it
            for option, values in menu.option_rows:
                rows.update(option_text(option, value) for value in values)
        title = menu.title()
    too_long = sorted(r for r in rows if len(glass("> " + r)) > CHARS)
    assert not too_long, too_long
    assert len(rows) > 20 and len(glass(title)) <= CHARS, title


def test_ok_steps_and_holds_the_pages_then_shows_the_help() -> None:
    """During a game ok steps through the hub display's pages and holds each, then shows
    the help page, then lets the pages turn by themselves; a lone page goes to the help."""
    m = menu()
    assert m.held(3, now=0) is None
    shown = []
    for t in range(5):
        assert m.press("ok", playing=True, now=t) is None
        shown.append(m.held(3, now=t))
    assert shown == [0, 1, 2, "help", None]
    m.press("ok", playing=True, now=10)
    assert m.held(3, now=10 + HOLD_SECONDS - 1) == 0
    assert m.held(3, now=10 + HOLD_SECONDS + 1) is None  # let go: the pages turn again
    m.press("ok", playing=True, now=100)
    assert m.held(1, now=100) == "help"


def _phones(*ids: str, label: str = "iPhone", minutes: int = 12) -> list[SignedIn]:
    return [SignedIn(sid, label, minutes - n) for n, sid in enumerate(ids)]


def test_the_phones_row_appears_only_while_a_phone_is_signed_in() -> None:
    """No phone: the menu is the menu, its last row Start. A phone: "Phones: 1" after it,
    which next reaches and prev wraps to; gone again, the cursor falls back on Start."""
    m = menu()
    bare = m._rows()
    assert bare[-1] == "Start" and not any(r.startswith("Phones") for r in bare)
    assert m.show_phones(_phones("a1b2c3d4"))
    assert m._rows() == [*bare, "Phones: 1"]
    assert not m.show_phones(_phones("a1b2c3d4"))  # the same phones: nothing to redraw
    m.press("prev", playing=False, now=0)  # wraps to the last row
    assert (m.row, m.hint()) == (m.phones_row, "ok: see the phones")
    assert m.show_phones([])
    assert m._rows() == bare and m.row == m.start_row and m.phone_page is None


def test_ending_a_phone_from_the_panel_asks_once_more_then_sends_console_end() -> None:
    """ok on the row opens the phones' page; next moves; ok asks "End e5f6? ok" and a
    second ok sends console-end with the phone's whole id; back takes an ok back, then
    leaves the page."""
    m = menu()
    m.show_phones(_phones("a1b2c3d4", "e5f6a7b8"))
    m.row = m.phones_row
    assert m.press("ok", playing=False, now=0) is None
    assert m.title() == "Phones: 2"
    assert m.lines(0) == ["> a1b2 iPhone 12 min", "  e5f6 iPhone 11 min", "ok:end back:menu"]
    m.press("next", playing=False, now=0)
    assert m.press("ok", playing=False, now=1) is None
    assert m.prompt(1) == "End e5f6? ok"
    m.press("back", playing=False, now=2)  # taken back: still on the page
    assert m.prompt(2) is None and m.phone_page == 1
    m.press("ok", playing=False, now=3)
    assert m.press("ok", playing=False, now=3 + CONFIRM_SECONDS + 1) is None  # too late: asks again
    cmd = m.press("ok", playing=False, now=3 + CONFIRM_SECONDS + 2)
    assert cmd is not None and (cmd.cmd, cmd.station) == ("console-end", "e5f6a7b8")
    assert cmd.id.startswith("panel")
    m.press("back", playing=False, now=10)
    assert m.phone_page is None and m.row == m.phones_row and m.title().startswith("New game")


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_phones_page_fits_the_glass(language: str) -> None:
    """Every line of the phones' page, its title, hint and question: 21 characters at most,
    a long browser name cut rather than the minutes."""
    m = HostMenu(["secret-identity"], max_players=8, language=language)
    m.show_phones(_phones(*(f"{n:08x}" for n in range(5)), label="Chrome Mobile", minutes=10_000))
    m.row = m.phones_row
    with speaking(language):
        shown = [m.hint(), *m._rows()]
        m.press("ok", playing=False, now=0)
        for _n in range(5):
            shown += [m.title(), *m.lines(0)]
            m.press("ok", playing=False, now=0)
            shown.append(m.prompt(0) or "")
            m.press("next", playing=False, now=0)
    too_long = sorted({s for s in shown if len(glass(s)) > CHARS})
    assert not too_long, too_long
    assert any(s.endswith(" min") and "Chr" in s for s in shown)
