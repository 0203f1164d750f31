"""YAML in and out: reading with positions for findings, and writing canonical, byte-stable YAML."""
