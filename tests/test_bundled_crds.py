"""schemas/crds/podgroup-scheduling-v1alpha1-strict.json: scheduler-plugins' PodGroup CRD as a
strict JSON Schema, converted by the rules the other bundled CRD schemas follow (the served and
stored version's openAPIV3Schema; apiVersion and kind as constants; ObjectMeta's field names for
metadata; int-or-string as a type pair; other x-kubernetes-* keys dropped; additionalProperties
false wherever properties are listed). The committed file must equal what this module makes from
the upstream CRD; regenerate with `UPDATE_SCHEMAS=1 pytest tests/test_bundled_crds.py`."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import yaml

from generator.schemas import MANIFEST_SCHEMA_FILES, schema_dir, validator
from tests.conftest import SHARED_CRDS

UPSTREAM = SHARED_CRDS / "upstream" / "podgroups.scheduling.x-k8s.io.yaml"
TARGET = "crds/podgroup-scheduling-v1alpha1-strict.json"
SOURCE = (
    "Generated from https://github.com/kubernetes-sigs/scheduler-plugins "
    "manifests/crds/scheduling.x-k8s.io_podgroups.yaml (CRD podgroups.scheduling.x-k8s.io, "
    "api-approved in kubernetes-sigs/scheduler-plugins#50); Apache-2.0"
)


def _converted(node: Any) -> Any:
    if isinstance(node, list):
        return [_converted(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _converted(value) for key, value in node.items() if not key.startswith("x-kubernetes-")}
    if node.get("x-kubernetes-int-or-string"):
        out.pop("anyOf", None)
        out["type"] = ["integer", "string"]
    if node.get("nullable"):
        out.pop("nullable")
        out["type"] = [*([out["type"]] if isinstance(out.get("type"), str) else out.get("type", [])), "null"]
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def build() -> dict[str, Any]:
    crd = yaml.safe_load(UPSTREAM.read_text())
    version = next(v for v in crd["spec"]["versions"] if v["served"] and v["storage"])
    body = _converted(version["schema"]["openAPIV3Schema"])
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    metadata = json.loads((schema_dir() / "crds/servicemonitor-monitoring-v1-strict.json").read_text())["properties"][
        "metadata"
    ]
    body["properties"]["apiVersion"] = {"type": "string", "const": f"{group}/{version['name']}"}
    body["properties"]["kind"] = {"type": "string", "const": kind}
    body["properties"]["metadata"] = metadata
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": kind,
        "$comment": SOURCE,
        **body,
        "required": ["apiVersion", "kind", "metadata", *body.get("required", [])],
    }


@pytest.mark.skipif(not UPSTREAM.is_file(), reason="the upstream CRD is in shared/reference, beside the clone")
def test_podgroup_schema_is_the_upstream_crd() -> None:
    target = schema_dir() / TARGET
    text = json.dumps(build(), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("UPDATE_SCHEMAS"):
        target.write_text(text, encoding="utf-8")
    assert target.read_text(encoding="utf-8") == text, "run UPDATE_SCHEMAS=1 pytest tests/test_bundled_crds.py"


def test_podgroups_are_validated_against_it() -> None:
    assert MANIFEST_SCHEMA_FILES[("scheduling.x-k8s.io/v1alpha1", "PodGroup")] == TARGET
    check = validator(TARGET)
    good = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"minMember": 4, "scheduleTimeoutSeconds": 600},
    }
    assert not list(check.iter_errors(good))
    for bad in ({"minMember": 0}, {"minMembers": 4}, {"minMember": "4"}):
        assert list(check.iter_errors({**good, "spec": bad})), bad
