"""`gen schema`: the policy JSON Schemas, the same files the validator uses."""

from __future__ import annotations

import shutil
from pathlib import Path

from generator import schemas


def run(out: Path | None) -> int:
    names = schemas.exported_schema_files()
    if out is None:
        for name in names:
            print(schemas.schema_dir() / name)
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(schemas.schema_dir() / name, out / name)
    print(f"gen: wrote {len(names)} schemas to {out}")
    return 0
