"""schemas/kubernetes.json: Kubernetes' own definitions of the types policies take, cut from
kubernetes-validate's strict data for the default version, so policies speak Kubernetes'
vocabulary without gen retyping it. The committed file must equal what this module makes
from the installed data; regenerate with `UPDATE_SCHEMAS=1 pytest tests/test_kubernetes_schema.py`."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from generator.kube import api_versions
from generator.schemas import schema_dir

CORE = "io.k8s.api.core.v1."
ROOTS = (
    CORE + "Container",
    CORE + "PodSpec",
    CORE + "ServicePort",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "io.k8s.api.batch.v1.JobSpec",
    "io.k8s.api.batch.v1.CronJobSpec",
    "io.k8s.api.autoscaling.v2.MetricSpec",
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior",
)
# What a kind builds itself, so the policy may not set it there. The main container is named by
# the kind, and only init containers take a restart policy (restartPolicyRules are alpha in 1.35).
MAIN_CONTAINER_OWNED = ("name", "restartPolicy", "restartPolicyRules")
POD_OWNED = ("containers",)
GPU_POD_OWNED = (*POD_OWNED, "schedulerName", "restartPolicy")
# A GpuWorkload builds the Pod template (and a CronJob's Job template); the Job's selector is
# generated from it.
JOB_OWNED = ("template", "selector", "manualSelector")
CRONJOB_OWNED = ("jobTemplate",)


def _closure(definitions: dict[str, Any], roots: tuple[str, ...]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen[name] = definitions[name]
        todo += re.findall(r'"#/\$defs/([^"]+)"', json.dumps(definitions[name]))
    return dict(sorted(seen.items()))


def _no_nulls(schema: Any) -> Any:
    """The definitions without null: Kubernetes reads null as "unset", a policy just leaves the
    field out, and an explicit null (or a null list item, which Kubernetes would decode as an
    empty object) is then a located schema error instead of a surprise."""
    if isinstance(schema, list):
        return [_no_nulls(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _no_nulls(value) for key, value in schema.items()}
    kinds = out.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        kept = [kind for kind in kinds if kind != "null"]
        out["type"] = kept[0] if len(kept) == 1 else kept
    if "properties" in out and "type" not in out:
        out["type"] = "object"
    return out


def _fields(definition: dict[str, Any], drop: tuple[str, ...], description: str) -> dict[str, Any]:
    """A definition's properties without the ones a kind owns, and nothing required."""
    return {
        "type": "object",
        "description": description,
        "properties": {k: v for k, v in definition["properties"].items() if k not in drop},
    }


def build() -> dict[str, Any]:
    path = api_versions.folder(api_versions.DEFAULT_VERSION) / "_definitions.json"
    definitions = json.loads(path.read_text(encoding="utf-8"))["$defs"]
    defs = {name: _no_nulls(schema) for name, schema in _closure(definitions, ROOTS).items()}
    defs["gen.ContainerFields"] = _fields(
        defs[CORE + "Container"],
        MAIN_CONTAINER_OWNED,
        "Every field of Kubernetes' Container but its name and restart policy.",
    )
    pod = defs[CORE + "PodSpec"]
    defs["gen.PodFields"] = _fields(pod, POD_OWNED, "Every field of Kubernetes' PodSpec but containers.")
    defs["gen.PodFields"]["additionalProperties"] = False
    defs["gen.GpuPodFields"] = _fields(
        pod, GPU_POD_OWNED, "Every field of Kubernetes' PodSpec but containers, schedulerName and restartPolicy."
    )
    defs["gen.GpuPodFields"]["additionalProperties"] = False
    defs["gen.JobFields"] = _fields(
        defs["io.k8s.api.batch.v1.JobSpec"],
        JOB_OWNED,
        "Every field of Kubernetes' JobSpec but template and selector (gen builds both).",
    )
    defs["gen.JobFields"]["additionalProperties"] = False
    defs["gen.CronJobFields"] = _fields(
        defs["io.k8s.api.batch.v1.CronJobSpec"],
        CRONJOB_OWNED,
        "Every field of Kubernetes' CronJobSpec but jobTemplate.",
    )
    defs["gen.CronJobFields"]["additionalProperties"] = False
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": (
            f"Generated from kubernetes-validate's strict Kubernetes {api_versions.DEFAULT_VERSION} definitions "
            "by tests/test_kubernetes_schema.py; do not edit."
        ),
        "$defs": defs,
    }


def text() -> str:
    return json.dumps(build(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def test_kubernetes_definitions_are_current() -> None:
    target = schema_dir() / "kubernetes.json"
    if os.environ.get("UPDATE_SCHEMAS"):
        target.write_text(text(), encoding="utf-8")
    assert target.read_text(encoding="utf-8") == text(), "run UPDATE_SCHEMAS=1 pytest tests/test_kubernetes_schema.py"
