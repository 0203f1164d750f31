"""Every built-in field checked by what its API type declares, for every kind alike.

kube-apiserver decodes a resource.Quantity wherever the type is one (a PVC's requests, a
LimitRange's limits, an emptyDir's sizeLimit), and refuses what does not parse; its
validation takes an enum field's declared values only. These checks come from the types, not
from field-by-field rules: quantities and list-map keys from the version's OpenAPI schemas
(kubernetes-validate's data), enum values from the API types' `+enum` declarations
(schemas/kubernetes-api/enums.json, derived from k8s.io/api per release). Which fields of
each kind ask anything is derived from both ahead, per version
(schemas/kubernetes-api/field-checks/, by scripts/derive_kubernetes_field_checks.py); only
those are walked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from generator import schemas
from generator.kube import api_versions
from generator.kube.findings import Finding, Path, unsupported
from generator.kube.quantity import parse_quantity
from generator.problems import Severity
from generator.schema_messages import shown

# resource.Quantity's own words when it does not parse (apimachinery/pkg/api/resource)
_BYTES_SUFFIX = re.compile(r"^([+-]?[0-9.]+)\s*([KMGTPE])(i?)B$", re.IGNORECASE)


class _Field:
    """What one field asks: a quantity, one of the declared values, list-map keys; and the
    fields below it that ask anything (`walked`, `walked_extra`: additionalProperties; `items`)."""

    __slots__ = ("enum", "items", "map_keys", "quantity", "walked", "walked_extra")

    def __init__(self, node: dict[str, Any]) -> None:
        self.enum: tuple[str, ...] = tuple(node.get("e", ()))
        self.quantity = "q" in node
        self.map_keys: tuple[str, ...] = tuple(node.get("k", ()))
        self.walked: dict[str, _Field] = {}
        self.items: _Field | None = None
        self.walked_extra: _Field | None = None


@cache
def _checks(version: str) -> dict[str, Any]:
    """The version's derived field checks (scripts/derive_kubernetes_field_checks.py)."""
    shipped = api_versions.folder(version).name[1:].split("-")[0]  # the schemas' own minor version
    return schemas.read(f"kubernetes-api/field-checks/{api_versions.spell(api_versions.parse_version(shipped))}.json")


@cache
def plan(version: str, api: str, kind: str) -> _Field | None:
    """The fields of one built-in kind in version that ask anything; None when none does, or
    version does not serve the kind."""
    data = _checks(version)
    root = data["kinds"].get(f"{api}/{kind}")
    if root is None:
        return None
    nodes: list[dict[str, Any]] = data["nodes"]
    made: dict[int, _Field] = {}

    def field(at: int) -> _Field:
        if at in made:
            return made[at]
        node = nodes[at]
        out = made[at] = _Field(node)  # before its children: definitions recur
        out.walked = {key: field(child) for key, child in node.get("p", {}).items()}
        out.items = field(node["i"]) if "i" in node else None
        out.walked_extra = field(node["x"]) if "x" in node else None
        return out

    return field(root)


def check(obj: dict[str, Any], version: str, api: str, kind: str) -> list[Finding]:
    """Findings for every quantity that does not parse, every value outside its field's
    declared ones, every repeated list-map key."""
    root = plan(version, api, kind)
    found: list[Finding] = []
    if root is not None:
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
                if isinstance(sub, _SCALARS) and parse_quantity(sub) is None:
                    found.append(_bad_quantity(sub, _spelt((trail, key))))
            elif isinstance(sub, str):
                if child.enum and sub and sub not in child.enum:
                    found.append(unsupported(_spelt((trail, key)), "k8s-enum", sub, child.enum))
            elif isinstance(sub, list) or (
                isinstance(sub, dict) and (child.walked_extra is not None or not child.walked.keys().isdisjoint(sub))
            ):
                _walk(child, sub, (trail, key), found)
    elif isinstance(value, list):
        if field.map_keys and len(value) > 1 and _may_repeat(field.map_keys, value):
            found.extend(_repeated_keys(field.map_keys, value, trail))
        enum, item = field.enum, field.items
        if not enum and item is None:
            return
        for i, sub in enumerate(value):
            if enum and isinstance(sub, str):
                if sub and sub not in enum:
                    found.append(unsupported(_spelt((trail, i)), "k8s-enum", sub, enum))
            elif item is not None:
                if item.quantity:
                    if isinstance(sub, _SCALARS) and parse_quantity(sub) is None:
                        found.append(_bad_quantity(sub, _spelt((trail, i))))
                elif isinstance(sub, list) or (
                    isinstance(sub, dict) and (item.walked_extra is not None or not item.walked.keys().isdisjoint(sub))
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
