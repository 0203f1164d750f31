"""The pipeline: load -> validate policies -> render -> validate manifests -> write.

Stage functions return values and Problems; this module strings them together for each
command and decides nothing about presentation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from generator import parallel
from generator.cache import policies as policies_kept
from generator.policies.targets import Target
from generator.policies.validate import check_policies, load_policies
from generator.problems import Problem, Severity, has_errors, per_target

if TYPE_CHECKING:
    from generator.preview.sync import Change
    from generator.render.templates import TargetRender
    from generator.render.write import DirPlan

# One target's outcome: its directories, its findings, what syncing it changes.
Outcome = tuple[list["DirPlan"], list[Problem], list["Change"]]


@dataclass(frozen=True)
class RenderOptions:
    policy_dir: Path
    out: Path
    targets: tuple[str, ...] = ()
    crds: tuple[Path, ...] = ()  # CRD files or directories that judge custom resources in Manifests
    written: bool = False  # the render is written into out next (not a check, diff or plan)


@dataclass
class RenderResult:
    problems: list[Problem] = field(default_factory=list)
    plans: list[DirPlan] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)  # what syncing the render would do


def _checked_targets(
    policy_dir: Path, only: tuple[str, ...], meanwhile: Callable[[], object] | None = None
) -> tuple[list[Target], list[Problem]]:
    """Stages 1-2: load and check (what the run before kept reused); no targets when any policy has an error."""
    kept = policies_kept.Kept.of([policy_dir])
    policies, problems = load_policies([policy_dir], meanwhile, kept)
    if has_errors(problems):
        return [], problems
    targets, found = check_policies(policies, only, kept=kept)
    problems += found
    return ([], problems) if has_errors(problems) else (targets, problems)


def render_targets(policy_dir: Path, only: tuple[str, ...] = ()) -> tuple[list[TargetRender], list[Problem]]:
    """Stages 1-3: load, check and render every selected target (no manifest validation yet)."""
    from generator.render.templates import render_target

    targets, problems = _checked_targets(policy_dir, only)
    renders = []
    for target in targets:
        rendered, found = render_target(target)
        problems += found
        renders.append(rendered)
    return renders, problems


def _prepare_render() -> None:
    """Import the render machinery and build what every render worker would otherwise build for
    itself: done here while worker processes load policies, and inherited by the render
    workers forked next."""
    from generator.render import plan  # here, not at the top: see plan's docstring

    plan.prepare()


def _definitions(paths: tuple[Path, ...]) -> list[tuple[object, str]]:
    """The CRDs under paths, read once here for every target (and the workers forked next)."""
    if not paths:
        return []
    from generator.kube import crds

    return crds.stored(paths)[0]


def render(options: RenderOptions) -> RenderResult:
    """Everything but the write: plans per directory, or problems.

    A target whose output holds its render, made from the same inputs, is taken whole from
    the run that rendered it. The others are independent, so large runs render them in worker
    processes, one target each; with fewer targets than CPUs, the targets go one after another,
    each target's policies and objects over all CPUs. Results are collected in order, so the
    output does not depend on scheduling or on the number of processes.
    """
    targets, problems = _checked_targets(options.policy_dir, options.targets, _prepare_render)
    from generator.cache import targets as kept_targets

    result = RenderResult(problems)
    definitions = _definitions(options.crds)
    outcomes: dict[int, Outcome] = {}
    for target in targets:
        if (kept := kept_targets.taken(target, options.out, definitions)) is not None:
            outcomes[id(target)] = (*kept, [])  # out holds the target's render: a sync changes nothing
    todo = [t for t in targets if id(t) not in outcomes]
    if todo:
        job = partial(_target_outcome, out=options.out, definitions=definitions, written=options.written)
        processes = parallel.workers(sum(len(t.policies) for t in todo))
        if len(todo) >= processes:
            done = parallel.map_in_order(job, todo, processes, weight=lambda target: len(target.policies))
        else:
            done = [job(t, processes=parallel.workers(len(t.policies))) for t in todo]
        outcomes.update(zip(map(id, todo), done, strict=True))
    rendered: list[tuple[str, Problem]] = []
    for target in targets:
        plans, found, changes = outcomes[id(target)]
        result.plans.extend(plans)
        result.changes.extend(changes)
        rendered += [(target.name, problem) for problem in found]
    result.problems.extend(per_target(rendered, len(targets)))
    return result


def _target_outcome(
    target: Target, out: Path, definitions: list[tuple[object, str]], written: bool, processes: int = 1
) -> Outcome:
    """Stages 3-4 for one target (in a worker process for large runs), with what an earlier run
    rendered and judged reused and this run's kept (the cache layer decides what is the same),
    then compared with the render committed in out."""
    from generator.cache import renders
    from generator.cache import targets as kept_targets
    from generator.preview import committed
    from generator.render import plan  # imported already by _prepare_render where loading forked

    reuse = renders.Reuse.of(target)
    planned = plan.render_and_plan(target, out, definitions, processes=processes, reuse=reuse)
    changes, found = committed.compare(target, planned, out)
    if reuse is not None:  # after the comparison: the objects' facts it derived are kept too
        reuse.save()
        kept_targets.keep(target, out, definitions, planned.plans, planned.problems, written)
    return planned.plans, planned.problems + found, changes


@dataclass
class LintResult:
    problems: list[Problem] = field(default_factory=list)
    left_to_render: tuple[str, ...] = ()  # rules a target's render checks that these files alone could not


def lint(paths: tuple[Path, ...], crds: tuple[Path, ...] = ()) -> LintResult:
    """`gen lint`: the policy checks of the files asked, and everything their targets' render
    would report about them, rendered in memory (nothing is read from or written to an output).
    A target all of whose policies are asked is judged whole, as `gen render` judges it."""
    from generator.policies.validate import lint as lint_policies

    linted = lint_policies(paths, _prepare_render, policies_kept.Kept.of)
    problems = [p for p in linted.problems if linted.concerns(p.file)]
    targets = [t for t in linted.targets if any(linted.concerns(p.file) for p in t.policies)]
    if not targets:
        return LintResult(problems)
    from generator.render import plan

    definitions = _definitions(crds)
    rendered: list[tuple[str, Problem]] = []
    subset = False  # some target judged without all of its policies
    for target in targets:
        whole = all(linted.concerns(p.file) for p in target.policies if not p.file.startswith("<"))  # <built-in>
        subset = subset or not whole
        only = None if whole else lambda p: linted.concerns(p.file)
        found = plan.render_and_plan(target, None, definitions, only=only).problems
        rendered += [(target.name, p) for p in found if p.severity > Severity.INFO and linted.concerns(p.file)]
    held = per_target(rendered, len(targets))
    return LintResult(problems + [p for p in held if p not in problems], plan.WHOLE_TARGET_RULES if subset else ())
