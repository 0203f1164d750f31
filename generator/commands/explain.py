"""`gen explain gpu`: where each GpuWorkload can run and how GPUPacking scores each node."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from generator import pipeline
from generator.errors import GeneratorError
from generator.kube.scope import POD_SPEC_PATHS
from generator.policies.policy import Policy
from generator.preview import gpu
from generator.preview.cost import SampleError, current_time
from generator.preview.inputs import read_input
from generator.problems import Problem, Severity, exit_code, has_errors
from generator.reporters import report


def _gpu_pods(policy_dir: Path, targets: tuple[str, ...]) -> tuple[list[tuple[gpu.GpuPod, Policy]], list[Problem]]:
    """Each GpuWorkload's Pod spec exactly as rendered (first target that renders it)."""
    renders, problems = pipeline.render_targets(policy_dir, targets)
    found: dict[str, tuple[gpu.GpuPod, Policy]] = {}
    for rendered in renders:
        for manifest in rendered.manifests:
            policy = manifest.policy
            if "gpu" not in policy.spec or manifest.kind not in POD_SPEC_PATHS or policy.name in found:
                continue
            pod_spec: Any = manifest.obj
            for key in POD_SPEC_PATHS[manifest.kind]:
                pod_spec = pod_spec[key]
            found[policy.name] = (gpu.GpuPod(policy.name, policy.spec["gpu"]["resource"], pod_spec), policy)
    return [found[name] for name in sorted(found)], problems


def _table(rows: list[gpu.Placement]) -> str:
    header = ("WORKLOAD", "NODE", "FEASIBLE", "SCORE", "REASON")
    cells = [header] + [
        (r.workload, r.node, "yes" if r.feasible else "no", "-" if r.score is None else str(r.score), r.reason)
        for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    return "".join("  ".join(c[i].ljust(widths[i]) for i in range(4)) + "  " + c[4] + "\n" for c in cells)


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
    problems += [p for p in found if p.severity > Severity.INFO]  # advice belongs to `gen lint`
    if only and not has_errors(problems):
        known = {pod.name for pod, _ in workloads}
        if missing := sorted(set(only) - known):
            raise GeneratorError(f"no GpuWorkload {', '.join(missing)}; known: {', '.join(sorted(known)) or 'none'}")
        workloads = [(pod, policy) for pod, policy in workloads if pod.name in only]
    if has_errors(problems):
        report(problems, "text", sys.stderr)
        return 1

    problems += sample_problems
    rows: list[gpu.Placement] = []
    for pod, policy in workloads:
        placements = gpu.explain(pod, nodes, utilization)
        rows += placements
        if not any(p.feasible for p in placements):
            problems.append(
                policy.doc.problem(
                    ("metadata", "name"),
                    "gpu-unschedulable",
                    f"no node in the inventory can hold GpuWorkload {pod.name!r}",
                    hint="check the model/memory labels and free GPUs in the reasons",
                )
            )
        problems += {
            Problem(str(utilization_path), 0, 0, "utilization-missing", Severity.ERROR, f"node {p.node}: {p.reason}")
            for p in placements
            if p.feasible and p.score is None
        }
    if fmt == "json":
        print(json.dumps([r.as_dict() for r in rows], indent=2))
    else:
        sys.stdout.write(_table(rows))
    if problems:
        report(problems, "text", sys.stderr)
    return exit_code(problems)
