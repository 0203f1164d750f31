"""`gen schema` exports what an editor needs to complete Kubernetes' fields in a policy: the
policy schemas and schemas/kubernetes.json, with Kubernetes' own descriptions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _follow(directory: Path, file: str, schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Resolve $ref the way an editor does: relative to the file that holds it."""
    while "$ref" in schema:
        target, _, pointer = schema["$ref"].partition("#")
        file = target or file
        node: Any = json.loads((directory / file).read_text())
        for token in filter(None, pointer.split("/")):
            node = node[token]
        schema = node
    return file, schema


def _walk(directory: Path, file: str, path: list[str]) -> dict[str, Any]:
    """The schema at a path of property names ("[]" steps into array items), combining allOf."""
    schema: dict[str, Any] = json.loads((directory / file).read_text())
    for step in path:
        file, schema = _follow(directory, file, schema)
        if step == "[]":
            schema = schema["items"]
            continue
        found = schema.get("properties", {}).get(step)
        for part in schema.get("allOf", []) if found is None else []:
            part_file, part_schema = _follow(directory, file, part)
            if step in part_schema.get("properties", {}):
                file, found = part_file, part_schema["properties"][step]
        assert found is not None, f"{step} not offered at {path}"
        schema = found
    return _follow(directory, file, schema)[1]


def test_editors_complete_kubernetes_fields_with_kubernetes_descriptions(gen, tmp_path: Path) -> None:
    assert gen("schema", "--out", tmp_path).code == 0
    assert (tmp_path / "kubernetes.json").is_file()
    effect = _walk(tmp_path, "gpuworkload.json", ["spec", "pod", "tolerations", "[]", "effect"])
    assert effect["type"] == "string" and "NoSchedule, PreferNoSchedule and NoExecute" in effect["description"]
    env = _walk(tmp_path, "replicatedservice.json", ["spec", "env", "[]", "valueFrom", "secretKeyRef", "key"])
    assert "key of the secret" in env["description"].lower()
    mounts = _walk(tmp_path, "gpuworkload.json", ["spec", "container", "volumeMounts", "[]", "mountPath"])
    assert mounts["type"] == "string"
