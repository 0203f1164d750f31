"""kube-scheduler's startup checks of a KubeSchedulerConfiguration (v1), in the order it runs them.

Decoding (strict) is the bundled JSON Schema's job; this module covers defaulting-aware
validation, framework construction (plugin names per extension point) and the leader elector.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from generator import schemas
from generator.kube.findings import Finding, Path, error_at, warning_at
from generator.problems import Severity

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    "multiPoint",
)

# In-tree plugins of kube-scheduler 1.35 and the extension points each implements.
IN_TREE_PLUGINS: dict[str, frozenset[str]] = {
    name: frozenset(points.split())
    for name, points in {
        "PrioritySort": "queueSort",
        "SchedulingGates": "preEnqueue",
        "NodeUnschedulable": "filter",
        "NodeName": "filter",
        "TaintToleration": "filter preScore score",
        "NodeAffinity": "preFilter filter preScore score",
        "NodePorts": "preFilter filter",
        "NodeResourcesFit": "preFilter filter preScore score",
        "VolumeRestrictions": "preFilter filter",
        "NodeVolumeLimits": "preFilter filter",
        "VolumeBinding": "preFilter filter reserve preBind preScore score",
        "VolumeZone": "preFilter filter",
        "PodTopologySpread": "preFilter filter preScore score",
        "InterPodAffinity": "preFilter filter preScore score",
        "DynamicResources": "preEnqueue preFilter filter postFilter preScore score reserve preBind",
        "DefaultPreemption": "preEnqueue postFilter",
        "NodeResourcesBalancedAllocation": "preScore score",
        "ImageLocality": "score",
        "DefaultBinder": "bind",
        "NodeDeclaredFeatures": "preFilter filter",
        "GangScheduling": "preEnqueue permit",
    }.items()
}
REMOVED_PLUGINS = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})
# Out-of-tree plugins gen knows the shape of; others declared by the user may sit anywhere.
KNOWN_OUT_OF_TREE: dict[str, frozenset[str]] = {
    "GPUPacking": frozenset({"score"}),
    # scheduler-plugins' gang scheduling (pkg/coscheduling): the group's Pods sort together,
    # wait at Permit until minMember are placed, and are rejected together
    "Coscheduling": frozenset({"queueSort", "preFilter", "postFilter", "permit", "reserve"}),
}
# The plugins whose args kube-scheduler (or scheduler-plugins) decodes strictly into a typed
# struct: `<Name>Args` in schemas/kubescheduler-plugin-args-v1.json.
ARGS_SCHEMA = "kubescheduler-plugin-args-v1.json"
TYPED_ARGS = frozenset(
    {
        "DefaultPreemption",
        "InterPodAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "NodeResourcesBalancedAllocation",
        "NodeAffinity",
        "VolumeBinding",
        "DynamicResources",
        "Coscheduling",
    }
)
DEFAULT_MULTIPOINT = (
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
)
JITTER_FACTOR = 1.2

_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: Any) -> float | None:
    """Seconds of a Go duration string, or None when time.ParseDuration would fail."""
    if not isinstance(text, str) or not text:
        return None
    if text in ("0", "+0", "-0"):
        return 0.0
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    pos, total = 0, 0.0
    for match in _DURATION_PART.finditer(body):
        if match.start() != pos:
            return None
        total += float(match[1]) * _UNIT[match[2]]
        pos = match.end()
    return sign * total if pos == len(body) and pos > 0 else None


def _plugins_of(profile: dict[str, Any], point: str, which: str) -> list[dict[str, Any]]:
    sets = (profile.get("plugins") or {}).get(point) or {}
    return [p for p in (sets.get(which) or []) if isinstance(p, dict)]


def _disabled(profile: dict[str, Any], point: str, name: str) -> bool:
    names = {p.get("name") for p in _plugins_of(profile, point, "disabled")}
    enabled = {p.get("name") for p in _plugins_of(profile, point, "enabled")}
    return (name in names or "*" in names) and name not in enabled


def plugin_entry(profile: dict[str, Any], name: str, which: str, points: Iterable[str]) -> Path:
    """Where in the profile the first `which` entry naming the plugin (or `*`, for disabled) is:
    the line a finding about that plugin should point at. ("plugins",) when none is."""
    for point in points:
        entries = ((profile.get("plugins") or {}).get(point) or {}).get(which) or []
        for j, entry in enumerate(entries):
            if isinstance(entry, dict) and entry.get("name") in (name, "*" if which == "disabled" else name):
                return ("plugins", point, which, j)
    return ("plugins",)


def fit_enabled(profile: dict[str, Any]) -> bool:
    """NodeResourcesFit still filters nodes (default multiPoint, not disabled for filter)."""
    if _disabled(profile, "filter", "NodeResourcesFit"):
        return False
    multi_enabled = {p.get("name") for p in _plugins_of(profile, "multiPoint", "enabled")}
    filter_enabled = {p.get("name") for p in _plugins_of(profile, "filter", "enabled")}
    if _disabled(profile, "multiPoint", "NodeResourcesFit"):
        return "NodeResourcesFit" in multi_enabled | filter_enabled
    return True


def enabled_plugins(profile: dict[str, Any]) -> set[str]:
    return {p.get("name", "") for point in EXTENSION_POINTS for p in _plugins_of(profile, point, "enabled")}


def check_config(cfg: dict[str, Any], declared: Iterable[str] = (), base: Path = ()) -> Iterator[Finding]:
    """All findings for one decoded KubeSchedulerConfiguration; `declared` are extra plugin names."""
    known = dict(IN_TREE_PLUGINS)
    known.update(KNOWN_OUT_OF_TREE)
    extra = frozenset(declared) - known.keys()
    yield from _check_top(cfg, base)
    yield from _check_leader_election(
        cfg.get("leaderElection") or {}, (*base, "leaderElection"), secondary=_is_secondary(cfg)
    )
    profiles = cfg.get("profiles") or []
    seen: dict[str, int] = {}
    for i, profile in enumerate(profiles):
        if not isinstance(profile, dict):
            continue
        ppath = (*base, "profiles", i)
        name = profile.get("schedulerName")
        if name is None and len(profiles) > 1:
            yield error_at(
                (*ppath, "schedulerName"),
                "scheduler-profile-name",
                "Required value: every profile needs a schedulerName when there are several",
            )
        elif name == "":
            yield error_at(
                (*ppath, "schedulerName"), "scheduler-profile-name", "Required value: schedulerName may not be empty"
            )
        elif name is not None and name in seen:
            yield error_at(
                (*ppath, "schedulerName"), "scheduler-profile-name", f"Duplicate value: {name!r} (profile {seen[name]})"
            )
        if isinstance(name, str):
            seen.setdefault(name, i)
        pct = profile.get("percentageOfNodesToScore")
        if isinstance(pct, int) and not 0 <= pct <= 100:
            yield error_at((*ppath, "percentageOfNodesToScore"), "scheduler-config", "not in valid range [0-100]")
        yield from _check_plugins(profile, ppath, known, extra)
        yield from _check_expanded(profile, ppath, known, extra, name or "default-scheduler")
        yield from _check_plugin_config(profile, ppath)
    yield from _check_queue_sort(profiles, base)
    yield from _check_extenders(cfg.get("extenders") or [], (*base, "extenders"))


def _is_secondary(cfg: dict[str, Any]) -> bool:
    profiles = cfg.get("profiles") or []
    return bool(profiles) and all(
        isinstance(p, dict) and p.get("schedulerName", "default-scheduler") != "default-scheduler" for p in profiles
    )


def _check_top(cfg: dict[str, Any], base: Path) -> Iterator[Finding]:
    par = cfg.get("parallelism")
    if par is not None and par <= 0:
        yield error_at((*base, "parallelism"), "scheduler-config", "should be an integer value greater than zero")
    pct = cfg.get("percentageOfNodesToScore")
    if isinstance(pct, int) and not 0 <= pct <= 100:
        yield error_at((*base, "percentageOfNodesToScore"), "scheduler-config", "not in valid range [0-100]")
    initial = cfg.get("podInitialBackoffSeconds")
    if initial is not None and initial <= 0:
        yield error_at((*base, "podInitialBackoffSeconds"), "scheduler-config", "must be greater than 0")
    maximum = cfg.get("podMaxBackoffSeconds")
    if maximum is not None and maximum < (initial if initial is not None else 1):
        yield error_at(
            (*base, "podMaxBackoffSeconds"),
            "scheduler-config",
            "must be greater than or equal to PodInitialBackoffSeconds",
        )
    burst = (cfg.get("clientConnection") or {}).get("burst")
    if isinstance(burst, int) and burst < 0:
        yield error_at((*base, "clientConnection", "burst"), "scheduler-config", "must be non-negative")


def _check_leader_election(le: dict[str, Any], path: Path, secondary: bool) -> Iterator[Finding]:
    if le.get("leaderElect", True) is not True:
        return
    durations: dict[str, float] = {}
    for key, default in (("leaseDuration", 15.0), ("renewDeadline", 10.0), ("retryPeriod", 2.0)):
        raw = le.get(key)
        value = default if raw is None else parse_duration(raw)
        if value is None:
            yield error_at((*path, key), "scheduler-leader-election", f"{raw!r} is not a duration")
            return
        if value == 0:
            value = default  # a zero duration counts as unset and is defaulted
        if value < 0:
            yield error_at((*path, key), "scheduler-leader-election", "must be greater than zero")
            return
        durations[key] = value
    if durations["leaseDuration"] <= durations["renewDeadline"]:
        yield error_at((*path, "leaseDuration"), "scheduler-leader-election", "must be greater than `RenewDeadline`")
    if durations["renewDeadline"] <= durations["retryPeriod"] * JITTER_FACTOR:
        yield error_at(
            (*path, "renewDeadline"),
            "scheduler-leader-election",
            "renewDeadline must be greater than retryPeriod*JitterFactor (1.2): the scheduler exits at startup",
            "client-go's leader elector enforces this, not config validation",
        )
    lock = le.get("resourceLock", "leases")
    if lock != "leases":
        yield error_at((*path, "resourceLock"), "scheduler-leader-election", 'resourceLock value must be "leases"')
    for key in ("resourceName", "resourceNamespace"):
        if key in le and not le[key]:
            yield error_at((*path, key), "scheduler-leader-election", f"{key} is required")
    if (
        secondary
        and le.get("resourceName", "kube-scheduler") == "kube-scheduler"
        and le.get("resourceNamespace", "kube-system") == "kube-system"
    ):
        yield warning_at(
            path,
            "scheduler-lease-shared",
            "a secondary scheduler on the default lease kube-system/kube-scheduler competes with the main scheduler",
            "set resourceName/resourceNamespace to the scheduler's own",
        )


def _close_plugin(name: str, names: list[str]) -> str | None:
    """A known plugin name the given one is a misspelling of: case first (GpuPacking), then edits."""
    for known in names:
        if known.lower() == name.lower():
            return known
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.8)
    return close[0] if close else None


def _check_plugins(
    profile: dict[str, Any], ppath: Path, known: dict[str, frozenset[str]], extra: frozenset[str]
) -> Iterator[Finding]:
    for point in EXTENSION_POINTS:
        for which in ("enabled", "disabled"):
            seen: set[str] = set()
            for j, plugin in enumerate(_plugins_of(profile, point, which)):
                where = (*ppath, "plugins", point, which, j)
                name = str(plugin.get("name", ""))
                if name in REMOVED_PLUGINS:
                    yield error_at(
                        (*where, "name"),
                        "scheduler-plugin-name",
                        f'plugin {name!r} was invalid in version "kubescheduler.config.k8s.io/v1" (removed)',
                    )
                    continue
                if which == "disabled":
                    continue
                if name not in known and name not in extra:
                    close = _close_plugin(name, [*known, *extra])
                    yield error_at(
                        (*where, "name"),
                        "scheduler-plugin-name",
                        f'{point[0].upper()}{point[1:]}Plugin "{name}" does not exist',
                        f"did you mean {close!r}?"
                        if close
                        else "declare plugins compiled into the image (Scheduler.outOfTreePlugins or --plugin)",
                    )
                    continue
                points = known.get(name)
                if point != "multiPoint" and points is not None and point not in points:
                    yield error_at(
                        (*where, "name"),
                        "scheduler-plugin-point",
                        f'plugin "{name}" does not extend {point[0].upper()}{point[1:]}Plugin',
                    )
                if name in seen:
                    yield error_at(
                        (*where, "name"),
                        "scheduler-plugin-duplicate",
                        f'plugin "{name}" already registered as "{point}"',
                    )
                seen.add(name)
                weight = plugin.get("weight")
                if weight is not None and point in ("score", "multiPoint"):
                    if weight < 0:
                        yield error_at(
                            (*where, "weight"),
                            "scheduler-plugin-weight",
                            f"negative weight {weight} inverts the plugin's preference",
                        )
                    elif weight == 0:
                        yield warning_at(
                            (*where, "weight"),
                            "scheduler-plugin-weight",
                            "weight 0 is treated as 1 by kube-scheduler",
                            "omit it or use 1..",
                        )
    names = enabled_plugins(profile)
    if "GPUPacking" in names:
        if not fit_enabled(profile):
            yield error_at(
                (*ppath, *plugin_entry(profile, "NodeResourcesFit", "disabled", ("filter", "multiPoint"))),
                "gpu-packing-needs-fit",
                "GPUPacking is enabled but NodeResourcesFit is disabled: a score of 0 never excludes a node, so nodes without free GPUs stay feasible",
                "keep NodeResourcesFit enabled",
            )
        if not _fit_scoring_overridden(profile):
            yield Finding(
                (*ppath, "plugins"),
                "gpu-packing-least-allocated",
                Severity.INFO,
                "NodeResourcesFit scores with LeastAllocated by default, which spreads Pods and works against GPU packing",
                "consider NodeResourcesFit args scoringStrategy MostAllocated including nvidia.com/gpu",
            )


def _at_point(profile: dict[str, Any], point: str, known: dict[str, frozenset[str]]) -> set[str]:
    """The plugins a profile runs at one extension point once multiPoint is expanded (framework.go)."""
    multi_off = {p.get("name") for p in _plugins_of(profile, "multiPoint", "disabled")}
    names = set() if "*" in multi_off else {n for n in DEFAULT_MULTIPOINT if n not in multi_off}
    names |= {str(p.get("name")) for p in _plugins_of(profile, "multiPoint", "enabled")}
    names = {n for n in names if point in known.get(n, frozenset())}
    off = {p.get("name") for p in _plugins_of(profile, point, "disabled")}
    names = set() if "*" in off else names - off
    return names | {str(p.get("name")) for p in _plugins_of(profile, point, "enabled")}


def _check_expanded(
    profile: dict[str, Any], ppath: Path, known: dict[str, frozenset[str]], extra: frozenset[str], name: str
) -> Iterator[Finding]:
    """One queue sort and a binder per profile. A declared plugin (--plugin) enabled in multiPoint
    may implement either: gen does not know its extension points, so it may be the one."""
    unknown_points = bool(extra & {str(p.get("name")) for p in _plugins_of(profile, "multiPoint", "enabled")})
    sorters = _at_point(profile, "queueSort", known)
    if len(sorters) > 1 or (not sorters and not unknown_points):
        yield error_at(
            (*ppath, "plugins"),
            "scheduler-queue-sort",
            f"only one queue sort plugin required for profile with scheduler name {name!r}, but got {len(sorters)}",
        )
    if not _at_point(profile, "bind", known) and not unknown_points:
        yield error_at(
            (*ppath, "plugins"),
            "scheduler-plugin-point",
            f"at least one bind plugin is needed for profile with scheduler name {name!r}",
            "disabling '*' in multiPoint also removes PrioritySort and DefaultBinder",
        )


def _fit_scoring_overridden(profile: dict[str, Any]) -> bool:
    for cfg in profile.get("pluginConfig") or []:
        if isinstance(cfg, dict) and cfg.get("name") == "NodeResourcesFit":
            strategy = (cfg.get("args") or {}).get("scoringStrategy") or {}
            return strategy.get("type", "LeastAllocated") != "LeastAllocated"
    return False


def _check_plugin_config(profile: dict[str, Any], ppath: Path) -> Iterator[Finding]:
    seen: set[str] = set()
    for j, cfg in enumerate(profile.get("pluginConfig") or []):
        where = (*ppath, "pluginConfig", j)
        name = cfg.get("name")
        if name in REMOVED_PLUGINS:
            yield error_at(
                (*where, "name"),
                "scheduler-plugin-name",
                f'plugin {name!r} was invalid in version "kubescheduler.config.k8s.io/v1" (removed)',
            )
        if name in seen:
            yield error_at(
                (*where, "name"), "scheduler-plugin-config", f"Duplicate value: repeated config for plugin {name}"
            )
        seen.add(name)
        args = cfg.get("args") or {}
        if not isinstance(args, dict):
            continue
        kind = args.get("kind")
        if name in IN_TREE_PLUGINS and kind is not None and kind != f"{name}Args":
            yield error_at(
                (*where, "args", "kind"), "scheduler-plugin-args", f"args for plugin {name} were not of type {name}Args"
            )
        shape = list(_args_shape(str(name), args, (*where, "args")))
        yield from shape
        if not any(f.severity is Severity.ERROR for f in shape):  # the value rules assume the fields are right
            yield from _check_args(str(name), args, (*where, "args"))


def _args_shape(name: str, args: dict[str, Any], path: Path) -> Iterator[Finding]:
    """Strict decoding of a plugin's args: kube-scheduler refuses to start on a field its
    `<Name>Args` type does not have; args of an out-of-tree plugin gen does not know are said
    to be unchecked."""
    if name not in TYPED_ARGS:
        if args and name not in IN_TREE_PLUGINS:
            yield Finding(
                path,
                "scheduler-plugin-args",
                Severity.INFO,
                f"the args of plugin {name} were not checked: gen does not know its {name}Args type",
                "kube-scheduler decodes them strictly: check each field against the plugin's documentation",
            )
        return
    from generator.kube.crds import schema_findings  # imported by the few configs that reach here

    for finding in schema_findings(
        schemas.definition_validator(ARGS_SCHEMA, f"{name}Args"), args, "scheduler-plugin-args"
    ):
        yield replace(finding, path=(*path, *finding.path))


def _check_args(name: str, args: dict[str, Any], path: Path) -> Iterator[Finding]:
    if name == "NodeResourcesFit":
        strategy = args.get("scoringStrategy")
        if isinstance(strategy, dict):
            stype = strategy.get("type")
            if stype not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
                yield error_at(
                    (*path, "scoringStrategy", "type"), "scheduler-plugin-args", f"Unsupported value: {stype!r}"
                )
            for k, res in enumerate(strategy.get("resources") or []):
                w = res.get("weight", 1) or 1
                if not 0 < w <= 100:
                    yield error_at(
                        (*path, "scoringStrategy", "resources", k, "weight"),
                        "scheduler-plugin-args",
                        f"resource weight of {w} not in valid range (0, 100]",
                    )
            has_ratio = "requestedToCapacityRatio" in strategy
            if (stype == "RequestedToCapacityRatio") != has_ratio:
                yield error_at(
                    (*path, "scoringStrategy"),
                    "scheduler-plugin-args",
                    "requestedToCapacityRatio is required for, and only allowed with, type RequestedToCapacityRatio",
                )
            shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
            last = -1
            for k, point in enumerate(shape):
                u, s = point.get("utilization", 0), point.get("score", 0)
                if not 0 <= u <= 100 or u <= last:
                    yield error_at(
                        (*path, "scoringStrategy", "requestedToCapacityRatio", "shape", k),
                        "scheduler-plugin-args",
                        "utilization values must be sorted in increasing order within [0, 100]",
                    )
                if not 0 <= s <= 10:
                    yield error_at(
                        (*path, "scoringStrategy", "requestedToCapacityRatio", "shape", k, "score"),
                        "scheduler-plugin-args",
                        "score not in valid range [0, 10]",
                    )
                last = u
    elif name == "InterPodAffinity":
        w = args.get("hardPodAffinityWeight")
        if isinstance(w, int) and not 0 <= w <= 100:
            yield error_at((*path, "hardPodAffinityWeight"), "scheduler-plugin-args", "not in valid range [0, 100]")
    elif name == "DefaultPreemption":
        pct, absolute = args.get("minCandidateNodesPercentage", 10), args.get("minCandidateNodesAbsolute", 100)
        if not 0 <= pct <= 100:
            yield error_at(
                (*path, "minCandidateNodesPercentage"), "scheduler-plugin-args", "not in valid range [0, 100]"
            )
        if absolute < 0:
            yield error_at((*path, "minCandidateNodesAbsolute"), "scheduler-plugin-args", "not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            yield error_at(
                path,
                "scheduler-plugin-args",
                "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero",
            )
    elif name == "NodeAffinity":
        added = args.get("addedAffinity") or {}
        required = (added.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
        preferred = [
            (p.get("preference") or {}) for p in added.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        for term in [*required, *preferred]:
            for expr in (term or {}).get("matchExpressions") or []:
                op, values = expr.get("operator"), expr.get("values") or []
                if op in ("Gt", "Lt") and (len(values) != 1 or not re.fullmatch(r"[+-]?[0-9]+", str(values[0]))):
                    yield error_at(
                        (*path, "addedAffinity"),
                        "scheduler-plugin-args",
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                elif op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
                    yield error_at(
                        (*path, "addedAffinity"),
                        "scheduler-plugin-args",
                        f"{op!r} is not a valid pod selector operator",
                    )
    elif name == "PodTopologySpread":
        kind = args.get("defaultingType", "System")
        constraints = args.get("defaultConstraints") or []
        if kind not in ("System", "List"):
            yield error_at((*path, "defaultingType"), "scheduler-plugin-args", f"Unsupported value: {kind!r}")
        if kind == "System" and constraints:
            yield error_at(
                (*path, "defaultConstraints"),
                "scheduler-plugin-args",
                "when .defaultingType is System, .defaultConstraints must be empty",
            )
        seen: set[tuple[Any, Any]] = set()
        for k, c in enumerate(constraints):
            cpath = (*path, "defaultConstraints", k)
            if not isinstance(c.get("maxSkew"), int) or c["maxSkew"] <= 0:
                yield error_at((*cpath, "maxSkew"), "scheduler-plugin-args", "not in valid range (0, inf)")
            if c.get("whenUnsatisfiable") not in ("DoNotSchedule", "ScheduleAnyway"):
                yield error_at((*cpath, "whenUnsatisfiable"), "scheduler-plugin-args", "Unsupported value")
            if "labelSelector" in c:
                yield error_at(
                    (*cpath, "labelSelector"), "scheduler-plugin-args", "constraint must not define a selector"
                )
            key = (c.get("topologyKey"), c.get("whenUnsatisfiable"))
            if key in seen:
                yield error_at(cpath, "scheduler-plugin-args", f"Duplicate value: {key!r}")
            seen.add(key)
    elif name == "VolumeBinding":
        timeout = args.get("bindTimeoutSeconds")
        if isinstance(timeout, int) and timeout < 0:
            yield error_at(
                (*path, "bindTimeoutSeconds"),
                "scheduler-plugin-args",
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
    elif name == "NodeResourcesBalancedAllocation":
        for k, res in enumerate(args.get("resources") or []):
            if (res.get("weight", 1) or 1) != 1:
                yield error_at((*path, "resources", k, "weight"), "scheduler-plugin-args", "resource weight must be 1")


def _check_queue_sort(profiles: list[Any], base: Path) -> Iterator[Finding]:
    if not profiles or not isinstance(profiles[0], dict):
        return
    first = ((profiles[0].get("plugins") or {}).get("queueSort")) or {}
    if len(first.get("enabled") or []) > 1:
        yield error_at(
            (*base, "profiles", 0, "plugins", "queueSort"),
            "scheduler-queue-sort",
            "only one queue sort plugin can be enabled",
        )
    for i, profile in enumerate(profiles[1:], start=1):
        if isinstance(profile, dict) and (((profile.get("plugins") or {}).get("queueSort")) or {}) != first:
            yield error_at(
                (*base, "profiles", i, "plugins", "queueSort"),
                "scheduler-queue-sort",
                "queueSort must be the same for all profiles",
            )


def _check_extenders(extenders: list[Any], path: Path) -> Iterator[Finding]:
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        if not isinstance(ext, dict):
            continue
        if ext.get("prioritizeVerb") and (ext.get("weight") or 0) <= 0:
            yield error_at((*path, i, "weight"), "scheduler-extender", "must have a positive weight applied to it")
        for k, res in enumerate(ext.get("managedResources") or []):
            rname = str((res or {}).get("name", ""))
            prefix = rname.split("/")[0] if "/" in rname else ""
            if "/" not in rname or prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"):
                yield error_at(
                    (*path, i, "managedResources", k, "name"),
                    "scheduler-extender",
                    f"{rname!r} is not an extended resource name",
                    "managed resources are extended resources such as nvidia.com/gpu",
                )
            elif rname in managed:
                yield error_at(
                    (*path, i, "managedResources", k, "name"), "scheduler-extender", f"Duplicate value: {rname!r}"
                )
            managed.add(rname)
        if ext.get("bindVerb"):
            binders += 1
            if binders > 1:
                yield error_at((*path, i, "bindVerb"), "scheduler-extender", "only one extender can implement bind")


# The default profile's Score plugins and weights: v1's getDefaultPlugins (multiPoint), 1.35.
DEFAULT_SCORE_WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "VolumeBinding": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "DynamicResources": 1,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}
DEFAULT_FIT_STRATEGY: dict[str, Any] = {
    "type": "LeastAllocated",
    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
}


def _scores(name: str) -> bool:
    return "score" in IN_TREE_PLUGINS.get(name, KNOWN_OUT_OF_TREE.get(name, frozenset({"score"})))


def score_weights(profile: dict[str, Any]) -> dict[str, int]:
    """The Score plugins a profile runs and their weights, as kube-scheduler builds them: the
    default multiPoint set merged with the profile's (mergePluginSet: a disabled name or `*`
    drops defaults, a re-enabled default keeps its place with the new weight), then expanded to
    the score point (expandMultiPointPlugins: the score set's own entries win, its disabled
    names drop multiPoint ones, `*` there drops them all). A weight of 0 or none is 1."""
    multi_disabled = {p.get("name") for p in _plugins_of(profile, "multiPoint", "disabled")}
    multi_enabled = _plugins_of(profile, "multiPoint", "enabled")
    merged: dict[str, int] = {}
    if "*" not in multi_disabled:
        merged = {name: weight for name, weight in DEFAULT_SCORE_WEIGHTS.items() if name not in multi_disabled}
    for entry in multi_enabled:
        merged[str(entry.get("name"))] = int(
            entry.get("weight") or DEFAULT_SCORE_WEIGHTS.get(str(entry.get("name")), 1)
        )
    score_disabled = {p.get("name") for p in _plugins_of(profile, "score", "disabled")}
    out = {str(p.get("name")): int(p.get("weight") or 1) for p in _plugins_of(profile, "score", "enabled")}
    if "*" not in score_disabled:
        for name, weight in merged.items():
            if _scores(name) and name not in score_disabled and name not in out:
                out[name] = weight or 1
    return out


def plugin_args(profile: dict[str, Any], name: str) -> dict[str, Any]:
    """The args a profile's pluginConfig gives a plugin ({} when none)."""
    for cfg in profile.get("pluginConfig") or []:
        if isinstance(cfg, dict) and cfg.get("name") == name and isinstance(cfg.get("args"), dict):
            return cfg["args"]
    return {}


def fit_strategy(profile: dict[str, Any]) -> dict[str, Any]:
    """NodeResourcesFit's scoringStrategy with v1's defaults (LeastAllocated, cpu and memory at 1)."""
    strategy = dict(plugin_args(profile, "NodeResourcesFit").get("scoringStrategy") or {})
    strategy.setdefault("type", "LeastAllocated")
    if not strategy.get("resources"):
        strategy["resources"] = DEFAULT_FIT_STRATEGY["resources"]
    return strategy
