"""Developer tools: the simulated table, its bots, replaying a game, the host's commands.

Run by: developers and hosts on any Linux box (``coffre sim``, ``coffre play``,
``coffre host``) and by the tests. The benchmarks are ``firmware.bench``.
May import: anything of ours but ``firmware.bench``; nothing imports ``firmware.tools``
but ``firmware.cli``, ``firmware.bench`` and the tests.
"""
