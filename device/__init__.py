"""Hardware abstraction: reader, display and controls, each with real and mock backends."""
