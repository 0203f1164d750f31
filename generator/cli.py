"""Command line: flags -> options -> pipeline -> report -> exit code. Nothing else lives here.

argparse from the standard library: importing typer (and the click it carries) took 20-40 ms
of every run, a tenth of a pre-commit `gen lint` of one file.
"""

import argparse
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path

from generator import __version__
from generator.errors import GeneratorError
from generator.reporters import REPORTER_BY_NAME

Handler = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """A command line that cannot run as given: its message, exit 2."""


def _render(options: argparse.Namespace) -> int:
    from generator.commands import render

    return render.run(
        options.policy_dir,
        options.out,
        options.target,
        options.check,
        options.diff,
        options.format,
        options.strict,
        options.crds,
    )


def _plan(options: argparse.Namespace) -> int:
    from generator.commands import plan

    return plan.run(
        options.policy_dir,
        options.out,
        options.target,
        options.format,
        options.strict,
        options.crds,
    )


def _lint(options: argparse.Namespace) -> int:
    from generator.commands import lint

    return lint.run(options.paths or (Path("policies"),), options.format, options.strict)


def _validate(options: argparse.Namespace) -> int:
    from generator.commands import validate

    return validate.run(
        options.paths or (Path("."),),
        options.kubernetes_version,
        options.plugin,
        options.crds,
        options.format,
        options.strict,
        options.config,
        options.baseline,
        options.write_baseline,
        options.output,
    )


def _schema(options: argparse.Namespace) -> int:
    from generator.commands import schema

    return schema.run(options.out)


def _init(options: argparse.Namespace) -> int:
    from generator.commands import init

    return init.run(options.directory)


def _explain_gpu(options: argparse.Namespace) -> int:
    from generator.commands import explain

    return explain.run(
        options.nodes,
        options.pods,
        options.utilization,
        options.policy_dir,
        options.target,
        options.now,
        options.max_age,
        options.format,
        options.workload,
    )


def _explain_scale_down(options: argparse.Namespace) -> int:
    from generator.commands import scaledown

    policy_dir = options.policy_dir if options.to is not None else _policies_here(options.policy_dir)
    return scaledown.run(
        options.pods,
        options.replicasets,
        options.deployment,
        options.namespace,
        options.to,
        options.now,
        policy_dir,
        options.format,
        options.target,
    )


def _cost(options: argparse.Namespace) -> int:
    from generator.commands import cost

    if options.apply and options.pod is None:
        raise UsageError("--apply needs --pod NAMESPACE/NAME")
    policy_dir = _policies_here(options.policy_dir)
    return cost.run(
        options.sample,
        policy_dir,
        options.target,
        options.now,
        options.last_cost,
        options.pod_uid,
        options.pod if options.apply else None,
        options.kubeconfig,
    )


def _policies_here(given: Path | None) -> Path | None:
    """The policy directory given, else ./policies where there is one."""
    if given is None and Path("policies").is_dir():
        return Path("policies")
    return given


# -- the parser


def _command(
    commands: argparse._SubParsersAction, name: str, handler: Handler | None, about: str
) -> argparse.ArgumentParser:
    """A command (None: one that only groups others, and shows them when given alone)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=about, description=about, allow_abbrev=False, formatter_class=_Formatter
    )
    parser.set_defaults(handler=handler, usage=parser)
    return parser


class _Formatter(argparse.HelpFormatter):
    """argparse's help, with room for the longer option names, and each default that is a value."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, [], argparse.SUPPRESS) or "%(default)" in (action.help or ""):
            return action.help
        return f"{action.help} (default: %(default)s)"


def _policy_dir(parser: argparse.ArgumentParser, about: str = "Policy directory.") -> None:
    parser.add_argument("policy_dir", nargs="?", type=Path, default=Path("policies"), metavar="POLICY_DIR", help=about)


def _format(parser: argparse.ArgumentParser, choices: tuple[str, ...]) -> None:
    parser.add_argument("--format", choices=choices, default="text", help="Output format.")


def _strict(parser: argparse.ArgumentParser, about: str = "Warnings fail too.") -> None:
    parser.add_argument("--strict", action="store_true", help=about)


def _repeatable(parser: argparse.ArgumentParser, *flags: str, about: str, metavar: str, kind: type = str) -> None:
    parser.add_argument(*flags, action="append", default=[], type=kind, metavar=metavar, help=about)


_CRDS = (
    "CustomResourceDefinition files or directories that judge custom resources (repeatable); default: .gen.yaml's crds."
)
_NOW = "Current time (ISO 8601 with timezone)."


def parser() -> argparse.ArgumentParser:
    """Every command, its arguments and their help."""
    root = argparse.ArgumentParser(
        prog="gen",
        description="Render validated, deterministic Kubernetes manifests from policy YAML.",
        allow_abbrev=False,
        formatter_class=_Formatter,
    )
    root.add_argument("--version", action="version", version=f"gen {__version__}", help="Print the version.")
    root.add_argument(
        "--no-cache",
        action="store_true",
        help="Neither read nor write gen's cache (parsed policies, policy checks, rendered and validated objects, "
        "whole targets, findings of validated files, the stats of files read, compiled templates, CRD sources, "
        "the CEL parser); GEN_NO_CACHE=1 does the same.",
    )
    root.set_defaults(handler=None, usage=root)  # `gen` alone: what it can do
    formats = tuple(REPORTER_BY_NAME)
    commands = root.add_subparsers(title="commands", metavar="COMMAND")

    render = _command(
        commands, "render", _render, "Render policies into manifests (load, validate, render, validate, write)."
    )
    _policy_dir(render)
    render.add_argument("--out", metavar="DIR", type=Path, default=Path("deploy"), help="Output directory.")
    _repeatable(render, "--target", metavar="NAME", about="Render only this target (repeatable).")
    render.add_argument("--check", action="store_true", help="Compare with --out; exit 1 on drift; write nothing.")
    render.add_argument("--diff", action="store_true", help="Print a unified diff of what would change; write nothing.")
    _format(render, formats)
    _strict(render)
    _repeatable(render, "--crds", metavar="PATH", about=_CRDS, kind=Path)

    plan = _command(
        commands,
        "plan",
        _plan,
        "Say what syncing a new render changes in the cluster: create, update, restart, recreate, refused, prune, "
        "kept. Writes nothing; exit 1 when an update would be refused.",
    )
    _policy_dir(plan)
    plan.add_argument(
        "--out", metavar="DIR", type=Path, default=Path("deploy"), help="The committed render to compare with."
    )
    _repeatable(plan, "--target", metavar="NAME", about="Plan only this target (repeatable).")
    _format(plan, ("text", "json", "github"))
    _strict(plan, "Prunes fail too.")
    _repeatable(plan, "--crds", metavar="PATH", about=_CRDS, kind=Path)

    lint = _command(
        commands, "lint", _lint, "Check policy files (schema and cross-policy rules); fast, for pre-commit."
    )
    lint.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="Policy files or directories.")
    _format(lint, formats)
    _strict(lint)

    validate = _command(
        commands,
        "validate",
        _validate,
        "Validate manifests as kube-apiserver and kube-scheduler would, custom resources by their CRDs.",
    )
    validate.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="Manifest files or directories (default: the current directory); - reads stdin.",
    )
    _repeatable(
        validate,
        "-k",
        "--kubernetes-version",
        metavar="VERSION",
        about="Kubernetes version to validate for (repeatable: a finding names the versions it holds for). "
        "Default: .gen.yaml's kubernetesVersions, else 1.35.",
    )
    _repeatable(
        validate, "--plugin", metavar="NAME", about="Extra scheduler plugin compiled into your scheduler (repeatable)."
    )
    _repeatable(
        validate,
        "--crds",
        metavar="PATH",
        about="CustomResourceDefinition files or directories whose custom resources to validate (repeatable); "
        "CRDs among the manifests count too.",
        kind=Path,
    )
    _format(validate, formats)
    _strict(validate)
    validate.add_argument(
        "--config",
        metavar="FILE",
        type=Path,
        help="Settings file (default: .gen.yaml here or in a parent, up to the repository root).",
    )
    validate.add_argument(
        "--baseline",
        metavar="FILE",
        type=Path,
        help="Report only findings this earlier --format json report does not hold.",
    )
    validate.add_argument(
        "--write-baseline",
        metavar="FILE",
        type=Path,
        help="Write today's findings as a baseline to this file, and pass.",
    )
    validate.add_argument(
        "--output",
        metavar="FILE",
        type=Path,
        help="Write the --format report to this file; the terminal still gets the text.",
    )

    schema = _command(
        commands, "schema", _schema, "Export the policy JSON Schemas (for editors); lists them without --out."
    )
    schema.add_argument("--out", metavar="DIR", type=Path, help="Directory to write the schemas to.")

    init = _command(
        commands,
        "init",
        _init,
        "Scaffold a policy repository: example policies, schemas, pre-commit and CI configuration.",
    )
    init.add_argument(
        "directory", nargs="?", type=Path, default=Path("."), metavar="DIR", help="Where to create the repository."
    )

    explain = _command(commands, "explain", None, "Previews of what the cluster will do with the policies.")
    previews = explain.add_subparsers(title="previews", metavar="PREVIEW")

    gpu = _command(
        previews,
        "gpu",
        _explain_gpu,
        "Preview GPU placement: kube-scheduler's filters and the GPUPacking score per node.",
    )
    gpu.add_argument(
        "--nodes",
        metavar="FILE",
        type=Path,
        required=True,
        help="`kubectl get nodes -o json` output, or a YAML list of nodes ('-' = stdin).",
    )
    _policy_dir(gpu)
    gpu.add_argument(
        "--pods", metavar="FILE", type=Path, help="`kubectl get pods -A -o json` output: GPUs already requested."
    )
    gpu.add_argument(
        "--utilization", metavar="FILE", type=Path, help="Per-node GPU utilization samples for the seed's 70:30 blend."
    )
    gpu.add_argument("--now", metavar="TIME", help=_NOW)
    gpu.add_argument(
        "--max-age", metavar="SECONDS", type=float, default=60.0, help="Seconds after which a sample is stale."
    )
    _repeatable(gpu, "--target", metavar="NAME", about="Only this target (repeatable).")
    _repeatable(gpu, "--workload", metavar="NAME", about="Only this GpuWorkload (repeatable).")
    _format(gpu, ("text", "json"))

    scale_down = _command(
        previews,
        "scale-down",
        _explain_scale_down,
        "Preview which Pods the ReplicaSet controller deletes when a Deployment scales down.",
    )
    scale_down.add_argument(
        "--pods", metavar="FILE", type=Path, required=True, help="`kubectl get pods -o json` output ('-' = stdin)."
    )
    scale_down.add_argument("--deployment", metavar="NAME", required=True, help="The Deployment that scales down.")
    scale_down.add_argument(
        "--to", metavar="N", type=int, help="Replicas after the scale-down (default: the HPA's minReplicas)."
    )
    scale_down.add_argument("--namespace", metavar="NAMESPACE", help="The Deployment's namespace.")
    scale_down.add_argument("--now", metavar="TIME", help=_NOW)
    scale_down.add_argument(
        "--replicasets", metavar="FILE", type=Path, help="`kubectl get rs -o json` output: ReplicaSets by owner."
    )
    scale_down.add_argument(
        "policy_dir",
        nargs="?",
        type=Path,
        metavar="POLICY_DIR",
        help="Policy directory, for --to from the ReplicatedService's autoscaling.",
    )
    _format(scale_down, ("text", "json"))
    _repeatable(scale_down, "--target", metavar="NAME", about="Take --to from this target's policy (repeatable).")

    cost = _command(
        commands,
        "cost",
        _cost,
        "Print the JSON Patch that sets a Pod's deletion cost from a fresh metrics sample, or send it (--apply).",
    )
    cost.add_argument(
        "--sample",
        metavar="FILE",
        type=Path,
        required=True,
        help="One metrics sample of a Pod, JSON or YAML ('-' = stdin).",
    )
    cost.add_argument(
        "policy_dir",
        nargs="?",
        type=Path,
        metavar="POLICY_DIR",
        help="Policy directory with a DeletionCostPolicy (default: policies/, if present).",
    )
    cost.add_argument("--now", metavar="TIME", help=_NOW)
    cost.add_argument(
        "--last-cost", metavar="N", type=int, help="The cost the Pod has now; print nothing if unchanged."
    )
    cost.add_argument("--pod-uid", metavar="UID", help="Refuse a sample of any other Pod.")
    _repeatable(cost, "--target", metavar="NAME", about="Use this target's policy.")
    cost.add_argument(
        "--apply",
        action="store_true",
        help="Send the patch to the cluster (needs --pod; pip install 'gitops-gen[cost]').",
    )
    cost.add_argument("--pod", metavar="NAMESPACE/NAME", help="NAMESPACE/NAME of the Pod --apply patches.")
    cost.add_argument(
        "--kubeconfig", metavar="FILE", type=Path, help="For --apply: a kubeconfig (default: the in-cluster account)."
    )
    return root


def main() -> int:
    """Console entry: usage errors exit 2, and an internal error is one short line, never a traceback."""
    # gen builds large acyclic trees (policies, manifests) that reference counting frees; the
    # cycle collector would rescan them every few hundred allocations (about 10% of a large
    # render). Imported modules are frozen out of its scans and young collections are rarer.
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    commands = parser()
    try:
        options, unknown = commands.parse_known_args(sys.argv[1:])
        if unknown:  # said by the command they were given to, with its usage
            options.usage.error(f"unrecognized arguments: {' '.join(unknown)}{_second_path_hint(options, unknown)}")
    except SystemExit as done:  # --help, --version, or a usage error argparse has reported
        return done.code if isinstance(done.code, int) else 2
    for name, value in list(vars(options).items()):  # repeated options and paths, as the commands take them
        if isinstance(value, list):
            setattr(options, name, tuple(value))
    handler: Handler | None = options.handler
    if handler is None:  # `gen` or `gen explain` alone
        options.usage.print_help(sys.stderr)
        return 2
    if options.no_cache:
        from generator import cache

        cache.disable()
    try:
        return handler(options)
    except GeneratorError as err:
        print(f"gen: error: {err}", file=sys.stderr)
        return 2
    except UsageError as err:
        print(f"gen: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # the last line of defence: no traceback reaches the user
        print(f"gen: internal error: {type(err).__name__}: {err} (please report this with the input)", file=sys.stderr)
        return 2


def _second_path_hint(options: argparse.Namespace, unknown: list[str]) -> str:
    """`gen render policies deploy`, as other tools take a source and a destination."""
    if not hasattr(options, "policy_dir") or all(arg.startswith("-") for arg in unknown):
        return ""
    return " (one POLICY_DIR only" + ("; the output directory goes after --out)" if hasattr(options, "out") else ")")


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
