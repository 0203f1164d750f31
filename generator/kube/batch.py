"""kube-apiserver's create-time rules for batch/v1 Jobs and CronJobs beyond the schemas.

Read from pkg/apis/batch/validation/validation.go (validateJobSpec, validateCronJobSpec,
validateScheduleFormat, validateTimeZone) and, for schedules, robfig/cron v3's ParseStandard,
which validateScheduleFormat calls.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

from generator.kube import labels, names
from generator.kube.findings import Finding, Path, unsupported
from generator.problems import Severity
from generator.schema_messages import shown

_CRON_FIELDS: tuple[
    tuple[str, int, int, dict[str, int]], ...
] = (  # (name, min, max, names): robfig/cron's minutes, hours, dom, months, dow bounds
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    (
        "month",
        1,
        12,
        {
            m: i + 1
            for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])
        },
    ),
    ("day of week", 0, 6, {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}),
)
_DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
# Go's time.ParseDuration: a sequence of decimal numbers, each with a unit
_GO_DURATION = re.compile(r"[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)\Z")
_TZ_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}\Z")  # validTimeZoneCharacters
INDEXED_MAX = 100_000  # maxParallelismForIndexedJob, maxFailedIndexesForIndexedJob
CRONJOB_NAME_MAX = 52  # DNS1035LabelMaxLength - 11: the Jobs it creates append a suffix


def _go_atoi(text: str) -> int | None:
    """strconv.Atoi: optional sign, decimal digits."""
    return int(text) if re.fullmatch(r"[-+]?[0-9]+", text) else None


def _cron_number(text: str, names: dict[str, int]) -> tuple[int | None, str]:
    """parseIntOrName / mustParseInt."""
    if text.lower() in names:
        return names[text.lower()], ""
    number = _go_atoi(text)
    if number is None:
        return None, f"failed to parse int from {text}"
    if number < 0:
        return None, f"negative number ({number}) not allowed: {text}"
    return number, ""


def _cron_range(expr: str, low: int, high: int, names: dict[str, int]) -> str:
    """robfig/cron's getRange: an error message, or "" when expr is valid."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        first, err = _cron_number(low_and_high[0], names)
        if first is None:
            return err
        start = first
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            parsed, err = _cron_number(low_and_high[1], names)
            if parsed is None:
                return err
            end = parsed
        else:
            return f"too many hyphens: {expr}"
    if len(range_and_step) == 2:
        parsed_step, err = _cron_number(range_and_step[1], {})
        if parsed_step is None:
            return err
        step = parsed_step
        if len(low_and_high) == 1:
            end = high  # "N/step" means "N-max/step"
    elif len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    else:
        step = 1
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {expr}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return ""


def schedule_error(schedule: str) -> str:
    """Why cron.ParseStandard refuses schedule, in its words; "" when it parses."""
    if not schedule:
        return "empty spec string"
    if schedule.startswith(("TZ=", "CRON_TZ=")):
        space = schedule.find(" ")
        zone = schedule[schedule.index("=") + 1 : space if space >= 0 else len(schedule)]
        if time_zone_error(zone):
            return f"provided bad location {zone}: unknown time zone {zone}"
        schedule = schedule[space:].strip() if space >= 0 else ""
    if schedule.startswith("@"):
        if schedule in _DESCRIPTORS:
            return ""
        if schedule.startswith("@every "):
            duration = schedule[len("@every ") :]
            return "" if _GO_DURATION.match(duration) else f"failed to parse duration {schedule}: invalid duration"
        return f"unrecognized descriptor: {schedule}"
    fields = schedule.split()
    if len(fields) != len(_CRON_FIELDS):
        return f"expected exactly 5 fields, found {len(fields)}: {schedule}"
    for text, (_, low, high, field_names) in zip(fields, _CRON_FIELDS, strict=True):
        for expr in text.split(","):
            if err := _cron_range(expr, low, high, field_names):
                return err
    return ""


def time_zone_error(zone: str) -> str:
    """validateTimeZone: "" for a zone the API server's time zone database knows."""
    if not zone:
        return "timeZone must be nil or non-empty string"
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.match(part):
            return f"unknown time zone {zone}: must be a valid IANA time zone name"
    if zone.lower() == "local":
        return "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
    import zoneinfo  # here: only a CronJob's timeZone needs it, and its import reads sysconfig (about 3 ms)

    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {zone}"
    return ""


def _error(path: Path, rule: str, message: str, hint: str = "") -> Finding:
    return Finding(path, rule, Severity.ERROR, message, hint)


# Enumerations the OpenAPI definitions do not carry (field.NotSupported in the validation).
_JOB_ENUMS = {
    "completionMode": ("NonIndexed", "Indexed"),
    "podReplacementPolicy": ("TerminatingOrFailed", "Failed"),
}
_CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
_NONNEGATIVE = (
    "parallelism",
    "completions",
    "activeDeadlineSeconds",
    "backoffLimit",
    "ttlSecondsAfterFinished",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
)
_FAILURE_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")  # supportedPodFailurePolicyActions, sorted
_EXIT_CODE_OPERATORS = ("In", "NotIn")
_CONDITION_STATUSES = ("False", "True", "Unknown")
MAX_FAILURE_RULES = 20  # maxPodFailurePolicyRules
MAX_EXIT_CODES = 255  # maxPodFailurePolicyOnExitCodesValues
MAX_CONDITION_PATTERNS = 20  # maxPodFailurePolicyOnPodConditionsPatterns
MAX_SUCCESS_RULES = 20  # maxSuccessPolicyRule
MAX_SUCCEEDED_INDEXES = 64 * 1024  # maxJobSuccessPolicySucceededIndexesLimit
MAX_MANAGED_BY = 63  # maxManagedByLength
COMPLETIONS_SOFT_LIMIT = 100_000  # completionsSoftLimit: above it, backoffLimitPerIndex needs tighter bounds
HIGH_COMPLETIONS_LIMIT = 10_000  # parallelismLimitForHighCompletions, maxFailedIndexesLimitForHighCompletions
# The labels the Job strategy's generateSelector puts on the template (legacy and prefixed keys).
_JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
_CONTROLLER_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
_UNKNOWN_UID = "<uid>"  # the uid kube-apiserver assigns at create: no label value can equal it


def _too_many(path: Path, count: int, limit: int) -> Finding:
    """field.TooMany in kube-apiserver's words."""
    return _error(path, "k8s-job", f"Too many: {count}: must have at most {limit} items")


def check_job(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateJob after the Job strategy's PrepareForCreate: without manualSelector it labels
    the template with the Job's name and uid and selects that uid, so a manifest's own values for
    those labels, or a selector of its own that does not select them, are refused."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    name = (obj.get("metadata") or {}).get("name")
    template: dict[str, Any] = spec["template"] if isinstance(spec.get("template"), dict) else {}
    given = (template.get("metadata") or {}).get("labels") or {}
    template_labels = dict(given)
    selector = spec.get("selector")
    if spec.get("manualSelector") is True:
        if selector is None:
            yield _error(("spec", "selector"), "k8s-job", "Required value", "manualSelector: true needs a selector")
    else:  # generateSelector, then validateGeneratedSelector
        # a generateName Job is named after PrepareForCreate labels it: its name is as unknown as its uid
        job_name = name if isinstance(name, str) and name else _UNKNOWN_UID
        expected = dict.fromkeys(_JOB_NAME_LABELS, job_name) | dict.fromkeys(_CONTROLLER_UID_LABELS, _UNKNOWN_UID)
        for key, value in expected.items():
            if key not in given:
                template_labels[key] = value
            elif job_name == _UNKNOWN_UID and key in _JOB_NAME_LABELS:
                continue
            elif value == _UNKNOWN_UID:
                yield _error(
                    ("spec", "template", "metadata", "labels", key),
                    "k8s-job",
                    "must be the Job's uid, which kube-apiserver assigns when it creates the Job",
                    "remove the label: the Job strategy sets it",
                )
            elif given[key] != value:
                yield _error(
                    ("spec", "template", "metadata", "labels", key),
                    "k8s-job",
                    f"must be {shown(value)}",
                    "remove the label: the Job strategy sets it to the Job's name",
                )
        if selector is None:
            selector = {"matchLabels": {_CONTROLLER_UID_LABELS[1]: _UNKNOWN_UID}}
        elif not labels.selects(selector, expected):
            yield _error(
                ("spec", "selector"),
                "k8s-job",
                "`selector` not auto-generated",
                "remove the selector, or set manualSelector: true",
            )
    if isinstance(selector, dict) and not labels.selects(selector, template_labels):
        yield _error(
            ("spec", "template", "metadata", "labels"),
            "k8s-job",
            "`selector` does not match template `labels`",
            "with manualSelector the selector must select the Pods the template makes",
        )
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and isinstance(completions, int) and completions > 0:
        hostname = f"{name}-{completions - 1}"
        if isinstance(name, str) and (err := names.dns1123_label(hostname)):
            yield _error(
                ("metadata", "name"),
                "k8s-job",
                f"will not able to create pod with invalid DNS label: {hostname} ({err})",
                "an Indexed Job's Pods are named <job>-<index>: shorten the name",
            )
    yield from check_job_spec(spec, ("spec",))


def check_job_spec(spec: Any, path: Path) -> Iterator[Finding]:
    """validateJobSpec: a Job's and a CronJob's job template's spec."""
    if not isinstance(spec, dict):
        return
    for key, allowed in _JOB_ENUMS.items():
        value = spec.get(key)
        if value is not None and value not in allowed:
            yield unsupported((*path, key), "k8s-job", value, allowed)
    for key in _NONNEGATIVE:
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            yield _error((*path, key), "k8s-job", "must be greater than or equal to 0")
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        yield _error((*path, "backoffLimitPerIndex"), "k8s-job", "Required value: when maxFailedIndexes is specified")
    managed_by = spec.get("managedBy")
    if isinstance(managed_by, str):
        if err := names.domain_prefixed_path(managed_by):
            yield _error((*path, "managedBy"), "k8s-job", f"managedBy {shown(managed_by)}: {err}")
        if len(managed_by) > MAX_MANAGED_BY:
            yield _error((*path, "managedBy"), "k8s-job", f"Too long: may not be more than {MAX_MANAGED_BY} bytes")
    yield from _check_completion_mode(spec, path)
    restart = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy", "Always")  # SetDefaults_PodSpec
    policy = spec.get("podFailurePolicy")
    if isinstance(policy, dict):
        yield from _check_pod_failure_policy(policy, (*path, "podFailurePolicy"), spec)
        replacement = spec.get("podReplacementPolicy")
        if replacement is not None and replacement != "Failed" and replacement in _JOB_ENUMS["podReplacementPolicy"]:
            yield unsupported((*path, "podReplacementPolicy"), "k8s-job", replacement, ("Failed",))
        if restart == "OnFailure":  # Always is k8s-restart-policy's
            yield _error(
                (*path, "template", "spec", "restartPolicy"),
                "k8s-job",
                'only "Never" is supported when podFailurePolicy is specified',
                "with OnFailure the kubelet restarts containers and the policy never sees a failure",
            )
    success = spec.get("successPolicy")
    if success is not None:
        if spec.get("completionMode") != "Indexed":
            yield _error(
                (*path, "successPolicy"), "k8s-job", "requires indexed completion mode", "set completionMode: Indexed"
            )
        elif isinstance(success, dict) and isinstance(spec.get("completions"), int):
            yield from _check_success_policy(success, (*path, "successPolicy"), spec["completions"])


def _check_completion_mode(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateJobSpec's bounds per completion mode: an Indexed Job's counts, and the
    per-index fields only an Indexed Job has."""
    completions = spec.get("completions")
    per_index, max_failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    ints = {
        key: spec[key] for key in ("completions", "parallelism", "maxFailedIndexes") if isinstance(spec.get(key), int)
    }
    if spec.get("completionMode") != "Indexed":
        for key, value in (("backoffLimitPerIndex", per_index), ("maxFailedIndexes", max_failed)):
            if value is not None:
                yield _error((*path, key), "k8s-job", "requires indexed completion mode", "set completionMode: Indexed")
        return
    if completions is None:
        yield _error(
            (*path, "completions"),
            "k8s-job",
            "completions is required when completion mode is Indexed",
            "set completions: the number of indexes (ranks) the Job runs",
        )
    if ints.get("parallelism", 0) > INDEXED_MAX:
        yield _error(
            (*path, "parallelism"),
            "k8s-job",
            f"must be less than or equal to {INDEXED_MAX} when completion mode is Indexed",
        )
    if "completions" in ints and ints.get("maxFailedIndexes", 0) > ints["completions"]:
        yield _error((*path, "maxFailedIndexes"), "k8s-job", "must be less than or equal to completions")
    if ints.get("maxFailedIndexes", 0) > INDEXED_MAX:
        yield _error((*path, "maxFailedIndexes"), "k8s-job", f"must be less than or equal to {INDEXED_MAX}")
    if ints.get("completions", 0) > COMPLETIONS_SOFT_LIMIT and per_index is not None:
        above = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        if max_failed is None:
            yield _error(
                (*path, "maxFailedIndexes"),
                "k8s-job",
                f"Required value: must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
            )
        for key in ("parallelism", "maxFailedIndexes"):
            if ints.get(key, 0) > HIGH_COMPLETIONS_LIMIT:
                yield _error((*path, key), "k8s-job", f"must be less than or equal to {HIGH_COMPLETIONS_LIMIT} {above}")


def _check_pod_failure_policy(policy: dict[str, Any], path: Path, spec: dict[str, Any]) -> Iterator[Finding]:
    """validatePodFailurePolicy and its rules."""
    rules = policy.get("rules")
    if not isinstance(rules, list):
        return
    if len(rules) > MAX_FAILURE_RULES:
        yield _too_many((*path, "rules"), len(rules), MAX_FAILURE_RULES)
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = {
        c.get("name") for group in ("containers", "initContainers") for c in pod.get(group) or [] if isinstance(c, dict)
    }
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        at: Path = (*path, "rules", i)
        action = rule.get("action")
        if not action:
            yield _error((*at, "action"), "k8s-job", f"Required value: valid values: {_quoted(_FAILURE_ACTIONS)}")
        elif action == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
            yield _error((*at, "action"), "k8s-job", "requires the backoffLimitPerIndex to be set")
        elif action not in _FAILURE_ACTIONS:
            yield unsupported((*at, "action"), "k8s-job", action, _FAILURE_ACTIONS)
        codes, conditions = rule.get("onExitCodes"), rule.get("onPodConditions")
        if isinstance(codes, dict):
            yield from _check_exit_codes(codes, (*at, "onExitCodes"), containers)
        if isinstance(conditions, list) and conditions:
            yield from _check_condition_patterns(conditions, (*at, "onPodConditions"))
        if codes is not None and conditions:
            yield _error(at, "k8s-job", "specifying both OnExitCodes and OnPodConditions is not supported")
        if codes is None and not conditions:
            yield _error(at, "k8s-job", "specifying one of OnExitCodes and OnPodConditions is required")


def _check_exit_codes(codes: dict[str, Any], path: Path, containers: set[Any]) -> Iterator[Finding]:
    """validatePodFailurePolicyRuleOnExitCodes."""
    operator = codes.get("operator")
    if not operator:
        yield _error((*path, "operator"), "k8s-job", f"Required value: valid values: {_quoted(_EXIT_CODE_OPERATORS)}")
    elif operator not in _EXIT_CODE_OPERATORS:
        yield unsupported((*path, "operator"), "k8s-job", operator, _EXIT_CODE_OPERATORS)
    container = codes.get("containerName")
    if container is not None and container not in containers:
        yield _error(
            (*path, "containerName"),
            "k8s-job",
            f"{shown(container)}: must be one of the container or initContainer names in the pod template",
        )
    values: list[Any] = codes["values"] if isinstance(codes.get("values"), list) else []
    if not values:
        yield _error((*path, "values"), "k8s-job", "at least one value is required")
    elif len(values) > MAX_EXIT_CODES:
        yield _too_many((*path, "values"), len(values), MAX_EXIT_CODES)
    seen: set[Any] = set()
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            yield _error((*path, "values", j), "k8s-job", "must not be 0 for the In operator")
        if value in seen:
            yield _error((*path, "values", j), "k8s-job", f"Duplicate value: {value}")
        seen.add(value)
    if any(isinstance(a, int) and isinstance(b, int) and a > b for a, b in itertools.pairwise(values)):
        yield _error((*path, "values"), "k8s-job", "must be ordered")


def _check_condition_patterns(patterns: list[Any], path: Path) -> Iterator[Finding]:
    """validatePodFailurePolicyRuleOnPodConditions."""
    if len(patterns) > MAX_CONDITION_PATTERNS:
        yield _too_many(path, len(patterns), MAX_CONDITION_PATTERNS)
    for j, pattern in enumerate(patterns):
        if not isinstance(pattern, dict):
            continue
        kind, status = str(pattern.get("type") or ""), pattern.get("status")
        if err := names.qualified_name(kind):
            yield _error((*path, j, "type"), "k8s-job", f"{shown(kind)}: {err}")
        if not status:
            yield _error(
                (*path, j, "status"), "k8s-job", f"Required value: valid values: {_quoted(_CONDITION_STATUSES)}"
            )
        elif status not in _CONDITION_STATUSES:
            yield unsupported((*path, j, "status"), "k8s-job", status, _CONDITION_STATUSES)


def _check_success_policy(policy: dict[str, Any], path: Path, completions: int) -> Iterator[Finding]:
    """validateSuccessPolicy and validateSuccessPolicyRule (completions: the Indexed Job's)."""
    rules: list[Any] = policy["rules"] if isinstance(policy.get("rules"), list) else []
    if not rules:
        yield _error(
            (*path, "rules"),
            "k8s-job",
            "Required value: at least one rules must be specified when the successPolicy is specified",
        )
    if len(rules) > MAX_SUCCESS_RULES:
        yield _too_many((*path, "rules"), len(rules), MAX_SUCCESS_RULES)
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        at: Path = (*path, "rules", i)
        count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
        if count is None and indexes is None:
            yield _error(
                at, "k8s-job", "Required value: at least one of succeededCount or succeededIndexes must be specified"
            )
        total = 0
        if isinstance(indexes, str):
            if len(indexes) > MAX_SUCCEEDED_INDEXES:
                yield _error(
                    (*at, "succeededIndexes"),
                    "k8s-job",
                    f"Too long: may not be more than {MAX_SUCCEEDED_INDEXES} bytes",
                )
            total, err = indexes_total(indexes, completions)
            if err:
                yield _error((*at, "succeededIndexes"), "k8s-job", f"error parsing succeededIndexes: {err}")
        if isinstance(count, int):
            if count < 0:
                yield _error((*at, "succeededCount"), "k8s-job", "must be greater than or equal to 0")
            if count > completions:
                yield _error(
                    (*at, "succeededCount"),
                    "k8s-job",
                    f"must be less than or equal to {completions} (the number of specified completions)",
                )
            if indexes is not None and count > total:
                yield _error(
                    (*at, "succeededCount"),
                    "k8s-job",
                    f"must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)",
                )


def indexes_total(indexes: str, completions: int) -> tuple[int, str]:
    """validateIndexesFormat: how many indexes "1,3-5,7" names, or why it does not parse."""
    if not indexes:
        return 0, ""
    last: int | None = None
    total = 0
    for interval in indexes.split(","):
        limits = interval.split("-")
        if len(limits) > 2:
            return 0, (
                f'the fragment "{interval}" violates the requirement that an index interval can have at most '
                "two parts separated by '-'"
            )
        bounds = []
        for limit in limits:
            number = _go_atoi(limit)
            if number is None:
                return 0, f'cannot convert string to integer for index: "{limit}"'
            if number >= completions:
                return 0, f'too large index: "{limit}"'
            bounds.append(number)
        low, high = bounds[0], bounds[-1]
        if len(bounds) == 2 and low >= high:
            return 0, f"non-increasing order, previous: {low}, current: {high}"
        if last is not None and last >= low:
            return 0, f"non-increasing order, previous: {last}, current: {low}"
        total += high - low + 1
        last = high
    return total, ""


def _quoted(values: tuple[str, ...]) -> str:
    """Go's %q of a string slice: ["a" "b"]."""
    return "[" + " ".join(f'"{value}"' for value in values) + "]"


def check_cron_job(obj: dict[str, Any]) -> Iterator[Finding]:
    """validateCronJobSpec and ValidateCronJobCreate's name rule."""
    name = (obj.get("metadata") or {}).get("name")
    if isinstance(name, str) and len(name) > CRONJOB_NAME_MAX:
        yield _error(
            ("metadata", "name"),
            "k8s-cronjob",
            f"must be no more than {CRONJOB_NAME_MAX} characters: the Jobs it creates append an 11-character suffix",
        )
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    schedule = spec.get("schedule")
    if isinstance(schedule, str):
        if err := schedule_error(schedule):
            yield _error(
                ("spec", "schedule"),
                "k8s-cronjob",
                f"{shown(schedule)}: {err}",
                "five fields: minute hour day-of-month month day-of-week, or a descriptor such as @daily",
            )
        if "TZ" in schedule:
            yield _error(
                ("spec", "schedule"),
                "k8s-cronjob",
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            )
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in _CONCURRENCY_POLICIES:
        yield unsupported(("spec", "concurrencyPolicy"), "k8s-cronjob", policy, _CONCURRENCY_POLICIES)
    zone = spec.get("timeZone")
    if isinstance(zone, str) and (err := time_zone_error(zone)):
        yield _error(("spec", "timeZone"), "k8s-cronjob", err, "an IANA name such as Europe/Berlin or Etc/UTC")
    for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            yield _error(("spec", key), "k8s-cronjob", "must be greater than or equal to 0")
    job = (spec.get("jobTemplate") or {}).get("spec")
    yield from check_job_spec(job, ("spec", "jobTemplate", "spec"))
    if isinstance(job, dict):  # validateJobTemplateSpec: each Job's selector is generated
        if job.get("selector") is not None:
            yield _error(
                ("spec", "jobTemplate", "spec", "selector"),
                "k8s-cronjob",
                "`selector` will be auto-generated",
                "remove it: every Job the CronJob creates gets a selector of its own",
            )
        if job.get("manualSelector") is True:
            yield unsupported(("spec", "jobTemplate", "spec", "manualSelector"), "k8s-cronjob", True, ("nil", "false"))
