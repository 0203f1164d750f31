"""Every built-in field checked by what its API type declares, for every kind alike.

kube-apiserver decodes a resource.Quantity wherever the type is one (a PVC's requests, a
LimitRange's limits, an emptyDir's sizeLimit), and refuses what does not parse; its
validation takes an enum field's declared values only. These checks come from the types, not
from field-by-field rules: quantities and list-map keys from the version's OpenAPI schemas
(kubernetes-validate's data), enum values from the API types' `+enum` declarations
(schemas/kubernetes-api/enums.json, derived from k8s.io/api per release). One plan per
version says which fields have anything to check; only those are walked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

from generator import schemas
from generator.kube import api_versions
from generator.kube.findings import Finding, Path, unsupported
from generator.kube.quantity import parse_quantity
from generator.problems import Severity
from generator.schema_messages import shown

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_REF = "#/$defs/"
# resource.Quantity's own words when it does not parse (apimachinery/pkg/api/resource)
_BYTES_SUFFIX = re.compile(r"^([+-]?[0-9.]+)\s*([KMGTPE])(i?)B$", re.IGNORECASE)


class _Field:
    """What one schema node asks: a quantity, one of the declared values, list-map keys; its
    children; walk: whether anything below it asks anything."""

    __slots__ = ("enum", "extra", "items", "map_keys", "props", "quantity", "walk", "walked", "walked_extra")

    def __init__(self) -> None:
        self.enum: tuple[str, ...] = ()
        self.quantity = False
        self.map_keys: tuple[str, ...] = ()
        self.props: dict[str, _Field] = {}
        self.items: _Field | None = None
        self.extra: _Field | None = None
        self.walk = False
        self.walked: dict[str, _Field] = {}  # the props with anything to check, once marked
        self.walked_extra: _Field | None = None  # extra, once marked, if it has anything to check


@cache
def _enum_values(version: str) -> dict[str, tuple[str, ...]]:
    """`<definition>.<property>` -> the values it takes in version, for the fields that declare
    any: read once per version, as a plan looks up every property of its kind (500 for a Deployment)."""
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


class _Planner:
    """Builds the fields of one Kubernetes version's definitions, each definition once."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.enums = _enum_values(version)
        self.defs: dict[str, Any] = api_versions.definitions(version).get("$defs", {})
        self.built: dict[str, _Field] = {}

    def definition(self, name: str) -> _Field:
        if name in self.built:
            return self.built[name]
        field = self.built[name] = _Field()  # before its properties: definitions may recur
        self._fill(field, self.defs.get(name) or {}, name)
        return field

    def node(self, schema: Any, owner: str = "") -> _Field:
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if isinstance(ref, str) and _REF in ref:
            name = ref.split(_REF, 1)[1]
            if name == QUANTITY:
                leaf = _Field()
                leaf.quantity = True
                return leaf
            return self.definition(name)
        field = _Field()
        if isinstance(schema, dict):
            self._fill(field, schema, owner)
        return field

    def _fill(self, field: _Field, schema: dict[str, Any], name: str) -> None:
        props = schema.get("properties")
        for key, sub in props.items() if isinstance(props, dict) else ():
            if key in ("status", "apiVersion", "kind", "metadata"):
                continue  # status is the cluster's to write; the rest are checked elsewhere
            child = self.node(sub)
            if name and (values := self.enums.get(f"{name}.{key}")):
                child = _with_enum(child, values)
            keys = sub.get("x-kubernetes-list-map-keys") if isinstance(sub, dict) else None
            if isinstance(keys, list) and sub.get("x-kubernetes-list-type") == "map":
                child = _with_map_keys(child, tuple(str(k) for k in keys))
            field.props[key] = child
        if isinstance(schema.get("items"), dict):
            field.items = self.node(schema["items"])
        if isinstance(schema.get("additionalProperties"), dict):
            field.extra = self.node(schema["additionalProperties"])


def _copy(field: _Field) -> _Field:
    out = _Field()
    out.enum, out.quantity, out.map_keys = field.enum, field.quantity, field.map_keys
    out.props, out.items, out.extra = field.props, field.items, field.extra
    return out


def _with_enum(field: _Field, values: tuple[str, ...]) -> _Field:
    out = _copy(field)
    out.enum = values
    return out


def _with_map_keys(field: _Field, keys: tuple[str, ...]) -> _Field:
    out = _copy(field)
    out.map_keys = keys
    return out


def _mark(field: _Field, seen: set[int]) -> bool:
    """Set walk on field and below; a definition met again on its own path counts as nothing."""
    if id(field) in seen:
        return field.walk
    seen.add(id(field))
    children = [*field.props.values(), *(c for c in (field.items, field.extra) if c is not None)]
    below = [_mark(child, seen) for child in children]
    field.walk = bool(field.enum or field.quantity or field.map_keys or any(below))
    return field.walk


def _prune(field: _Field, seen: set[int]) -> None:
    """Keep, on field and below, the props that have anything to check (after _mark)."""
    if id(field) in seen:
        return
    seen.add(id(field))
    field.walked = {key: child for key, child in field.props.items() if child.walk}
    field.walked_extra = field.extra if field.extra is not None and field.extra.walk else None
    for child in (*field.props.values(), field.items, field.extra):
        if child is not None:
            _prune(child, seen)


@cache
def _kinds(version: str) -> dict[tuple[str, str, str], str]:
    """(group, version, kind) -> the name of the definition that is the kind, in version."""
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in api_versions.definitions(version).get("$defs", {}).items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or () if isinstance(schema, dict) else ():
            if isinstance(gvk, dict):
                out.setdefault((str(gvk.get("group")), str(gvk.get("version")), str(gvk.get("kind"))), name)
    return out


@cache
def plan(version: str, api: str, kind: str) -> _Field | None:
    """The fields of one built-in kind in version; None for a kind it does not serve."""
    schema = api_versions.kind_schema(api_versions.folder(version), api, kind)
    if schema is None:
        return None
    planner = _Planner(version)
    name = _kinds(version).get((*api_versions.split_api(api), kind))
    root = planner.definition(name) if name is not None else planner.node(schema)
    _mark(root, set())
    _prune(root, set())
    return root


def check(obj: dict[str, Any], version: str, api: str, kind: str) -> list[Finding]:
    """Findings for every quantity that does not parse, every value outside its field's
    declared ones, every repeated list-map key."""
    root = plan(version, api, kind)
    found: list[Finding] = []
    if root is not None and root.walk:
        _walk(root, obj, None, found)
    return found


_SCALARS = (str, int, float)

# A path as the walk builds it: (parent, key), spelt out only for a finding.
_Trail = tuple[Any, str | int] | None


def _spelt(trail: _Trail) -> Path:
    steps: list[str | int] = []
    while trail is not None:
        trail, step = trail
        steps.append(step)
    return tuple(reversed(steps))


@lru_cache(maxsize=4096)
def _is_quantity(value: str | int | float) -> bool:
    """Whether resource.Quantity decodes value; the same few quantities recur on every object."""
    return parse_quantity(value) is not None


def _walk(field: _Field, value: Any, trail: _Trail, found: list[Finding]) -> None:
    """Appends to found what value (at trail) breaks of field. It runs over every built-in
    object: a plain recursion, with scalar fields judged in their parent's loop, a mapping
    entered only if it holds a key with something to check (a C-level test that spares a call
    for the many that do not: an env var's fieldRef, an empty emptyDir), and paths spelt out
    only for a finding."""
    if isinstance(value, dict):
        walked, extra = field.walked, field.walked_extra
        for key, sub in value.items():
            child = walked.get(key, extra)
            if child is None:
                continue
            if child.quantity:
                if isinstance(sub, _SCALARS) and not _is_quantity(sub):
                    found.append(_bad_quantity(sub, _spelt((trail, key))))
            elif isinstance(sub, str):
                if child.enum and sub and sub not in child.enum:
                    found.append(unsupported(_spelt((trail, key)), "k8s-enum", sub, child.enum))
            elif isinstance(sub, list) or (
                isinstance(sub, dict) and (child.extra is not None or not child.walked.keys().isdisjoint(sub))
            ):
                _walk(child, sub, (trail, key), found)
    elif isinstance(value, list):
        if field.map_keys and len(value) > 1 and _may_repeat(field.map_keys, value):
            found.extend(_repeated_keys(field.map_keys, value, trail))
        enum, item = field.enum, field.items if field.items is not None and field.items.walk else None
        if not enum and item is None:
            return
        for i, sub in enumerate(value):
            if enum and isinstance(sub, str):
                if sub and sub not in enum:
                    found.append(unsupported(_spelt((trail, i)), "k8s-enum", sub, enum))
            elif item is not None:
                if item.quantity:
                    if isinstance(sub, _SCALARS) and not _is_quantity(sub):
                        found.append(_bad_quantity(sub, _spelt((trail, i))))
                elif isinstance(sub, list) or (
                    isinstance(sub, dict) and (item.extra is not None or not item.walked.keys().isdisjoint(sub))
                ):
                    _walk(item, sub, (trail, i), found)


def _bad_quantity(value: Any, path: Path) -> Finding:
    meant = _BYTES_SUFFIX.match(str(value))
    hint = (
        f"Kubernetes spells bytes without B: {meant[1]}{meant[2].upper()} (10^n) or {meant[1]}{meant[2].upper()}i (2^n)"
        if meant
        else "a number with an optional suffix: m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei"
    )
    return Finding(path, "k8s-quantity", Severity.ERROR, f"{shown(value)} is not a valid quantity", hint)


def _may_repeat(keys: tuple[str, ...], items: list[Any]) -> bool:
    """Whether two entries of a list-map may share their keys: a set of the keys' values, built
    in C, settles it for nearly every list (its entries differ) without locating anything."""
    try:
        if len(keys) == 1:
            values: list[Any] = [item.get(keys[0]) for item in items if isinstance(item, dict)]
        else:
            values = [tuple([item.get(k) for k in keys]) for item in items if isinstance(item, dict)]
        return len(set(values)) != len(values)
    except TypeError:  # a key field holding a mapping or a list: _repeated_keys compares spellings
        return True


def _repeated_keys(keys: tuple[str, ...], items: list[Any], trail: _Trail) -> Iterator[Finding]:
    seen: dict[Any, int] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        key: Any = tuple(item.get(k) for k in keys)
        try:
            hash(key)
        except TypeError:  # a key field holding a mapping or a list: compared by its spelling
            key = repr(key)
        if key in seen:
            named = ", ".join(f"{k}={shown(item.get(k))}" for k in keys)
            yield Finding(
                _spelt((trail, i)),
                "k8s-list-map",
                Severity.WARNING,
                f"Duplicate value: an entry with {named} is already at index {seen[key]}",
                "server-side apply (Flux, Argo CD with ServerSideApply=true, kubectl apply --server-side) refuses "
                "a list keyed by " + ", ".join(keys) + " that repeats a key; client-side apply keeps one of them",
            )
        seen.setdefault(key, i)
