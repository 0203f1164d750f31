"""kube-apiserver's create-time rules for resource.k8s.io (Dynamic Resource Allocation) claims,
read from pkg/apis/resource/validation/validation.go (validateDeviceRequest and the CEL
compilation of device selectors)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import names
from generator.kube.admission import cel_error
from generator.kube.findings import Finding, Path
from generator.problems import Severity
from generator.schema_messages import shown


def _claim_spec(spec: Any, path: Path) -> Iterator[Finding]:
    devices = (spec or {}).get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return
    seen: set[str] = set()
    for i, request in enumerate(devices.get("requests") or []):
        if not isinstance(request, dict):
            continue
        at = (*path, "devices", "requests", i)
        name = request.get("name")
        if isinstance(name, str):
            if err := names.dns1123_label(name):
                yield Finding((*at, "name"), "k8s-resource-claim", Severity.ERROR, f"request name {shown(name)} {err}")
            if name in seen:
                yield Finding((*at, "name"), "k8s-resource-claim", Severity.ERROR, f"Duplicate value: {shown(name)}")
            seen.add(name)
        # v1 nests the request under `exactly` (or firstAvailable); v1beta1 has it in place
        for base, body in (((*at, "exactly"), request.get("exactly")), (at, request)):
            if isinstance(body, dict):
                yield from _selectors(body.get("selectors"), (*base, "selectors"))


def _selectors(selectors: Any, path: Path) -> Iterator[Finding]:
    for s, selector in enumerate(selectors or []):
        expression = ((selector or {}).get("cel") or {}).get("expression") if isinstance(selector, dict) else None
        if isinstance(expression, str) and (err := cel_error(expression)):
            yield Finding(
                (*path, s, "cel", "expression"), "k8s-resource-claim", Severity.ERROR, f"CEL does not compile: {err}"
            )


def check_device_class(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateDeviceClass: its selectors' CEL compiles."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        yield from _selectors(spec.get("selectors"), ("spec", "selectors"))


def check_resource_claim(obj: dict[str, Any]) -> Iterator[Finding]:
    if obj.get("kind") == "ResourceClaimTemplate":
        yield from _claim_spec(((obj.get("spec") or {}).get("spec")), ("spec", "spec"))
    else:
        yield from _claim_spec(obj.get("spec"), ("spec",))
