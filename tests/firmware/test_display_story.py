"""What the table display says in words: points per safe and per round, the end box, the
hold-up, seats past a box's colours (rendered from real public tables of the registry)."""

from __future__ import annotations

import re

from firmware.display.parts import Names
from tests.support.display_samples import fragment, samples_of


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
    assert "<i>9</i>Seat 9" in names.chip(8) and "c-seat16" in names.chip(15)


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
    from firmware.display.feed import Snapshot
    from firmware.display.render import overview_fragment

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
    recap = text(html[html.index('class="recap"') :].split("</table>")[0])
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
