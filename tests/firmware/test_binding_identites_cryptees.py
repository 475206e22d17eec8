"""The Identités cryptées table binding (knob menus, cards under the flap, window timer)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.bindings.identites_cryptees import (
    BACK,
    CARDS,
    IdentitesCrypteesBinding,
    card_pages,
)
from firmware.hub.table import Seating, Table
from firmware.link.protocol import Input
from firmware.link.render import render, titled
from hardware.keys import COLOURS, load_keyset
from rules.core import IllegalAction

KEYS = load_keyset()


def table(players: int = 4, seed: int = 1, **options: Any) -> Table:
    colours = list(COLOURS[:players])  # 8 at most: later seats go by number
    seating = Seating([f"p{i + 1}" for i in range(players)], colours)
    return Table(
        "identites-cryptees",
        players,
        options,
        seed,
        seating,
        KEYS,
        binding_for("identites-cryptees"),
    )


def binding(t: Table) -> IdentitesCrypteesBinding:
    assert isinstance(t.binding, IdentitesCrypteesBinding)
    return t.binding


def send(t: Table, seat: int, kind: str, step: int | None = None) -> dict[str, Any]:
    """Translate, check and commit one input as the hub would."""
    body = t.binding.translate(t, seat, Input(id="b:1", kind=kind, step=step))  # type: ignore[arg-type]
    t.commit(body, t.check(body))
    return body


def labels(t: Table, seat: int) -> list[str]:
    return [o.label for o in binding(t).menu(t, seat)]


def choose(t: Table, seat: int, label: str) -> dict[str, Any]:
    """Turn the knob to the option ``label`` and press."""
    target = labels(t, seat).index(label)
    while binding(t).cursor(t, seat) != target:
        send(t, seat, "knob", 1)
    return send(t, seat, "press")


def screen_text(t: Table, seat: int) -> str:
    screen = t.binding.station_screen(t, seat)
    return " ".join((screen.title, *screen.lines))


def secret_text(t: Table, seat: int) -> str:
    screen = t.binding.station_screen(t, seat)
    assert screen.secret is not None
    return " ".join((screen.secret.title, *screen.secret.lines))


def test_turn_menu_groups_targets_in_sub_menus() -> None:
    """Unarmed: Investigate >, Take <weapon> >, Draw; a sub-menu lists targets and Back."""
    t = table()
    top = labels(t, 0)
    assert top[:4] == ["Investigate >", "Take Pistol >", "Take Rifle >", "Draw a program"]
    assert top[-1] == CARDS
    choose(t, 0, "Investigate >")
    assert labels(t, 0) == [
        "Look Yel left",
        "Look Yel right",
        "Look Grn left",
        "Look Grn right",
        "Look Blue left",
        "Look Blue right",
        BACK,
    ]
    choose(t, 0, BACK)
    assert labels(t, 0) == top


def test_sub_menu_press_declares_the_action() -> None:
    """Take Pistol > aim at Grn: an equip declaration, then the window opens."""
    t = table()
    choose(t, 0, "Take Pistol >")
    body = choose(t, 0, "Pistol at Grn")
    assert body == {"rules": {"type": "equip", "seat": 0, "weapon": "pistol", "targets": [2]}}
    pub = t.view(None)["table"]
    assert pub["phase"] == "window" and pub["declared"]["weapon"] == "pistol"


def test_window_timer_is_the_option_and_sends_timeout() -> None:
    """The window's timer lasts interrupt_window seconds and then sends the table timeout."""
    t = table(interrupt_window=3)
    assert t.binding.timer(t) is None
    choose(t, 0, "Draw a program")
    assert t.binding.timer(t) == (3.0, {"rules": {"type": "timeout"}})
    assert t.binding.advance(t) == {"rules": {"type": "timeout"}}
    body = {"rules": {"type": "timeout"}}
    t.commit(body, t.check(body))
    assert t.view(None)["table"]["phase"] == "turn" and t.binding.timer(t) is None


def test_countdown_shows_on_every_station() -> None:
    """While the window runs, each station shows the seconds left (table.timer_left)."""
    t = table()
    choose(t, 0, "Take Rifle >")
    choose(t, 0, "Rifle at Yel")
    t.timer_left = 3.2
    assert "Window 4s: pass/play" in screen_text(t, 1)
    assert "Window 4s: wait" in screen_text(t, 0)
    assert "Red: Rifle at Yel" in screen_text(t, 2)
    assert "Aimed by" not in screen_text(t, 1)  # not aimed until the window closes


def test_window_pass_by_everyone_resolves_the_action() -> None:
    """Each other seat presses Pass in the window; the action resolves, the weapon aims."""
    t = table()
    choose(t, 0, "Take Rifle >")
    choose(t, 0, "Rifle at Yel")
    for seat in (1, 2, 3):
        assert labels(t, seat)[0] == "Pass"
        choose(t, seat, "Pass")
    pub = t.view(None)["table"]
    assert pub["phase"] == "turn" and pub["active"] == 1
    assert "Aimed by: Red" in screen_text(t, 1)
    assert "You: Rifle at Yel" in screen_text(t, 0)


def test_cards_stay_under_the_flap() -> None:
    """Own ID, loyalty and faction only in the secret part; public lines name no card."""
    t = table()
    you = t.view(0)["you"]
    assert secret_text(t, 0).startswith("Choose 1/6")  # the active seat's menu
    idle = secret_text(t, 2)
    assert idle.startswith("Your cards 1/")
    faction = t.view(2)["you"]["faction"]
    assert f"You are {faction}" in idle
    assert t.view(2)["you"]["id"]["name"]["en"] in idle
    for seat in range(4):
        text = screen_text(t, seat)
        assert you["id"]["name"]["en"] not in text and "You are" not in text
    title, lines = t.binding.host_screen(t)
    assert "You are" not in " ".join((title, *lines))


def test_cards_pages_open_from_the_menu_and_press_goes_back() -> None:
    """'Cards >' opens the pages; the knob turns them; a press returns to the menu."""
    t = table()
    choose(t, 0, CARDS)
    assert binding(t).paging(t, 0)
    first = secret_text(t, 0)
    send(t, 0, "knob", 1)
    assert secret_text(t, 0) != first
    send(t, 0, "press")
    assert not binding(t).paging(t, 0)
    assert t.state.version == 0


def test_idle_seat_knob_turns_pages_and_press_is_refused() -> None:
    """With nothing to do, the knob turns the card pages and a press is refused readably."""
    t = table()
    send(t, 2, "knob", 1)
    assert t.ui["page:2"] == 1
    with pytest.raises(IllegalAction) as err:
        t.binding.translate(t, 2, Input(id="b:2", kind="press"))
    assert err.value.message == "Nothing for you to do now"


def test_tags_are_refused() -> None:
    """No card is tapped in this game: a tag gets a readable refusal."""
    t = table()
    with pytest.raises(IllegalAction) as err:
        t.binding.translate(t, 0, Input(id="b:3", kind="tag", uid=KEYS.uid_for("vote", "red", 1)))
    assert "knob" in err.value.message and len(err.value.message) <= 63


def test_a_hit_is_answered_from_a_menu() -> None:
    """The target of a pistol shot chooses reveal left/right or take the hit."""
    t = table(interrupt_window=0)
    choose(t, 0, "Take Pistol >")
    choose(t, 0, "Pistol at Yel")
    for seat in (1, 2, 3):
        choose(t, seat, "Draw a program")
        while t.view(None)["table"]["phase"] == "discard":
            who = t.view(None)["table"]["pending"]["seat"]
            choose(t, who, "Discard >")
            send(t, who, "press")
    choose(t, 0, "Fire!")
    assert "Hit! reveal or -1HP" in screen_text(t, 1)
    answers = ["Reveal left card", "Reveal right card", "Take the hit"]
    assert labels(t, 1)[:3] == answers and labels(t, 1)[-1] == CARDS
    # D: anytime programs may be played while the hit waits (only those, besides answers)
    assert all(lb.startswith("Play ") for lb in labels(t, 1)[3:-1])
    choose(t, 1, "Take the hit")
    assert t.view(None)["table"]["seats"][1]["hp"] == 1
    assert t.binding.station_screen(t, 1).title == "Yellow 1HP"


def play_random(seed: int, players: int) -> Table:
    """Random menu choices by knob and press, the window's timer firing at random."""
    rng = random.Random(seed)
    t = table(players, seed)
    b = binding(t)
    for _ in range(20000):
        if t.over:
            return t
        pub = t.view(None)["table"]
        if pub["phase"] == "window" and rng.random() < 0.2:
            timer = b.timer(t)
            assert timer is not None
            t.commit(timer[1], t.check(timer[1]))
            continue
        seat = rng.choice([s for s in range(players) if b.legal(t, s)])
        menu = labels(t, seat)
        good = [i for i, lb in enumerate(menu) if lb != CARDS]
        if pub["phase"] == "window":
            good = [i for i in good if menu[i] == "Pass"] or good
        target = rng.choice(good)
        send(t, seat, "knob", ((target - b.cursor(t, seat)) % len(menu)) or len(menu))
        assert b.cursor(t, seat) == target
        send(t, seat, "press")  # never refused: menus offer legal choices only
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("players", [4, 6, 10])
def test_random_menu_games_end_and_screens_fit(players: int) -> None:
    """Random knob games end; every press accepted; every line fits 21 characters."""
    for seed in range(4):
        t = play_random(seed, players)
        pub = t.view(None)["table"]
        assert pub["over"] and pub["winners"] is not None
        for seat in range(players):
            screen = t.binding.station_screen(t, seat)
            assert screen.secret is not None
            for line in (screen.title, *screen.lines, screen.secret.title, *screen.secret.lines):
                assert len(line) <= 21, line
            render(screen, show_secret=True)
        title, lines = t.binding.host_screen(t)
        assert all(len(x) <= 21 for x in (title, *lines))


def test_victory_check_says_only_goes_on_or_winners() -> None:
    """After an elimination the stations say 'The game goes on' or name the winners."""
    for seed in range(6):
        t = play_random(seed, 5)
        pub = t.view(None)["table"]
        text = screen_text(t, 0)
        assert pub["check"]["result"] == "won"
        assert "Won: " in text and ("You win!" in text or "You lose" in text)
        winners = " ".join(t.seating.short(s) for s in pub["winners"])
        assert f"Won: {winners}" in text


def test_a_sub_menu_left_open_does_not_outlive_the_decision() -> None:
    """A seat that opened 'Investigate >' and then acted gets the top menu next turn."""
    t = table(interrupt_window=0)
    choose(t, 0, "Investigate >")
    choose(t, 0, "Look Yel left")
    for seat in (1, 2, 3):
        choose(t, seat, "Draw a program")
        while t.view(None)["table"]["phase"] == "discard":
            who = t.view(None)["table"]["pending"]["seat"]
            choose(t, who, "Discard >")
            send(t, who, "press")
    assert t.view(None)["table"]["active"] == 0
    assert labels(t, 0)[0] == "Investigate >" and binding(t).group(t, 0) == ""


def test_seats_past_the_key_colours_go_by_number() -> None:
    """At 12 players seats 9-12 are S9-S12 in menus and "Seat 11" in a title (the key set
    has 8 colours): the words :func:`firmware.link.lang.seat_label` gives every screen."""
    t = table(12)
    choose(t, 0, "Investigate >")
    looks = labels(t, 0)
    assert "Look S9 left" in looks and "Look S12 left" in looks
    assert "Look S12 right" in looks and "Look Yel left" in looks  # each shared with seat 0
    assert t.binding.station_screen(t, 10).title == "Seat 11 2HP"


def test_actor_plays_an_anytime_program_in_its_own_window() -> None:
    """D: in its own window the actor's menu offers its anytime programs (never a pass)."""
    from msgspec.structs import replace

    from tests.support.games.identites_cryptees import prog

    t = table(interrupt_window=5)
    seats = list(t.state.seats)
    seats[0] = replace(seats[0], programs=(prog("scan"),))
    t.state = replace(t.state, seats=tuple(seats))
    t._views_at = -1  # the state was edited behind the table's back
    choose(t, 0, "Draw a program")
    assert t.view(None)["table"]["phase"] == "window"
    assert labels(t, 0) == ["Play Quick Scan >", CARDS]
    choose(t, 0, "Play Quick Scan >")
    choose(t, 0, "Quick Scan Yel left")
    table_view = t.view(None)["table"]
    assert table_view["phase"] == "turn" and table_view["may_change"] is True
    assert t.view(0)["you"]["seen"][0]["owners"] == [[1, "left"]]


@pytest.mark.parametrize("players", [4, 16])
def test_a_french_table_shows_no_english_word(players: int) -> None:
    """A whole game at a French table: no screen (public, under the flap, hub) has a word
    that only English has, while the cards' French names are there."""
    from tests.support.leaks import leaks
    from tests.support.screens import play

    found: dict[str, str] = {}
    seen = ""
    for glasses in play("identites-cryptees", players, "fr", seed=3):
        for shown in glasses:
            text = " ".join((shown.title, *shown.lines))
            seen += text
            for word in leaks(text):
                found.setdefault(word, f"{shown.where}: {text}")
    assert not found, found
    assert "Pistolet" in seen and "Puce rouge" in seen and "Tu es" in seen


def test_a_card_without_the_tables_language_falls_back_to_english() -> None:
    """A set whose cards lack French (an owner's half-done translation) still plays at a
    French table: those cards show their English words, the others their French ones."""
    from firmware.link.lang import speaking
    from rules._identites_cryptees_cards import package_set_json

    cards = package_set_json("generic")
    for card in cards["weapons"]:
        card["name"] = {"en": card["name"]["en"]}  # no French for the weapons
    t = table(cards=cards)
    with speaking("fr"):
        top = labels(t, 0)
    assert "Prendre Pistol >" in top and "Enquêter >" in top
    with speaking("fr"):
        text = "\n".join(title for title, _ in binding(t).pages(t, 0))
    assert "Tes cartes" in text


def test_a_title_takes_the_first_heading_that_fits_and_never_cuts_silently() -> None:
    """The sub-menu's words, else the card alone, else the verb; a cut shows its "~"."""
    suffix = " 5s 2/3"  # the window's clock and the cursor count: 14 columns are left
    assert titled(["Take Laser", "Laser", "Take"], suffix) == "Take Laser 5s 2/3"
    assert titled(["Play Change of Heart", "Change of Heart", "Play"], suffix) == "Play 5s 2/3"
    assert titled(["Play Sleeper Code", "Sleeper Code", "Play"], suffix) == "Sleeper Code 5s 2/3"
    cut = titled(["An extraordinarily long name"], suffix)
    assert cut == "An extraordin~ 5s 2/3" and len(cut) == 21


def test_a_card_under_the_flap_is_shown_whole_over_as_many_pages_as_it_needs() -> None:
    name = "Sleeper Code (blue) (perm)"
    text = "Hidden loyalty: counts as a blue card. Never revealed, even when you are hit."
    pages = card_pages("Program", name, text)
    assert len(pages) == 2 and all(title == "Program" for title, _lines in pages)
    rows = [row for _title, lines in pages for row in lines]
    assert all(len(lines) <= 4 for _t, lines in pages) and all(len(r) <= 21 for r in rows)
    assert " ".join(rows) == f"{name} {text}"  # every word, in order, none cut
