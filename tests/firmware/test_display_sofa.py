"""The table display understood from the sofa: who did what to whom, what comes next, a
game-over page without columns that mean nothing then, ties said once, French typography,
and an idle page a guest can read and open on a phone."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from firmware.display.address import own_address, qr_svg
from firmware.display.boards import identites_cryptees, incognito, secret_identity
from firmware.display.parts import Names, french_spaces
from firmware.display.render import page, table_fragment
from firmware.display.spectator import Snapshot
from firmware.link.lang import _, speaking
from rules import GAMES
from tests.support.display_samples import fragment, idle_snapshot, samples, samples_of


def text(html: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", html))


def headers(html: str) -> list[str]:
    return [text(h) for h in re.findall(r"<th>(.*?)</th>", html)]


def ranking_box(html: str) -> str:
    start = html.index('class="ranking"')
    return html[start : html.index("</table></div>", start)]


def test_a_vote_key_lands_in_the_owners_safe_in_french() -> None:
    """The voter lays a key in the owner's safe (not "in a safe — Owner", which reads as if
    the owner acted); Incognito's voter votes on the drawer's drawing."""
    public = samples_of("secret-identity")[0].public
    names = Names(public)
    with speaking("fr"):
        laid = secret_identity.NARRATE["vote"]({"voter": 1, "safe": 4}, {}, names)[0]
        moved = secret_identity.NARRATE["vote"]({"voter": 1, "safe": 4, "from": 2}, {}, names)[0]
        drew = incognito.NARRATE["vote"]({"seat": 2, "drawer": 0}, {}, names)[0]
        blue, black, yellow, red = (names.text(i) for i in (1, 4, 2, 0))
    assert text(laid) == f"{blue} pose une clé de vote dans le coffre de {black}"
    assert text(moved) == f"{blue} déplace une clé de vote vers le coffre de {black}"
    assert text(drew) == f"{yellow} vote sur le dessin de {red}"


def test_identites_cryptees_says_whose_action_is_cancelled_in_french() -> None:
    names = Names(samples_of("identites-cryptees")[0].public)
    with speaking("fr"):
        said = identites_cryptees.NARRATE["interrupted"]({"seat": 3}, {}, names)[0]
        seat = names.text(3)
    assert text(said) == f"L'action de {seat} est annulée"


def test_secret_identity_says_which_safe_opens_next() -> None:
    """While the safes open, the banner says the next one (as the other games say whom the
    table waits for)."""
    public = samples_of("secret-identity")[0].public
    view = dict(public["view"], phase="reveal", next_safe=2)
    shown = text(table_fragment(Snapshot("main", dict(public, view=view), {}, broker=True)))
    assert f"Next: {Names(public).text(2)}'s safe opens" in shown
    with speaking("fr"):
        said = secret_identity.now(public, view, Names(public))
        seat = Names(public).text(2)
    assert text(said) == f"Ensuite : le coffre de {seat} s'ouvre"


def over_samples() -> list[tuple[str, dict[str, object], dict[str, object]]]:
    """(game, a mid-game public, the game-over public) for every registered game that
    ends in its sample playout."""
    out = []
    for game in GAMES:
        got = samples_of(game)
        over = [s.public for s in got if s.moment == "over"]
        if over:
            out.append((game, got[0].public, over[0]))
    return out


#: Columns that mean something only while a game runs, per game (header message ids).
LIVE_ONLY = {
    "secret-identity": ["key in", "ready", "votes", "picto cards"],
    "incognito": ["drawing done"],
    "ultra-secret": ["declared", "acted"],
    "identites-cryptees": ["weapon → targets"],
}


@pytest.mark.parametrize("game", sorted(LIVE_ONLY))
def test_game_over_drops_the_columns_that_mean_nothing_then(game: str) -> None:
    """ "key in ✔", "ready ✔", "drawing done": shown while the game runs, gone at the end."""
    mid, over = next((m, o) for g, m, o in over_samples() if g == game)
    live, ended = headers(fragment(mid)), headers(fragment(over))
    for column in LIVE_ONLY[game]:
        assert _(column) in live, (column, live)
        assert _(column) not in ended, (column, ended)


def test_a_tie_is_said_once_per_group_of_tied_seats() -> None:
    """Nine (or sixteen) seats tied on a side's win: "tie" once, every seat still named."""
    for game, _mid, over in over_samples():
        groups = over.get("ranking") or []
        box = ranking_box(fragment(over))
        tied = sum(1 for g in groups if len(g) > 1)
        assert box.count(">tie<") == tied, (game, groups)
        names = Names(over)
        for seat in (s for g in groups for s in g):
            assert names.text(seat) in text(box), (game, seat)


def test_a_french_page_never_leaves_a_colon_or_question_mark_to_wrap_alone() -> None:
    """Every French page, every game: a no-break space before ":", ";", "!", "?", "»"."""
    loose = re.compile(r" [:;!?»]")
    for sample in samples():
        shown = [t for t in re.findall(r">([^<]+)<", fragment(sample.public, "fr")) if t]
        bad = [t for t in shown if loose.search(t)]
        assert not bad, (sample.name, bad[:3])
    assert french_spaces('<p a="x : y">Trouvé : <b>z</b> ?</p>') == (
        '<p a="x : y">Trouvé\u00a0: <b>z</b>\u00a0?</p>'
    )


def test_the_idle_page_names_the_table_and_shows_its_address_and_qr_code() -> None:
    """The host's name for the table as the title (its id under it), the page's address in
    words and as a QR code; no address known, no QR code."""
    snap = idle_snapshot("en", None)
    snap.name, snap.address = "The big table", "http://192.168.1.20:8080/table/main"
    shown = table_fragment(snap)
    assert "<h1>The big table <small>table main</small></h1>" in shown
    assert "http://192.168.1.20:8080/table/main" in text(shown)
    assert qr_svg(snap.address) in shown and "<svg" in qr_svg(snap.address)
    bare = table_fragment(idle_snapshot("en", "incognito"))
    assert "<h1>main</h1>" in bare and "<svg" not in bare and "http" not in text(bare)


def test_a_game_page_heads_with_the_tables_name() -> None:
    public = samples_of("incognito")[0].public
    snap = Snapshot("main", public, {"state": "ready"}, broker=True, name="Salon")
    assert "<small>Salon</small>" in table_fragment(snap)


@pytest.mark.parametrize(
    ("language", "said"),
    [("en", "Connection to the hub lost: reconnecting…"), ("fr", "reconnexion…")],
)
def test_a_page_carries_the_reconnecting_banner_in_its_language(language: str, said: str) -> None:
    """The script shows it when the page's stream drops (the page dims and says why)."""
    html = page("t", "", stream="/events", language=language)
    banner = re.search(r'<p id="lost"[^>]*hidden>([^<]*)</p>', html)
    assert banner and said in banner.group(1)


def test_the_pages_own_address_is_never_a_loopback() -> None:
    """A phone cannot open 127.0.0.1: no address rather than a wrong one."""
    assert own_address("127.0.0.1", 8080) == ""
    assert own_address("x", 8080, host="127.0.0.1") == ""
    assert own_address("x", 8080, host="192.168.1.20") == "http://192.168.1.20:8080/"
    assert own_address("x", 8080, host="coffre-hub.local") == "http://coffre-hub.local:8080/"
