"""Developer tools: the simulated table, its bots, benchmarks, replaying a game.

Run by: developers and hosts on any Linux box (``coffre sim``, ``coffre bench``,
``coffre play``) and by the tests.
May import: anything of ours; nothing imports ``firmware.tools`` but ``firmware.cli``
and the tests.
"""
