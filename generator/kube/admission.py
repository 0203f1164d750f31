"""kube-apiserver's create-time rules for admissionregistration.k8s.io: admission policies' CEL
and webhook configurations, read from pkg/apis/admissionregistration/validation/validation.go.

CEL is parsed with cel-python, as kube-apiserver compiles it with cel-go before it stores a
policy: an expression that does not parse is refused. Type checking against the request's
schema is kube-apiserver's, with Kubernetes' own CEL libraries; gen checks syntax only, never
guessing at a verdict it cannot reach.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from generator.kube import labels, names
from generator.kube.findings import Finding, Path, unsupported
from generator.problems import Severity
from generator.schema_messages import shown

_FAILURE_POLICIES = ("Ignore", "Fail")
_SIDE_EFFECTS = ("None", "NoneOnDryRun")
_OPERATIONS = ("*", "CREATE", "UPDATE", "DELETE", "CONNECT")
_SCOPES = ("*", "Cluster", "Namespaced")
_EVERY_GROUP = '"" is the core group, "*" every group or version'


def cel_error(expression: str) -> str | None:
    """Why expression does not parse as CEL, or None; only manifests with CEL import its runtime."""
    from generator.kube import cel

    return cel.parse_error(expression)


def _cel(expression: Any, path: Path, rule: str) -> Iterator[Finding]:
    if isinstance(expression, str) and (err := cel_error(expression)):
        yield Finding(path, rule, Severity.ERROR, f"CEL does not compile: {err}", "check the expression's syntax")


def check_admission_policy(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateValidatingAdmissionPolicy / ValidateMutatingAdmissionPolicy: every expression
    compiles, failurePolicy is known."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    policy = spec.get("failurePolicy")
    if policy is not None and policy not in _FAILURE_POLICIES:
        yield unsupported(("spec", "failurePolicy"), "k8s-admission-policy", policy, _FAILURE_POLICIES)
    for i, check in enumerate(spec.get("validations") or []):
        if isinstance(check, dict):
            yield from _cel(check.get("expression"), ("spec", "validations", i, "expression"), "k8s-admission-policy")
            yield from _cel(
                check.get("messageExpression"), ("spec", "validations", i, "messageExpression"), "k8s-admission-policy"
            )
    for field in ("matchConditions", "variables", "auditAnnotations"):
        key = "valueExpression" if field == "auditAnnotations" else "expression"
        for i, entry in enumerate(spec.get(field) or []):
            if isinstance(entry, dict):
                yield from _cel(entry.get(key), ("spec", field, i, key), "k8s-admission-policy")
    for i, mutation in enumerate(spec.get("mutations") or []):
        for patch in ("applyConfiguration", "jsonPatch"):
            body = mutation.get(patch) if isinstance(mutation, dict) else None
            if isinstance(body, dict):
                yield from _cel(
                    body.get("expression"), ("spec", "mutations", i, patch, "expression"), "k8s-admission-policy"
                )


def check_webhooks(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateValidatingWebhookConfiguration / ValidateMutatingWebhookConfiguration (create),
    hook by hook as validateValidatingWebhook and validateMutatingWebhook walk it."""
    seen: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or []):
        if not isinstance(hook, dict):
            continue
        at: Path = ("webhooks", i)
        name = hook.get("name")
        if isinstance(name, str):
            if err := names.dns1123_subdomain(name):
                yield _webhook_error((*at, "name"), f"name {shown(name)} {err}")
            elif name.count(".") < 2:
                yield _webhook_error(
                    (*at, "name"), f"{shown(name)} should be a domain with at least three segments separated by dots"
                )
            if name in seen:
                yield _webhook_error((*at, "name"), f"Duplicate value: {shown(name)}")
            seen.add(name)
        effects = hook.get("sideEffects")
        if effects not in _SIDE_EFFECTS:
            yield unsupported(
                (*at, "sideEffects"), "k8s-webhook", effects, _SIDE_EFFECTS, "admissionregistration/v1 requires one"
            )
        yield from _review_versions(hook.get("admissionReviewVersions"), (*at, "admissionReviewVersions"))
        for field, allowed in (
            ("failurePolicy", _FAILURE_POLICIES),
            ("matchPolicy", _MATCH_POLICIES),
            ("reinvocationPolicy", _REINVOCATION_POLICIES),
        ):
            value = hook.get(field)
            if value is not None and value not in allowed:
                yield unsupported((*at, field), "k8s-webhook", value, allowed)
        timeout = hook.get("timeoutSeconds")
        if isinstance(timeout, int) and not 1 <= timeout <= MAX_WEBHOOK_TIMEOUT:
            yield _webhook_error((*at, "timeoutSeconds"), "the timeout value must be between 1 and 30 seconds")
        for selector in ("namespaceSelector", "objectSelector"):
            yield from labels.check_selector(hook.get(selector), (*at, selector), "k8s-webhook")
        yield from _client_config(hook.get("clientConfig") or {}, (*at, "clientConfig"))
        for r, rule in enumerate(hook.get("rules") or []):
            if isinstance(rule, dict):
                yield from _rule(rule, (*at, "rules", r))
        yield from _match_conditions(hook.get("matchConditions") or [], (*at, "matchConditions"))


_MATCH_POLICIES = ("Exact", "Equivalent")
_REINVOCATION_POLICIES = ("Never", "IfNeeded")
_REVIEW_VERSIONS = ("v1", "v1beta1")
MAX_WEBHOOK_TIMEOUT = 30
MAX_MATCH_CONDITIONS = 64


def _webhook_error(path: Path, message: str, hint: str = "") -> Finding:
    return Finding(path, "k8s-webhook", Severity.ERROR, message, hint)


def _review_versions(versions: Any, path: Path) -> Iterator[Finding]:
    """validateAdmissionReviewVersions: DNS labels, none twice, one of them a version kube-apiserver sends."""
    if not versions:
        yield _webhook_error(path, "Required value: must specify one of v1, v1beta1")
        return
    for i, version in enumerate(versions):
        if version in versions[:i]:
            yield _webhook_error((*path, i), f"{shown(version)}: duplicate version")
        elif err := names.dns1035_label(str(version)):
            yield _webhook_error((*path, i), f"{shown(version)} {err}")
    if not set(map(str, versions)) & set(_REVIEW_VERSIONS):
        yield _webhook_error(path, "must include at least one of v1, v1beta1")


def _client_config(config: dict[str, Any], path: Path) -> Iterator[Finding]:
    """Exactly one of url (ValidateWebhookURL) and service (ValidateWebhookService)."""
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        yield _webhook_error(path, "exactly one of url or service is required")
    elif isinstance(url, str):
        for problem in _url_problems(url):
            yield _webhook_error((*path, "url"), f"{problem}; desired format: https://host[/path]")
    elif isinstance(service, dict):
        for field in ("name", "namespace"):
            if not service.get(field):
                yield _webhook_error(
                    (*path, "service", field), f"Required value: service {field} is required", "name the Service"
                )
        port = service.get("port", 443)  # SetDefaults_ServiceReference
        if isinstance(port, int) and not 1 <= port <= 65535:
            yield _webhook_error(
                (*path, "service", "port"), "port is not valid: must be between 1 and 65535, inclusive"
            )
        route = service.get("path")
        if isinstance(route, str) and (why := _service_path_problem(route)):
            yield _webhook_error((*path, "service", "path"), f"{shown(route)}: {why}")


def _url_problems(url: str) -> Iterator[str]:
    """ValidateWebhookURL: a URL Go's url.Parse refuses is only that; one it reads is https to a
    host, with no user, fragment or query."""
    if err := _unparsable(url):
        yield f"Required value: url must be a valid URL: {err}"
        return
    parts = urlsplit(url)
    if parts.scheme != "https":
        yield "'https' is the only allowed URL scheme"
    if not parts.hostname:
        yield "host must be provided"
    if "@" in parts.netloc:
        yield f"{shown(parts.netloc.rsplit('@', 1)[0])}: user information is not permitted in the URL"
    if parts.fragment:
        yield f"{shown(parts.fragment)}: fragments are not permitted in the URL"
    if parts.query:
        yield f"{shown(parts.query)}: query parameters are not permitted in the URL"


def _unparsable(url: str) -> str | None:
    """Why Go's url.Parse refuses url, for the refusals it is sure of: a control character, a
    `%` not followed by two hex digits outside the query (which it leaves escaped), a scheme
    missing before `:`, an unclosed IPv6 host."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "net/url: invalid control character in URL"
    if url.startswith(":"):
        return "missing protocol scheme"
    before_query, _, after = url.partition("?")
    checked = before_query + ("#" + after.partition("#")[2] if "#" in after else "")
    if bad := _BAD_ESCAPE.search(checked):
        return f"invalid URL escape {shown(bad.group(0))}"
    try:
        urlsplit(url)
    except ValueError:
        return "missing ']' in host"
    return None


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2}).{0,2}", re.S)


def _service_path_problem(route: str) -> str | None:
    """ValidateWebhookService's path: `/` or segments that are DNS subdomains, none empty."""
    if route in ("", "/"):
        return None
    if route == "//":
        return "segment[0] may not be empty"
    if not route.startswith("/"):
        return "must start with a '/'"
    for i, step in enumerate(route[1:].removesuffix("/").split("/")):
        if not step:
            return f"segment[{i}] may not be empty"
        if err := names.dns1123_subdomain(step):
            return f"segment[{i}]: {err}"
    return None


def _rule(rule: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateRuleWithOperations and validateRule: operations, groups, versions and resources
    present, a wildcard alone, resources and subresources without overlap."""
    operations = rule.get("operations")
    if not operations:
        yield _webhook_error((*path, "operations"), "Required value: list the operations the rule matches")
    for o, op in enumerate(operations or []):
        if op not in _OPERATIONS:
            yield unsupported((*path, "operations", o), "k8s-webhook", op, _OPERATIONS)
    if operations and "*" in operations and len(operations) > 1:
        yield _webhook_error((*path, "operations"), "if '*' is present, must not specify other operations")
    for field, words in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = rule.get(field) or []
        if not values:
            yield _webhook_error((*path, field), f"Required value: list the {words} the rule matches", _EVERY_GROUP)
        elif "*" in values and len(values) > 1:
            yield _webhook_error((*path, field), f"if '*' is present, must not specify other {words}")
    for v, version in enumerate(rule.get("apiVersions") or []):
        if version == "":
            yield _webhook_error((*path, "apiVersions", v), "Required value: an API version, or '*'")
    scope = rule.get("scope", "*")  # SetDefaults_Rule
    if scope not in _SCOPES:
        yield unsupported((*path, "scope"), "k8s-webhook", scope, _SCOPES)
    yield from _resources(rule.get("resources") or [], (*path, "resources"))


def _resources(resources: list[Any], path: Path) -> Iterator[Finding]:
    """validateResources, in its order: `x/*` or `*/x` before a later `x/y` or `y/x`, `*/*` alone,
    `*` with no resource lacking a subresource (the last one without a slash decides)."""
    if not resources:
        yield _webhook_error(path, "Required value: list the resources the rule matches, or '*'")
    wildcard_sub: set[str] = set()
    wildcard_resource: set[str] = set()
    double = single = plain = False
    for i, entry in enumerate(map(str, resources)):
        if not entry:
            yield _webhook_error((*path, i), "Required value: a resource")
            continue
        double = double or entry == "*/*"
        single = single or entry == "*"
        if "/" not in entry:
            plain = entry != "*"
            continue
        resource, sub = entry.split("/", 1)
        if resource in wildcard_sub:
            yield _webhook_error((*path, i), f"if '{resource}/*' is present, must not specify {entry}")
        if sub in wildcard_resource:
            yield _webhook_error((*path, i), f"if '*/{sub}' is present, must not specify {entry}")
        if sub == "*":
            wildcard_sub.add(resource)
        if resource == "*":
            wildcard_resource.add(sub)
    if double and len(resources) > 1:
        yield _webhook_error(path, "if '*/*' is present, must not specify other resources")
    if single and plain:
        yield _webhook_error(path, "if '*' is present, must not specify other resources without subresources")


def _match_conditions(conditions: list[Any], path: Path) -> Iterator[Finding]:
    """validateMatchConditions: at most 64, each named (a qualified name, once) with an
    expression that compiles."""
    if len(conditions) > MAX_MATCH_CONDITIONS:
        yield _webhook_error(path, f"Too many: {len(conditions)}: must have at most {MAX_MATCH_CONDITIONS} items")
    seen: set[str] = set()
    for m, condition in enumerate(conditions):
        if not isinstance(condition, dict):
            continue
        where = (*path, m)
        name = condition.get("name")
        if not name:
            yield _webhook_error((*where, "name"), "Required value: a match condition needs a name")
        elif err := names.qualified_name(str(name)):
            yield _webhook_error((*where, "name"), f"{shown(name)}: {err}")
        elif name in seen:
            yield _webhook_error((*where, "name"), f"Duplicate value: {shown(name)}")
        if name:
            seen.add(str(name))
        if not condition.get("expression"):
            yield _webhook_error((*where, "expression"), "Required value: a match condition needs an expression")
        yield from _cel(condition.get("expression"), (*where, "expression"), "k8s-webhook")
