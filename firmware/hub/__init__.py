"""The hub: the referee of every table it runs, and the broker's set-up.

Run by: ``coffre hub`` on the hub Pi (and ``coffre broker-config``, once, to make the
broker's users, ACL and certificate).
Holds: the hub service (life cycle, loop, wiring) on top of its batches, its dispatch and
its handlers by concern (station inputs, host commands, table ownership, the panel,
pairing), which are handed a HubContext, never the service; its table actors, the event
store, publishing, the host menu, the per-game table bindings, the hub's config file,
broker and certificate set-up.
May import: ``firmware.link``, ``rules``, ``device`` (the panel), ``hardware`` — never
``firmware.station`` or ``firmware.tools``.
"""
