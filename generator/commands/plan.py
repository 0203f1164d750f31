"""`gen plan`: render in memory and say what syncing it changes in the cluster; write nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from generator import config, pipeline
from generator.layout import check_out
from generator.problems import Severity, has_errors
from generator.reporters import report

_GITHUB_LEVEL = {"refused": "error", "stop": "warning", "prune": "warning", "recreate": "warning"}


def run(
    policy_dir: Path, out: Path, targets: tuple[str, ...], fmt: str, strict: bool, crds: tuple[Path, ...] = ()
) -> int:
    check_out(out)
    options = config.render_options(policy_dir, out, targets, crds)
    if isinstance(options, list):
        report(options, "text", sys.stderr)
        return 1
    result = pipeline.render(options)
    shown = [p for p in result.problems if p.severity > Severity.INFO]  # advice is `gen lint`'s to give
    if shown:
        report(shown, "text", sys.stderr)  # the plan's own format keeps stdout
    if has_errors(shown):
        print("gen: no plan: the render has errors", file=sys.stderr)
        return 1
    from generator.preview import engine, sync
    from generator.render import write

    changes = list(result.changes)
    if not targets:  # directories no target renders any more leave Git whole
        changes += engine.removed_directories(out, write.removals(out, result.plans))
    changes = sync.ordered(changes)
    if fmt == "json":
        print(json.dumps([c.as_dict() for c in changes], indent=2))
    elif fmt == "github":
        for c in changes:
            print(f"::{_GITHUB_LEVEL.get(c.action, 'notice')} title=gen plan: {c.action}::{c.line()}")
    else:
        for c in changes:
            print(c.line())
        counted = sync.summary(changes)
        print(f"gen: {'; '.join(counted) if counted else 'no changes'}", file=sys.stderr)
    failing = {"refused", "prune"} if strict else {"refused"}
    return 1 if any(c.action in failing for c in changes) else 0
