"""Per-game engine helpers shared by the rules, bindings, screens and table tests."""
