"""`gen render` (also --check and --diff)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from generator import config, pipeline
from generator.layout import check_out
from generator.problems import Problem, Severity, has_errors
from generator.reporters import report

if TYPE_CHECKING:
    from generator.render.write import DirPlan, Held

# The writer is imported where it is used: a large render imports it while policies load
# (see generator.plan), so importing it up front would only delay that loading.


def run(
    policy_dir: Path,
    out: Path,
    targets: tuple[str, ...],
    check: bool,
    diff: bool,
    fmt: str,
    strict: bool,
    crds: tuple[Path, ...] = (),
) -> int:
    check_out(out)  # a usage error before any work, so nothing is touched
    options = config.render_options(policy_dir, out, targets, crds)
    if isinstance(options, list):
        report(options, fmt)
        return 1
    if not check:
        return _finish(options, diff, fmt, strict)
    from generator.render import write

    # what out holds does not depend on the policies: surveyed beside loading and rendering them
    with write.surveying(out) as surveying:
        return _finish(options, diff, fmt, strict, surveying.result)


def _finish(
    options: pipeline.RenderOptions,
    diff: bool,
    fmt: str,
    strict: bool,
    surveyed: Callable[[], dict[str, Held]] | None = None,
) -> int:
    """The render, then its check (`surveyed`: what out holds, asked once the render passes),
    its diff or its write."""
    check, out, targets = surveyed is not None, options.out, options.targets
    result = pipeline.render(replace(options, written=not (check or diff)))
    from generator.render import write

    shown = [p for p in result.problems if p.severity > Severity.INFO]  # advice is `gen lint`'s to give
    failed = has_errors(shown, strict)
    if shown and (failed or not check):  # --check puts warnings into its one report instead
        # text goes to stderr; stdout keeps a machine format's report, or the --diff
        report(shown, fmt, sys.stderr if fmt == "text" or diff else sys.stdout)
    if failed:
        return 1
    removed = [] if targets else write.removals(out, result.plans)
    plans = result.plans + removed
    if surveyed is not None:
        return _check(out, plans, fmt, shown, surveyed())
    from generator.preview import engine, sync  # what the sync changes: not asked of a check

    changes = result.changes + engine.removed_directories(out, removed)
    if diff:
        text = "".join(
            write.unified_diff(write.safe_dir(out, plan.reldir), plan.with_manifest(), plan.reldir) for plan in plans
        )
        sys.stdout.write("".join(f"{change.line()}\n" for change in sync.ordered(changes)))
        sys.stdout.write(text)
        return 1 if text else 0  # like diff and kubectl diff: 1 when there are differences
    with write.output_lock(out):
        write.recover(out)
        changed = write.write_all(out, plans)
    emptied = len(plans) - len(result.plans)
    print(
        f"gen: rendered {len(result.plans)} director{'y' if len(result.plans) == 1 else 'ies'} into {out}"
        f" ({len(changed)} changed{f', {emptied} no longer rendered and emptied' if emptied else ''})",
        file=sys.stderr,
    )
    for line in sync.summary(changes):
        print(f"gen: {line} — gen plan for details", file=sys.stderr)
    return 0


def _check(out: Path, plans: list[DirPlan], fmt: str, warnings: list[Problem], now: dict[str, Held]) -> int:
    """Drift as findings, reported together with the render's warnings in one report (`now`:
    what each directory gen owns under out holds)."""
    from generator.render import write

    problems: list[Problem] = []
    for plan in plans:
        directory = write.safe_dir(out, plan.reldir)
        wanted, digests = plan.wanted()
        held = now.get(plan.reldir) or write.held(directory)
        for rel in write.collisions(directory, wanted, held.files) if directory.is_dir() else []:
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
        for rel, state in write.drift(directory, wanted, digests, held).paths():
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
    report(warnings + problems, fmt)
    return 1 if problems else 0
