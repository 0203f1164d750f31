"""Template contexts: a policy's spec plus the defaults that depend on other values.

Schema defaults are already filled in; what remains here are defaults derived from names
(e.g. `<name>-serving-tls`) and facts that span policies (namespaces, colocation targets).
"""

from __future__ import annotations

from typing import Any

from generator.gitops import job_annotations
from generator.kube.pods import DELETION_COST
from generator.layout import FRAGMENTS_DIR
from generator.policies import manifests, podspec
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
    """The labels gen selects a workload's Pods by."""
    return {"app": policy.name}


def template_labels(policy: Policy, target: Target) -> dict[str, str]:
    """A workload's Pod template labels: the target's podLabels, the policy's, then gen's own
    (never in a selector: they may change without orphaning a ReplicaSet)."""
    return {**target.pod_labels, **policy.spec.get("podLabels", {}), **pod_labels(policy)}


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


def across(policy: Policy, target: Target) -> list[list[str]] | None:
    """What rendering a policy reads from the target's other policies, and the only place it
    is read: a render cached under the policy's own text and this is never stale.
    A ReplicatedService: the namespaces each colocation rule's services run in (none when
    they are its own); Monitoring without namespaces of its own: those of every service."""
    services = target.of_kind("ReplicatedService")
    if policy.kind == "ReplicatedService":
        found = []
        namespace, colocate = policy.shared
        for rule in colocate:
            matches = {
                s.shared[0] for s in services if all(pod_labels(s).get(k) == v for k, v in rule["matchLabels"].items())
            }
            found.append(sorted(matches) if matches and matches != {namespace} else [])
        return found
    if policy.kind == "Monitoring" and not policy.spec.get("namespaces"):
        return [sorted({s.shared[0] for s in services})]
    return None


def _replicated(policy: Policy, target: Target) -> dict[str, Any]:
    rules = policy.spec["placement"]["colocateWith"]
    colocate = [
        {**rule, "namespaces": namespaces} for rule, namespaces in zip(rules, across(policy, target) or [], strict=True)
    ]
    spec = policy.spec
    liveness = spec.get("livenessProbe") or default_liveness(spec)
    fields = {**spec, "livenessProbe": liveness} if liveness else spec
    resources = gpu_resources(spec["resources"], spec["gpu"]) if "gpu" in spec else spec["resources"]
    writer = cost_writer_container(spec)
    downward = podspec.downward_env(spec["downwardEnv"])
    container = podspec.main_container(
        fields,
        spec["containerName"],
        resources=resources,
        env=downward if writer == spec["containerName"] else [],
        pod=spec.get("pod"),
    )
    pod_fields = spec.get("pod", {})
    if writer != spec["containerName"] and downward:  # the writer is a sidecar: its variables go there
        pod_fields = {
            **pod_fields,
            "initContainers": [
                {**c, "env": [*c.get("env", []), *downward]} if c.get("name") == writer else c
                for c in pod_fields.get("initContainers", [])
            ],
        }
    return {
        **_autoscaling(spec.get("autoscaling")),
        "template_labels": template_labels(policy, target),
        "service_ports": service_ports(spec),
        "explicit_replicas": "replicas" in (policy.doc.data.get("spec") or {}),
        "podspec": podspec.pod_spec(_service_pod(policy, target, colocate), pod_fields, [container]),
    }


def cost_writer_container(spec: dict[str, Any]) -> str:
    """The container a ReplicatedService's cost writer runs in: downwardEnv lands there."""
    return str((spec.get("costWriter") or {}).get("container", spec["containerName"]))


DEFAULT_CPU_UTILIZATION = 80  # what kube-apiserver defaults an HPA without metrics to


def cpu_metric(utilization: int) -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}},
    }


def hpa_metrics(scaling: dict[str, Any]) -> list[dict[str, Any]]:
    """The HPA's metrics: cpuUtilization's CPU metric, then the listed ones; Kubernetes'
    default (CPU at 80%) spelled out when there are neither."""
    listed = list(scaling.get("metrics", []))
    if "cpuUtilization" in scaling:
        return [cpu_metric(scaling["cpuUtilization"]), *listed]
    return listed or [cpu_metric(DEFAULT_CPU_UTILIZATION)]


def _autoscaling(scaling: dict[str, Any] | None) -> dict[str, Any]:
    if scaling is None:
        return {}
    behavior = scaling.get("behavior") or ({"scaleDown": scaling["scaleDown"]} if "scaleDown" in scaling else None)
    return {"hpa_metrics": hpa_metrics(scaling), "hpa_behavior": behavior}


def service_ports(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The Service's ports: as the policy lists them, or one per named container port."""
    listed = (spec.get("service") or {}).get("ports")
    if listed:
        return list(listed)
    return [
        {
            "name": port["name"],
            "port": port["containerPort"],
            "targetPort": port["name"],
            "protocol": port.get("protocol", "TCP"),
        }
        for port in spec["ports"]
        if port.get("name")
    ]


def _service_pod(policy: Policy, target: Target, colocate: list[dict[str, Any]]) -> dict[str, Any]:
    """What gen sets in a ReplicatedService's Pod: identity, restricted defaults, placement, and
    for a GPU service the scheduler and the GPU's required node affinity."""
    spec, labels = policy.spec, pod_labels(policy)
    pod: dict[str, Any] = {}
    if "schedulerName" in spec:
        pod["schedulerName"] = spec["schedulerName"]
    if "costWriter" in spec:
        pod["serviceAccountName"] = spec["costWriter"]["serviceAccount"]
    pod["automountServiceAccountToken"] = "costWriter" in spec
    pod["securityContext"] = dict(podspec.RESTRICTED_POD)
    affinity: dict[str, Any] = gpu_affinity(spec["gpu"], target) if "gpu" in spec else {}
    if colocate:
        affinity["podAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": rule["weight"],
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": rule["matchLabels"]},
                        **({"namespaces": rule["namespaces"]} if rule["namespaces"] else {}),
                        "topologyKey": rule["topologyKey"],
                    },
                }
                for rule in colocate
            ]
        }
    anti = {
        "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": [policy.name]}]},
        "topologyKey": "kubernetes.io/hostname",
    }
    spread = spec["placement"]["spreadAcrossNodes"]
    if spread == "preferred":
        affinity["podAntiAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": anti}]
        }
    elif spread == "required":
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}
    if affinity:
        pod["affinity"] = affinity
    zone = spec["placement"].get("zoneSpread")
    if zone is not None:
        pod["topologySpreadConstraints"] = [
            {
                "maxSkew": zone["maxSkew"],
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": zone["whenUnsatisfiable"],
                "labelSelector": {"matchLabels": labels},
            }
        ]
    return pod


# GPU node labels by name: NVIDIA GPU Feature Discovery's product and memory (MiB) labels.
GPU_LABEL_PRESETS = {"nvidia-gfd": {"model": "nvidia.com/gpu.product", "memoryMiB": "nvidia.com/gpu.memory"}}
DEFAULT_GPU_LABELS = {"model": "training.example.com/gpu-model", "memoryMiB": "training.example.com/gpu-memory-mib"}


def _label_names(value: str | dict[str, str] | None) -> dict[str, str]:
    return GPU_LABEL_PRESETS[value] if isinstance(value, str) else dict(value or {})


def gpu_labels(gpu: dict[str, Any], target_labels: str | dict[str, str] | None) -> dict[str, str]:
    """The labels a GPU policy's affinity reads: its own gpu.labels, field by field over its
    target's gpuLabels (`target_labels`), over gen's defaults."""
    return {**DEFAULT_GPU_LABELS, **_label_names(target_labels), **_label_names(gpu.get("labels"))}


def gpu_node_terms(gpu: dict[str, Any], labels: dict[str, str]) -> list[dict[str, Any]]:
    """The GPU's required nodeSelectorTerms: model In models, memory label Gt minMemoryMiB-1."""
    expressions = []
    if "models" in gpu:
        expressions.append({"key": labels["model"], "operator": "In", "values": gpu["models"]})
    if "minMemoryMiB" in gpu:
        expressions.append({"key": labels["memoryMiB"], "operator": "Gt", "values": [str(gpu["minMemoryMiB"] - 1)]})
    return [{"matchExpressions": expressions}] if expressions else []


def gpu_resources(resources: dict[str, Any], gpu: dict[str, Any]) -> dict[str, Any]:
    """resources with the GPUs in requests and limits, equal: extended resources cannot overcommit."""
    out = dict(resources)
    for section in ("requests", "limits"):
        out[section] = {**out.get(section, {}), gpu["resource"]: gpu["count"]}
    return out


def gpu_affinity(gpu: dict[str, Any], target: Target) -> dict[str, Any]:
    """The required node affinity that keeps a GPU Pod on the verified models and memory."""
    terms = gpu_node_terms(gpu, gpu_labels(gpu, target.gpu_labels))
    if not terms:
        return {}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def _gpu(policy: Policy, target: Target) -> dict[str, Any]:
    spec = policy.spec
    gpu, fields = spec["gpu"], spec["container"]
    container = podspec.main_container(
        fields, fields["name"], resources=gpu_resources(fields["resources"], gpu), env=[], pod=spec.get("pod")
    )
    derived: dict[str, Any] = {
        "schedulerName": spec["schedulerName"],
        "automountServiceAccountToken": False,
        "restartPolicy": spec["restartPolicy"],
        "securityContext": dict(podspec.RESTRICTED_POD),
    }
    affinity = gpu_affinity(gpu, target)
    if affinity:
        derived["affinity"] = affinity
    if "service" in spec:
        derived["subdomain"] = policy.name  # <hostname>.<headless service>: each rank has a name
    pod = podspec.pod_spec(derived, spec.get("pod", {}), [container])
    labels = template_labels(policy, target)
    if spec["workloadKind"] == "Pod":
        return {"podspec": pod, "template_labels": labels}
    template: dict[str, Any] = {"metadata": {"labels": labels}, "spec": pod}
    if "gang" in spec:
        template["metadata"]["labels"] = {**labels, POD_GROUP_LABEL: policy.name}
    if spec["podAnnotations"]:
        template["metadata"]["annotations"] = spec["podAnnotations"]
    job = job_spec(spec, template)
    if spec["workloadKind"] == "Job":
        return {"job_spec": job, "sync_annotations": job_annotations(target.engines), "pod_group": pod_group(spec)}
    return {
        "cronjob_spec": {**spec["cronJob"], "jobTemplate": {"metadata": {"labels": pod_labels(policy)}, "spec": job}}
    }


POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # Coscheduling finds a Pod's gang by it


def pod_group(spec: dict[str, Any]) -> dict[str, Any]:
    """The PodGroup's spec: minMember (default: the Job's parallelism) and the timeout."""
    gang = spec.get("gang")
    if gang is None:
        return {}
    return {
        "minMember": gang.get("minMember", spec["job"].get("parallelism", 1)),
        **{k: v for k, v in gang.items() if k != "minMember"},
    }


# The JobSpec fields a GpuWorkload also takes at spec level, as shorthands.
JOB_SHORTHANDS = ("backoffLimit", "ttlSecondsAfterFinished")
# A GPU Job's default: a failed Pod fails the Job rather than holding GPUs for six retries.
DEFAULT_BACKOFF_LIMIT = 0


def job_spec(spec: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """A GpuWorkload's JobSpec: the spec-level shorthands, then spec.job's fields, then the Pod.

    gen's backoffLimit default stays out of an Indexed Job with backoffLimitPerIndex: the Job
    controller fails a Job once its failed Pods exceed backoffLimit, whatever the per-index limit,
    so a 0 there would let one failed rank fail every index. Unset, Kubernetes defaults it to
    MaxInt32 (SetDefaults_Job), and the per-index limit decides.
    """
    job: dict[str, Any] = {}
    for key in JOB_SHORTHANDS:
        if key in spec:
            job[key] = spec[key]
    if "backoffLimit" not in job and "backoffLimitPerIndex" not in spec["job"]:
        job["backoffLimit"] = DEFAULT_BACKOFF_LIMIT
    job.update(spec["job"])
    job["template"] = template
    return job


def default_liveness(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The liveness probe gen adds to a service that asked for none: a check of its readiness
    port, except on a GPU server without a startupProbe. Loading weights takes minutes, and the
    kubelet holds a liveness probe back only while a startupProbe has not yet succeeded: gen
    cannot size one for a model it does not know, so it adds no liveness probe there."""
    if "gpu" in spec and "startupProbe" not in spec:
        return None
    return liveness_from_readiness(spec.get("readinessProbe"))


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
    namespaces = policy.spec.get("namespaces") or (across(policy, target) or [[]])[0]
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
    elif policy.kind == "GpuWorkload":
        context.update(_gpu(policy, target))
    elif policy.kind == "Monitoring":
        context.update(_monitoring(policy, target))
    return context


def namespaces(target: Target) -> dict[str, list[Policy]]:
    """The Namespaces gen creates for a target, each with the policies that use it: every
    namespace its workloads run in, its Manifests objects live in, or the Target declares under
    `namespaces`. Never a system namespace, nor one a Manifests policy brings a Namespace for
    (the team's own object wins)."""
    if not target.create_namespaces:
        return {}
    brought = manifests.namespaces_brought(target.of_kind("Manifests")).keys()
    custom = manifests.cluster_kinds(target.of_kind("Manifests"))
    used: dict[str, list[Policy]] = {}
    for policy in sorted(target.policies, key=lambda p: (p.file, p.kind, p.name)):
        if policy.kind == "Scheduler":
            found = {scheduler_namespace(policy)}
        elif policy.kind in ("GpuWorkload", "ReplicatedService"):
            found = {policy.shared[0]}
        elif policy.kind == "Manifests":
            found = manifests.namespaces_used(policy, custom)
        else:
            continue
        for ns in sorted(found - SYSTEM_NAMESPACES - brought):
            used.setdefault(ns, []).append(policy)
    for ns in sorted(target.pod_security.keys() - SYSTEM_NAMESPACES - brought - used.keys()):
        used[ns] = [target.policy]
    return dict(sorted(used.items()))
