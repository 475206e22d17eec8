"""Screens that never leave a player guessing (issue 25): face-up cards, the find of a
search, the host's prompt, readable forms of the short lines, seat names."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.bindings.common import HINT
from firmware.hub.bindings.identiquest import gem_name
from firmware.hub.bindings.incognito import _two_a_row
from firmware.hub.config import TableConfig
from firmware.hub.publish import game_screen, link_screen
from firmware.hub.table import Seating, Table
from firmware.link.lang import _, in_language, short_colour, speaking
from firmware.link.mqtt import LinkState
from firmware.link.render import BODY_LINES, CHARS, glass
from tests.support.screens import KEYS, random_move


def table_of(game: str, colours: list[str], seed: int = 1, **options: Any) -> Table:
    """A table whose seats go by ``colours`` (a box's own names: "marie", "bartholomew")."""
    stations = [f"p{i + 1}" for i in range(len(colours))]
    binding = binding_for(game, reveal_delay=0.0)
    seating = Seating(stations, colours)
    return Table(game, len(colours), dict(options), seed, seating, KEYS, binding)


def play_until(table: Table, done: Any, seed: int = 1, steps: int = 4000) -> Table:
    """Random legal moves on ``table`` until ``done(table, body)`` holds after one."""
    rng = random.Random(seed)
    for _step in range(steps):
        assert not table.over, "the game ended first"
        body = random_move(table, rng)
        table.commit(body, table.check(body))
        if done(table, body):
            return table
    raise AssertionError("never happened")


# --- Identités cryptées: face-up cards ------------------------------------------------


def face_up_names(table: Table) -> list[str]:
    pub = table.view(None)["table"]
    names = []
    for s in pub["seats"]:
        cards = [s["id"], s["loyalty"]["left"], s["loyalty"]["right"], *s["permanent"]]
        names += [in_language(c["name"]) for c in cards if c]
    return names


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_revealed_card_is_named_on_the_stations_and_the_hub(language: str) -> None:
    """Once a card is face up, the news line names it, the hub display lists it, and
    every station's knob pages reach it: a table without a TV knows which card."""
    table = table_of("identites-cryptees", ["red", "yellow", "green", "blue", "black"], seed=3)

    def revealed(t: Table, body: dict[str, Any]) -> bool:
        return any(e.kind == "reveal" for e in t.news)

    play_until(table, revealed, seed=3)
    with speaking(language):
        names = face_up_names(table)
        assert names
        news = table.binding.news_line(table)  # type: ignore[attr-defined]
        assert any(name[:4] in news for name in names), news
        _title, hub = table.binding.host_screen(table)
        assert any(name in line for name in names for line in hub), hub
        pages = table.binding.pages(table, 0)  # type: ignore[attr-defined]
        rows = [row for _t, lines in pages for row in lines]
        assert any(name in row for name in names for row in rows)


def test_a_permanent_program_in_play_stays_on_the_hub_display() -> None:
    """A permanent program played stays listed (by name) on the hub display and the
    stations' face-up page, long after the news line has moved on."""
    table = table_of("identites-cryptees", ["red", "yellow", "green", "blue", "black"], seed=5)

    def permanent(t: Table, body: dict[str, Any]) -> bool:
        return any(s["permanent"] for s in t.view(None)["table"]["seats"])

    play_until(table, permanent, seed=5)
    seat = next(s for s in table.view(None)["table"]["seats"] if s["permanent"])
    name = in_language(seat["permanent"][0]["name"])
    with speaking("en"):
        _title, hub = table.binding.host_screen(table)
        pages = table.binding.pages(table, 0)  # type: ignore[attr-defined]
    assert any(name[:6] in line for line in hub), hub
    assert any(name[:6] in row for title, rows in pages if title == "Face up" for row in rows)


def test_sixteen_seats_read_in_words_on_the_hub() -> None:
    """At 16 seats the hub says each seat's hit points with their unit ("S9 2HP", not
    "S92"), and the window's title leaves room for its page count."""
    colours = ["red", "yellow", "green", "blue", "black", "purple", "orange", "white"]
    table = table_of("identites-cryptees", colours + [f"seat{i}" for i in range(9, 17)])
    with speaking("fr"):
        _title, hub = table.binding.host_screen(table)
    cells = [cell for line in hub[:8] for cell in re.split(r"\s{2,}", line)]
    assert len(cells) == 16 and all(re.fullmatch(r"\S+ (\d+PV|élim\.)", c) for c in cells), hub


def test_the_window_title_on_the_hub_fits_its_page_count() -> None:
    """During an interrupt window at 16 seats (pages), the hub's title is the window and
    its seconds, whole beside "1/3" ("Fenêtre 5s : atte 1/3" was cut)."""
    colours = ["red", "yellow", "green", "blue", "black", "purple", "orange", "white"]
    table = table_of("identites-cryptees", colours + [f"seat{i}" for i in range(9, 17)])
    play_until(table, lambda t, b: t.view(None)["table"]["phase"] == "window")
    with speaking("fr"):
        title, lines = table.binding.host_screen(table)
    assert len(lines) > 4 and len(glass(title)) + len(" 1/3") <= CHARS, title
    assert title.startswith("Fenêtre")


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_weapon_in_play_reads_holder_weapon_and_targets_on_the_hub(language: str) -> None:
    """The hub says "Red: Pistol at Blu" (the weapon's name, "at"/"sur", whom; the targets
    on a row of their own where the line is too long), not the cut code "Pis:Red>Blu"."""
    table = table_of("identites-cryptees", ["red", "yellow", "green", "blue", "black"], seed=3)

    def armed(t: Table, body: dict[str, Any]) -> bool:
        return any(w["holder"] is not None for w in t.view(None)["table"]["weapons"])

    play_until(table, armed, seed=3)
    with speaking(language):
        _title, lines = table.binding.host_screen(table)
        held = [w for w in table.view(None)["table"]["weapons"] if w["holder"] is not None]
        names = [in_language(table.binding._weapon_name(table, w["key"])) for w in held]  # type: ignore[attr-defined]
    at = {"en": "at", "fr": "sur"}[language]
    text = " ".join(lines)
    assert text.count(f" {at} ") == len(held), lines  # "at" on the line or the next row
    assert not any(re.search(r"\w{3}:\S+>", line) for line in lines), lines
    assert all(name.split()[0][:3] in text for name in names), (lines, names)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_weapon_being_taken_reads_like_the_hub_on_the_stations(language: str) -> None:
    """While a seat takes a weapon, the stations' news line says "Blu: Pistol at Jau" as
    the hub does (the targets on a row of their own where the name would be cut), not
    the cut code "Blu: Pistol>Jau"."""
    table = table_of("identites-cryptees", ["red", "yellow", "green", "blue", "black"], seed=3)

    def equipping(t: Table, body: dict[str, Any]) -> bool:
        d = t.view(None)["table"]["declared"]
        return bool(d and d["type"] == "equip" and d.get("targets"))

    play_until(table, equipping, seed=3)
    d = table.view(None)["table"]["declared"]
    with speaking(language):
        name = in_language(table.binding._weapon_name(table, d["weapon"]))  # type: ignore[attr-defined]
        holder = table.seating.short(d["seat"])
        lines = table.binding.station_screen(table, 0).lines
    at = {"en": "at", "fr": "sur"}[language]
    text = " ".join(lines)
    assert f"{holder}" in text and f" {at} " in text and name.split()[0] in text, lines
    assert not any(re.search(r"\w:\s?\S+>", line) for line in lines), lines


def test_a_declared_action_takes_the_french_space_before_its_colon() -> None:
    """A declared action reads "Blu : Lâcher l'arme" in French (was "Blu: Lâcher
    l'arme") and "Blu: Drop weapon" in English."""
    table = table_of("identites-cryptees", ["red", "yellow", "green", "blue", "black"], seed=3)

    def dropping(t: Table, body: dict[str, Any]) -> bool:
        d = t.view(None)["table"]["declared"]
        return bool(d and d["type"] == "drop")

    play_until(table, dropping, seed=3)
    seat = table.view(None)["table"]["declared"]["seat"]
    with speaking("fr"):
        french = table.binding._declared_line(table)  # type: ignore[attr-defined]
        said = f"{table.seating.short(seat)} : {_('Drop weapon')}"
    with speaking("en"):
        english = table.binding._declared_line(table)  # type: ignore[attr-defined]
        plain = f"{table.seating.short(seat)}: Drop weapon"
    assert french == said and len(glass(french)) <= CHARS, french
    assert english == plain, english


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_holder_of_a_weapon_reads_it_in_words(language: str) -> None:
    """A seat holding a weapon reads "You: Pistol at Jau" on its station (the targets on
    a row of their own where the name would be cut), not "You: Pistol>Jau"."""
    table = table_of("identites-cryptees", ["red", "yellow", "green", "blue", "black"], seed=3)

    def armed(t: Table, body: dict[str, Any]) -> bool:
        return any(w["holder"] is not None for w in t.view(None)["table"]["weapons"])

    play_until(table, armed, seed=3)
    held = next(w for w in table.view(None)["table"]["weapons"] if w["holder"] is not None)
    with speaking(language):
        name = in_language(table.binding._weapon_name(table, held["key"]))  # type: ignore[attr-defined]
        lines = table.binding.station_screen(table, held["holder"]).lines
        you = _("{seat}: {weapon}", seat=_("You|the seat itself, before its weapon"), weapon="")
    at = {"en": "at", "fr": "sur"}[language]
    mine = [i for i, line in enumerate(lines) if line.startswith(you)]
    assert mine and name.split()[0] in lines[mine[0]], lines
    assert f" {at} " in " ".join(lines[mine[0] : mine[0] + 2]), lines
    assert not any(">" in line for line in lines), lines


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_loyalty_card_seen_says_whose_it_is_in_words(language: str) -> None:
    """A loyalty card seen reads "Yel's right card:" (or "Between Blu and Blk:") over the
    card whole on the flap's "Seen" page, not "Yel R (M) Red Ch" / "Blu R/Blk L (M)"."""
    table = table_of("identites-cryptees", ["red", "yellow", "green", "blue", "black"], seed=3)

    def seen(t: Table, body: dict[str, Any]) -> bool:
        return any(x["kind"] == "loyalty" for s in range(5) for x in t.view(s)["you"]["seen"])

    play_until(table, seen, seed=3)
    seat = next(s for s in range(5) if table.view(s)["you"]["seen"])
    entry = next(x for x in table.view(seat)["you"]["seen"] if x["kind"] == "loyalty")
    with speaking(language):
        name = in_language(entry["card"]["name"])
        who = [table.seating.short(o) for o, _slot in entry["owners"]]
        pages = table.binding.pages(table, seat)  # type: ignore[attr-defined]
        head = _("Seen {first}-{last}", first=1, last=1).split()[0]
    rows = [row for title, lines in pages if title.startswith(head) for row in lines]
    at = next(i for i, row in enumerate(rows) if all(w in row for w in who) and row.endswith(":"))
    assert name in rows[at + 1], rows
    assert not any(re.search(r"\b[RLDG](/| \()", row) for row in rows), rows


# --- Ultra Secret -----------------------------------------------------------------------


def test_the_card_a_search_finds_is_the_first_page_under_the_flap() -> None:
    """After the press that searches, the flap shows what was found first (in words),
    not the sheet's first page; the knob turns on to the sheet."""
    table = table_of("ultra-secret", ["red", "yellow", "green", "blue"], seed=2)
    for seat in range(4):  # the seat's knob once turned the sheet to a later page
        table.ui[f"page:{seat}"] = 2

    def searched(t: Table, body: dict[str, Any]) -> bool:
        return body.get("rules", {}).get("type") == "search"

    play_until(table, searched, seed=2)
    seat = table.actions[-1].seat  # type: ignore[attr-defined]
    with speaking("en"):
        secret = table.binding.station_screen(table, seat).secret
        assert secret is not None and secret.title.startswith("You found"), secret
        assert secret.lines and all(":" in line or "Mole" in line for line in secret.lines)
        sheet = table.binding.pages(table, seat)  # type: ignore[attr-defined]
    assert sheet[0][0] == "You found" and sheet[1][0] == "Who is who"


def test_ultra_secret_lines_say_their_words() -> None:
    """The seat's pieces read "Agent H2 Informant G3" and "Bug -, mole cards 0" (not
    "Ag - Ind - Mi -"); the sheet ends with a key to its shorthand; French blue and
    white are "Bleu" and "Blc", two letters apart."""
    table = table_of("ultra-secret", ["red", "yellow", "green", "blue"], seed=2)
    with speaking("fr"):
        lines = table.binding.station_screen(table, 0).lines
        assert lines[2].startswith("Agent - Indic"), lines
        assert lines[3].startswith("Micro -, taupes"), lines
        pages = table.binding.pages(table, 0)  # type: ignore[attr-defined]
        key = [row for title, rows in pages if title == "Légende" for row in rows]
        assert pages[-1][0] == "Légende" and key[0] == "v: valise"
        assert "- : aucun, pas encore" in key and "H1-6 : hôtels" in key
        assert [short_colour("blue"), short_colour("white")] == ["Bleu", "Blc"]


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_ultra_secret_hub_says_whose_piece_stands_where(language: str) -> None:
    """The hub display says "Agents: Red1 H3 Yel2 G1", each square after whose piece it is
    (colour and number), not a bare row "Ag H3 G1" (nor "Mi"/"Ind" in French); the turn is
    a word."""
    table = table_of("ultra-secret", ["red", "yellow", "green", "blue"], seed=2)
    play_until(table, lambda t, b: all(t.view(None)["agents"]) and t.view(None)["turn"] > 1)
    with speaking(language):
        title, lines = table.binding.host_screen(table)
        heads = [_("Agents:"), _("Informants:"), _("Bugs:")]
        turn = _("Turn {n}: {phase}", n=table.view(None)["turn"], phase="").split()[0]
    assert title.startswith(turn), title
    assert not any(re.match(r"(Ag|In|Ind|Bg|Mi) ", line) for line in lines), lines
    agents = " ".join(lines)[" ".join(lines).index(heads[0]) + len(heads[0]) :].split()
    with speaking(language):
        colours = ("red", "yellow", "green", "black")
        names = [f"{short_colour(c)}{n + 1}" for n, c in enumerate(colours)]
    assert agents[0:8:2] == names and agents[1:8:2] == list(table.view(None)["agents"]), lines
    assert all(len(glass(line)) <= CHARS for line in lines)


def test_no_piece_placed_reads_none_in_agreement() -> None:
    """Before any piece is placed the French hub reads "Agents : aucun" (masculine, as
    its noun), not "aucune"."""
    table = table_of("ultra-secret", ["red", "yellow", "green", "blue"], seed=2)
    with speaking("fr"):
        _title, lines = table.binding.host_screen(table)
    assert "Agents : aucun" in lines and not any("aucune" in line for line in lines), lines


def test_the_news_at_the_top_of_the_menu_is_in_words() -> None:
    """What the sheet last learnt tops the next menu as "*Green locker: TB", not as the
    sheet's shorthand "*T8 B1 Grn l:TB"."""
    table = table_of("ultra-secret", ["red", "yellow", "green", "blue"], seed=2)

    def news_in_menu(t: Table, body: dict[str, Any]) -> bool:
        return any(
            (s := t.binding.station_screen(t, seat).secret) is not None
            and any(line.startswith("*") for line in s.lines)
            for seat in range(4)
        )

    play_until(table, news_in_menu, seed=2)
    with speaking("en"):
        starred = [
            line
            for seat in range(4)
            for line in (table.binding.station_screen(table, seat).secret or ()).lines  # type: ignore[union-attr]
            if line.startswith("*")
        ]
    assert starred and all(re.search(r"(suitcase|briefcase|locker|fake|Mole)", x) for x in starred)
    assert not any(re.search(r"\b[sblf]:", x) for x in starred), starred


# --- Identiquest ------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "fr"])
def test_identiquest_market_and_suspects_read_as_words(language: str) -> None:
    """A waiting seat reads "Market, deck 51:" then the gems (names where they fit, three
    letters else), and the suspects line starts with a word, not "?" or "Mch"."""
    table = table_of("identiquest", ["red", "yellow", "green", "blue", "black", "purple"])
    waiting = (table.view(None)["turn"] + 1) % 6
    with speaking(language):
        lines = table.binding.station_screen(table, waiting).lines
        deck = table.view(None)["deck"]
        assert lines[0] == _("Market, deck {n}:", n=deck)
        gems = lines[1].split()
        assert len(gems) == 5 and all(len(g) >= 3 for g in gems), lines
        assert lines[2].startswith(_("Suspects {summary}", summary="")), lines
        _title, hub = table.binding.host_screen(table)
        assert hub[0] == _("Market, deck {n}:", n=deck), hub


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("seats", [4, 5, 6])
def test_the_identiquest_station_spaces_every_suspect_after_the_word(
    language: str, seats: int
) -> None:
    """A waiting station says "Suspects R7 Y6 G6 B7" and, at five or six seats, goes on
    under the list's start ("         K7 P7"); never "Susp. R7Y6G6B7K7P7"."""
    colours = ["red", "yellow", "green", "blue", "black", "purple"][:seats]
    table = table_of("identiquest", colours)
    pub = table.view(None)
    waiting = (pub["turn"] + 1) % seats
    with speaking(language):
        lines = list(table.binding.station_screen(table, waiting).lines)
        word = _("Suspects {summary}", summary="")
    rows = [line for line in lines if line.startswith(word)]
    assert len(rows) == 1, lines
    at = lines.index(rows[0])
    listed = [rows[0][len(word) :], *(x[len(word) :] for x in lines[at + 1 :])]
    assert all(x.startswith(" " * len(word)) for x in lines[at + 1 :]), lines
    cells = " ".join(listed).split()
    assert [c[-1] for c in cells] == [str(x.count("?")) for x in pub["suspects"]], lines
    assert all(len(c) <= 3 for c in cells), lines  # a letter or two and a count each
    assert all(len(glass(line)) <= CHARS for line in lines), lines
    assert len(lines) == BODY_LINES and not any("Susp." in line for line in lines), lines


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_identiquest_hub_says_each_loot_and_suspect_count_in_words(language: str) -> None:
    """The hub reads a row per seat under a sentence ("Red1 4, top green"), then, on a page
    of its own, "Colours each may be:" over "Red1 7 Yel2 6 Grn3 6"; not "R4gre Y6pin" and
    "Susp. R7Y6G6B7K7P7"; its title leaves room for the page count."""
    table = table_of("identiquest", ["red", "yellow", "green", "blue", "black", "purple"])
    play_until(table, lambda t, b: sum(loot["size"] > 0 for loot in t.view(None)["loot"]) >= 3)
    pub = table.view(None)
    with speaking(language):
        title, hub = table.binding.host_screen(table)
        short = [f"{table.seating.short(s)}{s + 1}" for s in range(6)]  # colour and number
        head, suspects = _("Loot, top gem:"), _("Colours each may be:")
        rows = [
            _("{seat} {n}, top {gem}", seat=short[s], n=loot["size"], gem=gem_name(loot["top"]))
            if loot["top"]
            else _("{seat}: no gems", seat=short[s])
            for s, loot in enumerate(pub["loot"])
        ]
    assert not any(re.search(r"\b[A-Z][a-z]?\d+[a-z]{3}\b|Susp\.", line) for line in hub), hub
    assert hub[hub.index(head) + 1 :][:6] == rows, hub
    at = hub.index(suspects)
    # The suspects start a page of the hub display (whose last line is the host's hint).
    assert at % (BODY_LINES - 1) == 0, hub
    counts = " ".join(hub[at + 1 :]).split()
    assert counts[0::2] == short and counts[1::2] == [str(x.count("?")) for x in pub["suspects"]]
    assert len(glass(title)) + len(" 1/4") <= CHARS and all(len(glass(x)) <= CHARS for x in hub)


# --- Incognito --------------------------------------------------------------------------


def test_the_hub_word_list_keeps_its_second_column_aligned() -> None:
    """A long word ("arc-en-ciel") pushes the second column right on every row, or the
    list goes one word a row: "5 arc-en-ciel 6 ancre" read as one."""
    words = ["1 lune", "2 pomme", "3 cerf", "4 vélo", "5 arc-en-ciel", "6 ancre"]
    rows = _two_a_row(words)
    paired = [row for row in rows if len(row.split()) == 4]
    starts = {
        row.index(row.split()[2], len(row.split()[0]) + len(row.split()[1]) + 1) for row in paired
    }
    assert len(starts) <= 1, rows
    assert all(len(row) <= CHARS for row in rows)
    assert sorted(" ".join(rows).split()) == sorted(" ".join(words).split())


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_incognito_reveal_on_the_hub_says_points(language: str) -> None:
    """At the reveal the hub says "Grn3 +2, total 6 pts", a seat a row (not "Grn +2=6"),
    and what next does once, on its hint line ("next:round 2 ok:?"; the hub pages the rows)."""
    colours = ["red", "yellow", "green", "blue", "black", "purple"]
    table = table_of("incognito", colours, seed=3)
    play_until(table, lambda t, b: t.view(None)["phase"] == "reveal", seed=3)
    pub = table.view(None)
    with speaking(language):
        _title, lines, hint = game_screen(table)
        names = [f"{table.seating.short(s)}{s + 1}" for s in range(6)]  # colour and number
        nxt = _(HINT, what=_("round {n}", n=pub["round"] + 1))
    assert not any("=" in line for line in lines), lines
    assert len(lines) == 6, lines  # a row a seat, and nothing else
    for s, line in enumerate(lines):
        gain, total = pub["reveal"]["points"][s], pub["scores"][s]
        assert line.startswith(f"{names[s]} +{gain}, total {total} pt"), lines
    assert hint == nxt and all(len(glass(line)) <= CHARS for line in lines), lines


def test_a_voter_done_reads_how_many_still_vote_in_words() -> None:
    """A seat that laid every card reads "Encore 2 à voter", not "Attente 2" (read as
    seconds)."""
    table = table_of("incognito", ["red", "yellow", "green", "blue"], seed=3)
    play_until(table, lambda t, b: t.view(None)["phase"] == "vote", seed=3)
    pub = table.view(None)
    seat = 0
    for drawer in range(1, 4):
        if drawer not in pub["voted"][seat]:
            body = {"rules": {"type": "vote", "seat": seat, "drawer": drawer, "number": drawer}}
            table.commit(body, table.check(body))
    late = sum(1 for row in table.view(None)["voted"] if len(row) < 3)
    with speaking("fr"):
        lines = table.binding.station_screen(table, seat).lines
    assert f"Encore {late} à voter" in lines and not any("Attente" in x for x in lines), lines


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_cards_a_voter_laid_read_as_list_numbers(language: str) -> None:
    """Under the flap the cards laid read "Votes: Grn #1 Blu #5" (each drawing and the
    list number laid on it), not "Grn 1 Blu 5"; five others still fit the glass whole."""
    table = table_of("incognito", ["red", "yellow", "green", "blue", "black", "purple"], seed=3)
    play_until(table, lambda t, b: t.view(None)["phase"] == "vote", seed=3)
    seat = 0
    for drawer in range(1, 6):
        if drawer not in table.view(None)["voted"][seat]:
            body = {"rules": {"type": "vote", "seat": seat, "drawer": drawer, "number": drawer}}
            table.commit(body, table.check(body))
    with speaking(language):
        secret = table.binding.station_screen(table, seat).secret
        assert secret is not None
        laid = list(secret.lines[2:])
        assert laid[0].startswith(_("Votes:")), secret.lines
        cards = " ".join(laid).removeprefix(_("Votes:")).split()
        names = [table.seating.short(d) for d in range(1, 6)]
    assert cards[0::2] == names and all(re.fullmatch(r"#\d", c) for c in cards[1::2]), cards
    assert all(len(glass(line)) <= CHARS for line in secret.lines), secret.lines


# --- Secret Identity: the host's prompt -------------------------------------------------


def test_the_reveal_tells_the_host_what_next_does() -> None:
    """While the stations say "Wait for the host", the hub display's title says the
    host's "next" opens that seat's safe (the seat by its colour and number)."""
    table = table_of("secret-identity", ["red", "yellow", "green", "blue"], seed=4)
    play_until(table, lambda t, b: t.view(None)["phase"] == "reveal", seed=4)
    with speaking("en"):
        lines = table.binding.station_screen(table, 0).lines
        title, _lines = table.binding.host_screen(table)
        seat = table.view(None)["next_safe"]
        safe = table.seating.name(seat)
    assert "Wait for the host" in lines
    assert title == f"Next opens {safe}{seat + 1}"


# --- seat names -----------------------------------------------------------------------


@pytest.mark.parametrize("game", ["secret-identity", "incognito", "identites-cryptees"])
def test_a_long_seat_name_gives_way_to_round_and_phase(game: str) -> None:
    """A box's own long seat name is cut (".") so the title keeps its round, phase or
    hit points whole."""
    colours = ["bartholomew-the-great", "yellow", "green", "blue"]
    long = table_of(game, colours)
    short = table_of(game, ["red", "yellow", "green", "blue"])
    with speaking("en"):
        title = long.binding.station_screen(long, 0).title
        plain = short.binding.station_screen(short, 0).title
    assert len(glass(title)) <= CHARS and "~" not in title, title
    rest = re.sub(r"Round (\d)", r"R\1", plain.split(" ", 1)[1])  # "R1/3" where cut
    said = re.sub(r"Round (\d)", r"R\1", title)
    assert said.endswith(" " + rest) and title.startswith("Bartho"), (title, plain)


def test_three_letter_seat_names_never_collide() -> None:
    """Marie and Marc sit at one table: their three-letter forms differ (neither "Mar")."""
    seating = TableConfig("t", ["p1", "p2", "p3"], colours=None).seating()
    seating.colours = ["marie", "marc", "red"]
    shorts = [seating.short(s) for s in range(3)]
    assert len(set(shorts)) == 3 and "Mar" not in shorts, shorts


# --- the hub's first screen -----------------------------------------------------------


def test_the_first_hub_screen_speaks_the_table_language() -> None:
    """The hub display while it connects (its first screen) is French at a French table."""
    from firmware.hub.actor import TableActor
    from firmware.hub.hostmenu import HostMenu
    from firmware.link import protocol as proto

    config = TableConfig("t", ["p1", "p2", "p3"], language="fr")
    actor = TableActor(
        config, proto.Topics("t"), HostMenu(["secret-identity"], max_players=3, language="fr")
    )
    title, lines = link_screen(actor, LinkState("connecting", "Connecting to x"), "hub.local")
    assert lines[0] == "Connexion à" and title == "hub coffre t"
    _t, lost = link_screen(actor, LinkState("not-found", "Broker not found"), "hub.local")
    assert lost[:2] == ["Broker introuvable", "Nouvel essai..."]


# --- round and turn in words --------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize(
    ("game", "options", "word"),
    [
        ("incognito", {}, "Round {n}/{of} {phase}"),
        ("secret-identity", {}, "Round {n}/{of}"),
        ("secret-identity", {"mode": "coop"}, "Turn {n}/{of}"),
        ("ultra-secret", {}, "Turn {n}: {phase}"),
    ],
)
def test_round_and_turn_are_words_where_the_title_fits(
    language: str, game: str, options: dict[str, Any], word: str
) -> None:
    """Red's station and the hub say "Round 1/3" and "Turn 2" (the hub in French too:
    "Manche", "Tour"), not "R1/3" and "T2", where the title fits the glass."""
    table = table_of(game, ["red", "yellow", "green", "blue"], **options)
    play_until(table, lambda t, b: t.view(None).get("turn", 1) >= 1)
    with speaking(language):
        head = _(word, n=0, of=0, phase="").split("0")[0].strip()
        station = table.binding.station_screen(table, 0).title
        hub, _lines = table.binding.host_screen(table)
    for title in (station, hub) if language == "en" else (hub,):
        assert head in title and len(glass(title)) <= CHARS, (title, head)
        assert not re.search(r"\b[RTM]\d", title), title
