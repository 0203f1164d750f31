"""Command line: flags -> options -> pipeline -> report -> exit code. Nothing else lives here.

No `from __future__ import annotations` here: typer reads every command's signature on each
run, and evaluating string annotations tripled that (8.7 ms instead of 2).
"""

import gc
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from generator import __version__
from generator.errors import GeneratorError
from generator.reporters import REPORTER_BY_NAME

app = typer.Typer(
    name="gen",
    help="Render validated, deterministic Kubernetes manifests from policy YAML.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
explain_app = typer.Typer(help="Previews of what the cluster will do with the policies.", no_args_is_help=True)
app.add_typer(explain_app, name="explain")

Format = Enum("Format", {name: name for name in REPORTER_BY_NAME}, type=str)  # type: ignore[misc]

ExplainFormat = Enum("ExplainFormat", {"text": "text", "json": "json"}, type=str)
PlanFormat = Enum("PlanFormat", {"text": "text", "json": "json", "github": "github"}, type=str)

FormatOpt = Annotated[Format, typer.Option("--format", help="Output format.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Warnings fail too.")]
CrdsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--crds",
        help="CustomResourceDefinition files or directories that judge custom resources (repeatable); "
        "default: .gen.yaml's crds.",
    ),
]


def _version(value: bool) -> None:
    if value:
        print(f"gen {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Neither read nor write gen's cache (parsed policies, policy checks, rendered and validated "
            "objects, whole targets, findings of validated files, the stats of files read, compiled templates, "
            "CRD sources, the CEL parser); GEN_NO_CACHE=1 does the same.",
        ),
    ] = False,
) -> None:
    """gen: GitOps policy/manifest generator."""
    if no_cache:
        from generator import cache

        cache.disable()


@app.command("render")
def render_cmd(
    policy_dir: Annotated[Path, typer.Argument(help="Policy directory.")] = Path("policies"),
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("deploy"),
    target: Annotated[list[str] | None, typer.Option("--target", help="Render only this target (repeatable).")] = None,
    check: Annotated[bool, typer.Option("--check", help="Compare with --out; exit 1 on drift; write nothing.")] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print a unified diff of what would change; write nothing.")
    ] = False,
    fmt: FormatOpt = Format.text,  # type: ignore[attr-defined]
    strict: StrictOpt = False,
    crds: CrdsOpt = None,
) -> None:
    """Render policies into manifests (load, validate, render, validate, write)."""
    from generator.commands import render

    raise typer.Exit(
        render.run(policy_dir, out, tuple(target or ()), check, diff, fmt.value, strict, tuple(crds or ()))
    )


@app.command("plan")
def plan_cmd(
    policy_dir: Annotated[Path, typer.Argument(help="Policy directory.")] = Path("policies"),
    out: Annotated[Path, typer.Option("--out", help="The committed render to compare with.")] = Path("deploy"),
    target: Annotated[list[str] | None, typer.Option("--target", help="Plan only this target (repeatable).")] = None,
    fmt: Annotated[PlanFormat, typer.Option("--format", help="Output format.")] = PlanFormat.text,
    strict: Annotated[bool, typer.Option("--strict", help="Prunes fail too.")] = False,
    crds: CrdsOpt = None,
) -> None:
    """Say what syncing a new render changes in the cluster: create, update, restart, recreate,
    refused, prune, kept. Writes nothing; exit 1 when an update would be refused."""
    from generator.commands import plan

    raise typer.Exit(plan.run(policy_dir, out, tuple(target or ()), fmt.value, strict, tuple(crds or ())))


@app.command("lint")
def lint_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(help="Policy files or directories.")] = None,
    fmt: FormatOpt = Format.text,  # type: ignore[attr-defined]
    strict: StrictOpt = False,
) -> None:
    """Check policy files (schema and cross-policy rules); fast, for pre-commit."""
    from generator.commands import lint

    raise typer.Exit(lint.run(tuple(paths or (Path("policies"),)), fmt.value, strict))


@app.command("validate")
def validate_cmd(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Manifest files or directories (default: the current directory); - reads stdin."),
    ] = None,
    kubernetes_version: Annotated[
        list[str] | None,
        typer.Option(
            "--kubernetes-version",
            "-k",
            help="Kubernetes version to validate for (repeatable: a finding names the versions it holds for). "
            "Default: .gen.yaml's kubernetesVersions, else 1.35.",
        ),
    ] = None,
    plugin: Annotated[
        list[str] | None,
        typer.Option("--plugin", help="Extra scheduler plugin compiled into your scheduler (repeatable)."),
    ] = None,
    crds: Annotated[
        list[Path] | None,
        typer.Option(
            "--crds",
            help="CustomResourceDefinition files or directories whose custom resources to validate (repeatable); "
            "CRDs among the manifests count too.",
        ),
    ] = None,
    fmt: FormatOpt = Format.text,  # type: ignore[attr-defined]
    strict: StrictOpt = False,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config", help="Settings file (default: .gen.yaml here or in a parent, up to the repository root)."
        ),
    ] = None,
    baseline_file: Annotated[
        Path | None,
        typer.Option("--baseline", help="Report only findings this earlier --format json report does not hold."),
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option("--write-baseline", help="Write today's findings as a baseline to this file, and pass."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Write the --format report to this file; the terminal still gets the text."),
    ] = None,
) -> None:
    """Validate manifests as kube-apiserver and kube-scheduler would, custom resources by their CRDs."""
    from generator.commands import validate

    raise typer.Exit(
        validate.run(
            tuple(paths or (Path("."),)),
            tuple(kubernetes_version or ()),
            tuple(plugin or ()),
            tuple(crds or ()),
            fmt.value,
            strict,
            config_file,
            baseline_file,
            write_baseline,
            output,
        )
    )


@app.command("schema")
def schema_cmd(
    out: Annotated[Path | None, typer.Option("--out", help="Directory to write the schemas to.")] = None,
) -> None:
    """Export the policy JSON Schemas (for editors); lists them without --out."""
    from generator.commands import schema

    raise typer.Exit(schema.run(out))


@app.command("init")
def init_cmd(
    directory: Annotated[Path, typer.Argument(help="Where to create the repository.")] = Path("."),
) -> None:
    """Scaffold a policy repository: example policies, schemas, pre-commit and CI configuration."""
    from generator.commands import init

    raise typer.Exit(init.run(directory))


@explain_app.command("gpu")
def explain_gpu_cmd(
    nodes: Annotated[
        Path, typer.Option("--nodes", help="`kubectl get nodes -o json` output, or a YAML list of nodes ('-' = stdin).")
    ],
    policy_dir: Annotated[Path, typer.Argument(help="Policy directory.")] = Path("policies"),
    pods: Annotated[
        Path | None, typer.Option("--pods", help="`kubectl get pods -A -o json` output: GPUs already requested.")
    ] = None,
    utilization: Annotated[
        Path | None,
        typer.Option("--utilization", help="Per-node GPU utilization samples for the seed's 70:30 blend."),
    ] = None,
    now: Annotated[str | None, typer.Option("--now", help="Current time (ISO 8601 with timezone).")] = None,
    max_age: Annotated[float, typer.Option("--max-age", help="Seconds after which a sample is stale.")] = 60.0,
    target: Annotated[list[str] | None, typer.Option("--target", help="Only this target (repeatable).")] = None,
    workload: Annotated[
        list[str] | None, typer.Option("--workload", help="Only this GpuWorkload (repeatable).")
    ] = None,
    fmt: Annotated[ExplainFormat, typer.Option("--format", help="Output format.")] = ExplainFormat.text,
) -> None:
    """Preview GPU placement: kube-scheduler's filters and the GPUPacking score per node."""
    from generator.commands import explain

    raise typer.Exit(
        explain.run(
            nodes, pods, utilization, policy_dir, tuple(target or ()), now, max_age, fmt.value, tuple(workload or ())
        )
    )


@explain_app.command("scale-down")
def explain_scale_down_cmd(
    pods: Annotated[Path, typer.Option("--pods", help="`kubectl get pods -o json` output ('-' = stdin).")],
    deployment: Annotated[str, typer.Option("--deployment", help="The Deployment that scales down.")],
    to: Annotated[
        int | None, typer.Option("--to", help="Replicas after the scale-down (default: the HPA's minReplicas).")
    ] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", help="The Deployment's namespace.")] = None,
    now: Annotated[str | None, typer.Option("--now", help="Current time (ISO 8601 with timezone).")] = None,
    replicasets: Annotated[
        Path | None, typer.Option("--replicasets", help="`kubectl get rs -o json` output: ReplicaSets by owner.")
    ] = None,
    policy_dir: Annotated[
        Path | None, typer.Argument(help="Policy directory, for --to from the ReplicatedService's autoscaling.")
    ] = None,
    fmt: Annotated[ExplainFormat, typer.Option("--format", help="Output format.")] = ExplainFormat.text,
    target: Annotated[
        list[str] | None, typer.Option("--target", help="Take --to from this target's policy (repeatable).")
    ] = None,
) -> None:
    """Preview which Pods the ReplicaSet controller deletes when a Deployment scales down."""
    from generator.commands import scaledown

    if policy_dir is None and to is None and Path("policies").is_dir():
        policy_dir = Path("policies")
    raise typer.Exit(
        scaledown.run(pods, replicasets, deployment, namespace, to, now, policy_dir, fmt.value, tuple(target or ()))
    )


@app.command("cost")
def cost_cmd(
    sample: Annotated[Path, typer.Option("--sample", help="One metrics sample of a Pod, JSON or YAML ('-' = stdin).")],
    policy_dir: Annotated[
        Path | None, typer.Argument(help="Policy directory with a DeletionCostPolicy (default: policies/, if present).")
    ] = None,
    now: Annotated[str | None, typer.Option("--now", help="Current time (ISO 8601 with timezone).")] = None,
    last_cost: Annotated[
        int | None, typer.Option("--last-cost", help="The cost the Pod has now; print nothing if unchanged.")
    ] = None,
    pod_uid: Annotated[str | None, typer.Option("--pod-uid", help="Refuse a sample of any other Pod.")] = None,
    target: Annotated[list[str] | None, typer.Option("--target", help="Use this target's policy.")] = None,
    apply: Annotated[
        bool,
        typer.Option("--apply", help="Send the patch to the cluster (needs --pod; pip install 'gitops-gen[cost]')."),
    ] = False,
    pod: Annotated[str | None, typer.Option("--pod", help="NAMESPACE/NAME of the Pod --apply patches.")] = None,
    kubeconfig: Annotated[
        Path | None, typer.Option("--kubeconfig", help="For --apply: a kubeconfig (default: the in-cluster account).")
    ] = None,
) -> None:
    """Print the JSON Patch that sets a Pod's deletion cost from a fresh metrics sample, or send it (--apply)."""
    from generator.commands import cost

    if apply and pod is None:
        raise typer.BadParameter("--apply needs --pod NAMESPACE/NAME")
    if policy_dir is None and Path("policies").is_dir():
        policy_dir = Path("policies")
    raise typer.Exit(
        cost.run(sample, policy_dir, tuple(target or ()), now, last_cost, pod_uid, pod if apply else None, kubeconfig)
    )


def main() -> int:
    """Console entry: usage errors exit 2, and an internal error is one short line, never a traceback."""
    # gen builds large acyclic trees (policies, manifests) that reference counting frees; the
    # cycle collector would rescan them every few hundred allocations (about 10% of a large
    # render). Imported modules are frozen out of its scans and young collections are rarer.
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        # Without standalone mode the parser returns the code a command exits with.
        code = app(standalone_mode=False)
    except typer.Exit as done:
        return int(done.exit_code)
    except GeneratorError as err:
        print(f"gen: error: {err}", file=sys.stderr)
        return 2
    except (typer.BadParameter, typer.Abort) as err:
        print(f"gen: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # the last line of defence: no traceback reaches the user
        if hasattr(err, "show") and hasattr(err, "exit_code"):  # a usage error from the argument parser
            err.show()
            return 2
        print(f"gen: internal error: {type(err).__name__}: {err} (please report this with the input)", file=sys.stderr)
        return 2
    return code if isinstance(code, int) else 0


def entry() -> None:
    """The `gen` console script: main(), then an exit that skips tearing the interpreter down.

    Freeing every object of a large render one by one, for a process about to end, took about
    10 ms of a 1,000-service render. gen writes through os calls and closes what it opens, so
    only the standard streams hold buffered output; they are flushed first.
    """
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: what Python's own exit reports, without the traceback
        code = code or 120
    os._exit(code)
