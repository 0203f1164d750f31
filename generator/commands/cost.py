"""`gen cost`: a deletion-cost JSON Patch for one Pod from one fresh metrics sample."""

from __future__ import annotations

import json
import sys
from pathlib import Path

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
) -> int:
    policy, problems = validate_policies.deletion_cost_policy(policy_dir, targets)
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
    if cost == last_cost:
        return 0
    print(json.dumps(deletion_cost_patch(uid, cost), separators=(",", ":")))
    return 0
