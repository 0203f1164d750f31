"""`gen cost`: a deletion-cost JSON Patch for one Pod from one fresh metrics sample."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from generator.cache import policies as policies_kept
from generator.errors import GeneratorError
from generator.policies import validate as validate_policies
from generator.preview.cost import CostWeights, SampleError, calculate_cost, current_time, deletion_cost_patch, pod_uid
from generator.preview.inputs import read_input
from generator.problems import Problem, Severity, exit_code, has_errors
from generator.reporters import report


def _fail(problems: list[Problem]) -> int:
    report(problems, "text", sys.stderr)
    return exit_code(problems) or 1


def run(
    sample_path: Path,
    policy_dir: Path | None,
    targets: tuple[str, ...],
    now_text: str | None,
    last_cost: int | None,
    expected_uid: str | None,
    apply_to: str | None = None,
    kubeconfig: Path | None = None,
) -> int:
    kept = policies_kept.Kept.of([policy_dir]) if policy_dir is not None else None
    policy, problems = validate_policies.deletion_cost_policy(policy_dir, targets, kept)
    if has_errors(problems):
        return _fail(problems)
    try:
        now = current_time(now_text)
    except SampleError as err:
        return _fail([Problem("--now", 0, 0, "cost-now", Severity.ERROR, str(err))])
    sample, problems = read_input(sample_path)
    if sample is None:
        return _fail(problems)
    try:
        cost = calculate_cost(sample.data, now, CostWeights.from_policy(policy))
        uid = pod_uid(sample.data)
    except SampleError as err:
        path = (err.field,) if err.field else ()
        return _fail([sample.problem(path, "cost-sample", str(err), hint="the annotation keeps its current value")])
    if expected_uid is not None and uid != expected_uid:
        message = f"the sample is for Pod UID {uid!r}, not {expected_uid!r}"
        return _fail([sample.problem(("pod_uid",), "cost-sample-uid", message)])
    if apply_to is not None:
        return _apply(apply_to, kubeconfig, sample.data, uid, now, CostWeights.from_policy(policy), last_cost)
    if cost == last_cost:
        return 0
    print(json.dumps(deletion_cost_patch(uid, cost), separators=(",", ":")))
    return 0


def _api_client(kubeconfig: Path | None) -> Any:
    """The official client, configured from --kubeconfig or the Pod's own service account."""
    try:
        from kubernetes import client, config
    except ImportError as err:
        raise GeneratorError(
            "gen cost --apply needs the official kubernetes client: pip install 'kubernetes>=28,<36'"
            " (or install gen with its cost extra: pip install '.[cost]' in a clone of gen)"
        ) from err
    try:
        if kubeconfig is not None:
            config.load_kube_config(config_file=str(kubeconfig))
        else:
            config.load_incluster_config()
    except (config.ConfigException, OSError, ValueError, TypeError) as err:
        where = f"--kubeconfig {kubeconfig}" if kubeconfig else "the in-cluster service account (not in a Pod?)"
        raise GeneratorError(f"no cluster to talk to from {where}: {err}") from err
    return client.ApiClient()


def _apply(
    pod: str,
    kubeconfig: Path | None,
    sample: Any,
    uid: str,
    now: datetime,
    weights: CostWeights,
    last_cost: int | None,
) -> int:
    """Send the patch for one sample through DeletionCostManager, as the seed's writer does."""
    namespace, _, name = pod.partition("/")
    if not namespace or not name or "/" in name:
        raise GeneratorError(f"--pod takes NAMESPACE/NAME, not {pod!r}")
    from generator.cost import DeletionCostManager

    manager = DeletionCostManager(_api_client(kubeconfig), namespace, name, uid, weights, last_cost)
    try:
        changed = manager.update_from_metrics(sample, now)
    except Exception as err:  # the client's ApiException and urllib3's errors share no base of ours
        status = getattr(err, "status", None)
        reason = f"{status} {getattr(err, 'reason', '')}".strip() if status else f"{type(err).__name__}: {err}"
        print(f"gen: the patch of Pod {pod} was not applied: {reason}", file=sys.stderr)
        return 1
    print(f"gen: Pod {pod}: deletion cost {'set' if changed else 'unchanged'}", file=sys.stderr)
    return 0
