"""The JSON Schemas in schemas/: loaded once, compiled once, and the source of every default.

Policy structure lives only in those files. This module validates against them and fills
in their `default` values; it never restates a field in Python.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.errors import GeneratorError
from generator.resources import data_dir

if TYPE_CHECKING:  # the reference implementation is imported only to explain an invalid instance
    import jsonschema
    import jsonschema_rs
    from referencing import Registry, Resource

POLICY_API_VERSION = "gen/v1alpha1"
POLICY_KINDS = (
    "Target",
    "Scheduler",
    "GpuWorkload",
    "ReplicatedService",
    "DeletionCostPolicy",
    "Monitoring",
    "Manifests",
)

# Schemas for rendered objects that kubernetes-validate has none for.
MANIFEST_SCHEMA_FILES = {
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"): "kubescheduler-config-v1.json",
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "crds/servicemonitor-monitoring-v1-strict.json",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "crds/prometheusrule-monitoring-v1-strict.json",
    ("argoproj.io/v1alpha1", "Application"): "crds/application-argoproj-v1alpha1-strict.json",
    ("argoproj.io/v1alpha1", "ApplicationSet"): "crds/applicationset-argoproj-v1alpha1-strict.json",
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"): "crds/kustomization-kustomize-v1-strict.json",
    ("source.toolkit.fluxcd.io/v1", "GitRepository"): "crds/gitrepository-source-v1-strict.json",
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): "crds/podgroup-scheduling-v1alpha1-strict.json",
}


def schema_dir() -> Path:
    return data_dir("schemas")


def policy_schema_file(kind: str) -> str:
    return f"{kind.lower()}.json"


def exported_schema_files() -> list[str]:
    """The policy schemas and the files they reference, as `gen schema` writes them."""
    return sorted(p.name for p in schema_dir().glob("*.json"))


@cache
def read(name: str) -> Any:
    """One bundled schema file, parsed once per process."""
    path = schema_dir() / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise GeneratorError(f"cannot load schema {name}: {err}") from err


def _retrieve(uri: str) -> Resource[Any]:
    from referencing import Resource
    from referencing.jsonschema import DRAFT202012

    return Resource.from_contents(read(uri), default_specification=DRAFT202012)


@cache
def _registry() -> Registry[Any]:
    from referencing import Registry

    return Registry(retrieve=_retrieve)  # type: ignore[call-arg]


BUNDLED_BASE = "https://gen.invalid/schemas/"


class TwoTierValidator:
    """A schema compiled twice: jsonschema-rs answers "valid?" in microseconds; the reference
    jsonschema implementation, built only when needed, explains what is wrong.

    The verdict on an instance the fast path does not accept is always the reference
    implementation's (no errors from it means valid), so only "jsonschema-rs accepts what
    jsonschema rejects" could differ; tests/test_verdict_parity.py checks that on a corpus of
    valid and invalid objects.
    """

    def __init__(self, fast: Any, slow: Callable[[], jsonschema.protocols.Validator]) -> None:
        self._fast = fast
        self._slow_factory = slow
        self._slow: jsonschema.protocols.Validator | None = None

    def fast_verdict(self, instance: Any) -> bool | None:
        """True when jsonschema-rs accepts instance; None leaves the verdict to the reference.

        The fast path only ever accepts: it rejects values JSON cannot hold (NaN) or raises on
        them (YAML timestamps, huge integers), where the reference implementation decides.
        """
        try:
            return True if self._fast.is_valid(instance) else None
        except (ValueError, TypeError, OverflowError):
            return None

    def iter_errors(self, instance: Any) -> Iterator[jsonschema.ValidationError]:
        if self.fast_verdict(instance):
            return
        if self._slow is None:
            self._slow = self._slow_factory()
        yield from self._slow.iter_errors(instance)


def _reference_validator(schema: Any, registry: Registry[Any]) -> jsonschema.protocols.Validator:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, registry=registry, format_checker=None)


@cache
def _fast_registry() -> jsonschema_rs.Registry:
    # the policy schemas and defs.json: the bundled CRD schemas refer to nothing, and parsing
    # them (ApplicationSet's is over a megabyte) would slow every `gen lint`; imported here, not
    # at the top: a run whose policies all come from the cache validates none (9 ms)
    import jsonschema_rs

    files = sorted(schema_dir().glob("*.json"))
    return jsonschema_rs.Registry(
        [
            (BUNDLED_BASE + p.relative_to(schema_dir()).as_posix(), read(p.relative_to(schema_dir()).as_posix()))
            for p in files
        ]
    )


@cache
def validator(name: str) -> TwoTierValidator:
    """The validator of one bundled schema file, compiled once per process."""
    schema = read(name)
    return TwoTierValidator(
        _fast_validator(schema, BUNDLED_BASE + name), lambda: _reference_validator(schema, _registry())
    )


@cache
def definition_validator(name: str, definition: str) -> TwoTierValidator:
    """The validator of one `$defs` entry of a bundled schema file, compiled once per process."""
    schema = {"$ref": f"{name}#/$defs/{definition}"}
    # a base of its own: under the file's own URI the wrapper would shadow the file
    fast = _fast_validator(schema, f"{BUNDLED_BASE}{definition}")
    return TwoTierValidator(fast, lambda: _reference_validator(schema, _registry()))


def _fast_validator(schema: Any, base_uri: str) -> Any:
    """jsonschema-rs's validator of schema, its references resolved among the bundled schemas."""
    import jsonschema_rs  # here, not at the top: see _fast_registry

    return jsonschema_rs.validator_for(schema, registry=_fast_registry(), base_uri=base_uri)


def _resolve(schema: dict[str, Any], base: str) -> tuple[dict[str, Any], str]:
    """Follow $ref (our schemas use only `file.json#/pointer` and `#/pointer`) to a schema and its file."""
    while "$ref" in schema:
        ref = schema["$ref"]
        file, _, pointer = ref.partition("#")
        file = file or base
        try:
            target: Any = read(file)
            for token in filter(None, pointer.split("/")):
                target = target[token.replace("~1", "/").replace("~0", "~")]
        except (KeyError, TypeError) as err:
            raise GeneratorError(f"schema reference {ref!r} in {base} does not resolve") from err
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        base = file
    return schema, base


def allowed_properties(schema: dict[str, Any], base: str) -> set[str]:
    """The property names a schema object admits: its own, and those of the schemas it
    combines with allOf (how a policy kind takes Kubernetes' Container fields)."""
    resolved, where = _resolve(schema, base)
    names = set(resolved.get("properties", {}))
    for part in resolved.get("allOf", []):
        names |= allowed_properties(part, where)
    return names


def plain_copy(value: Any) -> Any:
    """A deep copy of loaded YAML/JSON data (dicts, lists, immutable scalars); copy.deepcopy's
    memo and dispatch cost several times more, and such data has no shared structure to keep."""
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    return value


def apply_defaults(instance: Any, schema_name: str) -> Any:
    """A copy of instance with the schema's defaults filled in wherever a property is absent.

    Call only on schema-valid instances; the instance is left as it is, and defaults are
    deep-copied so no two policies share them.
    """
    return _defaults_plan(schema_name).filled(instance)


@cache
def _defaults_plan(schema_name: str) -> _Defaults:
    return _Defaults(read(schema_name), schema_name)


_NO_DEFAULT = object()


class _Defaults:
    """Where one schema location puts defaults; each part is resolved once, on first use.

    Lazy construction follows only the paths instances actually take, so recursive schemas
    cost nothing and a thousand policies of one kind resolve each $ref once.
    """

    __slots__ = ("_base", "_defaulted", "_extra", "_items", "_props", "_schema")

    def __init__(self, schema: Any, base: str) -> None:
        self._schema, self._base = _resolve(schema, base) if isinstance(schema, dict) else ({}, base)
        self._props: dict[str, _Defaults] | None = None
        self._defaulted: list[tuple[str, Any, _Defaults]] = []  # the properties that have a default
        self._extra: _Defaults | None = None
        self._items: _Defaults | None = None

    def _properties(self) -> dict[str, _Defaults]:
        if self._props is None:
            self._props = {}
            for key, sub in self._schema.get("properties", {}).items():
                plan = _Defaults(sub, self._base)
                default = plan._schema.get(
                    "default", sub.get("default", _NO_DEFAULT) if isinstance(sub, dict) else _NO_DEFAULT
                )
                self._props[key] = plan
                if default is not _NO_DEFAULT:
                    self._defaulted.append((key, default, plan))
            extra = self._schema.get("additionalProperties")
            if isinstance(extra, dict):
                self._extra = _Defaults(extra, self._base)
        return self._props

    def filled(self, instance: Any) -> Any:
        """A copy of instance with defaults added: one walk that copies and fills (a copy
        followed by a fill in place walked every policy twice)."""
        if isinstance(instance, dict):
            props = self._properties()
            extra = self._extra
            out = {}
            for key, value in instance.items():
                plan = props.get(key, extra)
                out[key] = plan.filled(value) if plan is not None else plain_copy(value)
            for key, default, plan in self._defaulted:
                if key not in out:
                    out[key] = plan.filled(default)
            return out
        if isinstance(instance, list):
            items = self._schema.get("items")
            if not isinstance(items, dict):
                return plain_copy(instance)
            if self._items is None:
                self._items = _Defaults(items, self._base)
            return [self._items.filled(item) for item in instance]
        return instance


def iter_schema_errors(name: str, instance: Any) -> Iterator[jsonschema.ValidationError]:
    yield from validator(name).iter_errors(instance)


def export(out: Path) -> list[str]:
    """Write the policy schemas (and what they reference) into out; the file names written."""
    names = exported_schema_files()
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        (out / name).write_bytes((schema_dir() / name).read_bytes())
    return names
