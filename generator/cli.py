"""Command line: flags -> options -> pipeline -> report -> exit code. Nothing else lives here.

A typer app with click's plain help and errors: rich would cost its import on every --help and
usage error. Each command's module is imported when the command runs, and typer builds a
command from its handler's signature only when the command line names it (or help lists it).

No `from __future__ import annotations` here: typer reads the named command's signature on each
run, and evaluating string annotations tripled that (8.7 ms instead of 2).
"""

import gc
import os
import sys
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from enum import Enum
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, ClassVar

import typer
from typer._click import Command, Context
from typer._click.exceptions import UsageError
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command

from generator import __version__
from generator.errors import GeneratorError
from generator.reporters import REPORTER_BY_NAME

Handler = Callable[..., int]


class _Command(TyperCommand):
    """A command whose usage errors all name it, and where a second path after its one directory
    says where that path goes: other tools take a source and a destination (`gen render policies deploy`)."""

    allow_extra_args = True  # extra positionals are left for parse_args to name

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        with _naming(ctx):
            extra = super().parse_args(ctx, args)
        if extra:
            ctx.fail(f"Got unexpected extra argument ({' '.join(extra)}){self._where_paths_go()}")
        return extra

    def _where_paths_go(self) -> str:
        positional = [param for param in self.params if param.param_type_name == "argument"]
        if not positional:
            return ""
        out = "; the output directory goes after --out" if any(param.name == "out" for param in self.params) else ""
        return f": one {positional[0].human_readable_name} only{out}"


class _Commands(MutableMapping[str, Command]):
    """A group's commands, each built from its handler's signature when first looked up: typer
    reads every signature it builds (about 0.25 ms a command), and a run looks up one command.
    The commands come first, in the order they were registered, then the groups."""

    def __init__(self, handlers: dict[str, typer.Typer], built: MutableMapping[str, Command]) -> None:
        self.handlers = handlers  # each command as a Typer app of its own
        self.built = built

    def __getitem__(self, name: str) -> Command:
        if name not in self.built and name in self.handlers:
            self.built[name] = get_command(self.handlers[name])
        return self.built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        del self.built[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self.handlers), **dict.fromkeys(self.built)})

    def __len__(self) -> int:
        return len(self.handlers.keys() | self.built.keys())


class _Group(TyperGroup):
    """A command group whose usage errors all name it, and whose commands are built as they are
    looked up (`handlers`: each group's class has its own)."""

    handlers: ClassVar[dict[str, typer.Typer]] = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self.handlers, self.commands)

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        with _naming(ctx):
            return super().parse_args(ctx, args)


@contextmanager
def _naming(ctx: Context) -> Iterator[None]:
    """click's parser raises a few usage errors without their command (`gen render --out` with no
    directory): given it, they show its usage and --help like every other."""
    try:
        yield
    except UsageError as err:
        err.ctx = err.ctx or ctx
        raise


def _group(handlers: dict[str, typer.Typer]) -> typer.Typer:
    """A command group (its help: its callback's docstring) of the commands in handlers, that
    lists them, as a usage error, when given none."""
    return typer.Typer(
        invoke_without_command=True,
        add_completion=False,
        cls=type("_Group", (_Group,), {"handlers": handlers}),
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )


commands: dict[str, typer.Typer] = {}
explain_commands: dict[str, typer.Typer] = {}
app = _group(commands)
explain_app = _group(explain_commands)
app.add_typer(explain_app, name="explain")


def _command(group: dict[str, typer.Typer], name: str) -> Callable[[Handler], Handler]:
    """Register a handler as a command of a group: its return value is the exit code, and a fatal
    GeneratorError exits 2 with its message (through CliRunner as through the console script)."""

    def register(handler: Handler) -> Handler:
        @wraps(handler)
        def command(**options: Any) -> None:
            try:
                code = handler(**options)
            except GeneratorError as err:
                print(f"gen: error: {err}", file=sys.stderr)
                code = 2
            raise typer.Exit(code)

        group[name] = typer.Typer(add_completion=False, rich_markup_mode=None)
        group[name].command(name, cls=_Command)(command)
        return handler

    return register


def _show_commands(ctx: typer.Context) -> None:
    """`gen` or `gen explain` alone: the commands there are, as a usage error."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help(), err=True)
        raise typer.Exit(2)


def _version(value: bool) -> None:
    if value:
        print(f"gen {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
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
    """Render validated, deterministic Kubernetes manifests from policy YAML."""
    _show_commands(ctx)
    if no_cache:
        from generator import cache

        cache.disable()


@explain_app.callback()
def _explain(ctx: typer.Context) -> None:
    """Previews of what the cluster will do with the policies."""
    _show_commands(ctx)


Format = Enum("Format", {name: name for name in REPORTER_BY_NAME}, type=str)  # type: ignore[misc]
PlanFormat = Enum("PlanFormat", {name: name for name in ("text", "json", "github")}, type=str)  # type: ignore[misc]
ExplainFormat = Enum("ExplainFormat", {name: name for name in ("text", "json")}, type=str)  # type: ignore[misc]

PolicyDirArgument = Annotated[Path, typer.Argument(metavar="POLICY_DIR", help="Policy directory.")]
FormatOption = Annotated[Format, typer.Option("--format", help="Output format.")]
StrictOption = Annotated[bool, typer.Option("--strict", help="Warnings fail too.")]
NowOption = Annotated[str | None, typer.Option("--now", metavar="TIME", help="Current time (ISO 8601 with timezone).")]
CrdsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--crds",
        metavar="PATH",
        help="CustomResourceDefinition files or directories that judge custom resources (repeatable); "
        "default: .gen.yaml's crds.",
    ),
]


@_command(commands, "render")
def _render(
    policy_dir: PolicyDirArgument = Path("policies"),
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Output directory.")] = Path("deploy"),
    target: Annotated[
        list[str] | None, typer.Option("--target", metavar="NAME", help="Render only this target (repeatable).")
    ] = None,
    check: Annotated[bool, typer.Option("--check", help="Compare with --out; exit 1 on drift; write nothing.")] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print a unified diff of what would change; write nothing.")
    ] = False,
    fmt: FormatOption = Format.text,  # type: ignore[attr-defined]
    strict: StrictOption = False,
    crds: CrdsOption = None,
) -> int:
    """Render policies into manifests (load, validate, render, validate, write)."""
    from generator.commands import render

    return render.run(policy_dir, out, tuple(target or ()), check, diff, fmt.value, strict, tuple(crds or ()))


@_command(commands, "plan")
def _plan(
    policy_dir: PolicyDirArgument = Path("policies"),
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="The committed render to compare with.")] = Path(
        "deploy"
    ),
    target: Annotated[
        list[str] | None, typer.Option("--target", metavar="NAME", help="Plan only this target (repeatable).")
    ] = None,
    fmt: Annotated[PlanFormat, typer.Option("--format", help="Output format.")] = PlanFormat.text,  # type: ignore[attr-defined]
    strict: Annotated[bool, typer.Option("--strict", help="Prunes fail too.")] = False,
    crds: CrdsOption = None,
) -> int:
    """Say what syncing a new render changes in the cluster: create, update, restart, recreate,
    refused, prune, kept. Writes nothing; exit 1 when an update would be refused."""
    from generator.commands import plan

    return plan.run(policy_dir, out, tuple(target or ()), fmt.value, strict, tuple(crds or ()))


@_command(commands, "lint")
def _lint(
    paths: Annotated[list[Path] | None, typer.Argument(metavar="PATH...", help="Policy files or directories.")] = None,
    fmt: FormatOption = Format.text,  # type: ignore[attr-defined]
    strict: StrictOption = False,
) -> int:
    """Check policy files (schema and cross-policy rules); fast, for pre-commit."""
    from generator.commands import lint

    return lint.run(tuple(paths or (Path("policies"),)), fmt.value, strict)


@_command(commands, "validate")
def _validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="PATH...",
            help="Manifest files or directories (default: the current directory); - reads stdin.",
        ),
    ] = None,
    kubernetes_version: Annotated[
        list[str] | None,
        typer.Option(
            "--kubernetes-version",
            "-k",
            metavar="VERSION",
            help="Kubernetes version to validate for (repeatable: a finding names the versions it holds for). "
            "Default: .gen.yaml's kubernetesVersions, else 1.35.",
        ),
    ] = None,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin", metavar="NAME", help="Extra scheduler plugin compiled into your scheduler (repeatable)."
        ),
    ] = None,
    crds: Annotated[
        list[Path] | None,
        typer.Option(
            "--crds",
            metavar="PATH",
            help="CustomResourceDefinition files or directories whose custom resources to validate (repeatable); "
            "CRDs among the manifests count too.",
        ),
    ] = None,
    fmt: FormatOption = Format.text,  # type: ignore[attr-defined]
    strict: StrictOption = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Settings file (default: .gen.yaml here or in a parent, up to the repository root).",
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="Report only findings this earlier --format json report does not hold.",
        ),
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline", metavar="FILE", help="Write today's findings as a baseline to this file, and pass."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            metavar="FILE",
            help="Write the --format report to this file; the terminal still gets the text.",
        ),
    ] = None,
) -> int:
    """Validate manifests as kube-apiserver and kube-scheduler would, custom resources by their CRDs."""
    from generator.commands import validate

    return validate.run(
        tuple(paths or (Path("."),)),
        tuple(kubernetes_version or ()),
        tuple(plugin or ()),
        tuple(crds or ()),
        fmt.value,
        strict,
        config,
        baseline,
        write_baseline,
        output,
    )


@_command(commands, "schema")
def _schema(
    out: Annotated[Path | None, typer.Option("--out", metavar="DIR", help="Directory to write the schemas to.")] = None,
) -> int:
    """Export the policy JSON Schemas (for editors); lists them without --out."""
    from generator.commands import schema

    return schema.run(out)


@_command(commands, "init")
def _init(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="Where to create the repository.")] = Path("."),
) -> int:
    """Scaffold a policy repository: example policies, schemas, pre-commit and CI configuration."""
    from generator.commands import init

    return init.run(directory)


@_command(explain_commands, "gpu")
def _explain_gpu(
    nodes: Annotated[
        Path,
        typer.Option(
            "--nodes",
            metavar="FILE",
            help="`kubectl get nodes -o json` output, or a YAML list of nodes ('-' = stdin).",
        ),
    ],
    policy_dir: PolicyDirArgument = Path("policies"),
    pods: Annotated[
        Path | None,
        typer.Option("--pods", metavar="FILE", help="`kubectl get pods -A -o json` output: GPUs already requested."),
    ] = None,
    utilization: Annotated[
        Path | None,
        typer.Option(
            "--utilization", metavar="FILE", help="Per-node GPU utilization samples for the seed's 70:30 blend."
        ),
    ] = None,
    now: NowOption = None,
    max_age: Annotated[
        float, typer.Option("--max-age", metavar="SECONDS", help="Seconds after which a sample is stale.")
    ] = 60.0,
    target: Annotated[
        list[str] | None, typer.Option("--target", metavar="NAME", help="Only this target (repeatable).")
    ] = None,
    workload: Annotated[
        list[str] | None, typer.Option("--workload", metavar="NAME", help="Only this GpuWorkload (repeatable).")
    ] = None,
    fmt: Annotated[ExplainFormat, typer.Option("--format", help="Output format.")] = ExplainFormat.text,  # type: ignore[attr-defined]
) -> int:
    """Preview GPU placement: kube-scheduler's filters, then each node scored as the Pod's scheduler profile scores it."""
    from generator.commands import explain

    return explain.run(
        nodes, pods, utilization, policy_dir, tuple(target or ()), now, max_age, fmt.value, tuple(workload or ())
    )


@_command(explain_commands, "scale-down")
def _explain_scale_down(
    pods: Annotated[
        Path, typer.Option("--pods", metavar="FILE", help="`kubectl get pods -o json` output ('-' = stdin).")
    ],
    deployment: Annotated[str, typer.Option("--deployment", metavar="NAME", help="The Deployment that scales down.")],
    to: Annotated[
        int | None,
        typer.Option("--to", metavar="N", help="Replicas after the scale-down (default: the HPA's minReplicas)."),
    ] = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", metavar="NAMESPACE", help="The Deployment's namespace.")
    ] = None,
    now: NowOption = None,
    replicasets: Annotated[
        Path | None,
        typer.Option("--replicasets", metavar="FILE", help="`kubectl get rs -o json` output: ReplicaSets by owner."),
    ] = None,
    policy_dir: Annotated[
        Path | None,
        typer.Argument(
            metavar="POLICY_DIR", help="Policy directory, for --to from the ReplicatedService's autoscaling."
        ),
    ] = None,
    fmt: Annotated[ExplainFormat, typer.Option("--format", help="Output format.")] = ExplainFormat.text,  # type: ignore[attr-defined]
    target: Annotated[
        list[str] | None,
        typer.Option("--target", metavar="NAME", help="Take --to from this target's policy (repeatable)."),
    ] = None,
) -> int:
    """Preview which Pods the ReplicaSet controller deletes when a Deployment scales down."""
    from generator.commands import scaledown

    policy_dir = policy_dir if to is not None else _policies_here(policy_dir)
    return scaledown.run(pods, replicasets, deployment, namespace, to, now, policy_dir, fmt.value, tuple(target or ()))


@_command(commands, "cost")
def _cost(
    sample: Annotated[
        Path,
        typer.Option("--sample", metavar="FILE", help="One metrics sample of a Pod, JSON or YAML ('-' = stdin)."),
    ],
    policy_dir: Annotated[
        Path | None,
        typer.Argument(
            metavar="POLICY_DIR", help="Policy directory with a DeletionCostPolicy (default: policies/, if present)."
        ),
    ] = None,
    now: NowOption = None,
    last_cost: Annotated[
        int | None,
        typer.Option("--last-cost", metavar="N", help="The cost the Pod has now; print nothing if unchanged."),
    ] = None,
    pod_uid: Annotated[
        str | None, typer.Option("--pod-uid", metavar="UID", help="Refuse a sample of any other Pod.")
    ] = None,
    target: Annotated[
        list[str] | None, typer.Option("--target", metavar="NAME", help="Use this target's policy.")
    ] = None,
    apply: Annotated[
        bool,
        typer.Option("--apply", help="Send the patch to the cluster (needs --pod; pip install 'gitops-gen[cost]')."),
    ] = False,
    pod: Annotated[
        str | None, typer.Option("--pod", metavar="NAMESPACE/NAME", help="NAMESPACE/NAME of the Pod --apply patches.")
    ] = None,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig", metavar="FILE", help="For --apply: a kubeconfig (default: the in-cluster account)."
        ),
    ] = None,
) -> int:
    """Print the JSON Patch that sets a Pod's deletion cost from a fresh metrics sample, or send it (--apply)."""
    from generator.commands import cost

    if apply and pod is None:
        raise typer.BadParameter("needs --pod NAMESPACE/NAME", param_hint="'--apply'")
    return cost.run(
        sample,
        _policies_here(policy_dir),
        tuple(target or ()),
        now,
        last_cost,
        pod_uid,
        pod if apply else None,
        kubeconfig,
    )


def _policies_here(given: Path | None) -> Path | None:
    """The policy directory given, else ./policies where there is one."""
    if given is None and Path("policies").is_dir():
        return Path("policies")
    return given


def main() -> int:
    """Console entry: usage errors exit 2, and an internal error is one short line, never a traceback."""
    # gen builds large acyclic trees (policies, manifests) that reference counting frees; the
    # cycle collector would rescan them every few hundred allocations (about 10% of a large
    # render). Imported modules are frozen out of its scans and young collections are rarer.
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        app(prog_name="gen")  # reports a usage error, and exits with the command's code
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 2
    except Exception as err:  # the last line of defence: no traceback reaches the user
        print(f"gen: internal error: {type(err).__name__}: {err} (please report this with the input)", file=sys.stderr)
        return 2
    return 0


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
