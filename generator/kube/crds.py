"""Custom resources judged by their CustomResourceDefinitions, as apiextensions-apiserver and
kubectl's default strict field validation judge them.

A CRD version's structural schema becomes a strict JSON Schema (unknown fields refused where
the schema does not preserve them), compiled once per run; what JSON Schema cannot say
(defaults applied first, formats, list-map keys, `x-kubernetes-validations` CEL rules) is one
walk over the object, planned once per version. The CRD itself is checked for what
kube-apiserver refuses to store (apiextensions/validation/validation.go).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path as FsPath
from typing import Any, NamedTuple

from generator import schemas
from generator.kube import api_versions, apiextensions, names
from generator.kube.admission import cel_error
from generator.kube.findings import Finding, Path
from generator.kube.scope import CRD_GROUP, is_definition
from generator.problems import Problem, Severity
from generator.schema_messages import in_words, shown

# JSON Schema keywords a structural schema's value validations share with draft 2020-12.
_KEPT = (
    "type",
    "enum",
    "required",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "pattern",
    "multipleOf",
)
# CEL's reserved words: a property of one of these names is read as __name__ in a rule
_CEL_RESERVED = frozenset(
    {"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if"}
    | {"import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}
)


def _metadata_schema() -> Any:
    """ObjectMeta's field names, as the bundled CRD schemas spell them (metadata.lables fails)."""
    return schemas.read("crds/servicemonitor-monitoring-v1-strict.json")["properties"]["metadata"]


# Go's RE2 takes `^(?i)...`; Python's re only takes global flags first, so they move ahead of ^.
_LEADING_FLAGS = re.compile(r"^\^\(\?([ims]+)\)")


def json_schema(node: Any, structural: bool = True) -> Any:
    """A structural schema node as draft 2020-12 with kubectl's strict field validation: an
    object refuses fields it does not list unless it preserves unknown fields; inside allOf,
    anyOf, oneOf and not (value validations only) nothing is made strict."""
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {k: node[k] for k in _KEPT if node.get(k) is not None}  # null is Go's unset
    if isinstance(out.get("pattern"), str):
        out["pattern"] = _LEADING_FLAGS.sub(r"(?\1)^", out["pattern"])
    if "properties" in node and isinstance(node["properties"], dict):
        out["properties"] = {k: json_schema(v, structural) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["items"] = json_schema(node["items"], structural)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = json_schema(extra, structural)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            out[key] = [json_schema(part, False) for part in node[key]]
    if isinstance(node.get("not"), dict):
        out["not"] = json_schema(node["not"], False)
    if node.get("exclusiveMinimum") is True and "minimum" in node:  # OpenAPI 3.0's boolean form
        out["exclusiveMinimum"] = out.pop("minimum")
    if node.get("exclusiveMaximum") is True and "maximum" in node:
        out["exclusiveMaximum"] = out.pop("maximum")
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
        out.pop("anyOf", None)  # the canonical anyOf [integer, string] says the same
    if node.get("nullable") and "type" in out:
        out["type"] = [*([out["type"]] if isinstance(out["type"], str) else out["type"]), "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    if node.get("x-kubernetes-embedded-resource") and "properties" in out:
        out["properties"] = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, **out["properties"]}
        out["properties"]["metadata"] = _metadata_schema()
    if (
        structural
        and node.get("type") == "object"
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def _root_schema(schema: dict[str, Any], api: str, kind: str) -> dict[str, Any]:
    root = json_schema(schema)
    props = root.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "const": api}
    props["kind"] = {"type": "string", "const": kind}
    own = _mapping(schema.get("properties")).get("metadata")
    restricted = isinstance(own, dict) and own.get("properties")
    # ObjectMeta's fields, and the name and generateName constraints a CRD may add
    props["metadata"] = {"allOf": [_metadata_schema(), json_schema(own, False)]} if restricted else _metadata_schema()
    return root


# ---- formats ------------------------------------------------------------------------------

_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")
# kube-openapi's strfmt: UUIDs with or without hyphens, any case; versions 3, 4 and 5 by their digit.
_UUID = {
    name: re.compile(
        r"^[0-9a-f]{8}-?[0-9a-f]{4}-?" + version + r"[0-9a-f]{3}-?" + variant + r"[0-9a-f]{3}-?[0-9a-f]{12}\Z", re.I
    )
    for name, version, variant in (
        ("uuid", "[0-9a-f]", "[0-9a-f]"),
        ("uuid3", "3", "[0-9a-f]"),
        ("uuid4", "4", "[89ab]"),
        ("uuid5", "5", "[89ab]"),
    )
}


def _valid_mac(s: str) -> bool:
    """Go's net.ParseMAC: 6, 8 or 20 bytes, as pairs split by `:` or `-`, or quads split by `.`."""
    for sep, width, counts in ((":", 2, (6, 8, 20)), ("-", 2, (6, 8, 20)), (".", 4, (3, 4, 10))):
        parts = s.split(sep)
        if len(parts) in counts and all(
            len(p) == width and all(c in "0123456789abcdefABCDEF" for c in p) for p in parts
        ):
            return True
    return False


def _valid_date_time(s: str) -> bool:
    if not _DATE_TIME.match(s):
        return False
    try:
        datetime.fromisoformat(s.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def _parses(parse: Any, s: str) -> bool:
    try:
        parse(s)
    except (ValueError, binascii.Error):
        return False
    return True


def _ip_address(version: int) -> Any:
    import ipaddress  # formats are rare: only a schema that uses one pays for the import

    return ipaddress.IPv4Address if version == 4 else ipaddress.IPv6Address


def _network(text: str) -> Any:
    import ipaddress

    return ipaddress.ip_network(text, strict=False)


# The formats kube-openapi's registry validates for CRDs (others are accepted as plain strings).
_FORMATS: dict[str, Any] = {
    "byte": lambda s: _parses(lambda v: base64.b64decode(v, validate=True), s),
    "date": lambda s: _parses(date.fromisoformat, s) and len(s) == 10,
    "date-time": _valid_date_time,
    "datetime": _valid_date_time,
    "ipv4": lambda s: _parses(_ip_address(4), s),
    "ipv6": lambda s: _parses(_ip_address(6), s),
    "cidr": lambda s: _parses(_network, s) and "/" in s,
    **{name: (lambda s, rx=rx: bool(rx.match(s))) for name, rx in _UUID.items()},
    "mac": _valid_mac,
    "hostname": lambda s: names.dns1123_subdomain(s.lower()) is None,
}


# ---- the walk: defaults, formats, list-map keys, CEL rules ---------------------------------


class _Plan:
    """What one structural schema node asks beyond JSON Schema; built once per CRD version."""

    __slots__ = (
        "default",
        "extra",
        "fmt",
        "format",
        "items",
        "map_keys",
        "nullable",
        "props",
        "rules",
        "type",
        "walk",
    )

    def __init__(self, node: dict[str, Any]) -> None:
        self.type = node.get("type")
        fmt = node.get("format")
        self.format = fmt if isinstance(fmt, str) else None  # how CEL types the value
        self.fmt = self.format if self.format in _FORMATS else None  # checked
        self.default = node.get("default", _ABSENT)
        self.nullable = node.get("nullable") is True
        props = node.get("properties")
        self.props = {k: _Plan(v) for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}
        extra = node.get("additionalProperties")
        self.extra = _Plan(extra) if isinstance(extra, dict) else None
        self.items = _Plan(node["items"]) if isinstance(node.get("items"), dict) else None
        keys = node.get("x-kubernetes-list-map-keys")
        self.map_keys = (
            tuple(keys)
            if node.get("x-kubernetes-list-type") == "map"
            and isinstance(keys, list)
            and all(isinstance(k, str) for k in keys)
            else ()
        )
        rules = node.get("x-kubernetes-validations")
        self.rules = (
            [r for r in rules if isinstance(r, dict) and isinstance(r.get("rule"), str)]
            if isinstance(rules, list)
            else []
        )
        children = [*self.props.values(), *(p for p in (self.extra, self.items) if p is not None)]
        self.walk: bool = bool(self.fmt or self.map_keys or self.rules or any(c.walk for c in children))

    def child(self, key: str) -> _Plan | None:
        return self.props.get(key, self.extra)


_ABSENT = object()


def _defaulted(plan: _Plan, value: Any) -> Any:
    """value as apiextensions-apiserver validates it: a null where the schema is not nullable
    is dropped (PruneNonNullableNullsWithoutDefaults), then the schema's defaults fill what is
    absent (structural/defaulting). value itself when nothing changes, else a copy that shares
    what it does not change."""
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for key, sub in value.items():
            child = plan.child(key)
            if child is None:
                continue
            if sub is None and not child.nullable:
                out = out if out is not None else dict(value)
                del out[key]
                continue
            new = _defaulted(child, sub)
            if new is not sub:
                out = out if out is not None else dict(value)
                out[key] = new
        for key, child in plan.props.items():
            if child.default is not _ABSENT and (key not in value or (value[key] is None and not child.nullable)):
                out = out if out is not None else dict(value)
                out[key] = _defaulted(child, schemas.plain_copy(child.default))
        return out if out is not None else value
    if isinstance(value, list) and plan.items is not None:
        items = [_defaulted(plan.items, v) for v in value]
        return items if any(new is not old for new, old in zip(items, value, strict=True)) else value
    return value


def _cel_name(key: str) -> str:
    """A property name as CEL sees it (apiserver/pkg/cel's escaping of non-identifiers)."""
    if key in _CEL_RESERVED:
        return f"__{key}__"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) and "__" not in key:
        return key
    out = key.replace("__", "__underscores__")
    for char, word in ((".", "dot"), ("-", "dash"), ("/", "slash")):
        out = out.replace(char, f"__{word}__")
    return out


def _cel_value(plan: _Plan | None, data: Any) -> Any:
    from celpy import celtypes

    from generator.kube import cel

    if isinstance(data, dict):
        known = plan.props if plan is not None else {}
        return celtypes.MapType(
            {
                celtypes.StringType(_cel_name(k) if k in known else k): _cel_value(plan.child(k) if plan else None, v)
                for k, v in data.items()
            }
        )
    if isinstance(data, list):
        return celtypes.ListType([_cel_value(plan.items if plan else None, v) for v in data])
    return cel.value(plan.type if plan else None, plan.format if plan else None, data)


_FIELD_PATH = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]")


def _field_path(base: Path, field_path: Any) -> Path:
    """A rule's fieldPath (`.spec.x`, `['a.b']`, `[0]`) below base; base when it does not read."""
    if not isinstance(field_path, str):
        return base
    out: list[str | int] = list(base)
    pos = 0
    while pos < len(field_path):
        match = _FIELD_PATH.match(field_path, pos)
        if match is None:
            return base
        name, quoted, index = match.groups()
        out.append(int(index) if index is not None else name if name is not None else quoted)
        pos = match.end()
    return tuple(out)


class _Self:
    """A node's value as its rules see it: converted to CEL on the first rule that needs it,
    and spelt canonically, so identical values share their verdicts."""

    __slots__ = ("_converted", "key", "plan", "value")

    def __init__(self, plan: _Plan, value: Any) -> None:
        self.plan, self.value, self._converted = plan, value, None
        try:
            self.key: str | None = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
        except (TypeError, ValueError):  # keys of mixed types: not shared
            self.key = None

    def cel(self) -> Any:
        if self._converted is None:
            self._converted = _cel_value(self.plan, self.value)
        return self._converted


# A rule's verdict depends on self alone, so identical values (the same tolerations on many
# flavors, the same ports on many services) are evaluated once per process.
_VERDICTS: dict[tuple[int, str, str], Any] = {}
_MAX_VERDICTS = 4096


def _verdict(text: str, node: _Self) -> Any:
    from generator.kube import cel  # only CRDs with rules pay for the CEL runtime

    if node.key is None:
        return cel.evaluate(text, {"self": node.cel()})
    key = (id(node.plan), text, node.key)
    outcome = _VERDICTS.get(key)
    if outcome is None:
        outcome = cel.evaluate(text, {"self": node.cel()})
        if len(_VERDICTS) >= _MAX_VERDICTS:
            _VERDICTS.clear()
        _VERDICTS[key] = outcome
    return outcome


def _rule_findings(rule: dict[str, Any], node: _Self, path: Path) -> Iterator[Finding]:
    from generator.kube import cel

    text = rule["rule"]
    if re.search(r"\boldSelf\b", text):
        if rule.get("optionalOldSelf"):
            yield Finding(
                path,
                "crd-unevaluated",
                Severity.INFO,
                f"rule {text!r} is evaluated on create with oldSelf unset, which needs CEL optionals gen lacks",
            )
        return  # a transition rule: kube-apiserver evaluates it only on update
    outcome = _verdict(text, node)
    if outcome.passed is None:
        yield Finding(
            path,
            "crd-unevaluated",
            Severity.INFO,
            f"rule {text!r} not evaluated: {outcome.reason}",
            "kube-apiserver evaluates it when the object is applied",
        )
        return
    if outcome.passed:
        return
    if outcome.reason:  # a runtime error: kube-apiserver refuses the object with it
        yield Finding(path, "crd-rule", Severity.ERROR, f"{outcome.reason} evaluating rule: {text}")
        return
    message = rule.get("message") if isinstance(rule.get("message"), str) and rule.get("message") else None
    expression = rule.get("messageExpression")
    if isinstance(expression, str):
        try:
            result = cel.program(expression).evaluate({"self": node.cel()})
            if isinstance(result, str) and result.strip():
                message = str(result)
        except Exception:  # kube-apiserver falls back to message, then to the rule, just the same
            pass
    yield Finding(
        _field_path(path, rule.get("fieldPath")),
        "crd-rule",
        Severity.ERROR,
        message or f"failed rule: {text}",
        f"x-kubernetes-validations rule: {text}",
    )


def _walk(plan: _Plan, value: Any, path: Path) -> Iterator[Finding]:
    if value is None:
        return
    if plan.fmt is not None and isinstance(value, str) and not _FORMATS[plan.fmt](value):
        yield Finding(path, "crd-schema", Severity.ERROR, f"{shown(value)} is not a valid {plan.fmt}")
    if isinstance(value, dict):
        for key, sub in value.items():
            child = plan.child(key)
            if child is not None and child.walk:
                yield from _walk(child, sub, (*path, key))
    elif isinstance(value, list):
        if plan.map_keys:
            seen: dict[tuple[Any, ...], int] = {}
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    key = tuple(repr(item.get(k)) for k in plan.map_keys)
                    if key in seen:
                        shown_keys = ", ".join(f"{k}={shown(item.get(k))}" for k in plan.map_keys)
                        yield Finding(
                            (*path, i),
                            "crd-schema",
                            Severity.ERROR,
                            f"Duplicate value: an entry with {shown_keys} is already at index {seen[key]}",
                            "a list of type map takes each key once",
                        )
                    seen.setdefault(key, i)
        if plan.items is not None and plan.items.walk:
            for i, item in enumerate(value):
                yield from _walk(plan.items, item, (*path, i))
    if plan.rules:
        node = _Self(plan, value)
        for rule in plan.rules:
            yield from _rule_findings(rule, node, path)


def _refused_by_own_schema(default: Any, node: dict[str, Any]) -> str:
    """Why the node's own schema (its types, enums, bounds, patterns) refuses its default, or ""."""
    import jsonschema  # only CRDs with defaults pay for it

    schema = json_schema(node, structural=False)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError:
        return ""  # a node that is no schema (an enum that is no list) is refused for that, not its default
    found = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(default))
    return in_words(found) if found is not None else ""


def _judged_default(node: dict[str, Any], default: Any, path: Path) -> Iterator[Finding]:
    """What a CRD node refuses in its own default, as ValidateDefaults runs it when the CRD is
    stored: its types, enums, bounds and patterns, then its formats and x-kubernetes-validations
    rules. Errors of the CRD."""
    if why := _refused_by_own_schema(default, node):
        yield apiextensions.error(path, f"Invalid value: {why}", "the default must be a value the field accepts")
        return
    for finding in _walk(_Plan(node), default, path):
        if finding.severity is Severity.ERROR:
            yield replace(finding, rule="crd-invalid", message=f"Invalid value: the default: {finding.message}")


# ---- a CRD and the custom resources it defines ---------------------------------------------


class Version:
    """One version of a CRD: its strict schema, compiled once, and its walk plan."""

    def __init__(self, api: str, kind: str, schema: dict[str, Any]) -> None:
        self.schema = schema
        root = _root_schema(schema, api, kind)
        self.unreadable = ""
        import jsonschema_rs  # here: a run with no custom resource to judge never needs it

        try:
            fast = jsonschema_rs.Draft202012Validator(root)
        except Exception as err:  # a pattern no regex engine here takes, a keyword of the wrong type
            self.unreadable = str(err).splitlines()[0] if str(err) else type(err).__name__
        else:
            self._validator = schemas.TwoTierValidator(fast, lambda: _reference_validator(root))
        self.plan = _Plan(schema)

    def judge(self, obj: dict[str, Any]) -> Iterator[Finding]:
        if self.unreadable:
            yield _unreadable(self.unreadable)
            return
        obj = _defaulted(self.plan, obj)
        try:
            found = list(schema_findings(self._validator, obj, "crd-schema"))
        except Exception as err:  # the reference validator refuses what jsonschema-rs compiled
            yield _unreadable(str(err))
            return
        yield from found
        if not found and self.plan.walk:
            yield from _walk(self.plan, obj, ())


def _unreadable(reason: str) -> Finding:
    return Finding(
        ("apiVersion",),
        "crd-unevaluated",
        Severity.INFO,
        "not validated: gen cannot compile the schema of its CRD",
        f"kube-apiserver validates it when the object is applied (the compiler said: {reason})",
    )


def _reference_validator(schema: Any) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(schema)


def schema_findings(validator: schemas.TwoTierValidator, obj: Any, rule: str) -> Iterator[Finding]:
    """An object's schema errors as findings: each unknown field at its own key, with what was
    probably meant (kubectl's strict field validation refuses it), the rest in words."""
    for err in validator.iter_errors(obj):
        if err.context:
            from jsonschema.exceptions import best_match  # only reached for invalid objects

            err = best_match(err.context) or err
        path = tuple(err.absolute_path)
        if err.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(err.instance, dict):
            import difflib  # only reached for invalid objects

            allowed = set(err.schema.get("properties", {})) if isinstance(err.schema, dict) else set()
            for key in sorted(str(k) for k in err.instance if k not in allowed):
                close = difflib.get_close_matches(key, sorted(allowed), n=1)
                yield Finding(
                    (*path, key),
                    rule,
                    Severity.ERROR,
                    f"unknown field {shown(key)}",
                    f"did you mean {close[0]!r}?" if close else "kubectl's strict field validation refuses it",
                    at_key=True,
                )
            continue
        if err.validator == "required" and isinstance(err.instance, dict):
            missing = next((key for key in err.validator_value if key not in err.instance), None)
            path = path if missing is None else (*path, missing)  # kube-apiserver's field.Required path
        yield Finding(path, rule, Severity.ERROR, in_words(err))


class Definition:
    """A CRD as the API server serves it: its group, kind, scope and versions."""

    def __init__(self, crd: dict[str, Any], origin: str) -> None:
        spec = _mapping(crd.get("spec"))
        self.name = str(_mapping(crd.get("metadata")).get("name"))
        self.group = str(spec.get("group"))
        self.kind = str(_mapping(spec.get("names")).get("kind"))
        self.origin = origin
        self.versions: dict[str, dict[str, Any]] = {
            str(v.get("name")): v for v in _listed(spec.get("versions")) if isinstance(v, dict)
        }
        self._compiled: dict[str, Version | None] = {}

    def version(self, name: str) -> Version | None:
        if name not in self._compiled:
            schema = _mapping(self.versions[name].get("schema")).get("openAPIV3Schema")
            self._compiled[name] = (
                Version(f"{self.group}/{name}", self.kind, schema) if isinstance(schema, dict) else None
            )
        return self._compiled[name]

    def judge(self, obj: dict[str, Any], api: str) -> Iterator[Finding]:
        name = api.partition("/")[2]
        version = self.versions.get(name)
        served = [v for v, spec in self.versions.items() if spec.get("served")]
        if version is None or not version.get("served"):
            state = "does not serve" if version is not None else "does not define"
            yield Finding(
                ("apiVersion",),
                "crd-version",
                Severity.ERROR,
                f"CRD {self.name} ({self.origin}) {state} version {name}: kube-apiserver has no such resource",
                f"served: {', '.join(f'{self.group}/{v}' for v in served)}" if served else "the CRD serves no version",
            )
            return
        if version.get("deprecated"):
            warning = version.get("deprecationWarning")
            yield Finding(
                ("apiVersion",),
                "crd-deprecated",
                Severity.WARNING,
                warning if isinstance(warning, str) and warning else f"{self.group}/{name} {self.kind} is deprecated",
                f"kube-apiserver answers every request for it with this warning; served: "
                f"{', '.join(f'{self.group}/{v}' for v in served if not self.versions[v].get('deprecated'))}",
            )
        compiled = self.version(name)
        if compiled is not None:
            yield from compiled.judge(obj)


# kubeconform's and datreeio's catalog file names: `{kind}_{version}.json`, both in lower case
_CATALOG_NAME = re.compile(r"^([a-z0-9]+)_(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)\.json$")


class CatalogSchema:
    """A kind's JSON Schema from a kubeconform-style catalog: its objects judged by it as
    written (strict where it says additionalProperties: false), as kubeconform judges them.
    The file is read and compiled when an object first uses it."""

    def __init__(self, path: str, name: str) -> None:
        self.path, self.name = path, name
        self._validator: schemas.TwoTierValidator | str | None = None

    def _compiled(self) -> schemas.TwoTierValidator | str:
        if self._validator is None:
            import jsonschema_rs

            try:
                with open(self.path, encoding="utf-8") as handle:
                    schema = json.load(handle)
                if not isinstance(schema, dict):
                    raise ValueError("it is not a JSON object")
                try:
                    fast = jsonschema_rs.validator_for(schema)
                except ValueError:  # a $schema jsonschema-rs does not know (openapi2jsonschema's schema#)
                    fast = jsonschema_rs.Draft7Validator(schema)
            except (OSError, ValueError) as err:
                self._validator = str(err).splitlines()[0] if str(err) else type(err).__name__
            else:
                self._validator = schemas.TwoTierValidator(fast, lambda: _catalog_reference(schema))
        return self._validator

    def judge(self, obj: dict[str, Any], api: str) -> Iterator[Finding]:
        validator = self._compiled()
        if isinstance(validator, str):
            yield Finding(
                ("apiVersion",),
                "crd-source",
                Severity.ERROR,
                f"the catalog schema {self.name} for it is not a usable JSON Schema: {validator}",
                "fix or replace the file in the catalog given to --crds (or .gen.yaml's crds)",
            )
            return
        yield from schema_findings(validator, obj, "crd-schema")


def _catalog_reference(schema: dict[str, Any]) -> Any:
    import jsonschema

    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)(schema)


class Catalog:
    """The CRDs known to one run: among the inputs, from --crds, each once by group and kind."""

    def __init__(self) -> None:
        self._by_kind: dict[tuple[str, str], Definition] = {}
        # (group, lower-case kind, version) -> a catalog's JSON Schema; group None: a flat catalog
        self._schemas: dict[tuple[str | None, str, str], CatalogSchema] = {}

    def __bool__(self) -> bool:
        return bool(self._by_kind or self._schemas)

    def add(self, crd: Any, origin: str, stored: bool = False) -> None:
        """Learn a CRD if kube-apiserver would store it (stored: known to be, by stored())."""
        if not stored and not would_store(crd):
            return  # its resources stay unknown
        definition = Definition(crd, origin)
        self._by_kind.setdefault((definition.group, definition.kind), definition)

    def add_all(self, crds: Iterable[tuple[Any, str]], stored: bool = False) -> None:
        for crd, origin in crds:
            self.add(crd, origin, stored)

    def add_schemas(self, entries: Iterable[tuple[str, str]]) -> None:
        """Learn a catalog's schemas by their paths: `<group>/<kind>_<version>.json`, or a flat
        `<kind>_<version>.json` that serves any group but a built-in one."""
        for path, name in entries:
            match = _CATALOG_NAME.match(os.path.basename(path))
            if match is None:
                continue
            folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
            group = folder if "." in folder else None
            self._schemas.setdefault((group, match[1], match[2]), CatalogSchema(path, name))

    def find(self, api: str, kind: str) -> Definition | CatalogSchema | None:
        group = api.rpartition("/")[0] if "/" in api else ""
        found = self._by_kind.get((group, kind))
        if found is not None or not self._schemas or api_versions.is_builtin_group(api_versions.DEFAULT_VERSION, group):
            return found
        version = api.rpartition("/")[2]
        return self._schemas.get((group, kind.lower(), version)) or self._schemas.get((None, kind.lower(), version))

    def compile(self) -> None:
        """Compile every served version now, so processes forked later share the work."""
        for definition in self._by_kind.values():
            for name, spec in definition.versions.items():
                if spec.get("served"):
                    definition.version(name)


def would_store(crd: Any) -> bool:
    """A CRD kube-apiserver would store: anything else defines no resource."""
    return (
        is_definition(crd)
        and crd["apiVersion"] == f"{CRD_GROUP}/v1"  # v1beta1 was removed in 1.22
        and not any(f.severity is Severity.ERROR for f in check_definition(crd))
    )


class Sources(NamedTuple):
    """What the CRD sources of --crds and .gen.yaml give: the CRDs kube-apiserver would store,
    each with its file's name; the JSON Schemas of a kubeconform-style catalog, as (path, name);
    and what is wrong with the sources (a path that does not exist, a file gen cannot use)."""

    crds: list[tuple[Any, str]]
    schemas: list[tuple[str, str]]
    problems: list[Problem]


def sources(paths: Iterable[FsPath]) -> Sources:
    """The CRD sources below paths. A JSON file named `{kind}_{version}.json` (kubeconform's
    and datreeio's CRDs-catalog layout, a folder per group) is a catalog schema, read when a
    kind uses it. A file named as a source that defines no resource and is no such schema is
    an error, and so is a directory with neither: never silently ignored. Inside a directory
    that has some, other files (examples beside the CRDs) are passed over, as are files no
    Kubernetes tool applies (kustomizations, their patches, tool settings).
    """
    found = Sources([], [], [])
    for root in paths:
        crds, catalog, problems = _source(root)
        found.crds.extend(crds)
        found.schemas.extend(catalog)
        found.problems.extend(problems)
        if not crds and not catalog and not problems:
            at = 1 if root.is_file() else 0  # a file's first line; a directory has none
            found.problems.append(
                Problem(
                    str(root),
                    at,
                    at,
                    "crd-source",
                    Severity.ERROR,
                    "a CRD source that holds no CustomResourceDefinition and no JSON Schema named "
                    "{kind}_{version}.json",
                    _SOURCE_HINT,
                )
            )
    return found


_SOURCE_HINT = "give --crds (or .gen.yaml's crds) CRD files, or a kubeconform-style catalog of JSON Schemas"


def _source(root: FsPath) -> tuple[list[tuple[Any, str]], list[tuple[str, str]], list[Problem]]:
    """One CRD source's CRDs and catalog schemas; and what is wrong with it: a path that does
    not exist, or why a file named as a source defines nothing.

    Which CRDs a file holds is cached by the file's content: reading and checking Kueue's and
    Argo CD's CRDs (3 MB of YAML) was most of a `gen validate` of one file.
    """
    from generator import cache, files
    from generator.yamlio.load import load_file

    selected, missing = files.manifest_files([root])
    found: list[tuple[Any, str]] = []
    catalog: list[tuple[str, str]] = []
    problems = list(missing)
    for path, name in selected.files:
        if _CATALOG_NAME.match(os.path.basename(path)):
            catalog.append((path, name))
            continue
        entry = cache.file_key(path, "")  # by content alone: which CRDs a file holds is not its name's
        crds = cache.read("crds", entry) if entry else None
        if not isinstance(crds, list) or not all(isinstance(crd, dict) for crd in crds):
            crds = [doc.data for doc in load_file(path, name, kube=True)[0] if would_store(doc.data)]
            if entry:
                cache.write("crds", entry, crds)
        found += [(crd, name) for crd in crds]
        if not crds and root.is_file() and (unusable := _unusable(path, name)) is not None:
            problems.append(unusable)
    return found, catalog, problems


def stored(paths: Iterable[FsPath]) -> tuple[list[tuple[Any, str]], list[Problem]]:
    """The CRDs kube-apiserver would store from the files below paths, each with its file's
    name; and what is wrong with the sources."""
    found = sources(paths)
    return found.crds, found.problems


def _unusable(path: str, name: str) -> Problem | None:
    """Why a CRD source file defines no resource, where the file says: it does not read, or
    kube-apiserver would refuse its CRD."""
    from generator.yamlio.load import load_file

    docs, problems = load_file(path, name, kube=True)
    errors = [p for p in problems if p.severity is Severity.ERROR]
    if errors:
        first = errors[0]
        return replace(first, rule="crd-source", message=f"a CRD source that does not read: {first.message}")
    refused = [doc for doc in docs if is_definition(doc.data)]
    if refused:
        crd_name = _mapping(refused[0].data.get("metadata")).get("name")
        return refused[0].problem(
            (),
            "crd-source",
            f"CRD {shown(crd_name)} would be refused by kube-apiserver, so it defines no resource",
            hint="validate the file itself (gen validate FILE) to see why",
        )
    return None


# ---- the CRD itself ------------------------------------------------------------------------


def check_definition(crd: dict[str, Any]) -> Iterator[Finding]:
    """What kube-apiserver refuses in a CRD beyond its OpenAPI schema."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    group, names_ = spec.get("group"), _mapping(spec.get("names"))
    plural = names_.get("plural")
    name = _mapping(crd.get("metadata")).get("name")
    if isinstance(group, str) and (err := names.dns1123_subdomain(group) or (None if "." in group else "")) is not None:
        yield _invalid(("spec", "group"), f"group {shown(group)} {err or 'should be a domain with at least one dot'}")
    if isinstance(plural, str) and isinstance(group, str) and name != f"{plural}.{group}":
        yield _invalid(
            ("metadata", "name"),
            f'name {shown(name)} must be spec.names.plural+"."+spec.group: {plural}.{group}',
        )
    yield from apiextensions.check_names(names_)
    yield from _spec_enums(spec)
    yield from apiextensions.check_conversion(spec)
    yield from apiextensions.check_api_approval(crd)
    versions = _listed(spec.get("versions"))
    if not versions:
        yield _invalid(("spec", "versions"), "Required value: must have at least one version")
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if not isinstance(version, dict):
            continue
        vname = version.get("name")
        if str(vname) in seen:
            yield _invalid(("spec", "versions", i, "name"), f"Duplicate value: {shown(vname)}")
        elif isinstance(vname, str) and (err := names.dns1035_label(vname)):
            yield _invalid(("spec", "versions", i, "name"), f"version {shown(vname)} {err}")
        seen.add(str(vname))
        yield from _printer_columns(version.get("additionalPrinterColumns"), ("spec", "versions", i))
        subresources = _mapping(version.get("subresources"))
        yield from _scale(_mapping(subresources.get("scale")), ("spec", "versions", i))
        yield from apiextensions.check_version(version, ("spec", "versions", i))
        schema = _mapping(version.get("schema")).get("openAPIV3Schema")
        at: Path = ("spec", "versions", i, "schema", "openAPIV3Schema")
        if not isinstance(schema, dict):
            yield _invalid(at, "Required value: schemas are required")
            continue
        if schema.get("type") != "object":
            yield _invalid((*at, "type"), "must be object at the root")
        yield from _structural(schema, at, root=True)
        yield from apiextensions.check_schema(schema, at, subresources.get("status") is not None, _judged_default)
    if versions and sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
        yield _invalid(("spec", "versions"), "must have exactly one version marked as storage version")


def _spec_enums(spec: dict[str, Any]) -> Iterator[Finding]:
    """ValidateCustomResourceDefinitionSpec's fixed values: the scope, the conversion strategy
    (a webhook needs its client config), and preserveUnknownFields, which v1 refuses."""
    scope = spec.get("scope")
    if scope not in _SCOPES:
        yield _invalid(
            ("spec", "scope"), f'Unsupported value: {shown(scope)}: supported values: "Cluster", "Namespaced"'
        )
    conversion = _mapping(spec.get("conversion"))
    strategy = conversion.get("strategy")
    if strategy is not None and strategy not in _STRATEGIES:
        yield _invalid(
            ("spec", "conversion", "strategy"),
            f'Unsupported value: {shown(strategy)}: supported values: "None", "Webhook"',
        )
    if strategy == "Webhook" and not isinstance(conversion.get("webhook"), dict):
        yield _invalid(("spec", "conversion", "webhook"), "Required value: required when strategy is set to Webhook")
    if spec.get("preserveUnknownFields") is True:
        yield _invalid(("spec", "preserveUnknownFields"), "must be false", "use x-kubernetes-preserve-unknown-fields")


def _printer_columns(columns: Any, at: Path) -> Iterator[Finding]:
    """ValidateCustomResourceColumnDefinition: a name, a type and a JSONPath each, the type
    and format among those kubectl can print."""
    for i, column in enumerate(columns if isinstance(columns, list) else []):
        if not isinstance(column, dict):
            continue
        where: Path = (*at, "additionalPrinterColumns", i)
        for field in ("name", "type", "jsonPath"):
            if not column.get(field):
                yield _invalid((*where, field), "Required value")
        for field, allowed in (("type", _COLUMN_TYPES), ("format", _COLUMN_FORMATS)):
            value = column.get(field)
            if value and value not in allowed:
                yield _invalid(
                    (*where, field),
                    f"Unsupported value: {shown(value)}: supported values: {', '.join(map(shown, allowed))}",
                )


def _scale(scale: dict[str, Any], at: Path) -> Iterator[Finding]:
    """ValidateCustomResourceDefinitionSubresources: the scale subresource's replica paths lie
    under .spec and .status, its label selector under either."""
    if not scale:
        return
    where: Path = (*at, "subresources", "scale")
    for field, prefixes in (
        ("specReplicasPath", (".spec.",)),
        ("statusReplicasPath", (".status.",)),
        ("labelSelectorPath", (".spec.", ".status.")),
    ):
        value = scale.get(field)
        if not value:
            if field != "labelSelectorPath":
                yield _invalid((*where, field), "Required value")
        elif isinstance(value, str) and not value.startswith(prefixes):
            yield _invalid((*where, field), f"should be a json path under {' or '.join(p[:-1] for p in prefixes)}")


# printerColumnDatatypes and customResourceColumnDefinitionFormats (apiextensions validation.go)
_COLUMN_TYPES = ("integer", "number", "string", "boolean", "date")
_COLUMN_FORMATS = ("int32", "int64", "float", "double", "byte", "date", "date-time", "password")
_SCOPES = ("Cluster", "Namespaced")
_STRATEGIES = ("None", "Webhook")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _invalid(path: Path, message: str, hint: str = "") -> Finding:
    return Finding(path, "crd-invalid", Severity.ERROR, message, hint or "kube-apiserver refuses the CRD")


# What x-kubernetes-int-or-string may spell out in its anyOf or allOf (validation.go's exception).
_INT_OR_STRING = ({"type": "integer"}, {"type": "string"})
_SCHEMA_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def _forbidden_in_value_validation(key: str, value: Any) -> bool:
    """validateNestedValueValidation: what a structural schema keeps out of allOf, anyOf, oneOf
    and not (Go's zero values are no use: an empty title, a false flag)."""
    if key in ("type", "title", "description", "x-kubernetes-list-map-keys", "x-kubernetes-validations"):
        return bool(value)
    if key in ("default", "additionalProperties", "x-kubernetes-list-type", "x-kubernetes-map-type"):
        return value is not None
    return key in _FLAGS and value is True


_FLAGS = (
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
)


def _structural(
    node: dict[str, Any], path: Path, root: bool = False, value_validation: bool = False
) -> Iterator[Finding]:
    """apiextensions' structural schema rules (schema/validation.go), on one node and below."""
    if value_validation:
        for key in node:  # (validateValueValidation: "must be empty to be structural")
            if _forbidden_in_value_validation(str(key), node[key]):
                yield _invalid((*path, key), f"{key} must not be set inside allOf, anyOf, oneOf or not")
    elif (
        "type" not in node
        and not node.get("x-kubernetes-int-or-string")
        and not node.get("x-kubernetes-preserve-unknown-fields")
        and not node.get("x-kubernetes-embedded-resource")  # (must be object: _extensions)
    ):
        where = (
            "at the root"
            if root
            else "for specified array items"
            if path[-1] == "items"
            else "for specified object fields"
        )
        yield _invalid((*path, "type"), f"Required value: must not be empty {where} (the schema is not structural)")
    if "properties" in node and "additionalProperties" in node:
        yield _invalid((*path, "additionalProperties"), "additionalProperties and properties are mutually exclusive")
    if node.get("type") == "array" and "items" not in node and not value_validation:
        yield _invalid((*path, "items"), "Required value: must be specified for an array")
    if node.get("uniqueItems") is True:
        yield _invalid(
            (*path, "uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            "use x-kubernetes-list-type: set",
        )
    kind = node.get("type")
    if isinstance(kind, str) and kind not in _SCHEMA_TYPES:  # validateCustomResourceDefinitionOpenAPISchema
        yield _invalid(
            (*path, "type"),
            f"Unsupported value: {shown(kind)}: supported values: {', '.join(map(shown, _SCHEMA_TYPES))}",
        )
    if not value_validation:
        yield from _extensions(node, path)
        yield from _rules_compile(node, path)
    yield from _list_type(node, path)
    props = node.get("properties")
    if isinstance(props, dict):
        if root and isinstance(props.get("metadata"), dict):
            extra = set(_mapping(props["metadata"].get("properties"))) - {"name", "generateName"}
            if extra:
                yield _invalid(
                    (*path, "properties", "metadata"),
                    f"metadata may restrict only name and generateName, not {', '.join(sorted(extra))}",
                )
        for key, sub in props.items():
            if isinstance(sub, dict):
                yield from _structural(sub, (*path, "properties", key), value_validation=value_validation)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from _structural(node[key], (*path, key), value_validation=value_validation)
    for key in ("allOf", "anyOf", "oneOf"):
        for i, part in enumerate(_listed(node.get(key))):
            if isinstance(part, dict) and not (node.get("x-kubernetes-int-or-string") and part in _INT_OR_STRING):
                yield from _structural(part, (*path, key, i), value_validation=True)
    if isinstance(node.get("not"), dict):
        yield from _structural(node["not"], (*path, "not"), value_validation=True)


def _extensions(node: dict[str, Any], path: Path) -> Iterator[Finding]:
    """The x-kubernetes-* combinations kube-apiserver refuses (validateExtensions in
    schema/validation.go; the values themselves in apiextensions validation.go)."""
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    embedded = node.get("x-kubernetes-embedded-resource") is True
    if preserve is False:
        yield _invalid((*path, "x-kubernetes-preserve-unknown-fields"), "must be true or undefined")
    if int_or_string and preserve is True:
        yield _invalid(
            (*path, "x-kubernetes-preserve-unknown-fields"), "must be false if x-kubernetes-int-or-string is true"
        )
    if int_or_string and embedded:
        yield _invalid((*path, "x-kubernetes-embedded-resource"), "must be false if x-kubernetes-int-or-string is true")
    if embedded and node.get("type") != "object":
        yield _invalid((*path, "type"), "must be object if x-kubernetes-embedded-resource is true")
    if embedded and not node.get("properties") and preserve is not True:
        yield _invalid(
            (*path, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        )
    for key, allowed in (("x-kubernetes-list-type", _LIST_TYPES), ("x-kubernetes-map-type", _MAP_TYPES)):
        value = node.get(key)
        if value is not None and value not in allowed:
            yield _invalid(
                (*path, key), f"Unsupported value: {shown(value)}: supported values: {', '.join(map(shown, allowed))}"
            )


_RULE_VARIABLES = frozenset({"self", "oldSelf"})  # what a CRD rule's CEL environment declares
_LIST_TYPES = ("atomic", "set", "map")
_MAP_TYPES = ("granular", "atomic")


def _rules_compile(node: dict[str, Any], path: Path) -> Iterator[Finding]:
    """Every x-kubernetes-validations rule and messageExpression parses as CEL: kube-apiserver
    compiles them when it stores the CRD, and refuses one that does not."""
    rules = node.get("x-kubernetes-validations")
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        for key in ("rule", "messageExpression"):
            text = rule.get(key) if isinstance(rule, dict) else None
            if isinstance(text, str) and text.strip():
                wanted, hint = ("bool" if key == "rule" else "string"), "check the CEL syntax"
                # later releases take a list of strings as a messageExpression too: a list is left alone
                error = cel_error(text, (wanted,) if key == "rule" else (wanted, "list"), _RULE_VARIABLES)
                if error is not None and error.startswith("undeclared"):
                    hint = "a rule reads self (and oldSelf)"
                elif error is not None and error.startswith("must evaluate"):
                    error = f"{'cel expression' if key == 'rule' else key} must evaluate to a {wanted}"
                    hint = f"the {key} must return a {wanted}"
                if error is not None:
                    yield _invalid((*path, "x-kubernetes-validations", i, key), f"compilation failed: {error}", hint)


def _list_type(node: dict[str, Any], path: Path) -> Iterator[Finding]:
    kind, keys = node.get("x-kubernetes-list-type"), node.get("x-kubernetes-list-map-keys")
    if keys and kind != "map":
        yield _invalid(
            (*path, "x-kubernetes-list-type"),
            f"{'Required value' if kind is None else f'Invalid value: {shown(kind)}'}: "
            "must be map if x-kubernetes-list-map-keys is non-empty",
        )
    if kind == "set":  # a set's items are compared whole: lists and objects in it must be atomic
        items_of_set = _mapping(node.get("items"))
        if items_of_set.get("type") == "array" and items_of_set.get("x-kubernetes-list-type", "atomic") != "atomic":
            yield _invalid(
                (*path, "items", "x-kubernetes-list-type"),
                "must be atomic as item of a list with x-kubernetes-list-type=set",
            )
        if items_of_set.get("type") == "object" and items_of_set.get("x-kubernetes-map-type") != "atomic":
            yield _invalid(
                (*path, "items", "x-kubernetes-map-type"),
                "must be atomic as item of a list with x-kubernetes-list-type=set",
            )
    if kind != "map":
        return
    items: dict[str, Any] = node["items"] if isinstance(node.get("items"), dict) else {}
    if not keys:
        yield _invalid(
            (*path, "x-kubernetes-list-map-keys"), "Required value: must not be empty if x-kubernetes-list-type is map"
        )
        return
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        return  # not a list of names: the CRD's own schema refuses it (k8s-schema)
    if items.get("type") != "object":
        yield _invalid((*path, "items", "type"), "must be object if parent array's x-kubernetes-list-type is map")
        return
    props = _mapping(items.get("properties"))
    required = {r for r in _listed(items.get("required")) if isinstance(r, str)}
    for key in keys:
        if key not in props:
            yield _invalid((*path, "x-kubernetes-list-map-keys"), f"entries {shown(key)} must be a property of items")
        elif key not in required and "default" not in (props.get(key) or {}):
            yield _invalid(
                (*path, "items", "properties", key, "default"),
                f"Required value: map key {shown(key)} is in x-kubernetes-list-map-keys, so it must have a default "
                "or be a required property",
            )
