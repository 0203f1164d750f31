"""Benchmark gen on synthetic repositories; prints medians and ratios against baselines run alongside.

    python3 benchmarks/bench.py [--sizes 100,1000,10000] [--runs 3] [--baseline-files 200] [--kapitan PATH]
                                [--work DIR] [--venv DIR] [--manifests 1000] [--explain-nodes 1000]

gen is measured as users get it: `pip install .` into a virtual environment of its own
(--venv, default .venv-bench, refreshed from this tree on every run), never the editable
development install.

Every figure is the median of --runs fresh processes (wall time, peak RSS of that process;
for a cold render also of its worker processes, sampled, with pages shared after fork counted
in each). gen's cache lives in the work directory: "empty cache" runs remove it first (as on a
machine that never ran gen, or a CI runner that keeps no cache), the others find what the run
before kept, as every run after the first does.
Shared machines are noisy, so each comparison is a ratio against a baseline measured in the
same run: `kapitan compile` of the same services (one Kapitan target per service, the same
Deployment and HPA from jinja2, no validation) when --kapitan names the binary;
`kubernetes-validate --strict` on a sample of the same rendered files (its cost is per file, so
its rate is extrapolated to all of them); and, for lint latency, `check-jsonschema` on the same
policy file with the schema `gen schema` exports.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kapitan_repo import make_kapitan_repo
from synthetic import make_crd_repo, make_gpu_repo, make_manifests_repo, make_repo

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv-bench" / "bin"  # set by main() to the environment it installs gen into


def install(venv: Path) -> Path:
    """A non-editable install of this tree (and the lint baseline) in venv; returns its bin/."""
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(ROOT)], check=True)
    subprocess.run([*pip, f"{ROOT}[bench]"], check=True)
    return venv / "bin"


@dataclass
class Sample:
    seconds: float
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


def run(cmd: Sequence[str | Path], ok_codes: tuple[int, ...] = (0,), cwd: Path | None = None) -> Sample:
    """One fresh process: wall time, its own peak RSS (from wait4) and its tree's (sampled)."""
    with tempfile.TemporaryFile() as stderr:  # a pipe would fill and stall a chatty command
        start = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=stderr, cwd=cwd)
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
    return Sample(seconds, usage.ru_maxrss / 1024, max(tree[0], usage.ru_maxrss) / 1024)


def median(
    cmd: Sequence[str | Path],
    runs: int,
    before: object = None,
    cwd: Path | None = None,
    ok_codes: tuple[int, ...] = (0,),
) -> Sample:
    samples = []
    for _ in range(runs):
        if callable(before):
            before()
        samples.append(run(cmd, ok_codes, cwd=cwd))
    return Sample(*(statistics.median(getattr(s, f) for s in samples) for f in ("seconds", "peak_mib", "tree_mib")))


def manifests(out: Path) -> list[Path]:
    return [p for p in sorted(out.rglob("*.yaml")) if p.name != "kustomization.yaml"]


def _bump_image(policies: Path) -> None:
    """Change one service, as a typical commit does: its image tag goes to the next version."""
    path = policies / "svc-00000.yaml"
    text = path.read_text()
    version = int(text.split("svc-00000:v", 1)[1].split("\n", 1)[0])
    path.write_text(text.replace(f"svc-00000:v{version}\n", f"svc-00000:v{version + 1}\n"))


def _empty_cache() -> None:
    """gen's cache (main() points it into the work directory) as on a machine that never ran gen."""
    shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)


def bench_size(services: int, runs: int, baseline_files: int, kapitan: Path | None, work: Path) -> None:
    root = work / f"repo-{services}"
    policies = make_repo(root, services)
    out = root / "deploy"
    gen = BIN / "gen"

    def fresh() -> None:
        shutil.rmtree(out, True)
        _empty_cache()

    render = median([gen, "render", policies, "--out", out], runs, before=fresh)
    files = manifests(out)
    rerender = median([gen, "render", policies, "--out", out], runs)  # output exists and is unchanged
    one_change = median([gen, "render", policies, "--out", out], runs, before=lambda: _bump_image(policies))
    check = [gen, "render", policies, "--out", out, "--check"]
    rendered_check = median(check, runs)  # the change is rendered: the check a commit passes
    # a change not rendered: the check that fails a commit (drift), as pre-commit and CI run it
    stale_check = median(check, runs, before=lambda: _bump_image(policies), ok_codes=(1,))
    run([gen, "render", policies, "--out", out])
    first_validate = median([gen, "validate", out], runs, before=_empty_cache)
    validate = median([gen, "validate", out], runs)  # the files were validated before
    print(f"\n{services} ReplicatedServices -> {len(files)} manifests over 4 targets")
    print(
        f"  gen render (empty cache)    {render.seconds:7.2f} s  {len(files) / render.seconds:8.0f} manifests/s"
        f"  peak {render.peak_mib:6.0f} MiB, with workers <= {render.tree_mib:.0f} MiB"
    )
    print(f"  gen render (no change)      {rerender.seconds:7.2f} s  peak {rerender.peak_mib:6.0f} MiB")
    print(f"  gen render (one changed)    {one_change.seconds:7.2f} s  peak {one_change.peak_mib:6.0f} MiB")
    print(
        f"  gen render --check          {rendered_check.seconds:7.2f} s  peak {rendered_check.peak_mib:6.0f} MiB"
        "  (the change rendered: it passes)"
    )
    print(
        f"  gen render --check, stale   {stale_check.seconds:7.2f} s  peak {stale_check.peak_mib:6.0f} MiB"
        "  (a change not rendered: it fails)"
    )
    print(
        f"  gen validate (empty cache)  {first_validate.seconds:7.2f} s"
        f"  {len(files) / first_validate.seconds:8.0f} manifests/s  peak {first_validate.peak_mib:6.0f} MiB"
    )
    print(f"  gen validate (validated)    {validate.seconds:7.2f} s  peak {validate.peak_mib:6.0f} MiB")

    if kapitan:
        repo = make_kapitan_repo(root, services)
        compiled = repo / "compiled"
        kap = median([kapitan, "compile"], runs, before=lambda: shutil.rmtree(compiled, True), cwd=repo)
        count = sum(1 for _ in compiled.rglob("*.yaml"))
        print(
            f"  kapitan compile             {kap.seconds:7.2f} s  {count / kap.seconds:8.0f} manifests/s"
            f"  peak {kap.peak_mib:6.0f} MiB (main process) -> gen render is {kap.seconds / render.seconds:.1f}x"
            f" faster with an empty cache, {kap.seconds / one_change.seconds:.1f}x after a one-service change"
        )

    if baseline_files and shutil.which("kubernetes-validate", path=str(BIN)):
        # kubernetes-validate skips kinds it has no schema for; core kinds are all it can check
        sample = [p for p in files if "/_gitops/" not in p.as_posix()][:baseline_files]
        kv = run([BIN / "kubernetes-validate", "--strict", "-k", "1.35.0", *sample])
        per_file = kv.seconds / len(sample)
        estimate = per_file * len(files)
        print(
            f"  kubernetes-validate --strict {len(sample)} files: {kv.seconds:.2f} s"
            f" ({per_file * 1000:.0f} ms/file, ~{estimate:.0f} s for all {len(files)})"
            f" -> gen validate is {estimate / first_validate.seconds:.0f}x faster with an empty cache,"
            f" {estimate / validate.seconds:.0f}x on files validated before"
        )


def bench_lint(runs: int, work: Path) -> None:
    root = work / "lint"
    policies = make_repo(root, 1)
    one = policies / "svc-00000.yaml"
    schemas = root / "schemas"
    gen = BIN / "gen"
    run([gen, "schema", "--out", schemas])
    startup = median([sys.executable, "-c", "pass"], runs)
    lint = median([gen, "lint", one], runs)
    print(
        f"\ngen lint of one policy file   {lint.seconds * 1000:7.0f} ms  (python startup {startup.seconds * 1000:.0f} ms)"
    )
    checker = BIN / "check-jsonschema"
    if checker.exists():
        cj = median([checker, "--schemafile", schemas / "replicatedservice.json", one], runs)
        print(
            f"check-jsonschema, same file   {cj.seconds * 1000:7.0f} ms  -> gen lint / check-jsonschema = "
            f"{lint.seconds / cj.seconds:.2f}"
        )
    else:
        print("check-jsonschema not installed (pip install -e '.[bench]') - no lint baseline")


def bench_manifests(objects: int, runs: int, work: Path) -> None:
    """A Manifests policy over raw objects: rendered (read, validated, written), against
    `gen validate` of the same files in the same run."""
    root = work / f"manifests-{objects}"
    policies = make_manifests_repo(root, objects)
    out = root / "deploy"
    gen = BIN / "gen"

    def fresh() -> None:
        shutil.rmtree(out, True)
        _empty_cache()

    render = median([gen, "render", policies, "--out", out], runs, before=fresh)
    validate = median([gen, "validate", root / "manifests"], runs, before=_empty_cache)
    print(
        f"\nManifests policy over {objects} raw objects: gen render {render.seconds:.2f} s"
        f" (peak {render.peak_mib:.0f} MiB); gen validate of the same files {validate.seconds:.2f} s"
        f" -> render / validate = {render.seconds / validate.seconds:.2f}"
    )


def bench_explain(nodes: int, policies: int, runs: int, work: Path) -> None:
    """`gen explain gpu` of GPU services and gangs over a large inventory: every policy judged
    on every node, then its replicas or members placed one at a time."""
    root = work / f"explain-{nodes}"
    directory, inventory = make_gpu_repo(root, nodes, policies)
    gen = BIN / "gen"
    # exit 1: some workloads do not fit beside the others, which is what explain is there to say
    command: list[str | Path] = [gen, "explain", "gpu", "--nodes", inventory, "--format", "json", directory]
    explain = median(command, runs, _empty_cache, ok_codes=(0, 1))
    render = median([gen, "render", directory, "--out", root / "deploy"], runs, _empty_cache)
    print(
        f"\ngen explain gpu, {policies} GPU policies over {nodes} nodes: {explain.seconds:.2f} s"
        f" (peak {explain.peak_mib:.0f} MiB); gen render of the same policies {render.seconds:.2f} s"
    )


def bench_crds(crds: int, resources: int, files: int, runs: int, work: Path) -> None:
    """`gen validate` of a repository whose custom resources are judged by CRDs among its files
    (structural schemas, defaults, list-map keys and CEL rules), against the same repository's
    CRDs validated alone, in the same run."""
    root = make_crd_repo(work / f"crds-{crds}", crds, resources, files)
    gen = BIN / "gen"
    validate = median([gen, "validate", root], runs, _empty_cache)
    only = median([gen, "validate", *sorted(root.glob("crd-*.yaml"))], runs, _empty_cache)
    print(
        f"\ngen validate, {files} files with {crds} CRDs and {resources} custom resources: {validate.seconds:.2f} s"
        f" (peak {validate.peak_mib:.0f} MiB, with workers <= {validate.tree_mib:.0f} MiB); the {crds} CRDs alone"
        f" {only.seconds:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-files", type=int, default=200, help="kubernetes-validate sample size (0: skip)")
    parser.add_argument("--kapitan", type=Path, help="kapitan binary for the render baseline (make bench installs one)")
    parser.add_argument(
        "--work",
        type=Path,
        help="where to write the repositories and outputs (default: the temp dir; /dev/shm takes the disk out)",
    )
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv-bench", help="where to pip install gen")
    parser.add_argument("--manifests", type=int, default=1000, help="raw objects of the Manifests benchmark (0: skip)")
    parser.add_argument("--explain-nodes", type=int, default=1000, help="inventory of the explain benchmark (0: skip)")
    parser.add_argument("--crds", type=int, default=200, help="CRDs of the custom-resource benchmark (0: skip)")
    args = parser.parse_args()
    global BIN
    BIN = install(args.venv.absolute())
    kapitan = args.kapitan.absolute() if args.kapitan else None  # it runs in its own repository
    print(f"gen benchmark: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, medians of {args.runs} runs")
    with tempfile.TemporaryDirectory(prefix="gen-bench-", dir=args.work) as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # gen's cache: the benchmark's own
        bench_lint(args.runs, Path(tmp))
        if args.manifests:
            bench_manifests(args.manifests, args.runs, Path(tmp))
        if args.explain_nodes:
            bench_explain(args.explain_nodes, 100, args.runs, Path(tmp))
        if args.crds:
            bench_crds(args.crds, 10 * args.crds, 10 * args.crds, args.runs, Path(tmp))
        for size in (int(s) for s in args.sizes.split(",")):
            bench_size(size, args.runs, args.baseline_files, kapitan, Path(tmp))


if __name__ == "__main__":
    main()
