"""kube-apiserver's rules for rbac.authorization.k8s.io kinds (pkg/apis/rbac/validation)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import labels, names
from generator.kube.findings import Finding, Path, error_at, warning_at

_RBAC_GROUP = "rbac.authorization.k8s.io"


def check_rbac(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateRole / ValidateRoleBinding (pkg/apis/rbac/validation), and wildcard rules: valid,
    and never least privilege."""
    kind = obj.get("kind")
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        yield from _check_binding(obj, namespaced=kind == "RoleBinding")
    if kind not in ("Role", "ClusterRole"):
        return
    if kind == "ClusterRole":
        yield from _check_aggregation(obj.get("aggregationRule"))
    for i, rule in enumerate(obj.get("rules") or []):
        rule = rule or {}
        if not rule.get("verbs"):
            yield error_at(("rules", i, "verbs"), "k8s-rbac", "verbs must contain at least one value")
        if rule.get("nonResourceURLs"):
            if kind == "Role":
                yield error_at(
                    ("rules", i, "nonResourceURLs"), "k8s-rbac", "namespaced rules cannot apply to non-resource URLs"
                )
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                yield error_at(
                    ("rules", i, "nonResourceURLs"),
                    "k8s-rbac",
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
        else:
            for field in ("apiGroups", "resources"):
                if not rule.get(field):
                    yield error_at(
                        ("rules", i, field), "k8s-rbac", f"resource rules must supply at least one {field[:-1]}"
                    )
    for i, rule in enumerate(obj.get("rules") or []):
        for field in ("apiGroups", "resources", "verbs", "nonResourceURLs"):
            if "*" in ((rule or {}).get(field) or []):
                yield warning_at(
                    ("rules", i, field),
                    "rbac-wildcard",
                    f"{field} '*' grants everything, now and later",
                    "list what is needed",
                )


def _check_aggregation(rule: Any) -> Iterator[Finding]:
    """ValidateClusterRole: an aggregationRule, when present, selects ClusterRoles by at least
    one valid label selector."""
    if not isinstance(rule, dict):
        return
    at: Path = ("aggregationRule", "clusterRoleSelectors")
    selectors = rule.get("clusterRoleSelectors")
    if not selectors:
        yield error_at(
            at,
            "k8s-rbac",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
            "select the ClusterRoles to aggregate by their labels, or remove aggregationRule",
        )
    for i, selector in enumerate(selectors if isinstance(selectors, list) else []):
        yield from labels.check_selector(selector, (*at, i), "k8s-rbac")


def _check_binding(obj: dict[str, Any], namespaced: bool) -> Iterator[Finding]:
    ref = obj.get("roleRef") or {}
    if ref.get("apiGroup") != _RBAC_GROUP:
        yield error_at(("roleRef", "apiGroup"), "k8s-rbac", f"must be {_RBAC_GROUP!r}")
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        yield error_at(("roleRef", "kind"), "k8s-rbac", f"must be {' or '.join(kinds)}")
    name = ref.get("name")
    if not name:
        yield error_at(("roleRef", "name"), "k8s-rbac", "the role's name is required")
    elif isinstance(name, str) and (err := names.path_segment(name)):
        yield error_at(("roleRef", "name"), "k8s-name", f"role name {name!r} {err}")
    for i, subject in enumerate(obj.get("subjects") or []):
        yield from _check_subject(subject or {}, ("subjects", i), namespaced)


def _check_subject(subject: dict[str, Any], path: Path, namespaced: bool) -> Iterator[Finding]:
    kind, name, group = subject.get("kind"), subject.get("name"), subject.get("apiGroup", "")
    if not name:
        yield error_at((*path, "name"), "k8s-rbac", "a subject's name is required")
    if kind == "ServiceAccount":
        if isinstance(name, str) and name and (err := names.dns1123_subdomain(name)):
            yield error_at((*path, "name"), "k8s-name", f"service account name {name!r} {err}")
        if group:
            yield error_at((*path, "apiGroup"), "k8s-rbac", "must be empty for a ServiceAccount")
        if not namespaced and not subject.get("namespace"):
            yield error_at(
                (*path, "namespace"), "k8s-rbac", "a ServiceAccount subject of a ClusterRoleBinding needs a namespace"
            )
    elif kind in ("User", "Group"):
        # SetDefaults_Subject (rbac/v1) fills an empty apiGroup in before validation
        if (group or _RBAC_GROUP) != _RBAC_GROUP:
            yield error_at((*path, "apiGroup"), "k8s-rbac", f"must be {_RBAC_GROUP!r} for a {kind}")
    else:
        yield error_at((*path, "kind"), "k8s-rbac", "must be ServiceAccount, User or Group")
