"""kube-apiserver's create-time rules for admissionregistration.k8s.io: admission policies' CEL
and webhook configurations, read from pkg/apis/admissionregistration/validation/validation.go.

CEL is parsed with cel-python, as kube-apiserver compiles it with cel-go before it stores a
policy: an expression that does not parse is refused. Type checking against the request's
schema is kube-apiserver's, with Kubernetes' own CEL libraries; gen checks syntax only, never
guessing at a verdict it cannot reach.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import names
from generator.kube.findings import Finding, Path, unsupported
from generator.problems import Severity
from generator.schema_messages import shown

_FAILURE_POLICIES = ("Ignore", "Fail")
_SIDE_EFFECTS = ("None", "NoneOnDryRun")
_OPERATIONS = ("*", "CREATE", "UPDATE", "DELETE", "CONNECT")


def cel_error(expression: str) -> str | None:
    """Why expression does not parse as CEL, or None; only manifests with CEL import its runtime."""
    from generator.kube import cel

    return cel.parse_error(expression)


def _cel(expression: Any, path: Path, rule: str) -> Iterator[Finding]:
    if isinstance(expression, str) and (err := cel_error(expression)):
        yield Finding(path, rule, Severity.ERROR, f"CEL does not compile: {err}", "check the expression's syntax")


def check_admission_policy(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateValidatingAdmissionPolicy / ValidateMutatingAdmissionPolicy: every expression
    compiles, failurePolicy is known."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    policy = spec.get("failurePolicy")
    if policy is not None and policy not in _FAILURE_POLICIES:
        yield unsupported(("spec", "failurePolicy"), "k8s-admission-policy", policy, _FAILURE_POLICIES)
    for i, check in enumerate(spec.get("validations") or []):
        if isinstance(check, dict):
            yield from _cel(check.get("expression"), ("spec", "validations", i, "expression"), "k8s-admission-policy")
            yield from _cel(
                check.get("messageExpression"), ("spec", "validations", i, "messageExpression"), "k8s-admission-policy"
            )
    for field in ("matchConditions", "variables", "auditAnnotations"):
        key = "valueExpression" if field == "auditAnnotations" else "expression"
        for i, entry in enumerate(spec.get(field) or []):
            if isinstance(entry, dict):
                yield from _cel(entry.get(key), ("spec", field, i, key), "k8s-admission-policy")
    for i, mutation in enumerate(spec.get("mutations") or []):
        for patch in ("applyConfiguration", "jsonPatch"):
            body = mutation.get(patch) if isinstance(mutation, dict) else None
            if isinstance(body, dict):
                yield from _cel(
                    body.get("expression"), ("spec", "mutations", i, patch, "expression"), "k8s-admission-policy"
                )


def check_webhooks(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateValidatingWebhookConfiguration / ValidateMutatingWebhookConfiguration (create)."""
    seen: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or []):
        if not isinstance(hook, dict):
            continue
        at: Path = ("webhooks", i)
        name = hook.get("name")
        if isinstance(name, str):
            if err := names.dns1123_subdomain(name):
                yield Finding((*at, "name"), "k8s-webhook", Severity.ERROR, f"name {shown(name)} {err}")
            elif name.count(".") < 2:
                yield Finding(
                    (*at, "name"),
                    "k8s-webhook",
                    Severity.ERROR,
                    f"{shown(name)} should be a domain with at least three segments separated by dots",
                )
            if name in seen:
                yield Finding((*at, "name"), "k8s-webhook", Severity.ERROR, f"Duplicate value: {shown(name)}")
            seen.add(name)
        effects = hook.get("sideEffects")
        if effects not in _SIDE_EFFECTS:
            yield unsupported(
                (*at, "sideEffects"), "k8s-webhook", effects, _SIDE_EFFECTS, "admissionregistration/v1 requires one"
            )
        if not hook.get("admissionReviewVersions"):
            yield Finding((*at, "admissionReviewVersions"), "k8s-webhook", Severity.ERROR, "Required value: list v1")
        policy = hook.get("failurePolicy")
        if policy is not None and policy not in _FAILURE_POLICIES:
            yield unsupported((*at, "failurePolicy"), "k8s-webhook", policy, _FAILURE_POLICIES)
        config = hook.get("clientConfig") or {}
        if ("url" in config) == ("service" in config):
            yield Finding(
                (*at, "clientConfig"), "k8s-webhook", Severity.ERROR, "exactly one of url or service is required"
            )
        url = config.get("url")
        if isinstance(url, str) and not url.startswith("https://"):
            yield Finding(
                (*at, "clientConfig", "url"), "k8s-webhook", Severity.ERROR, "'https' is the only allowed URL scheme"
            )
        for r, rule in enumerate(hook.get("rules") or []):
            for o, op in enumerate((rule or {}).get("operations") or [] if isinstance(rule, dict) else []):
                if op not in _OPERATIONS:
                    yield unsupported((*at, "rules", r, "operations", o), "k8s-webhook", op, _OPERATIONS)
        for m, condition in enumerate(hook.get("matchConditions") or []):
            if isinstance(condition, dict):
                yield from _cel(condition.get("expression"), (*at, "matchConditions", m, "expression"), "k8s-webhook")
