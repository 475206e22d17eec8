"""What the table display says in words: points per safe and per round, the end box, the
hold-up, seats past a box's colours (rendered from real public tables of the registry)."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from firmware.display.parts import Names
from firmware.display.render import table_fragment
from firmware.display.spectator import Snapshot
from firmware.hub.bindings import bound_games
from firmware.link.lang import _, seat_label, speaking
from rules import get_info
from tests.support.display_samples import fragment, idle_snapshot, samples_of


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_secret_identity_says_who_scored_for_each_safe_and_keeps_past_rounds() -> None:
    """Each opened safe names its points; each finished round stays as a result line, from
    the hub's feed or, on a display that joined late (no feed), from the public history."""
    over = samples_of("secret-identity")[-1].public
    history = over["view"]["history"]
    assert len(history) == 4
    assert "Round 4 over — scores:" in text(fragment(over))  # the feed's newest lines
    late = text(fragment(dict(over, feed=[])))
    assert "Round 4 over:" in late
    if any(s["right"] for s in history[-1]["safes"]):
        assert "per right guess" in late


def test_the_co_op_end_box_names_no_winners_above_the_band() -> None:
    """Co-op game over: the team's band and right answers, never "winners: everyone"."""
    over = samples_of("secret-identity", '{"mode": "coop"}')[-1].public
    said = text(fragment(over))
    band = over["view"]["result"]["text"]
    assert band in said and "right answer" in said
    assert "winner" not in said.lower()
    assert "turn 10 of 10" in said and "round 10" not in said


def test_identites_cryptees_end_shows_each_seats_side_and_the_winning_side() -> None:
    """At the end every seat's side is shown, and the end box says which side won."""
    over = samples_of("identites-cryptees")[-1].public
    html = fragment(over)
    seats = over["view"]["table"]["seats"]
    assert html.count('class="card-up side-') >= len(seats)
    box = html[html.index('class="ranking"') :]
    assert "Victory:" in text(box[: box.index("</div>")])


def test_sixteen_seats_have_sixteen_different_chips() -> None:
    """Seats 9-16 get a colour class and a number each: no two chips alike."""
    public = samples_of("identites-cryptees")[0].public
    names = Names(public)
    chips = {names.chip(i) for i in range(len(names))}
    assert len(names) == 16 and len(chips) == 16
    assert '<i data-n="9"></i>Seat 9' in names.chip(8) and "c-seat16" in names.chip(15)


def test_every_seat_chip_carries_its_number_not_colour_alone() -> None:
    """Colour-blind players: every seat's chip (coloured seats too) carries the seat's
    number in its swatch, and the score track's tokens carry it too."""
    for game in ("secret-identity", "ultra-secret", "incognito"):
        public = samples_of(game)[0].public
        names = Names(public)
        for i in range(len(names)):
            assert f'<i data-n="{i + 1}"></i>' in names.chip(i), (game, i)
    public = samples_of("secret-identity")[0].public
    html = fragment(public)
    track = html[html.index('class="track"') :]
    for i in range(len(Names(public))):
        assert f'data-n="{i + 1}"' in track, i


def test_the_table_waits_for_someone_by_name() -> None:
    """A game waiting for one seat says so in large type."""
    for sample in samples_of("identiquest"):
        public = sample.public
        if public["to_play"] is not None and not public["over"]:
            seat = Names(public).text(public["to_play"])
            assert f"Waiting for {seat}" in text(fragment(public))
            return
    raise AssertionError("no identiquest table waiting for a seat")


def test_a_long_custom_seat_name_wraps_inside_its_chip() -> None:
    """A seat named at length by the config gets a chip that may wrap, not a wide page."""
    public = dict(samples_of("incognito")[0].public)
    public["seats"] = [dict(s) for s in public["seats"]]
    public["seats"][0]["colour"] = "grand-mère josiane la magnifique de lyon"
    assert 'class="chip long' in fragment(public)


def test_the_overview_card_says_round_hold_up_leader_and_scores() -> None:
    """A host walking the room reads each table's game, round, who it waits for and who
    leads, with every seat's score."""
    from firmware.display.render import overview_fragment
    from firmware.display.spectator import Snapshot

    mid = next(
        s.public
        for s in samples_of("secret-identity")
        if s.moment != "over" and any(x["score"] for x in s.public["view"]["seats"])
    )
    card = text(overview_fragment([Snapshot("main", mid, {"state": "ready"}, broker=True)]))
    scores = [x["score"] for x in mid["view"]["seats"]]
    assert "Secret Identity" in card and f"round {mid['round']} of 4" in card
    assert "Leader:" in card and f"({max(scores)})" in card
    names = Names(mid)
    for i, score in enumerate(scores):
        assert f"{names.text(i)} {score}" in card
    waiting = next(s.public for s in samples_of("identiquest") if s.public["to_play"] is not None)
    seat = Names(waiting).text(waiting["to_play"])
    card = text(overview_fragment([Snapshot("main", waiting, {"state": "ready"}, broker=True)]))
    assert f"Waiting for {seat}" in card


def test_ultra_secret_reveals_who_was_who_and_the_filing_at_the_end() -> None:
    """Game over: each agent's true pseudonym, the fugitive's filing marked right or wrong,
    and the true formula; the turn number in the headline."""
    over = samples_of("ultra-secret")[-1].public
    end, view = over["view"]["end"], over["view"]
    said = text(fragment(over))
    assert f"turn {view['turn']}" in said
    assert f"the true formula: {end['formula']}" in said or "The true formula" in said
    for colour, stash in end["stashes"].items():
        if colour in view["colours"][: len(over["seats"])]:
            truth = next(c for c in stash.values() if str(c).startswith("P"))
            assert view["pseudonyms"][truth] in said
    filed = (end.get("filing") or {}).get("pseudonyms") or {}
    html = fragment(over)
    recap = text(html[html.index('class="seats recap"') :].split("</table>")[0])
    assert filed and recap.count("✔") + recap.count("✗") == len(filed)


def test_games_without_a_turn_name_the_seats_they_wait_for() -> None:
    """Secret Identity, Incognito and Ultra Secret wait for several seats at once: the page
    names the ones not done yet (or says everyone)."""
    said = []
    for game in ("secret-identity", "incognito", "ultra-secret"):
        for sample in samples_of(game):
            public = sample.public
            if public["over"]:
                assert "Waiting for" not in text(fragment(public))
                continue
            line = text(fragment(public))
            if "Waiting for" in line:
                said.append(game)
    assert {"secret-identity", "incognito", "ultra-secret"} <= set(said), said


def test_secret_identity_names_exactly_the_seats_not_ready() -> None:
    """While safes are prepared, the hold-up line names the seats not ready, and no other."""
    html = ""
    for sample in samples_of("secret-identity"):
        view = sample.public["view"]
        seats = view["seats"]
        if view["phase"] in ("prepare", "vote") and not all(s["ready"] for s in seats):
            html = fragment(sample.public)
            break
    assert html, "no Secret Identity table waiting for a seat"
    line = text(html.split('class="now"')[1].split("</p>")[0])
    names = Names(sample.public)
    for i, s in enumerate(seats):
        assert (names.text(i) in line) == (not s["ready"]), (names.text(i), line)


# --- between games ------------------------------------------------------------------------


def read(html_text: str) -> str:
    """A fragment's text as a reader sees it (tags gone, entities said)."""
    return html_lib.unescape(text(html_text))


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_idle_page_lists_every_game_and_the_picked_games_rules(language: str) -> None:
    """Between games: every game the hub offers with its player range, and one card with the
    rules of the game picked on the panel (its declaration's summary), in the table's
    language; the other games' summaries are not on the page."""
    for picked in bound_games():
        said = read(table_fragment(idle_snapshot(language, picked)))
        with speaking(language):
            for game in bound_games():
                info = get_info(game)
                assert _(info.name) in said
                span = _("{lo}–{hi} players", lo=info.min_players, hi=info.max_players)
                assert span in said
                summary = _(info.summary)
                assert (summary in said) == (game == picked), (game, picked)
            assert _("Picked on the panel, for {n} players", n=5) in said
        if language == "fr":
            assert get_info(picked).summary not in said  # said in French, not English


def test_with_no_pick_known_the_idle_page_lists_every_games_rules() -> None:
    """An older hub (no ``selected`` in its status): each game's summary in the menu."""
    said = read(table_fragment(idle_snapshot("en", None)))
    for game in bound_games():
        assert get_info(game).summary in said
    assert "rules-card" not in table_fragment(idle_snapshot("en", None))


def test_the_idle_menu_escapes_what_it_is_sent_and_ignores_a_pick_it_does_not_list() -> None:
    """A hostile menu entry is text, not markup; a pick outside the menu shows no card."""
    public = {
        "game": None,
        "menu": [{"id": "x", "name": "<script>x</script>", "min": "3", "max": 6, "summary": "<b>"}],
    }
    status = {"state": "ready", "selected": "y", "selected_players": 4}
    html = table_fragment(Snapshot("main", public, status, broker=True))
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;" in html
    assert "rules-card" not in html
    assert "players" not in text(html).replace("picks a game", "")  # no range from a "3"


# --- Ultra Secret's board ---------------------------------------------------------------


def tiles(html: str) -> dict[str, str]:
    """Each drawn square of Ultra Secret's board: its code -> the tile's HTML."""
    found = re.findall(r'<div class="tile[^"]*">(.*?)</div>', html)
    return {re.search(r"<b>([A-Z]+\d)</b>", t).group(1): t for t in found}  # type: ignore[union-attr]


def test_ultra_secret_is_a_drawn_board_with_every_agent_informant_and_bug_on_its_square() -> None:
    """Every square is a tile; each seat's agent, informant and bug is on its square's tile,
    named (not colour alone); squares out of play are drawn closed; at game over the place
    the fugitive took the formula from is marked."""
    for sample in samples_of("ultra-secret"):
        view = sample.public["view"]
        html = fragment(sample.public)
        names = Names(sample.public)
        board = tiles(html)
        assert len(board) == 21, sorted(board)
        for seat in range(len(names)):
            assert names.chip(seat) in board[view["agents"][seat]]
            for key in ("informants", "bugs"):
                square = view[key][seat]
                if square:
                    short = seat_label(seat, names.colours, short=True)  # as the seats say
                    assert f">{short}<" in board[square], (key, seat, short)
        for square, tile in board.items():
            assert ("closed" in tile) == (square not in view["open"]), square
        if sample.moment == "over":
            assert "formula taken" in board[view["taken"]["square"]]
            fugitive = board[view["agents"][view["fugitive"]]]
            assert 'class="flee"' in fugitive
