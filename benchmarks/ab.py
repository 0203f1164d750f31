"""Pair one gen command line between two versions of gen: A B, B A, … and print B/A.

    python3 benchmarks/ab.py A B [--pairs 21] [--cache cold|kept] [--edit FILE] [--services 1000]
                                 [--targets 4] [--ok 0] [--work DIR] [--venvs DIR] -- GEN-ARGUMENTS…

A and B are each a source tree (a directory) or a git revision of this repository (exported
with `git archive`); each is installed with `pip install .` into a virtual environment of its
own (--venvs, default .venv-ab/a and .venv-ab/b), never an editable install.

Each side gets its own copy of a synthetic repository (`benchmarks/synthetic.py`: --services
ReplicatedServices over --targets targets, `policies/`), rendered into `deploy/` by that side's
gen before the first pair, and its own cache directory (XDG_CACHE_HOME):
- `--cache cold` empties it before every run (a fresh CI runner);
- `--cache kept` keeps it between runs, warmed by one untimed run of the command per side.
GEN-ARGUMENTS run in the side's repository directory, so `policies`, `deploy` and
`policies/svc-00000.yaml` name its files. `--edit FILE` (also relative to it) moves the image
tag of svc-00000 in FILE (a policy file, or a manifest rendered from it) up one version before
every timed run: "after one change".

The sides alternate which runs first, so a machine whose speed drifts weighs on both alike.
Printed: each side's median wall and CPU time (the process and the workers it waited for) with
their range, and the median and range of the pair-by-pair B/A ratios, wall and CPU. On a shared
machine quote the median ratio, not the times.

    # gen plan on the 1,000-service benchmark, this tree (B) against main (A)
    python3 benchmarks/ab.py main . --cache kept --work /dev/shm -- plan policies --out deploy
    # gen validate of its 2,020 rendered files, cold, and validated before (one file changed)
    python3 benchmarks/ab.py main . --cache cold --work /dev/shm -- validate deploy
    python3 benchmarks/ab.py main . --cache kept --work /dev/shm \\
        --edit deploy/cluster-0/team-00/deployment-svc-00000.yaml -- validate deploy
    # gen lint of one policy file after it changed
    python3 benchmarks/ab.py main . --cache kept --edit policies/svc-00000.yaml -- lint policies/svc-00000.yaml
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import ROOT, Cache, Sample, bump_image, install, run
from synthetic import make_repo

SETTLED_SECONDS = 3.1


@dataclass
class Side:
    name: str
    gen: Path
    repo: Path
    cache: Cache


def source_tree(spec: str, dest: Path) -> tuple[Path, str]:
    """A directory as it is, or a git revision of this repository exported into dest; and what it is."""
    if Path(spec).is_dir():
        return Path(spec).absolute(), f"the tree {Path(spec).absolute()}"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", spec], check=True, capture_output=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", spec], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest, f"{spec} at {commit.stdout.decode().strip()}"


def bump(path: Path) -> None:
    """The image tag of svc-00000 in path goes up one version; refuses a file without it."""
    before = path.read_text()
    bump_image(path)
    if path.read_text() == before:
        raise SystemExit(f"--edit: {path} names no image of svc-00000")


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="A: a source tree or a git revision (the baseline)")
    parser.add_argument("b", help="B: a source tree or a git revision (the candidate)")
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--cache", choices=("cold", "kept"), default="kept")
    parser.add_argument("--edit", help="a file of the repository to change before every run (svc-00000's image)")
    parser.add_argument("--services", type=int, default=1000)
    parser.add_argument("--targets", type=int, default=4)
    parser.add_argument("--ok", default="0", help="exit codes that count as a run (comma-separated)")
    parser.add_argument("--work", type=Path, help="where the repositories and caches go (default: the temp dir)")
    parser.add_argument("--venvs", type=Path, default=ROOT / ".venv-ab", help="where A's and B's environments go")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args, command = parser.parse_args(argv[:split]), argv[split + 1 :]
    if not command:
        parser.error("give gen's arguments after --")
    ok_codes = tuple(int(code) for code in args.ok.split(","))

    if args.work is not None:
        Path(args.work).mkdir(parents=True, exist_ok=True)  # a RAM disk's folder is gone after a reboot
    with tempfile.TemporaryDirectory(prefix="gen-ab-", dir=args.work) as tmp:
        work = Path(tmp)
        template = work / "repo"
        make_repo(template, args.services, args.targets)
        sides = []
        for name, spec in (("A", args.a), ("B", args.b)):
            source, described = source_tree(spec, work / f"src-{name}")
            gen = install(args.venvs.absolute() / name.lower(), source, "") / "gen"
            repo = work / f"repo-{name}"
            subprocess.run(["cp", "-a", str(template), str(repo)], check=True)
            side = Side(name, gen, repo, Cache(args.cache, work / f"cache-{name}"))
            run([gen, "render", "policies", "--out", "deploy"], cwd=repo, cache=side.cache)
            if args.cache == "kept":
                # gen vouches for a file by its stat only once it is older than the timestamps'
                # granularity (generator.cache.SETTLED_NS, 3 s): until then every run reads it
                # again. Kept runs measure the steady state, from files settled since the render.
                time.sleep(SETTLED_SECONDS)
                run([gen, *command], ok_codes, cwd=repo, cache=side.cache)
            sides.append(side)
            print(f"{name}: {described}, installed in {gen.parent.parent}; {args.cache} cache {side.cache.path}")

        samples: dict[str, list[Sample]] = {"A": [], "B": []}
        for pair in range(args.pairs):
            for side in sides if pair % 2 == 0 else reversed(sides):
                if args.edit:
                    bump(side.repo / args.edit)
                samples[side.name].append(run([side.gen, *command], ok_codes, cwd=side.repo, cache=side.cache))

    a, b = samples["A"], samples["B"]
    edited = f", {args.edit} edited before each run" if args.edit else ""
    print(f"gen {' '.join(command)}: {args.pairs} pairs, {args.cache} cache{edited}")
    for name, runs in samples.items():
        print(f"  {name} wall {spread([s.seconds for s in runs])} s, cpu {spread([s.cpu for s in runs])} s")
    print(f"  B/A wall {spread([y.seconds / x.seconds for x, y in zip(a, b, strict=True)])} (median of pair ratios)")
    print(f"  B/A cpu  {spread([y.cpu / x.cpu for x, y in zip(a, b, strict=True)])}")


if __name__ == "__main__":
    main()
