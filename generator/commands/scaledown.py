"""`gen explain scale-down`: which Pods the ReplicaSet controller deletes when a Deployment scales down."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from generator.cache import policies as policies_kept
from generator.errors import GeneratorError
from generator.policies.targets import resolve_targets
from generator.policies.validate import load_policies
from generator.preview import scaledown
from generator.preview.cost import SampleError, current_time
from generator.preview.inputs import read_input
from generator.problems import Problem, Severity, has_errors
from generator.reporters import report


def _fail(problems: list[Problem]) -> int:
    report(problems, "text", sys.stderr)
    return 1


def _hpa_floors(
    policy_dir: Path, deployment: str, namespace: str | None, only: tuple[str, ...]
) -> tuple[list[tuple[str, int, str]], list[Problem]]:
    """(target, minReplicas, namespace) of the ReplicatedService that renders this Deployment, in
    every target that selects it (its overrides applied), or in those `only` names."""
    policies, problems = load_policies([policy_dir], kept=policies_kept.Kept.of([policy_dir]))
    if has_errors(problems):
        return [], problems
    targets, _ = resolve_targets(policies, only)
    found = []
    for target in targets:
        for policy in target.of_kind("ReplicatedService"):
            spec = policy.spec
            if policy.name != deployment or (namespace is not None and spec["namespace"] != namespace):
                continue
            if not spec.get("autoscaling"):
                raise GeneratorError(
                    f"ReplicatedService {deployment!r} has no autoscaling in target {target.name!r}: give --to"
                )
            found.append((target.name, int(spec["autoscaling"]["minReplicas"]), str(spec["namespace"])))
    if not found:
        raise GeneratorError(f"no ReplicatedService {deployment!r} in {policy_dir}: give --to")
    return found, []


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
    targets: tuple[str, ...] = (),
) -> int:
    if to is not None and to < 0:
        raise GeneratorError(f"--to must be zero or more, not {to}")
    if to is not None:
        return _preview(pods_path, replicasets_path, deployment, namespace, [("", to, [])], now_text, fmt)
    if policy_dir is None:
        raise GeneratorError("give --to, or a policy directory whose ReplicatedService has autoscaling")
    floors, problems = _hpa_floors(policy_dir, deployment, namespace, targets)
    if has_errors(problems):
        return _fail(problems)
    namespaces = {ns for _, _, ns in floors}
    if namespace is None and len(namespaces) == 1:
        namespace = next(iter(namespaces))
    asked = [
        (target, floor, [f"--to defaults to the HPA's minReplicas ({floor}) from the ReplicatedService policy"])
        for target, floor, _ in floors
    ]
    return _preview(pods_path, replicasets_path, deployment, namespace, asked, now_text, fmt)


def _preview(
    pods_path: Path,
    replicasets_path: Path | None,
    deployment: str,
    namespace: str | None,
    asked: list[tuple[str, int, list[str]]],
    now_text: str | None,
    fmt: str,
) -> int:
    """The scale-down of one Deployment to each asked size (one per target that gave it)."""
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
    results = []
    for target, to, notes in asked:
        try:
            result = scaledown.preview(pods, deployment, namespace, replicasets, to, now)
        except scaledown.PredictionRefused as err:
            return _fail([Problem(str(source.name), 0, 0, "scale-down-refused", Severity.ERROR, str(err))])
        result.notes[:0] = notes
        results.append(replace(result, target=target))
    if fmt == "json":  # one object; one per target when several targets were judged
        shown = [r.as_dict() for r in results]
        print(json.dumps(shown[0] if len(shown) == 1 else shown, indent=2))
    else:
        sys.stdout.write(
            "\n".join(
                (f"target {r.target}: " if r.target else "") + _table(r) + "".join(f"Note: {n}\n" for n in r.notes)
                for r in results
            )
        )
    return 0
