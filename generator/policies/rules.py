"""Stage 2b: cross-policy rules, the seed's caveats as named checks.

Each rule yields Problems located in the policy files. A target's rules (TARGET_RULES) take the
resolved Target: its settings and the few policies that shape it. A workload's rules
(WORKLOAD_RULES, by kind) take one workload and `Facts`, what they read of the rest of its
target, so a run after an edit checks again only the workloads whose text or facts changed.
docs/rules.md is their catalogue.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from generator import cache, gitops
from generator.kube import pod_security, scope
from generator.kube.pods import DELETION_COST
from generator.kube.scheduler_config import (
    EXTENSION_POINTS,
    IN_TREE_PLUGINS,
    KNOWN_OUT_OF_TREE,
    check_config,
    enabled_plugins,
    plugin_entry,
)
from generator.kube.updates import MAX_INT32
from generator.policies import context, gfd, manifests
from generator.policies.policy import Policy, builtin_policy
from generator.policies.targets import Target
from generator.problems import Problem, Severity


def _tiers(target: Target) -> tuple[dict[str, tuple[int, int]], int, Policy | None]:
    """The target's cost convention; the policy is None when the built-in one applies."""
    policies = target.of_kind("DeletionCostPolicy")
    policy = policies[0] if policies else builtin_policy("DeletionCostPolicy")
    tiers = {name: _tier_range(rng) for name, rng in policy.spec["tiers"].items()}
    return tiers, policy.spec["cap"], policy if policies else None


def _tier_range(rng: list[int] | dict[str, int]) -> tuple[int, int]:
    return (rng[0], rng[1]) if isinstance(rng, list) else (rng["min"], rng["max"])


@dataclass(frozen=True)
class Facts:
    """What a workload policy's own rules read of the rest of its target: a policy's findings
    are a function of its text and these, so a run may take them from one before."""

    target: str
    # each Scheduler profile's schedulerName -> (its Scheduler, whether the profile enables
    # Coscheduling, whether the Scheduler lists it in outOfTreePlugins); the last one wins
    profiles: dict[str, tuple[str, bool, bool]]
    tiers: dict[str, tuple[int, int]]  # the DeletionCostPolicy's tiers
    cap: int
    gitops: bool  # an engine syncs the target
    gpu_labels: str | dict[str, str] | None  # the Target's gpuLabels

    @classmethod
    def of(cls, target: Target) -> Facts:
        profiles = {
            p.get("schedulerName", "default-scheduler"): (
                s.name,
                _coscheduling_enabled(p),
                "Coscheduling" in s.spec["outOfTreePlugins"],
            )
            for s in target.of_kind("Scheduler")
            for p in context.scheduler_profiles(s)
        }
        tiers, cap, _ = _tiers(target)
        return cls(target.name, profiles, tiers, cap, bool(target.gitops), target.gpu_labels)

    def key(self) -> bytes:
        """The facts as a cache key's bytes, every field (ValueError for a value marshal does not know)."""
        return cache.stable_bytes(dataclasses.astuple(self))


def scheduler_rules(target: Target) -> Iterator[Problem]:
    for policy in target.of_kind("Scheduler"):
        declared = policy.spec["outOfTreePlugins"]
        for plugin in declared:
            if plugin in IN_TREE_PLUGINS:
                yield policy.problem(
                    ("outOfTreePlugins",),
                    "scheduler-out-of-tree",
                    f"{plugin} is an in-tree plugin",
                    severity=Severity.WARNING,
                    hint="list only plugins compiled in beyond the in-tree set",
                )
        profiles = context.scheduler_profiles(policy)
        values = context.scheduler_values(policy)
        config = {"leaderElection": {"resourceLock": "leases", **values["leaderElection"]}, "profiles": profiles}
        if "profiles" in policy.spec:
            for i, profile in enumerate(profiles):
                if "schedulerName" not in profile:
                    yield policy.problem(
                        ("profiles", i),
                        "scheduler-profile-name",
                        "profile has no schedulerName: kube-scheduler would name it default-scheduler",
                        hint=f"set schedulerName (e.g. {policy.name!r})",
                    )
                for plugin in sorted(enabled_plugins(profile)):
                    if plugin in KNOWN_OUT_OF_TREE and plugin not in declared:
                        yield policy.problem(
                            ("profiles", i, *plugin_entry(profile, plugin, "enabled", ("score", *EXTENSION_POINTS))),
                            "scheduler-out-of-tree",
                            f"{plugin} is enabled but not listed in outOfTreePlugins",
                            hint=f"add {plugin} to outOfTreePlugins and use an image that registers it",
                        )
        # The config's keys mirror the policy's spec keys, so findings map straight back.
        for finding in check_config(config, declared):
            yield policy.problem(
                finding.path, finding.rule, finding.message, severity=finding.severity, hint=finding.hint
            )
        metrics = values["metrics"]
        if metrics["ca"]["namespace"] != metrics["scrape"]["namespace"]:
            yield policy.problem(
                ("metrics", "ca", "namespace"),
                "metrics-ca-namespace",
                "the CA ConfigMap must live in the ServiceMonitor's namespace; Prometheus Operator looks it up there",
                hint=f"set ca.namespace to {metrics['scrape']['namespace']!r}",
            )
        if policy.spec["replicas"] > 1 and not policy.spec["leaderElection"]["leaderElect"]:
            yield policy.problem(
                ("leaderElection", "leaderElect"),
                "scheduler-leader-election",
                "several replicas without leader election schedule the same Pods concurrently",
            )


def _gpu_workload(policy: Policy, facts: Facts) -> Iterator[Problem]:
    spec = policy.spec
    yield from _batch_fields(policy)
    if spec["workloadKind"] != "Pod" and spec["restartPolicy"] == "Always":
        yield policy.problem(
            ("restartPolicy",),
            "gpu-restart-policy",
            f"a {spec['workloadKind']}'s Pods need restartPolicy Never or OnFailure",
        )
    if DELETION_COST in spec["podAnnotations"]:
        yield policy.problem(
            ("podAnnotations", DELETION_COST),
            "deletion-cost-not-replicaset",
            f"pod-deletion-cost on a {spec['workloadKind']} is ignored: only the ReplicaSet controller reads it",
            hint="use a ReplicatedService for cost-ordered scale-down",
            key=True,
        )


def _gpu_pods(policy: Policy, facts: Facts) -> Iterator[Problem]:
    spec = policy.spec
    scheduler_name = spec.get("schedulerName")
    profiles = {"default-scheduler", *facts.profiles}
    if scheduler_name is not None and scheduler_name not in profiles:
        yield policy.problem(
            ("schedulerName",),
            "gpu-scheduler-name",
            f"no Scheduler profile named {scheduler_name!r} in target {facts.target!r}; the Pods would stay Pending",
            hint=f"one of: {', '.join(sorted(profiles))}",
        )
    if "gpu" not in spec:
        return
    at: tuple[str, ...] = ("container", "resources") if policy.kind == "GpuWorkload" else ("resources",)
    resources = spec["container"]["resources"] if policy.kind == "GpuWorkload" else spec["resources"]
    gpu = spec["gpu"]["resource"]
    for section in ("requests", "limits"):
        if gpu in (resources.get(section) or {}):
            yield policy.problem(
                (*at, section, gpu),
                "gpu-resource-duplicate",
                f"{gpu} comes from gpu.count; do not set it in {'.'.join(at)}",
                key=True,
            )
    if policy.kind == "ReplicatedService" and "livenessProbe" in spec and "startupProbe" not in spec:
        yield policy.problem(
            ("livenessProbe",),
            "gpu-liveness-startup",
            "a liveness probe without a startupProbe on a GPU server: it runs while the model's weights "
            "load, and the kubelet restarts the container once it fails failureThreshold times in a row",
            severity=Severity.WARNING,
            hint="add a startupProbe whose failureThreshold × periodSeconds covers loading the weights "
            "(the kubelet holds liveness back until it succeeds)",
            key=True,
        )
    if "models" not in spec["gpu"] and "minMemoryMiB" not in spec["gpu"]:
        yield policy.problem(
            ("gpu",),
            "gpu-no-affinity",
            "no models or minMemoryMiB: the Pod may land on any node with the GPU resource",
            severity=Severity.WARNING,
            hint="state the verified model and memory labels",
        )


# The extension points Coscheduling must run at to gang Pods, when not enabled at multiPoint.
COSCHEDULING_POINTS = ("queueSort", "preFilter", "permit")


def _coscheduling_enabled(profile: dict[str, Any]) -> bool:
    plugins = profile.get("plugins") or {}

    def enabled(point: str) -> bool:
        return any(p.get("name") == "Coscheduling" for p in (plugins.get(point) or {}).get("enabled") or [])

    return enabled("multiPoint") or all(enabled(point) for point in COSCHEDULING_POINTS)


def _gang(policy: Policy, facts: Facts) -> Iterator[Problem]:
    """A gang needs a Job of several Pods, and a scheduler that runs Coscheduling."""
    spec, gang = policy.spec, policy.spec.get("gang")
    if gang is None:
        return
    parallelism = spec["job"].get("parallelism", 1)
    if spec["workloadKind"] != "Job":
        yield policy.problem(
            ("gang",),
            "gpu-gang",
            f"a gang schedules the Pods of a Job together; a {spec['workloadKind']} has nothing to gang",
            hint="set workloadKind: Job with job.parallelism above 1, or remove gang",
            key=True,
        )
    elif parallelism <= 1:
        yield policy.problem(
            ("gang",),
            "gpu-gang",
            f"a gang of {parallelism} Pod: job.parallelism must be above 1",
            hint="set job.parallelism to the number of Pods that must start together",
            key=True,
        )
    elif gang.get("minMember", parallelism) > parallelism:
        yield policy.problem(
            ("gang", "minMember"),
            "gpu-gang",
            f"minMember {gang['minMember']} is above job.parallelism {parallelism}: the group could never start",
            hint=f"at most {parallelism}",
        )
    name = spec["schedulerName"]
    if name not in facts.profiles:
        yield policy.problem(
            ("schedulerName",),
            "gpu-gang",
            f"{name} does not run Coscheduling: the gang's Pods would be scheduled one by one",
            hint="schedule gangs with a Scheduler policy whose profile enables Coscheduling",
        )
        return
    scheduler, enabled, listed = facts.profiles[name]
    if not enabled:
        yield policy.problem(
            ("schedulerName",),
            "gpu-gang",
            f"profile {name!r} of Scheduler {scheduler!r} does not enable Coscheduling",
            hint="enable it at multiPoint, and make it the queueSort plugin (disable '*' there)",
        )
    elif not listed:
        yield policy.problem(
            ("schedulerName",),
            "gpu-gang",
            f"Scheduler {scheduler!r} does not list Coscheduling in outOfTreePlugins",
            hint="list it, with an image that registers scheduler-plugins' Coscheduling",
        )


def _batch_fields(policy: Policy) -> Iterator[Problem]:
    """spec.job and spec.cronJob belong to the kinds that have them, each field in one place."""
    kind = policy.spec["workloadKind"]
    written = policy.doc.data.get("spec") or {}
    for key, kinds in (("job", ("Job", "CronJob")), ("cronJob", ("CronJob",))):
        if key in written and kind not in kinds:
            yield policy.problem(
                (key,),
                "gpu-workload-kind",
                f"spec.{key} shapes a {' or '.join(kinds)}, and this workload is a {kind}",
                hint=f"set workloadKind: {kinds[-1] if key == 'cronJob' else kinds[0]}, or remove spec.{key}",
                key=True,
            )
    if kind == "CronJob" and "schedule" not in policy.spec["cronJob"]:
        yield policy.problem(
            ("workloadKind",),
            "gpu-workload-kind",
            "a CronJob needs cronJob.schedule",
            hint='add cronJob: {schedule: "0 2 * * *"} (minute hour day-of-month month day-of-week)',
        )
    for key in context.JOB_SHORTHANDS:
        if key in written and key in (written.get("job") or {}):
            yield policy.problem(
                ("job", key),
                "gpu-job-field",
                f"{key} is set twice: at spec.{key} and at spec.job.{key}",
                hint=f"keep one (spec.{key} is a shorthand for spec.job.{key})",
                key=True,
            )
    yield from _backoff_limit_per_index(policy)


def _backoff_limit_per_index(policy: Policy) -> Iterator[Problem]:
    """An explicit backoffLimit below what backoffLimitPerIndex allows: the Job controller fails
    the Job once its failed Pods exceed backoffLimit (syncJob's exceedsBackoffLimit), per-index
    limit or not, so the indexes never get the retries they were given."""
    job = policy.spec["job"]
    per_index, completions = job.get("backoffLimitPerIndex"), job.get("completions")
    at = ("job", "backoffLimit") if "backoffLimit" in job else ("backoffLimit",)
    limit = job.get("backoffLimit", policy.spec.get("backoffLimit"))
    if not (isinstance(per_index, int) and isinstance(completions, int) and isinstance(limit, int)):
        return
    if limit >= completions * per_index:
        return
    yield policy.problem(
        at,
        "gpu-job-backoff",
        f"backoffLimit {limit} beside backoffLimitPerIndex {per_index}: the Job fails as soon as more than "
        f"{limit} Pods have failed across all indexes, before its {completions} indexes use the "
        f"{completions * per_index} retries backoffLimitPerIndex gives them",
        severity=Severity.WARNING,
        hint=f"remove backoffLimit (Kubernetes then defaults it to {MAX_INT32} and each index's limit decides), "
        f"or raise it to at least {completions * per_index}",
    )


def _writer_container_problem(policy: Policy) -> Problem | None:
    """costWriter.container names the main container or a native sidecar of the Pod."""
    spec = policy.spec
    writer = context.cost_writer_container(spec)
    sidecars = [
        c.get("name") for c in spec.get("pod", {}).get("initContainers", []) if c.get("restartPolicy") == "Always"
    ]
    if writer == spec["containerName"] or writer in sidecars:
        return None
    return policy.problem(
        ("costWriter", "container"),
        "cost-writer-container",
        f"no container {writer!r} runs the cost writer: downwardEnv would land nowhere",
        hint=f"name the main container ({spec['containerName']!r}) or a sidecar in pod.initContainers with "
        f"restartPolicy: Always{' (' + ', '.join(map(str, sidecars)) + ')' if sidecars else ''}",
    )


def cost_policy_rules(target: Target) -> Iterator[Problem]:
    """One DeletionCostPolicy per target, and tiers inside its cap."""
    tiers, cap, cost_policy = _tiers(target)
    policies = target.of_kind("DeletionCostPolicy")
    for extra in policies[1:]:
        yield extra.problem(
            (),
            "cost-policy-single",
            f"target {target.name!r} already uses DeletionCostPolicy {policies[0].name!r}",
            hint="keep one per target (use Target selectors to split)",
        )
    if cost_policy is not None:
        for name, (lo, hi) in tiers.items():
            if lo > hi:
                yield cost_policy.problem(
                    ("tiers", name), "cost-tier-range", f"tier {name!r}: min {lo} is greater than max {hi}"
                )
            if hi > cap:
                yield cost_policy.problem(
                    ("tiers", name),
                    "cost-cap",
                    f"tier {name!r} reaches {hi}, above the cap {cap}",
                    severity=Severity.WARNING,
                )


def _service_cost(policy: Policy, facts: Facts) -> Iterator[Problem]:
    if "costWriter" in policy.spec and (found := _writer_container_problem(policy)) is not None:
        yield found
    tiers, cap = facts.tiers, facts.cap
    cost = policy.spec["deletionCost"]
    initial, tier = cost["initial"], cost.get("tier")
    if initial > cap:
        yield policy.problem(("deletionCost", "initial"), "cost-cap", f"cost {initial} exceeds the cap {cap}")
    if tier is not None:
        if tier not in tiers:
            yield policy.problem(
                ("deletionCost", "tier"),
                "cost-tier",
                f"unknown tier {tier!r}",
                hint=f"one of: {', '.join(sorted(tiers))}",
            )
        elif not tiers[tier][0] <= initial <= tiers[tier][1]:
            lo, hi = tiers[tier]
            yield policy.problem(
                ("deletionCost", "initial"), "cost-tier", f"cost {initial} is outside tier {tier!r} [{lo}, {hi}]"
            )
    if DELETION_COST in policy.spec["podAnnotations"]:
        yield policy.problem(
            ("podAnnotations", DELETION_COST),
            "cost-annotation-duplicate",
            "set the cost with deletionCost.initial, not podAnnotations",
            key=True,
        )
    if policy.spec.get("costWriter") and "POD_UID" not in policy.spec["downwardEnv"]:
        yield policy.problem(
            ("downwardEnv",),
            "cost-writer-uid",
            "a cost writer tests the Pod UID before patching; expose POD_UID",
            severity=Severity.WARNING,
        )


def _autoscaling(policy: Policy, facts: Facts) -> Iterator[Problem]:
    scaling = policy.spec.get("autoscaling")
    if scaling is None:
        return
    if scaling["minReplicas"] > scaling["maxReplicas"]:
        yield policy.problem(
            ("autoscaling", "minReplicas"),
            "hpa-min-max",
            f"minReplicas {scaling['minReplicas']} is greater than maxReplicas {scaling['maxReplicas']}",
        )
    yield from _utilization_requests(policy, context.hpa_metrics(scaling))
    if "scaleDown" in scaling and "behavior" in scaling:
        yield policy.problem(
            ("autoscaling", "scaleDown"),
            "hpa-behavior",
            "scaleDown is set twice: as autoscaling.scaleDown and in autoscaling.behavior",
            hint="move it into behavior.scaleDown (scaleDown is its shorthand)",
            key=True,
        )
    if "replicas" in (policy.doc.data.get("spec") or {}):
        yield policy.problem(
            ("replicas",),
            "hpa-replicas-conflict",
            "replicas is ignored with autoscaling: the HPA owns the count, and a GitOps sync that resets it would fight the autoscaler",
            severity=Severity.WARNING,
            hint="remove replicas",
            key=True,
        )


def _utilization_targets(metrics: list[dict[str, Any]]) -> dict[str, set[str | None]]:
    """Per resource (cpu, memory) with a Utilization target, the containers it is measured on
    (None: all of them)."""
    found: dict[str, set[str | None]] = {}
    for metric in metrics:
        kind = metric.get("type")
        source = metric.get("resource" if kind == "Resource" else "containerResource") or {}
        utilization = (source.get("target") or {}).get("type") == "Utilization"
        if kind in ("Resource", "ContainerResource") and utilization and source.get("name") in ("cpu", "memory"):
            found.setdefault(source["name"], set()).add(source.get("container") if kind != "Resource" else None)
    return found


def _utilization_requests(policy: Policy, metrics: list[dict[str, Any]]) -> Iterator[Problem]:
    """A utilization target is a percentage of requests: every container it measures needs one
    (the HPA counts native sidecars as containers too); otherwise the HPA cannot compute it."""
    spec = policy.spec
    containers: list[tuple[str, dict[str, Any], tuple[str | int, ...]]] = [
        (spec["containerName"], spec["resources"], ("resources",))
    ]
    for i, init in enumerate(spec.get("pod", {}).get("initContainers", [])):
        if init.get("restartPolicy") == "Always":
            containers.append((init.get("name", ""), init.get("resources") or {}, ("pod", "initContainers", i)))
    for resource, measured in sorted(_utilization_targets(metrics).items()):
        for name, resources, at in containers:
            if (None in measured or name in measured) and resource not in (resources.get("requests") or {}):
                sidecar = at[0] == "pod"
                yield policy.problem(
                    at,
                    f"hpa-{resource}-requests",
                    f"{'sidecar ' + repr(name) if sidecar else 'the container'} has no {resource} request: "
                    f"the HPA's {resource} utilization target is a percentage of requests, and cannot be computed",
                    hint=f"set resources.requests.{resource}" + (" on the sidecar" if sidecar else ""),
                )


def _container_names(policy: Policy, facts: Facts) -> Iterator[Problem]:
    """Container names are unique in a Pod (kube-apiserver refuses a repeat); the repeat is found
    here so that it points at the entry the policy wrote, not at the container gen names."""
    main = policy.spec["containerName"] if policy.kind == "ReplicatedService" else policy.spec["container"]["name"]
    seen = {main}
    for i, init in enumerate(policy.spec.get("pod", {}).get("initContainers", [])):
        name = init.get("name")
        if name in seen:
            yield policy.problem(
                ("pod", "initContainers", i, "name"),
                "pod-container-name",
                f"container name {name!r} is already used in this Pod"
                + (" by the main container" if name == main else ""),
                hint="every container, init container and sidecar needs its own name",
            )
        seen.add(name)
    yield from _pod_fields_gen_derives(policy)


def _pod_fields_gen_derives(policy: Policy) -> Iterator[Problem]:
    """A `pod` field that overrides what gen derives from another field of the same policy: the
    policy's own value wins, and what gen built on the other one no longer holds."""
    spec, pod = policy.spec, policy.spec.get("pod", {})
    found: list[tuple[str, str, str]] = []  # (pod field, what breaks, hint)
    if (
        policy.kind == "ReplicatedService"
        and "schedulerName" in pod
        and pod["schedulerName"] != spec.get("schedulerName")
    ):
        found.append(
            (
                "schedulerName",
                "gen's checks and `gen explain gpu` read spec.schedulerName, and the Pods would go to another scheduler",
                "set spec.schedulerName alone",
            )
        )
    writer = spec.get("costWriter")
    if writer is not None and "serviceAccountName" in pod and pod["serviceAccountName"] != writer["serviceAccount"]:
        found.append(
            (
                "serviceAccountName",
                f"the cost writer's RBAC is bound to costWriter.serviceAccount {writer['serviceAccount']!r}, and "
                "the Pods would run as another account that cannot patch them",
                "set costWriter.serviceAccount alone",
            )
        )
    if writer is not None and pod.get("automountServiceAccountToken") is False:
        found.append(
            (
                "automountServiceAccountToken",
                "the cost writer would have no token to patch its Pod with",
                "remove it: gen mounts the token only for a cost writer",
            )
        )
    if policy.kind == "GpuWorkload" and "service" in spec and "subdomain" in pod and pod["subdomain"] != policy.name:
        found.append(
            (
                "subdomain",
                f"ranks resolve as <pod>.{policy.name} only with the subdomain of the headless Service gen renders",
                "remove it: gen sets the subdomain to the Service's name",
            )
        )
    for field, breaks, hint in found:
        yield policy.problem(
            ("pod", field),
            "pod-field-derived",
            f"pod.{field} overrides what gen derives from this policy: {breaks}",
            severity=Severity.WARNING,
            hint=hint,
        )


def _service(policy: Policy, facts: Facts) -> Iterator[Problem]:
    if "service" in policy.spec and not context.service_ports(policy.spec):
        yield policy.problem(
            ("service",),
            "service-ports",
            "the Service has no ports: none listed, and no container port has a name to default from",
            hint="name a container port (ports[].name) or list service.ports",
            key=True,
        )
    budget = policy.spec.get("disruptionBudget")
    if budget is not None and (why := _budget_blocks(budget, _replica_floor(policy.spec))):
        field = next(iter(budget))
        yield policy.problem(
            ("disruptionBudget", field),
            "budget-blocks-eviction",
            f"{field} {budget[field]} never allows an eviction: {why}; node drains and cluster upgrades then wait forever",
            severity=Severity.WARNING,
            hint="allow at least one Pod to go (e.g. maxUnavailable: 1)",
        )


def _replica_floor(spec: dict[str, Any]) -> int:
    """The fewest replicas the Deployment runs: the HPA's minimum, or its fixed count."""
    scaling = spec.get("autoscaling")
    return int(scaling["minReplicas"]) if scaling else int(spec["replicas"])


def _budget_blocks(budget: dict[str, int | str], floor: int) -> str | None:
    """Why a budget admits no eviction at the replica floor, counted as the disruption controller
    does (getExpectedPodCount: percentages of either field round up)."""
    if "maxUnavailable" in budget:
        value = budget["maxUnavailable"]
        allowed = value if isinstance(value, int) else -(-int(value.rstrip("%")) * floor // 100)
        return f"it lets {allowed} of {floor} replicas go" if allowed <= 0 else None
    value = budget["minAvailable"]
    needed = value if isinstance(value, int) else -(-int(value.rstrip("%")) * floor // 100)
    return f"{needed} of {floor} replicas must stay" if needed >= floor else None


def colocation_rules(target: Target) -> Iterator[Problem]:
    """A colocation rule that no other service's Pods match (read from what each service
    shares, so an unchanged policy is not unpacked)."""
    services = target.of_kind("ReplicatedService")
    for policy in services:
        for i, rule in enumerate(policy.shared[1]):
            wanted: dict[str, Any] = rule["matchLabels"]
            if not any(
                all(context.pod_labels(s).get(k) == v for k, v in wanted.items()) for s in services if s is not policy
            ):
                yield policy.problem(
                    ("placement", "colocateWith", i, "matchLabels"),
                    "colocate-no-match",
                    f"no other ReplicatedService in target {target.name!r} has Pods labelled {wanted}",
                    severity=Severity.WARNING,
                    hint="gen labels Pods app: <service name>",
                )


def manifests_rules(target: Target) -> Iterator[Problem]:
    """What is wrong with the objects a Manifests policy reads; read once per policy, so a file
    two targets share is reported once."""
    custom = manifests.cluster_kinds(target.of_kind("Manifests"))
    for policy in target.of_kind("Manifests"):
        yield from manifests.load(policy)[1]
        yield from manifests.namespace_problems(policy, custom)


def namespace_rules(target: Target) -> Iterator[Problem]:
    """A Pod Security level the Target declares for a namespace and no Namespace of gen's
    carries: gen creates none (createNamespaces false, a system namespace), or a Manifests
    policy brings its own, whose labels decide."""
    brought = manifests.namespaces_brought(target.of_kind("Manifests"))
    for name, level in target.pod_security.items():
        at = ("namespaces", name)
        if not target.create_namespaces:
            reason, hint = "createNamespaces is false", "label the Namespace you bring, or drop createNamespaces: false"
        elif name in context.SYSTEM_NAMESPACES:
            reason, hint = f"gen never creates the system namespace {name}", "label it where the cluster defines it"
        elif name in brought and (own := pod_security.enforced_level(brought[name].data)) != level:
            reason = f"a Manifests policy brings Namespace {name}, which enforces {own or 'no level'}"
            hint = f"label that Namespace pod-security.kubernetes.io/enforce: {level}, or let gen create it"
        else:
            continue
        yield target.policy.problem(
            at,
            "target-namespace",
            f"podSecurity {level} for namespace {name} is applied to no Namespace: {reason}",
            severity=Severity.WARNING,
            hint=hint,
            key=True,
        )


# A Job's name is a label value (batch.kubernetes.io/job-name): at most 63 characters.
_JOB_NAME_MAX = 63
NAME_HASH_LENGTH = 8  # the hex digits `whenChanged: newName` appends, after a '-'


def _ttl_paths(policy: Policy) -> Iterator[tuple[str, ...]]:
    written = policy.doc.data.get("spec") or {}
    if "ttlSecondsAfterFinished" in written:
        yield ("ttlSecondsAfterFinished",)
    if "ttlSecondsAfterFinished" in (written.get("job") or {}):
        yield ("job", "ttlSecondsAfterFinished")


_TTL_HINT = (
    "remove it: a GitOps engine keeps a finished Job (use whenChanged: newName to run a change as a new "
    "Job), or run the work as a CronJob, whose Jobs are not in Git"
)


def _ttl_message(title: str) -> str:
    return (
        f"{title} is deleted by the TTL controller once it finishes, and its target is synced from Git: "
        "the engine creates it again and it runs again, forever"
    )


def gitops_rules(target: Target) -> Iterator[Problem]:
    """What the GitOps engine that syncs a target does over time with what gen writes."""
    for i, option in enumerate(target.gitops.get("argocd", {}).get("syncOptions", [])):
        at = ("gitops", "argocd", "syncOptions", i)
        found = gitops.option_problem(option)
        if found is not None:
            yield target.policy.problem(at, "argocd-sync-option", found[0], hint=found[1])
        elif option in gitops.REPLACING_OPTIONS:
            yield target.policy.problem(
                at,
                "argocd-sync-option",
                f"{option} makes Argo CD replace every object of the Application on every sync"
                + (" (with Replace=true: delete and recreate it)" if option == "Force=true" else "")
                + ": a running Job is killed by any commit, a finished one runs again",
                severity=Severity.WARNING,
                hint="drop it; gen's Jobs need no replace (whenChanged: newName runs a change as a new Job)",
            )
    argocd = target.gitops.get("argocd", {})
    created = gitops.option_value(gitops.application_sync_options(argocd, target.create_namespaces), "CreateNamespace")
    if "managedNamespaceMetadata" in argocd and created != "true":
        yield target.policy.problem(
            ("gitops", "argocd", "managedNamespaceMetadata"),
            "argocd-namespace-metadata",
            "managedNamespaceMetadata does nothing without the sync option CreateNamespace=true: "
            "Argo CD sets it only on the destination namespace it creates",
            severity=Severity.WARNING,
            hint="add CreateNamespace=true to syncOptions (and set destinationNamespace), or put the labels "
            "on a Namespace object (Target namespaces, or a Manifests policy)",
            key=True,
        )
    yield from _reserved_pod_labels(target.policy, target.pod_labels)
    if target.gitops:
        for policy in target.of_kind("Manifests"):
            for raw in manifests.load(policy)[0]:
                if raw.data.get("kind") == "Job" and "ttlSecondsAfterFinished" in (raw.data.get("spec") or {}):
                    yield raw.problem(
                        ("spec", "ttlSecondsAfterFinished"),
                        "job-ttl-resync",
                        _ttl_message(scope.title_of(raw.data)),
                        hint=_TTL_HINT,
                        key=True,
                    )


def _reserved_pod_labels(owner: Policy, labels: dict[str, Any]) -> Iterator[Problem]:
    for key in sorted(set(labels) & {"app", context.POD_GROUP_LABEL}):
        yield owner.problem(
            ("podLabels", key),
            "pod-label-reserved",
            f"pod label {key!r} is gen's: it ties the Pods to their selectors",
            hint="choose another key; gen sets app: <policy name> itself",
            key=True,
        )


def _synced_workload(policy: Policy, facts: Facts) -> Iterator[Problem]:
    """What the GitOps engine does over time with a workload's objects, and the pod labels and
    annotations that are gen's."""
    if policy.kind == "GpuWorkload" and policy.spec["workloadKind"] == "Job" and facts.gitops:
        for path in _ttl_paths(policy):
            yield policy.problem(path, "job-ttl-resync", _ttl_message(f"Job {policy.name!r}"), hint=_TTL_HINT, key=True)
    if policy.kind == "GpuWorkload" and "whenChanged" in policy.spec:
        if policy.spec["workloadKind"] != "Job":
            yield policy.problem(
                ("whenChanged",),
                "gpu-when-changed",
                f"whenChanged renames a Job per change, and this workload is a {policy.spec['workloadKind']}",
                hint="a CronJob's jobTemplate may change freely; a Pod is replaced by deleting it",
            )
        elif len(policy.name) + 1 + NAME_HASH_LENGTH > _JOB_NAME_MAX:
            yield policy.problem(
                ("whenChanged",),
                "gpu-when-changed",
                f"with whenChanged: newName the Job is named {policy.name}-<{NAME_HASH_LENGTH} hex digits>, "
                f"longer than the {_JOB_NAME_MAX} characters a Job name may have",
                hint=f"shorten metadata.name to at most {_JOB_NAME_MAX - 1 - NAME_HASH_LENGTH} characters",
            )
    yield from _reserved_pod_labels(policy, policy.spec.get("podLabels", {}))
    if gitops.CONFIG_HASH in policy.spec.get("podAnnotations", {}):
        yield policy.problem(
            ("podAnnotations", gitops.CONFIG_HASH),
            "pod-annotation-reserved",
            f"{gitops.CONFIG_HASH} is gen's: it hashes the ConfigMaps the Pods read, so a config change rolls them",
            hint="remove it; to roll the Pods by hand, change any other pod annotation",
            key=True,
        )


def _gpu_model(policy: Policy, facts: Facts) -> Iterator[Problem]:
    """With GPU Feature Discovery's labels, a model must be a product name GFD writes: a short
    name (`A100`) matches no node, and every Pod stays Pending."""
    gfd_model = context.GPU_LABEL_PRESETS["nvidia-gfd"]["model"]
    gfd_memory = context.GPU_LABEL_PRESETS["nvidia-gfd"]["memoryMiB"]
    gpu = policy.spec.get("gpu")
    if gpu is None:
        return
    labels = context.gpu_labels(gpu, facts.gpu_labels)
    if labels["model"] != gfd_model:
        return
    for i, model in enumerate(gpu.get("models", [])):
        if gfd.is_product(model):
            continue
        close = gfd.suggestions(model)
        yield policy.problem(
            ("gpu", "models", i),
            "gpu-model-name",
            f"{model!r} is no product name GPU Feature Discovery writes into {gfd_model}: no node matches it",
            hint=(
                f"did you mean {' or '.join(repr(c) for c in close[:4])}?"
                if close
                else "list the product as `kubectl get nodes -L nvidia.com/gpu.product` shows it"
            )
            + " (a MIG product ends in -MIG-<profile>, a shared GPU in -SHARED)",
        )
    if labels["memoryMiB"] == gfd_memory:
        yield from _unreachable_memory(policy, gpu)


def _unreachable_memory(policy: Policy, gpu: dict[str, Any]) -> Iterator[Problem]:
    """`minMemoryMiB` above the `nvidia.com/gpu.memory` GFD writes for every model the policy
    lists matches no node: GFD writes NVML's total (81559 for an H100 80GB HBM3), not 80·1024."""
    wanted, models = gpu.get("minMemoryMiB"), gpu.get("models") or []
    memories = {model: gfd.product_memory(model) for model in models}
    if wanted is None or not models or None in memories.values():
        return  # without models, or with one the table has not seen, any node may still reach it
    most = max(m for m in memories.values() if m is not None)
    if wanted <= most:
        return
    shown = ", ".join(f"{model} {memory}" for model, memory in memories.items())
    yield policy.problem(
        ("gpu", "minMemoryMiB"),
        "gpu-memory-unreachable",
        f"minMemoryMiB {wanted} is above the nvidia.com/gpu.memory GPU Feature Discovery writes for every "
        f"listed model ({shown} MiB): no node matches",
        hint=f"ask for at most {most} (GFD labels NVML's total memory in MiB, what nvidia-smi shows)",
    )


# Rules about a target's settings and the few policies that shape it (Schedulers, its
# DeletionCostPolicy, Manifests), and the one that compares workloads with each other from what
# they share: each run asks them of the whole target.
TARGET_RULES: tuple[Callable[[Target], Iterator[Problem]], ...] = (
    scheduler_rules,
    cost_policy_rules,
    colocation_rules,
    manifests_rules,
    namespace_rules,
    gitops_rules,
)

# Rules about one workload policy, by its kind, given what they read of the rest of its target
# (`Facts`): a policy whose text and facts are those of a run before has that run's findings.
WorkloadRule = Callable[[Policy, Facts], Iterator[Problem]]
_EITHER_KIND: tuple[WorkloadRule, ...] = (_gpu_pods, _container_names, _synced_workload, _gpu_model)
WORKLOAD_RULES: dict[str, tuple[WorkloadRule, ...]] = {
    "GpuWorkload": (_gpu_workload, _gang, *_EITHER_KIND),
    "ReplicatedService": (_service_cost, _autoscaling, _service, *_EITHER_KIND),
}


class Previous(Protocol):
    """What checking a target's workloads may take from an earlier run: the cache layer
    (`generator.cache.policies`) answers, and decides what is the same; the rules only ask."""

    def checked(self, policy: Policy, facts: Facts) -> list[Problem] | None:
        """The policy's findings from a run that checked the same text with the same facts."""

    def keep_checked(self, policy: Policy, facts: Facts, found: list[Problem]) -> None:
        """The policy's findings this run."""


def check_target(target: Target, previous: Previous | None = None) -> list[Problem]:
    """Every rule's findings for the target: the target's rules, then each workload's (from
    `previous` where it has them)."""
    found = [problem for rule in TARGET_RULES for problem in rule(target)]
    facts = Facts.of(target)
    for kind, kind_rules in WORKLOAD_RULES.items():
        for policy in target.of_kind(kind):
            checked = previous.checked(policy, facts) if previous is not None else None
            if checked is None:
                checked = [problem for rule in kind_rules for problem in rule(policy, facts)]
                if previous is not None:
                    previous.keep_checked(policy, facts, checked)
            found += checked
    return found
