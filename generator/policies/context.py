"""Template contexts: a policy's spec plus the defaults that depend on other values.

Schema defaults are already filled in; what remains here are defaults derived from names
(e.g. `<name>-serving-tls`) and facts that span policies (namespaces, colocation targets).
"""

from __future__ import annotations

from typing import Any

from generator.kube.semantic import DELETION_COST
from generator.layout import FRAGMENTS_DIR
from generator.policies.policy import Policy
from generator.policies.targets import Target

SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
KSM_ALLOWLIST_FLAG = f"--metric-annotations-allowlist=pods=[{DELETION_COST}]"

# (relative path, template, header comment) of the kube-state-metrics integration fragments.
MONITORING_FRAGMENTS = (
    (
        f"{FRAGMENTS_DIR}/kube-state-metrics-values.yaml",
        "monitoring/ksm-helm-values.yaml.j2",
        "Helm values fragment for kube-prometheus-stack: merge into your values; keep keys you already allowlist.",
    ),
    (
        f"{FRAGMENTS_DIR}/kube-state-metrics-patch.yaml",
        "monitoring/ksm-json6902-patch.yaml.j2",
        "JSON 6902 patch (append-only) for the kube-state-metrics Deployment. If its container already "
        "passes --metric-annotations-allowlist, merge the key into that flag instead: the last flag wins.",
    ),
)


def scheduler_namespace(policy: Policy) -> str:
    return str(policy.spec.get("namespace", policy.name))


def scheduler_profiles(policy: Policy) -> list[dict[str, Any]]:
    return list(policy.spec.get("profiles") or [{"schedulerName": policy.name}])


def pod_labels(policy: Policy) -> dict[str, str]:
    return {"app": policy.name}


def scheduler_values(policy: Policy) -> dict[str, Any]:
    spec = policy.spec
    name, ns = policy.name, scheduler_namespace(policy)
    le = {"resourceName": name, "resourceNamespace": ns, **spec["leaderElection"]}
    metrics = spec["metrics"]
    ca = {"configMap": f"{name}-ca", **metrics["ca"]}
    scrape = {"serviceMonitorLabels": {"app": name}, **metrics["scrape"]}
    profiles = scheduler_profiles(policy)
    return {
        "leaderElection": le,
        "profiles": profiles,
        "profile_names": [p.get("schedulerName", "default-scheduler") for p in profiles],
        "metrics": {
            **metrics,
            "servingSecret": metrics.get("servingSecret", f"{name}-serving-tls"),
            "ca": ca,
            "scrape": scrape,
        },
        "service_host": f"{name}.{ns}.svc",
    }


def _replicated(policy: Policy, target: Target) -> dict[str, Any]:
    services = target.of_kind("ReplicatedService")
    colocate = []
    for rule in policy.spec["placement"]["colocateWith"]:
        matches = {
            s.spec["namespace"]
            for s in services
            if all(pod_labels(s).get(k) == v for k, v in rule["matchLabels"].items())
        }
        namespaces = sorted(matches) if matches and matches != {policy.spec["namespace"]} else []
        colocate.append({**rule, "namespaces": namespaces})
    return {
        "colocate": colocate,
        "explicit_replicas": "replicas" in (policy.doc.data.get("spec") or {}),
        "liveness": policy.spec.get("livenessProbe") or liveness_from_readiness(policy.spec.get("readinessProbe")),
    }


def liveness_from_readiness(readiness: dict[str, Any] | None) -> dict[str, Any] | None:
    """A liveness check of the port the readiness probe uses: is the process accepting connections?

    Never the readiness endpoint itself: readiness reports warm-up (the seed's caches), and a
    liveness probe that fails during warm-up restarts the Pod in a loop. None without a port.
    """
    for handler in ("httpGet", "tcpSocket", "grpc"):
        port = ((readiness or {}).get(handler) or {}).get("port")
        if port is not None:
            return {"tcpSocket": {"port": port}, "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3}
    return None


def _monitoring(policy: Policy, target: Target) -> dict[str, Any]:
    namespaces = policy.spec.get("namespaces") or sorted(
        {s.spec["namespace"] for s in target.of_kind("ReplicatedService")}
    )
    return {"namespaces": namespaces, "allowlist_flag": KSM_ALLOWLIST_FLAG}


def build(policy: Policy, target: Target) -> dict[str, Any]:
    context: dict[str, Any] = {
        "name": policy.name,
        "p": policy.spec,
        "labels": pod_labels(policy),
        "cost_annotation": DELETION_COST,
        "target": {"name": target.name, "kubernetesVersion": target.kubernetes_version},
    }
    if policy.kind == "Scheduler":
        context["namespace"] = scheduler_namespace(policy)
        context.update(scheduler_values(policy))
    elif policy.kind == "ReplicatedService":
        context.update(_replicated(policy, target))
    elif policy.kind == "Monitoring":
        context.update(_monitoring(policy, target))
    return context


def namespaces(target: Target) -> dict[str, list[Policy]]:
    """Namespaces the target's workloads run in, each with the policies that use it."""
    if not target.create_namespaces:
        return {}
    used: dict[str, list[Policy]] = {}
    for policy in sorted(target.policies, key=lambda p: (p.file, p.kind, p.name)):
        if policy.kind == "Scheduler":
            ns = scheduler_namespace(policy)
        elif policy.kind in ("GpuWorkload", "ReplicatedService"):
            ns = policy.spec["namespace"]
        else:
            continue
        if ns not in SYSTEM_NAMESPACES:
            used.setdefault(ns, []).append(policy)
    return dict(sorted(used.items()))
