"""Attacks on the host's console from the venue's Wi-Fi (docs/host-guide.md's threat model):
a browser with no session, a stolen cookie after the host revoked it, a cross-site form,
a replayed write, guessing and flooding the sign-in. The console's real routes on aiohttp's
real server, real HTTP from a real client; the hub is a recorder of the host commands that
would reach it (nothing may reach it from an attacker)."""

from __future__ import annotations

import re
import secrets

import pytest

from firmware.display import console_auth as auth
from firmware.display.console import ASK_COOKIE, SESSION_COOKIE
from firmware.display.console_auth import ConsoleDoor, Refused
from tests.support.console_rig import (
    TABLE,
    Clock,
    Rig,
    fields,
    origin,
    run,
    sign_in,
    write,
)


def test_no_session_reads_only_the_sign_in_page_and_changes_nothing() -> None:
    async def attack(rig: Rig) -> None:
        _console, hub, _clock, browser = rig
        client = await browser()
        page = await (await client.get(f"/host/{TABLE}")).text()
        assert 'id="ask"' in page and "data-csrf" not in page and "data-cmd" not in page
        for path, form in (
            ("command", {"cmd": "abort", "confirm": "yes", "nonce": "a" * 20}),
            ("revoke", {"session": "x", "nonce": "b" * 20}),
            ("signout", {"nonce": "c" * 20}),
        ):
            status, text = await write(client, path, form, origin(client))
            assert (status, text) == (401, "Sign in first")
        # A made-up cookie is no session either.
        client.session.cookie_jar.update_cookies({SESSION_COOKIE: secrets.token_urlsafe(32)})
        status, _ = await write(client, "command", fields("x", cmd="next"), origin(client))
        assert status == 401
        assert hub.commands == []

    run(attack)


def test_cookies_are_httponly_strict_and_the_token_is_kept_hashed() -> None:
    async def attack(rig: Rig) -> None:
        console, hub, _clock, browser = rig
        client = await browser()
        asked = await client.post(f"/host/{TABLE}/ask", headers=origin(client))
        ask_cookie = asked.headers["Set-Cookie"]
        assert "HttpOnly" in ask_cookie and "SameSite=Strict" in ask_cookie
        await hub.answer(True)
        picked = await client.get(f"/host/{TABLE}/ask")
        made = [c for c in picked.headers.getall("Set-Cookie") if c.startswith(SESSION_COOKIE)]
        assert len(made) == 1
        assert "HttpOnly" in made[0] and "SameSite=Strict" in made[0]
        assert f"Path=/host/{TABLE}" in made[0]
        token = made[0].split(";")[0].split("=", 1)[1]
        assert len(token) >= 43  # 256 bits, URL-safe base64
        (session,) = console.door.sessions.values()
        assert token not in repr(console.door.sessions) and session.token_hash != token

    run(attack)


def test_a_stolen_cookie_stops_working_the_moment_the_host_revokes_it() -> None:
    async def attack(rig: Rig) -> None:
        _console, hub, _clock, browser = rig
        host = await browser()
        csrf = await sign_in(rig, host)
        token = host.session.cookie_jar.filter_cookies(host.make_url(f"/host/{TABLE}"))
        thief = await browser()
        thief.session.cookie_jar.update_cookies({SESSION_COOKIE: token[SESSION_COOKIE].value})
        # The thief read the page's CSRF token too: with both, the cookie works...
        status, _ = await write(thief, "command", fields(csrf, cmd="next"), origin(thief))
        assert status == 200 and len(hub.commands) == 1
        # ...until the host ends that session from the console's list.
        page = await (await host.get(f"/host/{TABLE}")).text()
        (session_id,) = re.findall(r'data-session="([^"]+)"', page)
        status, _ = await write(host, "revoke", fields(csrf, session=session_id), origin(host))
        assert status == 200
        status, text = await write(thief, "command", fields(csrf, cmd="next"), origin(thief))
        assert (status, text) == (401, "Sign in first")
        page = await (await thief.get(f"/host/{TABLE}")).text()
        assert 'id="ask"' in page and "data-csrf" not in page
        assert len(hub.commands) == 1

    run(attack)


def test_a_cross_site_form_is_refused() -> None:
    async def attack(rig: Rig) -> None:
        _console, hub, _clock, browser = rig
        client = await browser()
        csrf = await sign_in(rig, client)
        cases = {
            "no Origin": ({}, fields(csrf, cmd="next")),
            "a foreign Origin": ({"Origin": "http://evil.example"}, fields(csrf, cmd="next")),
            "Origin null": ({"Origin": "null"}, fields(csrf, cmd="next")),
            "no CSRF token": (origin(client), fields("", cmd="next")),
            "another CSRF token": (origin(client), fields(secrets.token_urlsafe(32), cmd="next")),
            "no nonce": (origin(client), {"csrf": csrf, "cmd": "next"}),
        }
        for case, (headers, form) in cases.items():
            status, text = await write(client, "command", form, headers)
            assert status == 403, (case, status, text)
            assert text.startswith("Refused"), (case, text)
        # A cross-site request for a session is refused too (it would start a request).
        asked = await client.post(f"/host/{TABLE}/ask", headers={"Origin": "http://evil.example"})
        assert asked.status == 403
        assert hub.commands == []
        # The same form from the page itself goes through.
        status, _ = await write(client, "command", fields(csrf, cmd="next"), origin(client))
        assert status == 200 and [c.cmd for c in hub.commands] == ["next"]

    run(attack)


def test_a_replayed_write_is_refused_and_the_hub_sees_one_command() -> None:
    async def attack(rig: Rig) -> None:
        _console, hub, _clock, browser = rig
        client = await browser()
        csrf = await sign_in(rig, client)
        form = fields(csrf, cmd="undo", confirm="yes")
        first = await write(client, "command", form, origin(client))
        again = await write(client, "command", form, origin(client))
        assert first[0] == 200
        assert again == (409, "Already done")
        assert [(c.cmd, c.id) for c in hub.commands] == [("undo", f"console-{form['nonce']}")]

    run(attack)


def test_undo_and_abort_ask_once_more_before_they_reach_the_hub() -> None:
    async def attack(rig: Rig) -> None:
        _console, hub, _clock, browser = rig
        client = await browser()
        csrf = await sign_in(rig, client)
        for cmd in ("undo", "abort"):
            status, text = await write(client, "command", fields(csrf, cmd=cmd), origin(client))
            assert status == 200 and '"confirm"' in text
        assert hub.commands == []
        status, _ = await write(client, "command", fields(csrf, cmd="shutdown"), origin(client))
        assert status == 400 and hub.commands == []

    run(attack)


def test_a_second_request_refuses_both_and_the_hosts_yes_lands_on_neither() -> None:
    async def attack(rig: Rig) -> None:
        console, hub, clock, browser = rig
        host, attacker = await browser(), await browser()
        mine = await (await host.post(f"/host/{TABLE}/ask", headers=origin(host))).json()
        assert hub.glass is not None and hub.glass.code == mine["code"]
        theirs = await attacker.post(f"/host/{TABLE}/ask", headers=origin(attacker))
        assert theirs.status == 429
        assert (await theirs.json())["message"] == "Two requests at once: both refused"
        assert hub.glass is None  # the hub's glass no longer shows a code to confirm
        # Even if the host's ok crossed the withdrawal, it lands on no request.
        await hub.answer(True)
        assert (await (await host.get(f"/host/{TABLE}/ask")).json())["state"] == "two"
        assert (await (await attacker.get(f"/host/{TABLE}/ask")).json())["state"] == "none"
        # The table cools down: a request at once is refused, one after the cooldown goes.
        again = await host.post(f"/host/{TABLE}/ask", headers=origin(host))
        assert again.status == 429
        clock.now += auth.COOLDOWN
        again = await host.post(f"/host/{TABLE}/ask", headers=origin(host))
        assert again.status == 200
        assert console.door.sessions == {}

    run(attack)


def test_knowing_or_guessing_the_code_picks_up_nothing() -> None:
    async def attack(rig: Rig) -> None:
        console, hub, _clock, browser = rig
        host, attacker = await browser(), await browser()
        await host.post(f"/host/{TABLE}/ask", headers=origin(host))
        await hub.answer(True)
        # The attacker saw the code over the host's shoulder: without the asking browser's
        # own secret there is nothing to pick up, whatever he sends.
        assert hub.glass is None
        for secret in ("", "0000", secrets.token_urlsafe(32)):
            attacker.session.cookie_jar.update_cookies({ASK_COOKIE: secret})
            state = await (await attacker.get(f"/host/{TABLE}/ask")).json()
            assert state == {"state": "none"}
        assert console.door.sessions == {}
        assert (await (await host.get(f"/host/{TABLE}/ask")).json())["state"] == "taken"
        assert len(console.door.sessions) == 1

    run(attack)


def test_a_refused_request_gets_no_session_and_cools_the_table() -> None:
    async def attack(rig: Rig) -> None:
        console, hub, _clock, browser = rig
        client = await browser()
        await client.post(f"/host/{TABLE}/ask", headers=origin(client))
        await hub.answer(False)
        assert (await (await client.get(f"/host/{TABLE}/ask")).json())["state"] == "refused"
        again = await client.post(f"/host/{TABLE}/ask", headers=origin(client))
        assert again.status == 429
        assert console.door.sessions == {}

    run(attack)


def test_the_host_grants_only_the_code_he_compared() -> None:
    """Without a hub link (the host's yes given on the display's side), the same rule as
    ``coffre host pair p6 4721``: another code grants nothing and the request stays."""
    clock = Clock()
    door = ConsoleDoor(clock)
    request, _secret = door.ask(TABLE, "10.0.0.9")
    clock.now += auth.SETTLE_SECONDS
    other = f"{(int(request.code) + 1) % 10_000:04d}"
    with pytest.raises(Refused, match="another code"):
        door.grant(TABLE, other)
    assert door.shown(TABLE) is request
    door.grant(TABLE, request.code)
    assert door.shown(TABLE) is None


def test_a_yes_for_a_request_that_just_appeared_only_shows_it() -> None:
    clock = Clock()
    door = ConsoleDoor(clock)
    request, _secret = door.ask(TABLE, "10.0.0.9")
    clock.now += auth.SETTLE_SECONDS / 2
    with pytest.raises(Refused, match="look at its code first"):
        door.grant(TABLE, request.code)
    clock.now += auth.SETTLE_SECONDS
    assert door.grant(TABLE, request.code).startswith("Console granted")


def test_a_flood_of_requests_is_bounded_per_table() -> None:
    """A fast script asks again and again for an hour: each answered request is a code on
    the hub's glass the host might confirm by mistake; the limits bound how many."""
    clock = Clock()
    door = ConsoleDoor(clock)
    shown = asks = 0
    ends = clock.now + 3600
    while clock.now < ends:
        asks += 1
        try:
            door.ask(TABLE, "10.0.0.66")
            shown += 1
        except Refused:
            pass
        clock.now += 0.05
    assert len(door.ended) <= 2 * auth.REQUEST_SECONDS / auth.COOLDOWN + 1  # none kept long
    bound = auth.BURST + 3600 / max(auth.REFILL, auth.COOLDOWN) + 1
    print(f"\nconsole flood: {asks} requests in an hour, {shown} codes shown (bound {bound:.0f})")
    assert 0 < shown <= bound


def test_a_session_ends_when_idle_or_old_and_only_works_from_where_it_was_granted() -> None:
    clock = Clock()
    door = ConsoleDoor(clock)
    request, secret = door.ask(TABLE, "10.0.0.9")
    clock.now += auth.SETTLE_SECONDS
    door.grant(TABLE, request.code)
    _asked, token = door.state(secret, "10.0.0.9")
    assert door.session(token, "10.0.0.9") is not None
    assert door.session(token, "10.0.0.66") is None  # the cookie, carried elsewhere
    clock.now += auth.IDLE_SECONDS + 1
    assert door.session(token, "10.0.0.9") is None
    assert door.sessions == {}
    # Used every half hour, a session still ends LIFE_SECONDS after it was granted.
    clock.now += auth.COOLDOWN
    request, secret = door.ask(TABLE, "10.0.0.9")
    clock.now += auth.SETTLE_SECONDS
    door.grant(TABLE, request.code)
    _asked, token = door.state(secret, "10.0.0.9")
    granted = clock.now
    while clock.now - granted < auth.LIFE_SECONDS - 1800:
        clock.now += 1800
        assert door.session(token, "10.0.0.9") is not None
    clock.now = granted + auth.LIFE_SECONDS + 1
    assert door.session(token, "10.0.0.9") is None


def test_a_grant_picked_up_from_another_address_is_refused() -> None:
    clock = Clock()
    door = ConsoleDoor(clock)
    request, secret = door.ask(TABLE, "10.0.0.9")
    clock.now += auth.SETTLE_SECONDS
    door.grant(TABLE, request.code)
    asked, token = door.state(secret, "10.0.0.66")
    assert token == "" and asked is not None and asked.state == "refused"
    assert door.state(secret, "10.0.0.9") == (None, "")


def test_the_live_part_needs_a_session_and_a_pairing_answer_is_checked() -> None:
    async def attack(rig: Rig) -> None:
        _console, hub, _clock, browser = rig
        stranger = await browser()
        live = await stranger.get(f"/host/{TABLE}/live")
        assert (live.status, await live.text()) == (401, "Sign in first")
        client = await browser()
        csrf = await sign_in(rig, client)
        assert (await client.get(f"/host/{TABLE}/live")).status == 200
        for bad in ({"station": "p1", "code": "12345"}, {"station": "../x", "code": "1234"}):
            status, _ = await write(
                client, "command", fields(csrf, cmd="pair", **bad), origin(client)
            )
            assert status == 400, bad
        assert hub.commands == []
        form = fields(csrf, cmd="pair", station="p1", code="0420")
        assert (await write(client, "command", form, origin(client)))[0] == 200
        form = fields(csrf, cmd="refuse", station="p2")
        assert (await write(client, "command", form, origin(client)))[0] == 200
        assert [(c.cmd, c.station, c.code) for c in hub.commands] == [
            ("pair", "p1", "0420"),
            ("refuse", "p2", None),
        ]

    run(attack)


def test_a_stations_own_line_cannot_put_markup_on_the_console() -> None:
    """A station (or a stolen one) says its own trouble line; the console shows it as text."""
    from firmware.display.console_live import seats_fragment
    from firmware.display.spectator import Snapshot

    hostile = '<img src=x onerror="fetch(1)">'
    snap = Snapshot(
        TABLE,
        status={
            "state": "ready",
            "stations": {
                "p1": {"state": "error", "reason": hostile},
                "p2": {"state": "online", "asking": True},
            },
        },
        broker=True,
    )
    fragment = seats_fragment(snap)
    assert hostile not in fragment and "&lt;img" in fragment
    assert 'data-station="p2"' in fragment and 'data-station="p1"' not in fragment


def test_the_tables_sound_and_language_change_only_from_the_page_itself() -> None:
    """The table's settings are writes like any other: no session, a cross-site form, a
    missing token or nonce, a replay change nothing; the page's own write reaches the hub as
    the host command with its nonce for id; a sound that is none of the three is refused here."""

    async def attack(rig: Rig) -> None:
        _console, hub, _clock, browser = rig
        stranger = await browser()
        client = await browser()
        csrf = await sign_in(rig, client)
        for wanted in ({"cmd": "sound", "sound": "off"}, {"cmd": "language", "language": "fr"}):
            status, _ = await write(stranger, "command", fields(csrf, **wanted), origin(stranger))
            assert status == 401, wanted
            for headers, form in (
                ({"Origin": "http://evil.example"}, fields(csrf, **wanted)),
                ({}, fields(csrf, **wanted)),
                (origin(client), fields("", **wanted)),
                (origin(client), {"csrf": csrf, **wanted}),
            ):
                status, text = await write(client, "command", form, headers)
                assert status == 403 and text.startswith("Refused"), (wanted, form, text)
        assert hub.commands == []
        status, _ = await write(
            client, "command", fields(csrf, cmd="sound", sound="loud"), origin(client)
        )
        assert status == 400 and hub.commands == []
        sound = fields(csrf, cmd="sound", sound="narration")
        language = fields(csrf, cmd="language", language="fr")
        for form in (sound, language, sound):
            status, _ = await write(client, "command", form, origin(client))
        assert status == 409  # the replayed one
        assert [(c.cmd, c.sound, c.language, c.id) for c in hub.commands] == [
            ("sound", "narration", None, f"console-{sound['nonce']}"),
            ("language", None, "fr", f"console-{language['nonce']}"),
        ]

    run(attack)
