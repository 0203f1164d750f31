from generator.cli import entry

entry()
