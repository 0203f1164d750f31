"""Derive schemas/kubernetes-api/enums.json: the values of every field Kubernetes declares an enum,
per minor version, from the API types themselves (k8s.io/api, github.com/kubernetes/api).

Kubernetes' OpenAPI v3 documents list a field's `enum` when its Go type is marked `+enum`;
kubernetes-validate's JSON Schemas (made from OpenAPI v2) do not. This reads the same source
the OpenAPI generator reads: each `// +enum` string type, its constants, and the struct fields
of that type, and names each field as the OpenAPI does (io.k8s.api.<group>.<version>.<Type>).

    python scripts/derive_kubernetes_enums.py <clone of github.com/kubernetes/api>

A type with a constant that is a prefix (StorageMedium's `HugePages-`) is left out: its
values are open.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

# minor version -> the k8s.io/api tag of its release (v0.x.0 is Kubernetes 1.x.0)
TAGS = {f"1.{minor}": f"v0.{minor}.0" for minor in range(25, 37)}
TAGS["1.37"] = "HEAD"  # unreleased when derived: the development branch
OUT = Path(__file__).resolve().parent.parent / "schemas" / "kubernetes-api" / "enums.json"

_TYPE = re.compile(r"^type (\w+) string\b")
_CONST = re.compile(r"^\s*(\w+)\s+(\w+)\s*=\s*\"([^\"]*)\"")
_ALIAS = re.compile(r"^\s*(\w+)\s+(\w+)\s*=\s*(\w+)\s*(?://.*)?$")
_STRUCT = re.compile(r"^type (\w+) struct \{")
_FIELD = re.compile(r"^\s+\w+\s+(\[\])?\*?(?:(\w+)\.)?(\w+)\s+`json:\"([^\",]+)")
_IMPORT = re.compile(r"^\s*(\w+)?\s*\"k8s\.io/api/([\w/]+)\"")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _sources(repo: Path, tag: str) -> dict[str, list[str]]:
    """package folder (core/v1) -> the text of its hand-written Go files."""
    out: dict[str, list[str]] = {}
    for name in _git(repo, "ls-tree", "-r", "--name-only", tag).splitlines():
        folder, _, base = name.rpartition("/")
        if (
            not base.endswith(".go")
            or base.endswith("_test.go")
            or base.startswith(("zz_generated", "generated"))
            or "generated" in base
            or folder.count("/") != 1
        ):
            continue
        out.setdefault(folder, []).append(_git(repo, "show", f"{tag}:{name}"))
    return out


def _enums(texts: list[str]) -> dict[str, list[str]]:
    """A package's +enum types and their values, in declaration order."""
    marked: set[str] = set()
    consts: dict[str, tuple[str, str]] = {}  # const name -> (type, value)
    aliases: list[tuple[str, str, str]] = []
    for text in texts:
        comment: list[str] = []
        for line in text.splitlines():
            if line.startswith("//"):
                comment.append(line)
                continue
            if (match := _TYPE.match(line)) and any(c.strip() == "// +enum" for c in comment):
                marked.add(match[1])
            comment = []
            if match := _CONST.match(line):
                consts[match[1]] = (match[2], match[3])
            elif match := _ALIAS.match(line):
                aliases.append((match[1], match[2], match[3]))
    for name, kind, target in aliases:  # `NewName Type = OldName`
        if target in consts:
            consts[name] = (kind, consts[target][1])
    values: dict[str, list[str]] = {kind: [] for kind in marked}
    for kind, value in consts.values():
        if kind in values and value not in values[kind]:
            values[kind].append(value)
    return {kind: vals for kind, vals in values.items() if vals and not any(v.endswith("-") for v in vals)}


def _fields(texts: list[str]) -> tuple[dict[str, dict[str, tuple[str | None, str]]], dict[str, str]]:
    """A package's structs: type -> json name -> (import alias or None, field type); and its imports."""
    structs: dict[str, dict[str, tuple[str | None, str]]] = {}
    imports: dict[str, str] = {}
    for text in texts:
        current: dict[str, tuple[str | None, str]] | None = None
        for line in text.splitlines():
            if match := _IMPORT.match(line):
                imports[match[1] or match[2].rsplit("/", 1)[-1]] = match[2]
            if match := _STRUCT.match(line):
                current = structs.setdefault(match[1], {})
            elif line.startswith("}"):
                current = None
            elif current is not None and (match := _FIELD.match(line)):
                current[match[4]] = (match[2], match[3])
    return structs, imports


def derive(repo: Path, tag: str) -> dict[str, list[str]]:
    """`<definition>.<field>` -> its enum values, for one tag."""
    sources = _sources(repo, tag)
    enums = {package: _enums(texts) for package, texts in sources.items()}
    out: dict[str, list[str]] = {}
    for package, texts in sorted(sources.items()):
        structs, imports = _fields(texts)
        prefix = "io.k8s.api." + package.replace("/", ".")
        for struct, fields in sorted(structs.items()):
            for name, (alias, kind) in sorted(fields.items()):
                home = imports.get(alias, "") if alias else package
                values = enums.get(home, {}).get(kind)
                if values:
                    out[f"{prefix}.{struct}.{name}"] = values
    return out


def main(repo: Path) -> None:
    by_version = {version: derive(repo, tag) for version, tag in TAGS.items()}
    commits = {version: _git(repo, "rev-parse", tag).strip() for version, tag in TAGS.items()}
    fields: dict[str, list[list[object]]] = {}
    for version, found in by_version.items():  # each field's values where they change, oldest first
        for field in sorted({*found, *fields}):
            values = found.get(field)
            history = fields.setdefault(field, [])
            if (history[-1][1] if history else None) != values:
                history.append([version, values])
    document = {
        "source": "k8s.io/api (github.com/kubernetes/api): +enum string types, their constants, and the "
        "struct fields of those types, named as Kubernetes' OpenAPI names them",
        "derived by": "scripts/derive_kubernetes_enums.py",
        "commits": {version: f"{TAGS[version]} {commit}" for version, commit in commits.items()},
        "fields": dict(sorted(fields.items())),
    }
    OUT.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
