"""One module per command; each exposes run(...) -> exit code."""
