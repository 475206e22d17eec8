"""A station: the thin terminal in front of each player.

Run by: ``coffre station`` on each station Pi (and ``coffre selftest`` and
``coffre keys learn``, run by hand while building one).
Holds: the station loop (reader, knob, flap, screen, inputs kept until acked), its
config file, its program (``run_station``: boot, run, stop), the hardware self-test and
key learning.
May import: ``firmware.link``, ``device``, ``hardware`` — never ``firmware.hub``,
``firmware.tools`` or ``rules``: a Pi Zero loads only what a station runs.
"""
