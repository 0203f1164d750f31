"""kube-apiserver's create-time rules for node.k8s.io/v1 RuntimeClasses, read from
pkg/apis/node/validation/validation.go (ValidateRuntimeClass)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import containers, names, pods
from generator.kube.findings import Finding, error_at
from generator.kube.quantity import parse_quantity
from generator.schema_messages import shown


def check_runtime_class(obj: dict[str, Any]) -> Iterator[Finding]:
    """The handler is a DNS label (it names a CRI handler); overhead is a container's limits;
    scheduling's node selector and tolerations are a Pod's, with no toleration twice."""
    handler = obj.get("handler")
    if isinstance(handler, str) and (err := names.dns1123_label(handler)):
        yield error_at(("handler",), "k8s-runtime-class", f"handler {shown(handler)}: {err}")
    overhead = obj.get("overhead")
    for name, raw in ((overhead or {}).get("podFixed") or {}).items() if isinstance(overhead, dict) else ():
        where = ("overhead", "podFixed", name)
        if err := containers.resource_name_error(str(name)):
            yield error_at(where, "k8s-resource-name", f"resource {name!r} {err}")
        elif (value := parse_quantity(raw)) is None or value < 0:
            yield error_at(where, "k8s-quantity", f"{raw!r} is not a quantity of 0 or more")
    scheduling = obj.get("scheduling")
    if not isinstance(scheduling, dict):
        return
    yield from pods.check_node_selector(scheduling.get("nodeSelector"), ("scheduling", "nodeSelector"))
    tolerations = scheduling.get("tolerations") or []
    yield from pods.check_tolerations(tolerations, ("scheduling", "tolerations"))
    seen: set[tuple[Any, ...]] = set()
    for i, tol in enumerate(tolerations):
        if not isinstance(tol, dict):
            continue
        key = tuple(str(tol.get(field) or "") for field in ("key", "operator", "value", "effect"))
        if key in seen:
            yield error_at(
                ("scheduling", "tolerations", i),
                "k8s-runtime-class",
                "Duplicate value: a toleration with this key, operator, value and effect is listed above",
                "keep one of them",
            )
        seen.add(key)
