"""The JSON Schemas in schemas/: loaded once, compiled once, and the source of every default.

Policy structure lives only in those files. This module validates against them and fills
in their `default` values; it never restates a field in Python.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from generator.errors import GeneratorError
from generator.resources import data_dir

POLICY_API_VERSION = "gen/v1alpha1"
POLICY_KINDS = ("Target", "Scheduler", "GpuWorkload", "ReplicatedService", "DeletionCostPolicy", "Monitoring")

# Schemas for rendered objects that kubernetes-validate has none for.
MANIFEST_SCHEMA_FILES = {
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"): "kubescheduler-config-v1.json",
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "crds/servicemonitor-monitoring-v1-strict.json",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "crds/prometheusrule-monitoring-v1-strict.json",
    ("argoproj.io/v1alpha1", "Application"): "crds/application-argoproj-v1alpha1-strict.json",
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"): "crds/kustomization-kustomize-v1-strict.json",
    ("source.toolkit.fluxcd.io/v1", "GitRepository"): "crds/gitrepository-source-v1-strict.json",
}


def schema_dir() -> Path:
    return data_dir("schemas")


def policy_schema_file(kind: str) -> str:
    return f"{kind.lower()}.json"


def exported_schema_files() -> list[str]:
    """The policy schemas and the files they reference, as `gen schema` writes them."""
    return sorted(p.name for p in schema_dir().glob("*.json"))


@cache
def _read(name: str) -> Any:
    path = schema_dir() / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise GeneratorError(f"cannot load schema {name}: {err}") from err


def _retrieve(uri: str) -> Resource[Any]:
    return Resource.from_contents(_read(uri), default_specification=DRAFT202012)


@cache
def _registry() -> Registry[Any]:
    return Registry(retrieve=_retrieve)  # type: ignore[call-arg]


@cache
def validator(name: str) -> jsonschema.protocols.Validator:
    """A compiled validator for one schema file, built once per process."""
    schema = _read(name)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, registry=_registry(), format_checker=None)


def policy_validator(kind: str) -> jsonschema.protocols.Validator:
    return validator(policy_schema_file(kind))


def _resolve(schema: dict[str, Any], resolver: Any) -> tuple[dict[str, Any], Any]:
    while "$ref" in schema:
        try:
            resolved = resolver.lookup(schema["$ref"])
        except Unresolvable as err:
            raise GeneratorError(f"schema reference {schema['$ref']!r} does not resolve") from err
        merged = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**resolved.contents, **merged}
        resolver = resolved.resolver
    return schema, resolver


def apply_defaults(instance: Any, schema_name: str) -> Any:
    """A copy of instance with the schema's defaults filled in wherever a property is absent.

    Call only on schema-valid instances; defaults are deep-copied so no two policies share them.
    """
    root = _read(schema_name)
    resolver = _registry().resolver(base_uri=schema_name)
    return _fill(copy.deepcopy(instance), root, resolver)


def _fill(instance: Any, schema: Any, resolver: Any) -> Any:
    if not isinstance(schema, dict):
        return instance
    schema, resolver = _resolve(schema, resolver)
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key not in instance:
                sub_resolved, _ = _resolve(sub, resolver) if isinstance(sub, dict) else (sub, resolver)
                if isinstance(sub_resolved, dict) and "default" in sub_resolved:
                    instance[key] = copy.deepcopy(sub_resolved["default"])
                elif isinstance(sub, dict) and "default" in sub:
                    instance[key] = copy.deepcopy(sub["default"])
            if key in instance:
                instance[key] = _fill(instance[key], sub, resolver)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in instance:
                if key not in props:
                    instance[key] = _fill(instance[key], extra, resolver)
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        return [_fill(item, schema["items"], resolver) for item in instance]
    return instance


def iter_schema_errors(name: str, instance: Any) -> Iterator[jsonschema.ValidationError]:
    yield from validator(name).iter_errors(instance)
