"""Benchmark gen on synthetic repositories; prints medians and ratios against baselines run alongside.

    python3 benchmarks/bench.py [--sizes 100,1000,10000] [--runs 3] [--baseline-files 200] [--kapitan PATH]
                                [--work DIR] [--venv DIR] [--one-target 10000] [--manifests 1000]
                                [--explain-nodes 1000] [--crds 200]

gen is measured as users get it: `pip install .` into a virtual environment of its own
(--venv, default .venv-bench, refreshed from this tree on every run), never the editable
development install.

Every figure is the median of --runs fresh processes (wall time, CPU time of the process and
the workers it waited for, peak RSS of that process; for a cold render also of its worker
processes, sampled, with pages shared after fork counted in each).

Every row of gen names its cache (XDG_CACHE_HOME) and the directory used:
- cold: a directory removed and created again before every run, as on a machine that never
  ran gen or a CI runner that keeps no cache;
- kept: one directory per repository that every run keeps, as pre-commit and CI that keeps
  ~/.cache/gen have it, warmed by a run that is not timed; "after one change" rows edit one
  file before every run (a policy's image tag, or for `gen validate` a rendered manifest's).

Shared machines are noisy, so each comparison is a ratio against a baseline measured in the
same run: `kapitan compile` of the same services (one Kapitan target per service, the same
Deployment and HPA from jinja2, no validation) when --kapitan names the binary;
`kubernetes-validate --strict` on a sample of the same rendered files (its cost is per file, so
its rate is extrapolated to all of them); and, for lint latency, `check-jsonschema` on the same
policy file with the schema `gen schema` exports. The targets of the specification's section 7
are judged at the end from the ratios of this run.

A goal for a fresh process after one change is also split at the end: what Python and the
libraries the command must import take in a process that does nothing else (its start-up floor,
measured beside `python -c pass`), and what that leaves for gen's own modules and work.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kapitan_repo import make_kapitan_repo
from synthetic import make_crd_repo, make_gpu_repo, make_manifests_repo, make_repo

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv-bench" / "bin"  # set by main() to the environment it installs gen into


def install(venv: Path, source: Path = ROOT, extras: str = "[bench]") -> Path:
    """A non-editable install of the source tree (with extras) in venv; returns its bin/."""
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(source)], check=True)
    subprocess.run([*pip, f"{source}{extras}"], check=True)
    return venv / "bin"


@dataclass(frozen=True)
class Cache:
    """gen's cache directory for a row, and how it is treated between runs."""

    kind: str  # "cold": emptied before every run; "kept": what the runs before left
    path: Path

    def prepare(self) -> None:
        if self.kind == "cold":
            shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True, exist_ok=True)

    def env(self) -> dict[str, str]:
        return {**os.environ, "XDG_CACHE_HOME": str(self.path)}


def caches(work: Path, name: str) -> tuple[Cache, Cache]:
    """The cold and the kept cache of one benchmark repository."""
    return Cache("cold", work / f"cache-{name}-cold"), Cache("kept", work / f"cache-{name}-kept")


@dataclass
class Sample:
    seconds: float
    cpu: float  # user + system of the process and the workers it waited for
    peak_mib: float
    tree_mib: float = 0.0  # the process and its workers, sampled


def _tree_rss_kib(pid: int) -> int:
    """RSS of pid and all its descendants; pages shared after fork count in each, so an upper bound."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            rss = next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
        children = [
            int(child)
            for task in os.listdir(f"/proc/{pid}/task")
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        ]
    except OSError:
        return 0  # gone while we looked
    return rss + sum(_tree_rss_kib(child) for child in children)


def _sample_tree(pid: int, done: threading.Event, peak: list[int]) -> None:
    while not done.wait(0.02):
        peak[0] = max(peak[0], _tree_rss_kib(pid))


def run(
    cmd: Sequence[object],
    ok_codes: tuple[int, ...] = (0,),
    cwd: Path | None = None,
    cache: Cache | None = None,
) -> Sample:
    """One fresh process: wall time, CPU time, its own peak RSS (from wait4) and its tree's (sampled)."""
    if cache:
        cache.prepare()
    with tempfile.TemporaryFile() as stderr:  # a pipe would fill and stall a chatty command
        start = time.perf_counter()
        proc = subprocess.Popen(
            [str(c) for c in cmd],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=cwd,
            env=cache.env() if cache else None,
        )
        done, tree = threading.Event(), [0]
        sampler = threading.Thread(target=_sample_tree, args=(proc.pid, done, tree))
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        done.set()
        sampler.join()
        code = os.waitstatus_to_exitcode(status)
        if code not in ok_codes:
            stderr.seek(0)
            raise SystemExit(f"{' '.join(map(str, cmd))} exited {code}:\n{stderr.read().decode()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return Sample(seconds, cpu, usage.ru_maxrss / 1024, max(tree[0], usage.ru_maxrss) / 1024)


@dataclass
class Job:
    """One command of a measurement, and what is done (untimed) before each of its runs."""

    cmd: Sequence[object]
    cache: Cache | None = None
    before: Callable[[], object] | None = None
    cwd: Path | None = None
    ok_codes: tuple[int, ...] = (0,)


def interleaved(jobs: Sequence[Job], runs: int) -> list[list[Sample]]:
    """Each job's samples over `runs` rounds in which every job runs once, in turn: gen and its
    baseline measured so see the same machine, however its load drifts during the run."""
    samples: list[list[Sample]] = [[] for _ in jobs]
    for _ in range(runs):
        for job, taken in zip(jobs, samples, strict=True):
            if job.before:
                job.before()
            taken.append(run(job.cmd, job.ok_codes, job.cwd, job.cache))
    return samples


def middle(samples: list[Sample]) -> Sample:
    """The median of each figure."""
    return Sample(*(statistics.median(getattr(s, f.name) for s in samples) for f in fields(Sample)))


def median(
    cmd: Sequence[object],
    runs: int,
    before: Callable[[], object] | None = None,
    cwd: Path | None = None,
    ok_codes: tuple[int, ...] = (0,),
    cache: Cache | None = None,
) -> Sample:
    """The median of each figure over `runs` runs, `before` called (untimed) ahead of each."""
    return middle(interleaved([Job(cmd, cache, before, cwd, ok_codes)], runs)[0])


def pair_ratios(baseline: list[Sample], gen: list[Sample], scale: float = 1.0) -> tuple[float, float]:
    """The median over the rounds of the baseline's time (times `scale`) over gen's: wall, then CPU."""
    pairs = list(zip(baseline, gen, strict=True))
    return (
        statistics.median(scale * b.seconds / g.seconds for b, g in pairs),
        statistics.median(scale * b.cpu / g.cpu for b, g in pairs),
    )


def row(label: str, cache: Cache | None, sample: Sample, note: str = "") -> None:
    """One printed figure: what ran, with which cache, its median, and the cache directory."""
    where = f"  [{cache.kind} cache: {cache.path}]" if cache else ""
    print(
        f"  {label:<50} {cache.kind if cache else '-':<5} {sample.seconds:7.2f} s  cpu {sample.cpu:6.2f} s"
        f"  peak {sample.peak_mib:5.0f} MiB{note}{where}"
    )


@dataclass
class Target:
    """A goal of the specification's section 7, judged on this run's figures."""

    what: str
    value: float
    goal: float
    unit: str  # "x": at least goal times the baseline; "s": below goal seconds; "ratio": at most goal
    cpu: float | None = None  # the same ratio from CPU times, which a loaded machine moves less
    budget: str = ""  # for a goal a fresh process must meet: its time, and what start-up leaves of it

    def met(self) -> bool:
        return self.value >= self.goal if self.unit == "x" else self.value <= self.goal

    def __str__(self) -> str:
        sign = ">=" if self.unit == "x" else "<=" if self.unit == "ratio" else "<"
        shown = f"{self.value:.1f}x" if self.unit == "x" else f"{self.value:.2f}{' s' if self.unit == 's' else ''}"
        goal = f"{self.goal:g}{'x' if self.unit == 'x' else ' s' if self.unit == 's' else ''}"
        by_cpu = "" if self.cpu is None else f"; from CPU times {self.cpu:.2f}{'x' if self.unit == 'x' else ''}"
        line = f"  {'met    ' if self.met() else 'NOT MET'}  {self.what}: {shown} (goal {sign} {goal}{by_cpu})"
        return line + (f"\n             {self.budget}" if self.budget else "")


TARGETS: list[Target] = []

# What each command imports before any of gen's own code runs: the design card's libraries
# (typer, PyYAML, Jinja2) and jsonschema-rs. A process that imports them and does nothing else
# is the least any run of the command can take.
FLOOR_IMPORTS = {
    "typer, yaml, jinja2, jsonschema_rs": ("lint", "render"),
    "typer, yaml, jsonschema_rs": ("validate",),  # it renders nothing: no Jinja2
}
FLOORS: dict[str, Sample] = {}


def bench_floors(runs: int) -> None:
    """Each command's start-up floor (FLOOR_IMPORTS), in turn with a bare interpreter."""
    python = BIN / "python"
    # ending as gen's console script ends (os._exit, no interpreter teardown: 12 ms of these)
    floors = [Job([python, "-c", f"import {names}, os; os._exit(0)"]) for names in FLOOR_IMPORTS]
    jobs = [Job([python, "-c", "pass"]), *floors]
    taken = interleaved(jobs, max(runs, 11))
    row("python -c pass (start-up)", None, middle(taken[0]))
    for (names, commands), samples in zip(FLOOR_IMPORTS.items(), taken[1:], strict=True):
        FLOORS.update(dict.fromkeys(commands, middle(samples)))
        row(f"start-up floor of gen {' and gen '.join(commands)}", None, middle(samples), f"  (import {names})")


def budget(command: str, goal: float, taken: float) -> str:
    """A goal of `goal` seconds for a fresh process of the command, split: what the libraries
    it must import take, what that leaves for gen's own modules and work, and what those take now."""
    floor = FLOORS.get(command)
    if floor is None:
        return ""
    return (
        f"{goal:.3f} s at most; Python and the libraries gen {command} imports take {floor.seconds:.3f} s,"
        f" leaving {goal - floor.seconds:.3f} s for gen's own modules and work, which take {taken - floor.seconds:.3f} s"
    )


def manifests(out: Path) -> list[Path]:
    return [p for p in sorted(out.rglob("*.yaml")) if p.name != "kustomization.yaml"]


def bump_image(path: Path, service: str = "svc-00000") -> None:
    """Change one service, as a typical commit does: its image tag goes to the next version
    (in its policy file, or in a manifest rendered from it)."""
    text = path.read_text()
    path.write_text(re.sub(rf"({service}:v)(\d+)", lambda m: f"{m[1]}{int(m[2]) + 1}", text, count=1))


def checks_after_one_change(render: list[object], policy: Path, kept: Cache, runs: int) -> tuple[Sample, Sample]:
    """`gen render --check` after one policy changed: rendered (the check a commit passes) and not
    rendered (drift: the check that fails a commit, as pre-commit and CI run it)."""

    def change_and_render() -> None:
        bump_image(policy)
        run(render, cache=kept)

    check = [*render, "--check"]
    rendered = median(check, runs, before=change_and_render, cache=kept)
    row("gen render --check, after one change rendered", kept, rendered, "  (passes)")
    stale = median(check, runs, before=lambda: bump_image(policy), ok_codes=(1,), cache=kept)
    row("gen render --check, after one change not rendered", kept, stale, "  (fails)")
    return rendered, stale


def bench_size(
    services: int,
    runs: int,
    baseline_files: int,
    kapitan: Path | None,
    work: Path,
    check_jsonschema: Sample | None,
) -> None:
    root = work / f"repo-{services}"
    policies = make_repo(root, services)
    out, cold_out = root / "deploy", root / "deploy-cold"
    gen = BIN / "gen"
    cold, kept = caches(work, str(services))
    policy = policies / "svc-00000.yaml"
    render: list[object] = [gen, "render", policies, "--out", out]
    print(f"\n{services} ReplicatedServices over 4 targets (gen and its baseline in turn, each round)")
    run(render, cache=kept)  # the committed output, and the kept cache warmed
    files = manifests(out)
    print(f"  -> {len(files)} manifests")

    # a cold render writes a directory of its own, so that the kept cache's output stays its own
    jobs = [
        Job([gen, "render", policies, "--out", cold_out], cold, lambda: shutil.rmtree(cold_out, True)),
        Job(render, kept, lambda: bump_image(policy)),
    ]
    if kapitan:
        repo = make_kapitan_repo(root, services)
        compiled = repo / "compiled"
        jobs.append(Job([kapitan, "compile"], None, lambda: shutil.rmtree(compiled, True), repo))
    taken = interleaved(jobs, runs)
    first, one_change = middle(taken[0]), middle(taken[1])
    row(
        "gen render (no output before)",
        cold,
        first,
        f"  {len(files) / first.seconds:6.0f} manifests/s, with workers <= {first.tree_mib:.0f} MiB",
    )
    row("gen render, after one change", kept, one_change)
    if kapitan:
        kap = middle(taken[2])
        count = sum(1 for _ in compiled.rglob("*.yaml"))
        (cold_ratio, cold_cpu), (changed_ratio, changed_cpu) = (
            pair_ratios(taken[2], taken[0]),
            pair_ratios(taken[2], taken[1]),
        )
        row(
            "kapitan compile (no cache of its own)",
            None,
            kap,
            f"  {count / kap.seconds:6.0f} manifests/s -> gen render is {cold_ratio:.1f}x faster cold,"
            f" {changed_ratio:.1f}x after one change (CPU time: {cold_cpu:.1f}x, {changed_cpu:.1f}x)",
        )
        if services == 1000:
            TARGETS.append(Target("gen render against Kapitan, 1,000 services, cold", cold_ratio, 12, "x", cold_cpu))
            what = "gen render against Kapitan, 1,000 services, after one change"
            TARGETS.append(
                Target(
                    what, changed_ratio, 40, "x", changed_cpu, budget("render", kap.seconds / 40, one_change.seconds)
                )
            )
    row("gen render, no change", kept, median(render, runs, cache=kept))
    row("gen render --check, output up to date", cold, median([*render, "--check"], runs, cache=cold))
    rendered, stale = checks_after_one_change(render, policy, kept, runs)
    if services == 10_000:
        what = "render --check after one change, 10,000 services (4 targets)"
        TARGETS.append(Target(f"{what}, fails", stale.seconds, 1, "s"))
        TARGETS.append(Target(f"{what}, passes", rendered.seconds, 1, "s"))

    run(render, cache=kept)
    validate = [gen, "validate", out]
    run(validate, cache=kept)  # warms the kept cache
    validated = median(validate, runs, cache=kept)
    deployment = next(p for p in files if p.name == "deployment-svc-00000.yaml")
    jobs = [Job(validate, cold), Job(validate, kept, lambda: bump_image(deployment))]
    # kubernetes-validate skips kinds it has no schema for; core kinds are all it can check
    sample = [p for p in files if "/_gitops/" not in p.as_posix()][:baseline_files]
    if sample:
        jobs.append(Job([BIN / "kubernetes-validate", "--strict", "-k", "1.35.0", *sample]))
    taken = interleaved(jobs, runs)
    first_validate, changed_validate = middle(taken[0]), middle(taken[1])
    row("gen validate", cold, first_validate, f"  {len(files) / first_validate.seconds:6.0f} manifests/s")
    row("gen validate, no change (validated before)", kept, validated)
    row("gen validate, after one manifest changed", kept, changed_validate)
    if sample:
        kv, scale = middle(taken[2]), len(files) / len(sample)
        (cold_ratio, cold_cpu), (changed_ratio, changed_cpu) = (
            pair_ratios(taken[2], taken[0], scale),
            pair_ratios(taken[2], taken[1], scale),
        )
        row(
            f"kubernetes-validate --strict, {len(sample)} of the files",
            None,
            kv,
            f"  {kv.seconds / len(sample) * 1000:.0f} ms/file, ~{kv.seconds * scale:.0f} s for all {len(files)}"
            f" -> gen validate is {cold_ratio:.0f}x faster cold, {changed_ratio:.0f}x after one manifest changed"
            f" (CPU time: {cold_cpu:.0f}x, {changed_cpu:.0f}x), {kv.seconds * scale / validated.seconds:.0f}x"
            " with no change",
        )
        if services == 1000:
            what = "gen validate against kubernetes-validate, 2,020 files"
            TARGETS.append(Target(f"{what}, cold", cold_ratio, 60, "x", cold_cpu))
            after = budget("validate", kv.seconds * scale / 200, changed_validate.seconds)
            TARGETS.append(Target(f"{what}, after one change", changed_ratio, 200, "x", changed_cpu, after))

    lint = [gen, "lint", policy]
    cold_lint = median(lint, runs, cache=cold)
    run(lint, cache=kept)
    kept_lint = median(lint, runs, before=lambda: bump_image(policy), cache=kept)
    cold_note = against_check_jsonschema(cold_lint, check_jsonschema) if check_jsonschema else ""
    kept_note = against_check_jsonschema(kept_lint, check_jsonschema) if check_jsonschema else ""
    row("gen lint of one policy file", cold, cold_lint, cold_note)
    row("gen lint of one policy file, after it changed", kept, kept_lint, kept_note)


def bench_one_target(services: int, runs: int, work: Path) -> None:
    """All services in one target: a target's policies are independent work too."""
    root = work / f"one-target-{services}"
    policies = make_repo(root, services, targets=1)
    out = root / "deploy"
    gen = BIN / "gen"
    cold, kept = caches(work, f"one-target-{services}")
    policy = policies / "svc-00000.yaml"
    render: list[object] = [gen, "render", policies, "--out", out]
    print(f"\n{services} ReplicatedServices in one target")
    first = median(render, runs, before=lambda: shutil.rmtree(out, True), cache=cold)
    row("gen render (no output before)", cold, first, f"  with workers <= {first.tree_mib:.0f} MiB")
    run(render, cache=kept)
    row("gen render, after one change", kept, median(render, runs, before=lambda: bump_image(policy), cache=kept))
    _, stale = checks_after_one_change(render, policy, kept, runs)
    if services == 10_000:
        TARGETS.append(Target("gen render, 10,000 services in one target, cold", first.seconds, 5, "s"))
        TARGETS.append(
            Target("render --check after one change, 10,000 services in one target, fails", stale.seconds, 1, "s")
        )


def bench_lint(runs: int, work: Path) -> Sample | None:
    """`gen lint` of one policy file against check-jsonschema on it, in turn; returns check-jsonschema's
    figures. Both take a fraction of a second, where a busy machine's scheduling weighs most: at
    least 11 rounds."""
    runs = max(runs, 11)
    root = work / "lint"
    policies = make_repo(root, 1)
    one = policies / "svc-00000.yaml"
    schemas = root / "schemas"
    gen = BIN / "gen"
    cold, kept = caches(work, "lint")
    run([gen, "schema", "--out", schemas], cache=cold)
    print(f"\ngen lint of one policy file (4 targets, 1 service), medians of {runs}")
    bench_floors(runs)
    lint = [gen, "lint", one]
    run(lint, cache=kept)
    jobs = [Job(lint, cold), Job(lint, kept, lambda: bump_image(one))]
    checker = BIN / "check-jsonschema"
    if checker.exists():
        jobs.append(Job([checker, "--schemafile", schemas / "replicatedservice.json", one]))
    taken = interleaved(jobs, runs)
    if not checker.exists():
        row("gen lint", cold, middle(taken[0]))
        row("gen lint, after the file changed", kept, middle(taken[1]))
        print("  check-jsonschema not installed (pip install '.[bench]') - no lint baseline")
        return None
    cj = middle(taken[2])
    row("gen lint", cold, middle(taken[0]), against_check_jsonschema(middle(taken[0]), cj))
    row("gen lint, after the file changed", kept, middle(taken[1]), against_check_jsonschema(middle(taken[1]), cj))
    row("check-jsonschema, same file and schema", None, cj)
    wall, cpu = pair_ratios(taken[2], taken[1])
    what = "gen lint of one file / check-jsonschema, after it changed"
    TARGETS.append(
        Target(what, 1 / wall, 0.5, "ratio", 1 / cpu, budget("lint", 0.5 * cj.seconds, middle(taken[1]).seconds))
    )
    return cj


def against_check_jsonschema(lint: Sample, check_jsonschema: Sample) -> str:
    return (
        f"  {lint.seconds / check_jsonschema.seconds:.2f}x check-jsonschema"
        f" (CPU time {lint.cpu / check_jsonschema.cpu:.2f}x)"
    )


def bench_manifests(objects: int, runs: int, work: Path) -> None:
    """A Manifests policy over raw objects: rendered (read, validated, written), against
    `gen validate` of the same files in the same run."""
    root = work / f"manifests-{objects}"
    policies = make_manifests_repo(root, objects)
    out = root / "deploy"
    gen = BIN / "gen"
    cold, _ = caches(work, f"manifests-{objects}")
    render = median([gen, "render", policies, "--out", out], runs, lambda: shutil.rmtree(out, True), cache=cold)
    validate = median([gen, "validate", root / "manifests"], runs, cache=cold)
    print(f"\nManifests policy over {objects} raw objects")
    row("gen render (no output before)", cold, render)
    row(
        "gen validate of the same files",
        cold,
        validate,
        f"  render / validate = {render.seconds / validate.seconds:.2f}",
    )


def bench_explain(nodes: int, policies: int, runs: int, work: Path) -> None:
    """`gen explain gpu` of GPU services and gangs over a large inventory: every policy judged
    on every node, then its replicas or members placed one at a time."""
    root = work / f"explain-{nodes}"
    directory, inventory = make_gpu_repo(root, nodes, policies)
    gen = BIN / "gen"
    cold, _ = caches(work, f"explain-{nodes}")
    # exit 1: some workloads do not fit beside the others, which is what explain is there to say
    command: list[str | Path] = [gen, "explain", "gpu", "--nodes", inventory, "--format", "json", directory]
    explain = median(command, runs, ok_codes=(0, 1), cache=cold)
    render = median([gen, "render", directory, "--out", root / "deploy"], runs, cache=cold)
    print(f"\n{policies} GPU policies over {nodes} nodes")
    row("gen explain gpu", cold, explain)
    row("gen render of the same policies", cold, render)


def bench_crds(crds: int, resources: int, files: int, runs: int, work: Path) -> None:
    """`gen validate` of a repository whose custom resources are judged by CRDs among its files
    (structural schemas, defaults, list-map keys and CEL rules), against the same repository's
    CRDs validated alone, in the same run."""
    root = make_crd_repo(work / f"crds-{crds}", crds, resources, files)
    gen = BIN / "gen"
    cold, _ = caches(work, f"crds-{crds}")
    validate = median([gen, "validate", root], runs, cache=cold)
    only = median([gen, "validate", *sorted(root.glob("crd-*.yaml"))], runs, cache=cold)
    print(f"\n{files} files with {crds} CRDs and {resources} custom resources")
    row("gen validate", cold, validate, f"  with workers <= {validate.tree_mib:.0f} MiB")
    row(f"gen validate of the {crds} CRDs alone", cold, only)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-files", type=int, default=200, help="kubernetes-validate sample size (0: skip)")
    parser.add_argument("--kapitan", type=Path, help="kapitan binary for the render baseline (make bench installs one)")
    parser.add_argument(
        "--work",
        type=Path,
        help="where to write the repositories, outputs and caches (default: the temp dir; /dev/shm takes the disk out)",
    )
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv-bench", help="where to pip install gen")
    parser.add_argument("--one-target", type=int, default=10000, help="services of the one-target benchmark (0: skip)")
    parser.add_argument("--manifests", type=int, default=1000, help="raw objects of the Manifests benchmark (0: skip)")
    parser.add_argument("--explain-nodes", type=int, default=1000, help="inventory of the explain benchmark (0: skip)")
    parser.add_argument("--crds", type=int, default=200, help="CRDs of the custom-resource benchmark (0: skip)")
    args = parser.parse_args()
    global BIN
    BIN = install(args.venv.absolute())
    kapitan = args.kapitan.absolute() if args.kapitan else None  # it runs in its own repository
    print(
        f"gen benchmark: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, medians of {args.runs} runs,"
        f" load average {os.getloadavg()[0]:.1f} at the start"
    )
    print("columns: what ran, its cache (cold: emptied before each run; kept: kept between runs), wall, CPU, peak RSS")
    if args.work is not None:
        Path(args.work).mkdir(parents=True, exist_ok=True)  # a RAM disk's folder is gone after a reboot
    with tempfile.TemporaryDirectory(prefix="gen-bench-", dir=args.work) as tmp:
        work = Path(tmp)
        check_jsonschema = bench_lint(args.runs, work)
        if args.manifests:
            bench_manifests(args.manifests, args.runs, work)
        if args.explain_nodes:
            bench_explain(args.explain_nodes, 100, args.runs, work)
        if args.crds:
            bench_crds(args.crds, 10 * args.crds, 10 * args.crds, args.runs, work)
        for size in (int(s) for s in args.sizes.split(",")):
            bench_size(size, args.runs, args.baseline_files, kapitan, work, check_jsonschema)
        if args.one_target:
            bench_one_target(args.one_target, args.runs, work)
    print(f"\nTargets (section 7), from this run's figures; load average {os.getloadavg()[0]:.1f} at the end:")
    for target in TARGETS:
        print(target)


if __name__ == "__main__":
    main()
