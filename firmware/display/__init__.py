"""The table display: a web page showing every public fact of the tables it follows.

Run by: ``coffre display`` (on the hub or any machine on the venue's network; its own
systemd unit), and by ``coffre sim --display PORT``.
Holds: the feed (a read-only ``spectator`` MQTT client on ``public`` and ``hub/status``),
the pure HTML rendering of each game's public table, and the web server (aiohttp, live
updates by server-sent events; the page's CSS and JS are served from this package).
May import: ``firmware.link`` and aiohttp — never ``firmware.hub``, ``firmware.station``,
``firmware.tools`` or ``rules``: what it shows is only what the hub made public.
"""
