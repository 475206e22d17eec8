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
