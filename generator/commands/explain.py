"""`gen explain gpu`: where each GPU workload can run, how its scheduler profile scores each node, and
how many replicas of a GPU service or members of a gang fit."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from generator import pipeline
from generator.errors import GeneratorError
from generator.kube import updates
from generator.kube.scope import POD_SPEC_PATHS, at_path
from generator.policies import context
from generator.policies.policy import Policy
from generator.preview import gpu, scoring
from generator.preview.cost import SampleError, current_time
from generator.preview.inputs import read_input
from generator.problems import Problem, Severity, exit_code, has_errors
from generator.reporters import report

Workload = tuple[gpu.GpuPod, Policy]


def _gpu_pods(policy_dir: Path, targets: tuple[str, ...]) -> tuple[list[Workload], list[Problem]]:
    """Each GpuWorkload's Pod spec exactly as each target that selects it renders it, with
    its target's PriorityClass value; in target, then workload order."""
    renders, problems = pipeline.render_targets(policy_dir, targets)
    found: list[Workload] = []
    for rendered in renders:
        priorities = {
            m.name: m.obj["value"]
            for m in rendered.manifests
            if m.key[:2] == ("scheduling.k8s.io", "PriorityClass") and isinstance(m.obj.get("value"), int)
        }
        profiles = {
            profile.name: profile
            for scheduler in rendered.target.of_kind("Scheduler")
            for profile in map(scoring.Profile.of, context.scheduler_profiles(scheduler))
        }
        mine: dict[str, Workload] = {}
        for manifest in rendered.manifests:
            policy = manifest.policy
            if "gpu" not in policy.spec or manifest.kind not in POD_SPEC_PATHS or policy.name in mine:
                continue
            spec_path = POD_SPEC_PATHS[manifest.kind]
            pod_spec = at_path(manifest.obj, spec_path)
            priority = priorities.get(str((pod_spec or {}).get("priorityClassName")), 0)
            pod = _gpu_pod(policy, pod_spec, rendered.target.name, priority)
            labels = (at_path(manifest.obj, (*spec_path[:-1], "metadata")) or {}).get("labels") or {}
            profile = profiles.get(str(pod_spec.get("schedulerName", "default-scheduler")), scoring.DEFAULT_PROFILE)
            # a ReplicaSet selects a service's Pods, the headless Service a GpuWorkload's with `service`
            selected = policy.kind == "ReplicatedService" or "service" in policy.spec
            surge = updates.rolling_surge(manifest.obj, pod.floor) if manifest.kind == "Deployment" else 0
            pod = replace(pod, labels=labels, selected=selected, profile=profile, surge=surge)
            mine[policy.name] = (pod, policy)
        found += [mine[name] for name in sorted(mine)]
    return found, problems


def _surge_problems(policy: Policy, pod: gpu.GpuPod, fit: int) -> list[Problem]:
    """`gpu-rollout-surge`: the inventory cannot hold the Pods a rolling update adds."""
    if fit >= pod.surge:
        return []
    gpus = pod.requests[pod.resource]
    return [
        policy.problem(
            _floor_field(policy),
            "gpu-rollout-surge",
            f"a rolling update adds {pod.surge} Pod{'s' if pod.surge > 1 else ''} of {gpu.human(pod.resource, gpus)} "
            f"{pod.resource} (maxSurge) beside the {pod.floor} running, and only {fit} fit: the new Pods stay Pending "
            "and the rollout goes no faster than old Pods are taken down (with maxUnavailable 0, never)",
            severity=Severity.WARNING,
            hint="free GPUs for the surge, or patch spec.strategy to maxSurge: 0 with maxUnavailable: 1 (or Recreate)",
        )
    ]


def _gpu_pod(policy: Policy, pod_spec: Any, target: str, priority: int) -> gpu.GpuPod:
    """The rendered Pod, with how many of it a service (replicas or the HPA's bounds), a gang
    (its minMember) or a Job (its parallelism) must and may run."""
    spec, resource = policy.spec, policy.spec["gpu"]["resource"]
    if policy.kind == "ReplicatedService":
        scaling = spec.get("autoscaling")
        floor = scaling["minReplicas"] if scaling else spec["replicas"]
        ceiling = scaling["maxReplicas"] if scaling else floor
        spread = spec["placement"]["spreadAcrossNodes"] == "required"
        return gpu.GpuPod(
            policy.name,
            resource,
            pod_spec,
            policy.kind,
            floor,
            max(floor, ceiling),
            spread,
            target=target,
            priority=priority,
        )
    if "gang" in spec and spec["workloadKind"] == "Job":
        members = context.pod_group(spec)["minMember"]
        return gpu.GpuPod(
            policy.name, resource, pod_spec, policy.kind, members, members, gang=True, target=target, priority=priority
        )
    return gpu.GpuPod(policy.name, resource, pod_spec, policy.kind, target=target, priority=priority)


def _floor_field(policy: Policy) -> tuple[str, ...]:
    """Where a workload says how many of its Pods must run: a gang's, an HPA's minimum, a
    service's replicas; a single Pod's GPUs otherwise."""
    if "gang" in policy.spec:
        return ("gang",)
    if "autoscaling" in policy.spec:
        return ("autoscaling", "minReplicas")
    return ("replicas",) if policy.kind == "ReplicatedService" else ("gpu", "count")


def _capacity_problems(policy: Policy, fit: gpu.Capacity) -> list[Problem]:
    """A floor or a gang that cannot be placed never works: an error; a ceiling short, a warning."""
    at = _floor_field(policy)
    if fit.gang and fit.fit_floor < fit.floor:
        message = f"the gang of {fit.floor} cannot start: only {fit.fit_floor} members fit in the inventory"
    elif fit.fit_floor < fit.floor:
        message = f"only {fit.fit_floor} of the {fit.floor} replicas it always runs fit in the inventory"
    elif fit.fit_ceiling < fit.ceiling:
        return [
            policy.problem(
                ("autoscaling", "maxReplicas"),
                "gpu-capacity-ceiling",
                f"only {fit.fit_ceiling} of up to {fit.ceiling} replicas fit: the HPA's last "
                f"{fit.ceiling - fit.fit_ceiling} would stay Pending",
                severity=Severity.WARNING,
                hint="add GPU nodes, or lower maxReplicas to what the cluster holds",
            )
        ]
    else:
        return []
    return [policy.problem(at, "gpu-capacity", message, hint="the capacity lines of the report say where each fits")]


def _table(rows: list[gpu.Placement]) -> str:
    header = ("TARGET", "WORKLOAD", "NODE", "FEASIBLE", "SCORE", "REASON")
    cells = [header] + [
        (
            r.target,
            r.workload,
            r.node,
            "yes" if r.feasible else "no",
            "-" if r.score is None else str(r.score),
            r.reason,
        )
        for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(5)]
    return "".join("  ".join(c[i].ljust(widths[i]) for i in range(5)) + "  " + c[5] + "\n" for c in cells)


def _together_problems(policy: Policy, fits_alone: bool, fit: gpu.Together, first: list[str]) -> list[Problem]:
    """`gpu-capacity-together`: a floor that fits alone but not beside the target's other GPU
    workloads, which kube-scheduler places first (higher priority, or before it by name)."""
    if fit.fit_floor >= fit.floor or not fits_alone:
        return []
    named = ", ".join(first[:3]) + (f" and {len(first) - 3} more" if len(first) > 3 else "")
    before = f" after {named}" if first else " first"
    return [
        policy.problem(
            _floor_field(policy),
            "gpu-capacity-together",
            f"target {fit.target!r}: its floor of {fit.floor} fits the inventory alone, but only {fit.fit_floor} fit "
            f"beside the target's other GPU workloads, placed{before}",
            hint="add GPU nodes, lower a floor, or give this workload a higher PriorityClass",
        )
    ]


def _together_line(fit: gpu.Together) -> str:
    floor = f"floor {fit.fit_floor}/{fit.floor}"
    ceiling = f"; ceiling {fit.fit_ceiling}/{fit.ceiling}" if fit.ceiling != fit.floor else ""
    verdict = "" if fit.fit_floor == fit.floor else " — does not fit beside the others"
    return f"{fit.target}: {fit.workload}: {floor}{ceiling}{verdict}"


def run(
    nodes_path: Path,
    pods_path: Path | None,
    utilization_path: Path | None,
    policy_dir: Path,
    targets: tuple[str, ...],
    now_text: str | None,
    max_age: float,
    fmt: str,
    only: tuple[str, ...] = (),
) -> int:
    if not math.isfinite(max_age) or max_age <= 0:
        raise GeneratorError(f"--max-age must be a positive number of seconds, not {max_age}")
    problems: list[Problem] = []
    source, found = read_input(nodes_path)
    problems += found
    nodes: list[gpu.Node] = []
    if source is not None:
        nodes, found = gpu.read_nodes(source)
        problems += found
    if pods_path is not None and nodes:
        pods, found = read_input(pods_path)
        problems += found if pods is None else found + gpu.add_pod_requests(pods, nodes)
    sample_problems: list[Problem] = []
    utilization = None
    if utilization_path is not None:
        try:
            now = current_time(now_text)
        except SampleError as err:
            problems.append(Problem("--now", 0, 0, "utilization-now", Severity.ERROR, str(err)))
            now = None
        samples, found = read_input(utilization_path)
        problems += found
        if samples is not None and now is not None:
            # a bad sample spoils only its node's score, so the report still goes out
            utilization, sample_problems = gpu.read_utilization(samples, now, max_age)
    workloads, found = _gpu_pods(policy_dir, targets)
    pools = len({pod.target for pod, _ in workloads})
    problems += [p for p in found if p.severity > Severity.INFO]  # advice belongs to `gen lint`
    if only and not has_errors(problems):
        known = {pod.name for pod, _ in workloads}
        if missing := sorted(set(only) - known):
            raise GeneratorError(f"no GPU workload {', '.join(missing)}; known: {', '.join(sorted(known)) or 'none'}")
        workloads = [(pod, policy) for pod, policy in workloads if pod.name in only]
    if has_errors(problems):
        report(problems, "text", sys.stderr)
        return 1

    problems += sample_problems
    rows: list[gpu.Placement] = []
    fits: list[gpu.Capacity] = []
    alone: dict[tuple[str, str], gpu.Capacity] = {}
    feasible: dict[str, list[tuple[gpu.GpuPod, list[str]]]] = {}
    placeable: dict[str, set[str]] = {}
    for pod, policy in workloads:
        placements = gpu.explain(pod, nodes, utilization)
        rows += placements
        feasible.setdefault(pod.target, []).append((pod, [p.node for p in placements if p.feasible]))
        if any(p.feasible for p in placements):
            placeable.setdefault(pod.target, set()).add(pod.name)
        if pod.floor:
            fits.append(gpu.capacity(pod, nodes, placements))
            alone[(pod.target, pod.name)] = fits[-1]
            if any(p.feasible for p in placements):  # else gpu-unschedulable below says it already
                problems += _capacity_problems(policy, fits[-1])
                if pod.surge and fits[-1].fit_floor == pod.floor:
                    problems += _surge_problems(policy, pod, fits[-1].fit_surge)
        if not any(p.feasible for p in placements):
            problems.append(
                policy.doc.problem(
                    ("metadata", "name"),
                    "gpu-unschedulable",
                    f"no node in the inventory can hold {policy.kind} {pod.name!r}"
                    + (f" for target {pod.target!r}" if pools > 1 else ""),
                    hint="check the model/memory labels and free GPUs in the reasons"
                    + ("; --target picks the target this inventory belongs to" if pools > 1 else ""),
                )
            )
        problems += {
            Problem(str(utilization_path), 0, 0, "utilization-missing", Severity.ERROR, f"node {p.node}: {p.reason}")
            for p in placements
            if p.feasible and p.score is None
        }
    policies = {(pod.target, pod.name): policy for pod, policy in workloads}
    shared: list[gpu.Together] = []
    for target, entries in feasible.items():
        placed = gpu.together(entries, nodes)
        shared += placed
        order = [pod.name for pod, _ in sorted(entries, key=lambda e: (-e[0].priority, e[0].name))]
        for fit in placed:
            first = order[: order.index(fit.workload)]  # placed before it
            capacity = alone.get((target, fit.workload))
            fits_alone = (
                capacity.fit_floor >= capacity.floor if capacity else fit.workload in placeable.get(target, set())
            )
            problems += _together_problems(policies[(target, fit.workload)], fits_alone, fit, first)
    if fmt == "json":
        # one line: Python's indenting encoder is pure Python, ten times slower over a large inventory
        print(
            json.dumps(
                {
                    "placements": [r.as_dict() for r in rows],
                    "capacity": [f.as_dict() for f in fits],
                    "together": [t.as_dict() for t in shared],
                }
            )
        )
    else:
        sys.stdout.write(_table(rows))
        if fits:
            sys.stdout.write("\n" + "".join(f.summary() + "\n" for f in fits))
        if shared:
            sys.stdout.write(
                "\ntogether, floors first by priority:\n" + "".join(_together_line(t) + "\n" for t in shared)
            )
    if problems:
        report(problems, "text", sys.stderr)
    return exit_code(problems)
