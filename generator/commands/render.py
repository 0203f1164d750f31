"""`gen render` (also --check and --diff)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from generator import pipeline, write
from generator.problems import Problem, Severity, has_errors
from generator.reporters import report


def run(policy_dir: Path, out: Path, targets: tuple[str, ...], check: bool, diff: bool, fmt: str, strict: bool) -> int:
    result = pipeline.render(pipeline.RenderOptions(policy_dir, out, targets))
    if result.problems:
        report(result.problems, fmt, sys.stderr if fmt == "text" else sys.stdout)
    if has_errors(result.problems, strict):
        return 1
    plans = result.plans if targets else result.plans + write.removals(out, result.plans)
    if check:
        return _check(out, plans, fmt)
    if diff:
        text = "".join(write.unified_diff(write.safe_dir(out, plan.reldir), plan, plan.reldir) for plan in plans)
        sys.stdout.write(text)
        return 0
    with write.output_lock(out):
        write.recover(out)
        changed = write.write_all(out, plans)
    print(
        f"gen: rendered {len(result.plans)} director{'y' if len(result.plans) == 1 else 'ies'} into {out}"
        f" ({len(changed)} changed, {len(plans) - len(result.plans)} no longer rendered and emptied)",
        file=sys.stderr,
    )
    return 0


def _check(out: Path, plans: list[write.DirPlan], fmt: str) -> int:
    problems: list[Problem] = []
    for plan in plans:
        directory = write.safe_dir(out, plan.reldir)
        for rel in write.collisions(directory, plan) if directory.is_dir() else []:
            problems.append(
                Problem(
                    f"{out}/{plan.reldir}/{rel}",
                    0,
                    0,
                    "output-collision",
                    Severity.ERROR,
                    "generated file would overwrite a file gen does not own",
                )
            )
        for rel, state in write.drift(directory, plan).paths():
            problems.append(
                Problem(
                    f"{out}/{plan.reldir}/{rel}",
                    0,
                    0,
                    f"drift-{state}",
                    Severity.ERROR,
                    f"{state}: run `gen render` and commit the result",
                )
            )
    if fmt == "json":
        print(json.dumps([p.as_dict() for p in problems], indent=2))
    else:
        report(problems, fmt)
    return 1 if problems else 0
