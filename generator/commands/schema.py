"""`gen schema`: the policy JSON Schemas, the same files the validator uses."""

from __future__ import annotations

from pathlib import Path

from generator import schemas


def run(out: Path | None) -> int:
    if out is None:
        for name in schemas.exported_schema_files():
            print(schemas.schema_dir() / name)
        return 0
    names = schemas.export(out)
    print(f"gen: wrote {len(names)} schemas to {out}")
    return 0
