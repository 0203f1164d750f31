"""Derive schemas/kubernetes-api/field-checks/<version>.json: for every built-in kind of each
Kubernetes version gen validates, the fields whose declared type asks something beyond the
JSON Schema: a `resource.Quantity`, an enum (`+enum` in k8s.io/api: enums.json), list-map keys
(`x-kubernetes-list-type: map`). Only the fields with something to check, and the fields that
lead to them, are kept, so `gen validate` walks an object only where it can find something.

Derived from the installed kubernetes-validate's definitions (its strict schemas per minor
version) and schemas/kubernetes-api/enums.json; tests/test_kubernetes_field_checks.py fails
when the files differ from what this derives.

    python scripts/derive_kubernetes_field_checks.py

Each file: {"derivedFrom": ..., "kinds": {"<apiVersion>/<kind>": node}, "nodes": [node, ...]},
a node being {"e": enum values, "q": 1 for a quantity, "k": list-map keys, "p": {property:
node}, "i": items node, "x": additionalProperties node}, children by index into "nodes"
(definitions recur, and are shared between kinds).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator import schemas  # noqa: E402
from generator.kube import api_versions  # noqa: E402

OUT = ROOT / "schemas" / "kubernetes-api" / "field-checks"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_REF = "#/$defs/"
SKIPPED = ("status", "apiVersion", "kind", "metadata")  # the cluster's to write; checked elsewhere


class Field:
    """What one schema node asks, and its children."""

    def __init__(self) -> None:
        self.enum: tuple[str, ...] = ()
        self.quantity = False
        self.map_keys: tuple[str, ...] = ()
        self.props: dict[str, Field] = {}
        self.items: Field | None = None
        self.extra: Field | None = None
        self.walk = False

    def copy(self) -> Field:
        out = Field()
        out.enum, out.quantity, out.map_keys = self.enum, self.quantity, self.map_keys
        out.props, out.items, out.extra = self.props, self.items, self.extra
        return out


def enum_values(version: str) -> dict[str, tuple[str, ...]]:
    """`<definition>.<property>` -> the values it takes in version."""
    wanted = api_versions.parse_version(version)
    out: dict[str, tuple[str, ...]] = {}
    for field, history in schemas.read("kubernetes-api/enums.json")["fields"].items():
        values: Any = None
        for since, listed in history:
            if api_versions.parse_version(since) <= wanted:
                values = listed
        if values:
            out[field] = tuple(values)
    return out


class Planner:
    """The fields of one version's definitions, each definition built once."""

    def __init__(self, version: str) -> None:
        self.enums = enum_values(version)
        self.defs: dict[str, Any] = api_versions.definitions(version).get("$defs", {})
        self.built: dict[str, Field] = {}

    def definition(self, name: str) -> Field:
        if name in self.built:
            return self.built[name]
        field = self.built[name] = Field()  # before its properties: definitions may recur
        self.fill(field, self.defs.get(name) or {}, name)
        return field

    def node(self, schema: Any) -> Field:
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if isinstance(ref, str) and _REF in ref:
            name = ref.split(_REF, 1)[1]
            if name == QUANTITY:
                leaf = Field()
                leaf.quantity = True
                return leaf
            return self.definition(name)
        field = Field()
        if isinstance(schema, dict):
            self.fill(field, schema, "")
        return field

    def fill(self, field: Field, schema: dict[str, Any], name: str) -> None:
        props = schema.get("properties")
        for key, sub in props.items() if isinstance(props, dict) else ():
            if key in SKIPPED:
                continue
            child = self.node(sub)
            if name and (values := self.enums.get(f"{name}.{key}")):
                child = child.copy()
                child.enum = values
            keys = sub.get("x-kubernetes-list-map-keys") if isinstance(sub, dict) else None
            if isinstance(keys, list) and sub.get("x-kubernetes-list-type") == "map":
                child = child.copy()
                child.map_keys = tuple(str(k) for k in keys)
            field.props[key] = child
        if isinstance(schema.get("items"), dict):
            field.items = self.node(schema["items"])
        if isinstance(schema.get("additionalProperties"), dict):
            field.extra = self.node(schema["additionalProperties"])


def mark(roots: list[Field]) -> None:
    """Set walk on every field reachable from roots that asks something or leads to one that
    does, definitions that recur included: the least fixpoint, the same whatever the order."""
    reachable: dict[int, Field] = {}
    todo = list(roots)
    while todo:
        field = todo.pop()
        if id(field) not in reachable:
            reachable[id(field)] = field
            todo += [*field.props.values(), *(c for c in (field.items, field.extra) if c is not None)]
    for field in reachable.values():
        field.walk = bool(field.enum or field.quantity or field.map_keys)
    changed = True
    while changed:
        changed = False
        for field in reachable.values():
            if not field.walk and any(
                child.walk for child in (*field.props.values(), field.items, field.extra) if child is not None
            ):
                field.walk = changed = True


def kinds(version: str) -> dict[str, str]:
    """ "<apiVersion>/<kind>" -> the definition that is the kind, for every kind version serves."""
    out: dict[str, str] = {}
    for name, schema in api_versions.definitions(version).get("$defs", {}).items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or () if isinstance(schema, dict) else ():
            if isinstance(gvk, dict):
                api = f"{gvk['group']}/{gvk['version']}" if gvk.get("group") else str(gvk.get("version"))
                if api_versions.kind_schema(api_versions.folder(version), api, str(gvk.get("kind"))) is not None:
                    out.setdefault(f"{api}/{gvk['kind']}", name)
    return out


def derive(version: str) -> dict[str, Any]:
    planner = Planner(version)
    index: dict[int, int] = {}
    nodes: list[dict[str, Any]] = []

    def encode(field: Field) -> int:
        if id(field) in index:
            return index[id(field)]
        at = index[id(field)] = len(nodes)
        nodes.append({})
        node: dict[str, Any] = {}
        if field.enum:
            node["e"] = list(field.enum)
        if field.quantity:
            node["q"] = 1
        if field.map_keys:
            node["k"] = list(field.map_keys)
        walked = {key: encode(child) for key, child in sorted(field.props.items()) if child.walk}
        if walked:
            node["p"] = walked
        if field.items is not None and field.items.walk:
            node["i"] = encode(field.items)
        if field.extra is not None and field.extra.walk:
            node["x"] = encode(field.extra)
        nodes[at] = node
        return at

    named = {kind: planner.definition(name) for kind, name in sorted(kinds(version).items())}
    mark(list(named.values()))
    roots = {kind: encode(root) for kind, root in named.items() if root.walk}
    source = f"kubernetes-validate {_installed('kubernetes-validate')} ({api_versions.folder(version).name})"
    return {"derivedFrom": f"{source} and enums.json", "kinds": roots, "nodes": nodes}


def _installed(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


def text(version: str) -> str:
    return json.dumps(derive(version), sort_keys=True, separators=(",", ":")) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for shipped in api_versions.shipped():
        version = api_versions.spell(shipped)
        (OUT / f"{version}.json").write_text(text(version))
        print(f"wrote {OUT / f'{version}.json'}")


if __name__ == "__main__":
    main()
