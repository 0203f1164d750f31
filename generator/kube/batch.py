"""kube-apiserver's create-time rules for batch/v1 Jobs and CronJobs beyond the schemas.

Read from pkg/apis/batch/validation/validation.go (validateJobSpec, validateCronJobSpec,
validateScheduleFormat, validateTimeZone) and, for schedules, robfig/cron v3's ParseStandard,
which validateScheduleFormat calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator.kube import labels
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
INDEXED_MAX = 100_000  # maxParallelismForIndexedJob, maxCompletionsForIndexedJob
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
    for text, (_, low, high, names) in zip(fields, _CRON_FIELDS, strict=True):
        for expr in text.split(","):
            if err := _cron_range(expr, low, high, names):
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


def check_job_spec(spec: Any, path: Path) -> Iterator[Finding]:
    """validateJobSpec's rules between fields (the schema holds each field's own shape)."""
    if not isinstance(spec, dict):
        return
    indexed = spec.get("completionMode") == "Indexed"
    for key, allowed in _JOB_ENUMS.items():
        value = spec.get(key)
        if value is not None and value not in allowed:
            yield unsupported((*path, key), "k8s-job", value, allowed)
    for key in (
        "parallelism",
        "completions",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "activeDeadlineSeconds",
    ):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            yield _error((*path, key), "k8s-job", "must be greater than or equal to 0")
    selector = spec.get("selector")
    if spec.get("manualSelector") is True and isinstance(selector, dict):
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not labels.selects(selector, template_labels):
            yield _error(
                (*path, "template", "metadata", "labels"),
                "k8s-job",
                "`selector` does not match template `labels`",
                "with manualSelector the selector must select the Pods the template makes",
            )
    if indexed and spec.get("completions") is None:
        yield _error(
            (*path, "completionMode"),
            "k8s-job",
            "completions is required when completion mode is Indexed",
            "set completions: the number of indexes (ranks) the Job runs",
        )
    for key in ("completions", "parallelism"):
        value = spec.get(key)
        if indexed and isinstance(value, int) and value > INDEXED_MAX:
            yield _error(
                (*path, key), "k8s-job", f"must be less than or equal to {INDEXED_MAX} when completion mode is Indexed"
            )
    if spec.get("backoffLimitPerIndex") is not None and not indexed:
        yield _error(
            (*path, "backoffLimitPerIndex"),
            "k8s-job",
            "requires indexed completion mode",
            "set completionMode: Indexed",
        )
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        yield _error(
            (*path, "maxFailedIndexes"), "k8s-job", "cannot set maxFailedIndexes when backoffLimitPerIndex is nil"
        )
    if spec.get("successPolicy") is not None and not indexed:
        yield _error(
            (*path, "successPolicy"), "k8s-job", "requires indexed completion mode", "set completionMode: Indexed"
        )
    # a missing restartPolicy is defaulted to Always first; k8s-restart-policy refuses that for a Job
    restart = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy", "Always")
    policy = spec.get("podFailurePolicy")
    if isinstance(policy, dict):
        if restart != "Never":
            yield _error(
                (*path, "podFailurePolicy"),
                "k8s-job",
                f'podFailurePolicy needs the Pod\'s restartPolicy "Never", not "{restart}"',
                "set restartPolicy: Never (with OnFailure the kubelet restarts containers and the policy never sees a failure)",
            )
        yield from _check_pod_failure_rules(policy.get("rules") or [], (*path, "podFailurePolicy", "rules"), spec)


def _check_pod_failure_rules(rules: list[Any], path: Path, spec: dict[str, Any]) -> Iterator[Finding]:
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        sources = [key for key in ("onExitCodes", "onPodConditions") if rule.get(key)]
        if len(sources) != 1:
            yield _error(
                (*path, i),
                "k8s-job",
                "specify one of onExitCodes and onPodConditions, but not both",
            )
        if rule.get("action") == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
            yield _error(
                (*path, i, "action"),
                "k8s-job",
                "the FailIndex action requires backoffLimitPerIndex",
            )
        codes = rule.get("onExitCodes")
        if isinstance(codes, dict) and codes.get("operator") == "In" and 0 in (codes.get("values") or []):
            yield _error((*path, i, "onExitCodes", "values"), "k8s-job", "must not be 0 for the In operator")


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
