"""`gen explain scale-down`: which Pods the ReplicaSet controller deletes when a Deployment scales down."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from generator.errors import GeneratorError
from generator.policies.validate import load_policies
from generator.preview import scaledown
from generator.preview.cost import SampleError, current_time
from generator.preview.inputs import read_input
from generator.problems import Problem, Severity, has_errors
from generator.reporters import report


def _fail(problems: list[Problem]) -> int:
    report(problems, "text", sys.stderr)
    return 1


def _hpa_floor(policy_dir: Path, deployment: str, namespace: str | None) -> tuple[int, str, list[Problem]]:
    """The minReplicas of the ReplicatedService that renders this Deployment, and its namespace."""
    policies, problems = load_policies([policy_dir])
    if has_errors(problems):
        return 0, "", problems
    for policy in policies:
        spec = policy.spec
        if policy.kind != "ReplicatedService" or policy.name != deployment:
            continue
        if namespace is not None and spec["namespace"] != namespace:
            continue
        if not spec.get("autoscaling"):
            raise GeneratorError(f"ReplicatedService {deployment!r} has no autoscaling: give --to")
        return int(spec["autoscaling"]["minReplicas"]), str(spec["namespace"]), []
    raise GeneratorError(f"no ReplicatedService {deployment!r} in {policy_dir}: give --to")


def _table(result: scaledown.ScaleDown) -> str:
    header = ("POD", "NODE", "COST", "READY SINCE", "RESTARTS", "RULE", "ACTION")
    rows = [header]
    for v in result.verdicts:
        pod = v.pod
        since = "-" if pod.ready_since is None else scaledown.timestamp_text(pod.ready_since)
        action = "delete" if v.delete else "keep"
        rows.append((pod.name, pod.node or "-", str(pod.cost), since, str(pod.restarts), v.rule, action))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() + "\n" for r in rows]
    head = (
        f"Deployment {result.namespace}/{result.deployment} (ReplicaSet {result.replicaset}): "
        f"{result.from_count} -> {result.to} active Pods\n"
    )
    why = "".join(f"  {v.pod.name}: {v.reason}\n" for v in result.verdicts)
    return head + "".join(lines) + "\nWhy:\n" + why


def run(
    pods_path: Path,
    replicasets_path: Path | None,
    deployment: str,
    namespace: str | None,
    to: int | None,
    now_text: str | None,
    policy_dir: Path | None,
    fmt: str,
) -> int:
    if to is not None and to < 0:
        raise GeneratorError(f"--to must be zero or more, not {to}")
    notes: list[str] = []
    if to is None:
        if policy_dir is None:
            raise GeneratorError("give --to, or a policy directory whose ReplicatedService has autoscaling")
        to, policy_namespace, problems = _hpa_floor(policy_dir, deployment, namespace)
        if has_errors(problems):
            return _fail(problems)
        namespace = namespace or policy_namespace
        notes.append(f"--to defaults to the HPA's minReplicas ({to}) from the ReplicatedService policy")
    try:
        now = scaledown.nanoseconds(current_time(now_text))
    except SampleError as err:
        return _fail([Problem("--now", 0, 0, "scale-down-now", Severity.ERROR, str(err))])
    source, problems = read_input(pods_path)
    if source is None:
        return _fail(problems)
    pods, problems = scaledown.read_pods(source)
    if namespace is None:
        namespaces = sorted({p.namespace for p in pods if p.owner and p.owner.startswith(f"{deployment}-")})
        if len(namespaces) > 1:
            raise GeneratorError(
                f"Pods of a Deployment {deployment!r} are in {', '.join(namespaces)}: give --namespace"
            )
        namespace = namespaces[0] if namespaces else "default"
    replicasets = None
    if replicasets_path is not None:
        rs_source, found = read_input(replicasets_path)
        problems += found
        if rs_source is not None:
            replicasets, found = scaledown.read_replicasets(rs_source, deployment, namespace)
            problems += found
    if has_errors(problems):
        return _fail(problems)
    try:
        result = scaledown.preview(pods, deployment, namespace, replicasets, to, now)
    except scaledown.PredictionRefused as err:
        return _fail([Problem(str(source.name), 0, 0, "scale-down-refused", Severity.ERROR, str(err))])
    result.notes[:0] = notes
    if fmt == "json":
        print(json.dumps(result.as_dict(), indent=2))
    else:
        sys.stdout.write(_table(result) + "".join(f"Note: {n}\n" for n in result.notes))
    return 0
