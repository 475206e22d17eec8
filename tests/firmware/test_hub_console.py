"""The hub's side of a console request: held until the host answers, one per table, the
host's yes bound to the request and its code, and the same limits as pairing."""

from __future__ import annotations

from firmware.hub import console_state as hc
from firmware.hub.console_state import GRANTED, ConsoleRequests


class Answers:
    def __init__(self) -> None:
        self.said: list[tuple[str, bool, str]] = []

    def __call__(self, cmd_id: str, ok: bool, message: str) -> None:
        self.said.append((cmd_id, ok, message))


def test_a_request_waits_on_the_glass_and_the_hosts_yes_answers_it() -> None:
    table, answers = ConsoleRequests(), Answers()
    table.ask("a", "4721", 0.0, answers)
    assert answers.said == []  # answered only when it ends
    assert table.ok(None, 5.0, answers) == (False, "A new request: look at its code")
    assert table.title(6.0, answers) == ("Console? {code}", {"code": "4721"})
    assert table.ok(None, 6.5, answers) == (False, "A new request: look at its code")
    table.hidden()  # a pairing code took the glass: the request settles again after
    assert table.title(7.0, answers) is not None
    assert table.ok(None, 7.0 + hc.SETTLE_SECONDS / 2, answers)[0] is False
    assert table.ok(None, 7.0 + hc.SETTLE_SECONDS, answers) == (True, GRANTED)
    assert answers.said == [("a", True, GRANTED)]
    assert table.title(2.0, answers) is None


def test_console_ok_grants_only_the_code_the_host_compared() -> None:
    table, answers = ConsoleRequests(), Answers()
    table.ask("a", "4721", 0.0, answers)
    assert table.ok("4722", 0.1, answers) == (False, "The request shows another code")
    assert answers.said == [] and table.waiting is not None
    assert table.ok("4721", 0.1, answers) == (True, GRANTED)
    assert answers.said == [("a", True, GRANTED)]


def test_a_second_request_refuses_both_and_the_table_cools_down() -> None:
    table, answers = ConsoleRequests(), Answers()
    table.ask("host", "1111", 0.0, answers)
    table.ask("attacker", "2222", 1.0, answers)
    assert answers.said == [
        ("host", False, "Two requests at once"),
        ("attacker", False, "Two requests at once"),
    ]
    assert table.ok("1111", 3.0, answers) == (False, "No console request waits")
    table.ask("again", "3333", 2.0, answers)
    assert answers.said[-1] == ("again", False, "Too soon: wait")
    table.ask("later", "4444", 1.0 + hc.COOLDOWN, answers)
    assert table.waiting is not None and table.waiting.id == "later"


def test_a_redelivered_request_still_waits() -> None:
    table, answers = ConsoleRequests(), Answers()
    table.ask("a", "4721", 0.0, answers)
    table.ask("a", "4721", 0.5, answers)
    assert answers.said == [] and table.waiting is not None


def test_refused_and_expired_requests_are_answered_no() -> None:
    table, answers = ConsoleRequests(), Answers()
    table.ask("a", "1234", 0.0, answers)
    assert table.refuse(1.0, answers) == (True, "Console request refused")
    table.ask("b", "1234", 1.0 + hc.COOLDOWN, answers)
    assert table.title(2.0 + hc.COOLDOWN + hc.REQUEST_SECONDS, answers) is None
    assert answers.said == [("a", False, "Refused by the host"), ("b", False, "Nobody answered")]


def test_a_flood_of_requests_is_bounded() -> None:
    table, answers = ConsoleRequests(), Answers()
    held = 0
    now = 0.0
    for n in range(72_000):  # one every 50 ms for an hour
        table.ask(f"r{n}", "0000", now, answers)
        held += table.waiting is not None and table.waiting.id == f"r{n}"
        now += 0.05
    assert 0 < held <= hc.BURST + 3600 / max(hc.REFILL, hc.COOLDOWN) + 1


def phone(sid: str, seen: float = 0.0) -> hc.Phone:
    return hc.Phone(sid, "iPhone", 0.0, seen)


def test_the_displays_report_is_held_and_answered_when_the_host_ends_a_phone() -> None:
    table, answers = ConsoleRequests(), Answers()
    table.reported("r1", [phone("a1b2c3d4"), phone("e5f6a7b8")], 0.0, answers)
    assert answers.said == [] and [p.id for p in table.signed_in(1.0)] == ["a1b2c3d4", "e5f6a7b8"]
    assert table.end("00000000", 1.0, answers) == (False, "No such phone")
    assert table.end("a1b2c3d4", 1.0, answers) == (True, "Phone signed out")
    assert answers.said == [("r1", True, "end a1b2c3d4")]  # at once: the display is waiting
    assert [p.id for p in table.signed_in(1.0)] == ["e5f6a7b8"]


def test_an_end_between_two_reports_is_told_at_the_next() -> None:
    table, answers = ConsoleRequests(), Answers()
    table.reported("r1", [phone("a1b2c3d4")], 0.0, answers)
    table.release(hc.HOLD_SECONDS + 1, answers)
    assert answers.said == [("r1", True, "")]  # nothing to end: the display reports again
    assert table.end("all", hc.HOLD_SECONDS + 2, answers) == (True, "Phone signed out")
    assert table.signed_in(hc.HOLD_SECONDS + 2) == []
    table.reported("r2", [phone("a1b2c3d4")], hc.HOLD_SECONDS + 3, answers)
    assert answers.said[-1] == ("r2", True, "end a1b2c3d4")


def test_a_newer_report_answers_the_older_and_a_silent_display_has_no_phones() -> None:
    table, answers = ConsoleRequests(), Answers()
    table.reported("r1", [phone("a1b2c3d4")], 0.0, answers)
    table.reported("r2", [phone("a1b2c3d4"), phone("e5f6a7b8")], 1.0, answers)
    assert answers.said == [("r1", True, "")]
    assert len(table.signed_in(1.0)) == 2
    assert table.signed_in(1.0 + hc.FRESH_SECONDS + 1) == []
    assert table.end("all", 1.0 + hc.FRESH_SECONDS + 1, answers) == (
        False,
        "No phone is signed in",
    )


def test_ending_many_phones_is_told_a_line_at_a_time() -> None:
    table, answers = ConsoleRequests(), Answers()
    ids = [f"{n:08x}" for n in range(8)]
    table.reported("r1", [phone(i) for i in ids], 0.0, answers)
    assert table.end("all", 0.0, answers) == (True, "Phones signed out")
    first = answers.said[-1][2].split()
    assert first[0] == "end" and len(first) == 1 + hc.ENDS_PER_ANSWER
    table.reported("r2", [phone(i) for i in ids if i not in first], 0.5, answers)
    assert sorted(first[1:] + answers.said[-1][2].split()[1:]) == ids


def test_a_report_is_read_strictly_and_listed_in_one_line() -> None:
    from firmware.hub.console import listing, phones

    good = {"sessions": [["a1b2c3d4", "iPhone", 10, 100]]}
    assert phones(good) == [hc.Phone("a1b2c3d4", "iPhone", 10.0, 100.0)]
    for bad in (
        {},
        {"sessions": "all"},
        {"sessions": [{"id": "a1b2c3d4", "label": "iPhone", "born": 1, "seen": 1}]},
        {"sessions": [["../../x", "iPhone", 1, 1]]},
        {"sessions": [["a1b2c3d4", "iPhone", True, 1]]},
        {"sessions": [["a1b2c3d4", 3, 1, 1]]},
        {"sessions": [["a1b2c3d4", "iPhone", 1]]},
    ):
        assert phones(bad) is None, bad
    assert listing([], 0.0) == "No phone is signed in"
    assert listing([hc.Phone("a1b2c3d4", "iPhone", 0.0, 100.0)], 100.0 + 12 * 60) == (
        "1: a1b2c3d4 iPhone 12m"
    )
    many = [hc.Phone(f"{n:08x}", "Android", 0.0, 0.0) for n in range(8)]
    assert len(listing(many, 0.0)) <= 64
