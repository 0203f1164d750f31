"""`gen init`: a policy repository that lints and renders cleanly as created."""

from __future__ import annotations

from pathlib import Path

from generator import schemas
from generator.errors import GeneratorError
from generator.resources import data_dir


def run(directory: Path) -> int:
    source = data_dir("templates") / "init"
    files = {p.relative_to(source).as_posix(): p for p in sorted(source.rglob("*")) if p.is_file()}
    wanted = [*files, *(f"schemas/{name}" for name in schemas.exported_schema_files())]
    existing = [rel for rel in wanted if (directory / rel).exists()]
    if existing:
        raise GeneratorError(f"{directory} already has {', '.join(existing)}; gen init never overwrites files")
    for rel, path in files.items():
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    schemas.export(directory / "schemas")
    print(f"gen: created a policy repository in {directory} ({len(wanted)} files)")
    print(f"next: cd {directory} && gen lint policies && gen render policies --out deploy")
    return 0
