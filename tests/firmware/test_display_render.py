"""The table display's HTML is a pure function of public + hub status, and shows it all."""

from __future__ import annotations

import html as html_lib
import json
import random
import re
from typing import Any

import pytest

from firmware.display.render import overview_fragment, table_fragment
from firmware.display.spectator import Snapshot
from firmware.hub.bindings import binding_for
from firmware.hub.table import Seating, Table
from firmware.link import protocol as proto
from firmware.link.lang import short_colours, speaking
from hardware.keys import COLOURS, load_keyset
from tests.support.display_samples import idle_snapshot
from tests.support.leaks import leaks

KEYS = load_keyset()
COLOURS16 = [*COLOURS, *(f"{c}-2" for c in COLOURS)]


def public_after(game: str, players: int, steps: int, seed: int = 3) -> dict[str, Any]:
    """The hub's public payload after ``steps`` random legal moves."""
    stations = [f"p{i + 1}" for i in range(players)]
    table = Table(
        game, players, {}, seed, Seating(stations, COLOURS16[:players]), KEYS, binding_for(game)
    )
    r = random.Random(seed)
    for _ in range(steps):
        if table.over:
            break
        actions = [a for s in range(players) for a in table.engine.legal_actions(table.state, s)]
        actions = actions or table.engine.legal_actions(table.state, None)  # the table's own
        if not actions:
            break
        table.state, _ = table.engine.apply(table.state, r.choice(actions))
        table.events += 1
    return json.loads(proto.encode(table.public()))


def render(public: dict[str, Any], state: str = "ready", broker: bool = True) -> str:
    return table_fragment(Snapshot("main", public, {"state": state}, broker=broker))


def test_the_same_snapshot_gives_the_same_bytes() -> None:
    """No clock or randomness in a page: a reload is the page a live one shows."""
    public = public_after("incognito", 4, 30)
    assert render(public) == render(json.loads(json.dumps(public)))


def test_sixteen_seats_all_named_with_hp_and_no_seat_dropped() -> None:
    """Identités cryptées at 16: every seat's row is there, S10–S16 distinct."""
    html = render(public_after("identites-cryptees", 16, 40))
    for colour in COLOURS16:
        name = colour.replace("-", " ").capitalize()
        assert f">{name}</span>" in html, name
    assert html.count('<td class="who">') == 16


def test_the_incognito_word_list_is_shown_in_full() -> None:
    """Long words and words with œ are never cut."""
    public = public_after("incognito", 4, 0)
    public["view"]["phase"] = "vote"
    public["view"]["list"] = ["coffre au trésor", "carte au trésor", "œuf", "cœur", "a", "b"]
    html = render(public)
    for n, word in enumerate(public["view"]["list"], 1):
        assert f"<li><b>{n}</b> {word}</li>" in html


def test_hub_offline_and_broker_lost_are_said_on_the_page() -> None:
    """A lost hub (its will) or a lost broker link shows a banner; ready shows none."""
    public = public_after("secret-identity", 4, 5)
    assert "Hub offline" not in render(public)
    assert "Hub offline: it stopped answering" in render(public, state="lost")
    assert "this screen lost the network" in render(public, broker=False)


def test_a_running_countdown_is_shown_and_a_finished_one_is_not() -> None:
    """The hub's whole seconds left appear as the page's ticking countdown."""
    public = public_after("incognito", 4, 0)
    assert 'data-left="5"' in render(dict(public, timer=5))
    assert "countdown" not in render(dict(public, timer=0))
    assert "countdown" not in render(dict(public, timer=None))


def test_names_and_text_are_escaped() -> None:
    """Whatever a payload carries is text on the page, never markup."""
    public = public_after("incognito", 4, 0)
    public["view"]["places"][0] = "<script>alert(1)</script>"
    html = render(public)
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_the_overview_lists_every_table_with_its_state() -> None:
    """One card per table linking to its page; a table without a hub says so."""
    over = public_after("identiquest", 4, 400)
    assert over["over"]
    snaps = [
        Snapshot("main", over, {"state": "ready"}, broker=True),
        Snapshot("side", {}, {"state": "lost"}, broker=True),
    ]
    html = overview_fragment(snaps)
    assert 'href="/table/main"' in html and 'href="/table/side"' in html
    assert "game over" in html and "hub offline" in html


def test_co_op_turns_show_the_key_and_the_teams_answer() -> None:
    """Secret Identity co-op: each finished turn's key, the team's answer and its verdict."""
    public = public_after("secret-identity", 4, 0)
    public["view"].update(
        mode="coop",
        team={"score": 1, "position": 1, "markers": 0},
        history=[
            {"turn": 1, "active": 0, "mystery": 3, "answer": 1, "right": False},
            {"turn": 2, "active": 1, "mystery": 7, "answer": 7, "right": True},
        ],
    )
    html = render(public)
    assert "key 3 — the team said 1 (wrong)" in html
    assert "key 7 — the team said 7 (right, +1 for the team)" in html
    assert "Team: <b>1</b> point (" in html  # one point, said in the singular


def test_ultra_secret_shows_acts_digit_sums_and_the_outcome_in_words() -> None:
    """The board's public notes, the declarers' digit sums and the end read as sentences."""
    public = public_after("ultra-secret", 4, 0)
    view = public["view"]
    view["notes"] = [
        {"seat": 1, "square": "H2", "act": "searched", "detail": ["suitcase"]},
        {"seat": 2, "square": "", "act": "sat-out", "detail": ["H9"]},
    ]
    view["declared"], view["sums"], view["fugitive"] = [0, 3], {"0": 7, "3": 12}, 3
    view["outcome"] = "escaped-wrong"
    html = render(public)
    assert "searched the luggage at H2: suitcase" in html
    assert "dialled an impossible square (H9) and sits out" in html
    assert "Declared (digit sums):" in html and "</span> 7" in html and "</span> 12" in html
    assert "escaped with a wrong filing: nobody wins" in html
    assert "escaped-wrong" not in html


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ultra_secret_tokens_use_the_seats_short_names(language: str) -> None:
    """Ultra Secret's board tokens (informants, bugs, lockers) name a seat as the stations
    and the hub do ("Grn", "Blk"; French "Ver", "Noi"), not its name's first three letters
    ("Gre", "Bla")."""
    public = public_after("ultra-secret", 6, 0)
    view = public["view"]
    colours = [s["colour"] for s in public["seats"]]
    view["informants"] = ["H1", "H2", "H3", "H4", "H5", "H6"]
    view["bugs"] = ["G1", "G2", "G3", "G4", "G5", "B1"]
    view["lockers"] = {c: "H1" for c in colours}
    snap = Snapshot("main", public, {"state": "ready", "language": language}, broker=True)
    html = table_fragment(snap)
    tokens = re.findall(r'<span class="tok c-([\w-]+)"[^>]*>([^<]*)</span>', html)
    with speaking(language):
        expected = dict(zip(colours, short_colours(colours), strict=True))
    assert len(tokens) == 18, tokens  # six seats' informants, bugs and lockers
    assert all(html_lib.unescape(text) == expected[c] for c, text in tokens), tokens


def test_identites_cryptees_says_the_winning_side_in_the_declarations_words() -> None:
    """The winning side reads as the game declares it ("Machines"), from public's labels;
    a side the labels do not hold reads as its key (the display has no list of its own)."""
    public = public_after("identites-cryptees", 4, 0)
    public["view"].setdefault("table", {}).update(winners=[1, 2], winning_side="machine")
    assert "(Machines)" in page_text(render(public))
    public["labels"]["sides"] = {}
    assert "(machine)" in page_text(render(public))


def page_text(html: str) -> str:
    """What a reader sees of a fragment: its text without tags."""
    return re.sub(r"<[^>]+>", " ", html_lib.unescape(html)) if "<" in html else html


@pytest.mark.parametrize(
    ("game", "players"),
    [
        ("secret-identity", 5),
        ("incognito", 4),
        ("identiquest", 4),
        ("ultra-secret", 4),
        ("identites-cryptees", 16),
    ],
)
def test_a_french_tables_page_has_no_english_word(game: str, players: int) -> None:
    """Through a whole random game, a French table's page (and the overview's card) says
    nothing in English only; the hub's status says the language, the display follows."""
    pages = []
    for steps in (0, 5, 20, 60, 400):
        public = public_after(game, players, steps)
        snap = Snapshot("main", public, {"state": "ready", "language": "fr"}, broker=True)
        pages.append(table_fragment(snap) + overview_fragment([snap], "fr"))
    text = page_text(" ".join(pages))
    assert not leaks(text), sorted(leaks(text))
    assert all('lang="fr"' in p for p in pages)
    english = page_text(render(public_after(game, players, 400)))
    assert leaks(english), "the English page is English (the check can fail)"


def test_the_language_comes_from_the_hub_else_from_the_display() -> None:
    """The hub's status decides; a hub that said nothing yet (or something unknown) leaves
    the display's own language."""
    public = public_after("secret-identity", 4, 5)
    said = Snapshot("main", public, {"state": "ready", "language": "fr"}, broker=True)
    silent = Snapshot("main", public, {"state": "ready"}, broker=True, fallback="fr")
    odd = Snapshot("main", public, {"state": "ready", "language": "xx"}, broker=True)
    assert said.language == silent.language == "fr" and odd.language == "en"
    assert "Vote" in table_fragment(said) or "Préparation" in table_fragment(said)
    assert table_fragment(said) == table_fragment(silent)
    waiting = Snapshot("main", {}, {}, broker=False, fallback="fr")
    assert "On attend que l'hôte lance une partie." in page_text(table_fragment(waiting))
    assert "Boîtier de la table hors ligne" in table_fragment(waiting)


def test_a_lost_hub_leaves_the_page_in_its_tables_language() -> None:
    """The hub's will ("lost") says no language: the page keeps the last one it heard."""
    lost = Snapshot("main", {}, {"state": "lost"}, broker=True, heard="fr")
    assert lost.language == "fr" and "hors ligne\u00a0: il ne répond plus" in table_fragment(lost)


def test_a_seat_whose_station_is_offline_is_marked_and_the_others_are_not() -> None:
    """hub/status's health: p2 offline gets "station offline" by its name, once."""
    public = public_after("secret-identity", 4, 5)
    health = {f"p{i}": {"state": "online"} for i in range(1, 5)}
    health["p2"] = {"state": "offline"}
    snap = Snapshot("main", public, {"state": "ready", "stations": health}, broker=True)
    html = table_fragment(snap)
    assert "station offline" not in render(public)
    marks = html.count('<em class="off">station offline</em>')
    assert marks == html.count(f">{public['seats'][1]['colour'].capitalize()}</span>") > 0


def test_the_overview_marks_offline_stations_and_names_the_idle_tables_pick() -> None:
    """A host walking the room: a table's card marks the seat whose station is offline
    (hub/status's health), and an idle table's card names the game picked on its panel."""
    public = public_after("secret-identity", 4, 5)
    health = {f"p{i}": {"state": "online"} for i in range(1, 5)}
    health["p2"] = {"state": "offline"}
    card = overview_fragment([Snapshot("t1", public, {"state": "ready", "stations": health}, True)])
    seat = f">{public['seats'][1]['colour'].capitalize()}</span>"
    assert card.count("station offline") == card.count(seat) > 0
    idle = idle_snapshot("fr", "incognito")
    assert "choisi sur le panneau\u00a0: Incognito" in overview_fragment([idle], "fr")
    assert "panel" not in overview_fragment([idle_snapshot("en", None)])
