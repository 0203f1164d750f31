"""kube-apiserver's create-time rules for admissionregistration.k8s.io: admission policies' CEL
and webhook configurations, read from pkg/apis/admissionregistration/validation/validation.go.

CEL is parsed with cel-python, as kube-apiserver compiles it with cel-go before it stores a
policy: an expression that does not parse is refused, and so is one whose result type is wrong
whatever the request's types (`size(x)` where a bool is due: cel.result_type). The rest of type
checking against the request's schema is kube-apiserver's, with Kubernetes' own CEL libraries;
gen never guesses at a verdict it cannot reach.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from generator.kube import labels, names
from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.problems import Severity
from generator.schema_messages import shown

_FAILURE_POLICIES = ("Ignore", "Fail")
_SIDE_EFFECTS = ("None", "NoneOnDryRun")
_OPERATIONS = ("*", "CREATE", "UPDATE", "DELETE", "CONNECT")
_SCOPES = ("*", "Cluster", "Namespaced")
_EVERY_GROUP = '"" is the core group, "*" every group or version'


# The variables each CEL environment declares (staging/src/k8s.io/apiserver/pkg/admission/plugin/cel):
# an admission policy's (params whether or not it has a paramKind, so that none is refused
# wrongly), a mutating policy's message types, and a webhook's match conditions'.
POLICY_VARIABLES = frozenset({"object", "oldObject", "request", "params", "namespaceObject", "authorizer", "variables"})
_MUTATION_VARIABLES = POLICY_VARIABLES | {"Object", "JSONPatch"}
_WEBHOOK_VARIABLES = frozenset({"object", "oldObject", "request", "authorizer"})


def cel_error(expression: str, returns: tuple[str, ...] = (), declared: frozenset[str] | None = None) -> str | None:
    """Why expression does not compile as CEL, or None: its syntax; a variable its environment
    does not declare (where declared names them); and, where it must return one of the types
    returns, an expression that returns another type whatever its variables' types
    (cel.result_type): the type checking gen does without the matched resources' schemas.
    Only manifests with CEL import its runtime."""
    from generator.kube import cel

    if err := cel.parse_error(expression):
        return err
    if declared is not None and (name := cel.undeclared(expression, declared)) is not None:
        return f"undeclared reference to {name!r} (in container '')"
    result = cel.result_type(expression) if returns else None
    if result is not None and result not in returns:
        return f"must evaluate to {returns[0] if len(returns) == 1 else 'one of [' + ' '.join(returns) + ']'}"
    return None


_BOOL = ("bool",)
_STRING = ("string",)


def _cel(
    expression: Any,
    path: Path,
    rule: str,
    returns: tuple[str, ...] = (),
    declared: frozenset[str] = POLICY_VARIABLES,
) -> Iterator[Finding]:
    if isinstance(expression, str) and (err := cel_error(expression, returns, declared)):
        if err.startswith("must evaluate"):
            hint = f"it must return {' or '.join(returns)}"
        elif err.startswith("undeclared"):
            hint = "the expression may read " + ", ".join(sorted(declared))
        else:
            hint = "check the syntax"
        yield Finding(path, rule, Severity.ERROR, f"CEL does not compile: {err}", hint)


def check_mutating_admission_policy(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateMutatingAdmissionPolicy, as far as gen follows it: every expression compiles,
    failurePolicy is known (the kind is beta in 1.35, served only where a cluster enables it)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from _failure_policy(spec)
    for field in ("matchConditions", "variables"):
        for i, entry in enumerate(spec.get(field) or []):
            if isinstance(entry, dict):
                yield from _cel(
                    entry.get("expression"), ("spec", field, i, "expression"), _POLICY, declared=_MUTATION_VARIABLES
                )
    for i, mutation in enumerate(spec.get("mutations") or []):
        for patch in ("applyConfiguration", "jsonPatch"):
            body = mutation.get(patch) if isinstance(mutation, dict) else None
            if isinstance(body, dict):
                yield from _cel(
                    body.get("expression"),
                    ("spec", "mutations", i, patch, "expression"),
                    _POLICY,
                    declared=_MUTATION_VARIABLES,
                )


def check_validating_admission_policy(obj: dict[str, Any]) -> Iterator[Finding]:
    """validateValidatingAdmissionPolicySpec, on the policy as SetDefaults_ValidatingAdmissionPolicySpec
    and SetDefaults_MatchResources leave it (failurePolicy Fail, matchPolicy Equivalent, empty
    selectors): what it matches, its parameters' kind, and every expression it runs."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from _failure_policy(spec)
    if isinstance(spec.get("paramKind"), dict):
        yield from _param_kind(spec["paramKind"], ("spec", "paramKind"))
    constraints = spec.get("matchConstraints")
    if not isinstance(constraints, dict):
        yield error_at(
            ("spec", "matchConstraints"), _POLICY, "Required value", "list what the policy checks in resourceRules"
        )
    else:
        yield from _match_resources(constraints, ("spec", "matchConstraints"))
        if not constraints.get("resourceRules"):
            yield error_at(
                ("spec", "matchConstraints", "resourceRules"),
                _POLICY,
                "Required value: at least one resource rule, which gives the expressions their types",
            )
    yield from _match_conditions(spec.get("matchConditions") or [], ("spec", "matchConditions"), _POLICY)
    for i, variable in enumerate(spec.get("variables") or []):
        if isinstance(variable, dict):
            yield from _variable(variable, ("spec", "variables", i))
    validations, annotations = spec.get("validations") or [], spec.get("auditAnnotations") or []
    if not validations and not annotations:
        for field in ("validations", "auditAnnotations"):
            yield error_at(
                ("spec", field),
                _POLICY,
                "Required value: validations or auditAnnotations must contain at least one item",
                "a policy that checks nothing does nothing",
            )
        return
    for i, validation in enumerate(validations):
        if isinstance(validation, dict):
            yield from _validation(validation, ("spec", "validations", i))
    yield from _audit_annotations(annotations, _mapping(obj.get("metadata")).get("name"))


def check_validating_admission_policy_binding(obj: dict[str, Any]) -> Iterator[Finding]:
    """validateValidatingAdmissionPolicyBindingSpec, after SetDefaults_MatchResources: the
    policy's name, where its parameters come from, what it matches and what a failure does."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    policy = spec.get("policyName")
    if not policy:
        yield error_at(("spec", "policyName"), _POLICY, "Required value", "name the ValidatingAdmissionPolicy to bind")
    elif err := names.dns1123_subdomain(str(policy)):
        yield error_at(("spec", "policyName"), _POLICY, f"Invalid value: {shown(policy)}: {err}")
    if isinstance(spec.get("paramRef"), dict):
        yield from _param_ref(spec["paramRef"], ("spec", "paramRef"))
    if isinstance(spec.get("matchResources"), dict):  # kube-apiserver reports it at spec.matchResouces
        yield from _match_resources(spec["matchResources"], ("spec", "matchResources"))
    yield from _validation_actions(spec.get("validationActions") or [], ("spec", "validationActions"))


_POLICY = "k8s-admission-policy"
_REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge")
_VALIDATION_ACTIONS = ("Audit", "Deny", "Warn")
_NOT_FOUND_ACTIONS = ("Deny", "Allow")
MAX_AUDIT_ANNOTATIONS = 20
MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024  # bytes
_CEL_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*\Z")
_CEL_RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_LINE_BREAK = re.compile(r"[\n\r]")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _trimmed(value: Any) -> str:
    """A string as upstream's strings.TrimSpace leaves it; anything else is empty."""
    return value.strip() if isinstance(value, str) else ""


def _failure_policy(spec: dict[str, Any]) -> Iterator[Finding]:
    policy = spec.get("failurePolicy")  # SetDefaults_*AdmissionPolicySpec: Fail
    if policy is not None and policy not in _FAILURE_POLICIES:
        yield unsupported(("spec", "failurePolicy"), _POLICY, policy, _FAILURE_POLICIES)


def _param_kind(kind: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateParamKind: apiVersion a group/version as an APIService names them, kind a DNS-1035
    label once lower-cased."""
    api = kind.get("apiVersion")
    if not api:
        yield error_at((*path, "apiVersion"), _POLICY, "Required value", 'e.g. "v1" or "example.com/v1"')
    elif str(api).count("/") > 1:
        yield error_at((*path, "apiVersion"), _POLICY, f"unexpected GroupVersion string: {api}")
    else:
        group, _, version = str(api).rpartition("/")
        if group and (err := names.dns1123_subdomain(group)):
            yield error_at((*path, "apiVersion"), _POLICY, f"Invalid value: {shown(group)}: {err}")
        if not version:
            yield error_at((*path, "apiVersion"), _POLICY, f"Invalid value: {shown(api)}: version must be specified")
        elif err := names.dns1035_label(version):
            yield error_at((*path, "apiVersion"), _POLICY, f"Invalid value: {shown(version)}: {err}")
    name = kind.get("kind")
    if not name:
        yield error_at((*path, "kind"), _POLICY, "Required value", "the kind of the parameter resource")
    elif err := names.dns1035_label(str(name).lower()):
        yield error_at(
            (*path, "kind"),
            _POLICY,
            f"Invalid value: {shown(name)}: may have mixed case, but should otherwise match: {err}",
        )


def _match_resources(match: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateMatchResources: matchPolicy known, selectors valid, each (excluded) resource rule a
    webhook rule with unique resourceNames that fit in a URL path."""
    policy = match.get("matchPolicy")  # SetDefaults_MatchResources: Equivalent
    if policy is not None and policy not in _MATCH_POLICIES:
        yield unsupported((*path, "matchPolicy"), _POLICY, policy, _MATCH_POLICIES)
    for selector in ("namespaceSelector", "objectSelector"):
        yield from labels.check_selector(match.get(selector), (*path, selector), _POLICY)
    for field in ("resourceRules", "excludeResourceRules"):
        for r, rule in enumerate(match.get(field) or []):
            if not isinstance(rule, dict):
                continue
            seen: set[str] = set()
            for n, name in enumerate(rule.get("resourceNames") or []):
                where = (*path, field, r, "resourceNames", n)
                if err := names.path_segment(str(name)):
                    yield error_at(where, _POLICY, f"Invalid value: {shown(name)}: {err}")
                if name in seen:
                    yield error_at(where, _POLICY, f"Duplicate value: {shown(name)}")
                seen.add(str(name))
            yield from _rule(rule, (*path, field, r), _POLICY)


def _variable(variable: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateVariable: a CEL identifier naming an expression that compiles."""
    name = variable.get("name")
    if not _trimmed(name):
        yield error_at((*path, "name"), _POLICY, "Required value: name is not specified")
    elif not _CEL_IDENTIFIER.match(str(name)) or name in _CEL_RESERVED:
        yield error_at(
            (*path, "name"),
            _POLICY,
            f"Invalid value: {shown(name)}: name is not a valid CEL identifier",
            "letters, digits and _, not starting with a digit, and not a CEL keyword",
        )
    if not _trimmed(variable.get("expression")):
        yield error_at((*path, "expression"), _POLICY, "Required value: expression is not specified")
    else:
        yield from _cel(variable.get("expression"), (*path, "expression"), _POLICY)


def _validation(validation: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateValidation: an expression that compiles; a message on one line; a known reason."""
    if not _trimmed(validation.get("expression")):
        yield error_at((*path, "expression"), _POLICY, "Required value: expression is not specified")
    else:
        yield from _cel(validation.get("expression"), (*path, "expression"), _POLICY, _BOOL)
    message_expression = validation.get("messageExpression")
    if isinstance(message_expression, str) and message_expression and not _trimmed(message_expression):
        yield error_at((*path, "messageExpression"), _POLICY, "Invalid value: must be non-empty if specified")
    else:
        yield from _cel(message_expression, (*path, "messageExpression"), _POLICY, _STRING)
    message = validation.get("message")
    if isinstance(message, str) and message and not _trimmed(message):
        yield error_at((*path, "message"), _POLICY, "Invalid value: message must be non-empty if specified")
    elif isinstance(message, str) and _LINE_BREAK.search(message.strip()):
        yield error_at(
            (*path, "message"),
            _POLICY,
            "Invalid value: message must not contain line breaks",
            "use messageExpression for a message built from the object",
        )
    reason = validation.get("reason")
    if reason is not None and reason not in _REASONS:
        yield unsupported((*path, "reason"), _POLICY, reason, _REASONS)


def _audit_annotations(annotations: list[Any], policy: Any) -> Iterator[Finding]:
    """The auditAnnotations of validateValidatingAdmissionPolicySpec and validateAuditAnnotation:
    at most 20, keys unique and, after the policy's name and a slash, a qualified name."""
    path: Path = ("spec", "auditAnnotations")
    if len(annotations) > MAX_AUDIT_ANNOTATIONS:
        yield error_at(path, _POLICY, f"must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations")
    keys: set[str] = set()
    for i, annotation in enumerate(annotations):
        if not isinstance(annotation, dict):
            continue
        key = str(annotation.get("key") or "")
        if isinstance(policy, str) and policy and (err := names.qualified_name(f"{policy}/{key}")):
            yield error_at(
                (*path, i, "key"),
                _POLICY,
                f"Invalid value: {shown(f'{policy}/{key}')}: {err}",
                "the audit annotation is named <policy name>/<key>: a qualified name",
            )
        if key in keys:
            yield error_at((*path, i, "key"), _POLICY, f"Duplicate value: {shown(key)}")
        keys.add(key)
        value = _trimmed(annotation.get("valueExpression"))
        if not value:
            yield error_at((*path, i, "valueExpression"), _POLICY, "Required value: valueExpression is not specified")
        elif len(value.encode()) > MAX_AUDIT_VALUE_EXPRESSION:
            yield error_at(
                (*path, i, "valueExpression"),
                _POLICY,
                f"Required value: must not exceed {MAX_AUDIT_VALUE_EXPRESSION} bytes in length",
            )
        else:
            yield from _cel(value, (*path, i, "valueExpression"), _POLICY, ("string", "null_type"))


def _param_ref(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateParamRef: a name or a selector, not both, and what to do without a parameter
    (no v1 default: it is required)."""
    name, selector = ref.get("name") or "", ref.get("selector")
    exclusive = "Forbidden: name and selector are mutually exclusive"
    if name:
        if err := names.path_segment(str(name)):
            yield error_at((*path, "name"), _POLICY, f"Invalid value: {shown(name)}: {err}")
        if selector is not None:
            yield error_at((*path, "name"), _POLICY, exclusive)
    if selector is not None:
        yield from labels.check_selector(selector, (*path, "selector"), _POLICY)
        if name:
            yield error_at((*path, "selector"), _POLICY, exclusive)
    if not name and selector is None:
        yield error_at(path, _POLICY, "Required value: one of name or selector must be specified")
    action = ref.get("parameterNotFoundAction")
    if not action:
        yield error_at(
            (*path, "parameterNotFoundAction"), _POLICY, "Required value", "Deny or Allow a request without a parameter"
        )
    elif action not in _NOT_FOUND_ACTIONS:
        yield unsupported((*path, "parameterNotFoundAction"), _POLICY, action, _NOT_FOUND_ACTIONS)


def _validation_actions(actions: list[Any], path: Path) -> Iterator[Finding]:
    """validateValidationActions: known, once each, at least one, never both Deny and Warn."""
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in _VALIDATION_ACTIONS:
            yield unsupported((*path, i), _POLICY, action, _VALIDATION_ACTIONS)
        if action in seen:
            yield error_at((*path, i), _POLICY, f"Duplicate value: {shown(action)}")
        seen.add(str(action))
    if {"Deny", "Warn"} <= seen:
        yield error_at(
            path,
            _POLICY,
            "must not contain both Deny and Warn (repeating the same validation failure information in the API "
            "response and headers serves no purpose)",
        )
    if not seen:
        yield error_at(
            path, _POLICY, "Required value: at least one validation action is required", "Deny, Warn or Audit"
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
        yield from client_config(hook.get("clientConfig") or {}, (*at, "clientConfig"))
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


def client_config(config: dict[str, Any], path: Path, rule_id: str = "k8s-webhook") -> Iterator[Finding]:
    """Exactly one of url (ValidateWebhookURL) and service (ValidateWebhookService): a webhook's,
    or a CRD's conversion webhook's (rule_id crd-invalid)."""
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        yield error_at(path, rule_id, "exactly one of url or service is required")
    elif isinstance(url, str):
        for problem in _url_problems(url):
            yield error_at((*path, "url"), rule_id, f"{problem}; desired format: https://host[/path]")
    elif isinstance(service, dict):
        for field in ("name", "namespace"):
            if not service.get(field):
                yield error_at(
                    (*path, "service", field),
                    rule_id,
                    f"Required value: service {field} is required",
                    "name the Service",
                )
        port = service.get("port", 443)  # SetDefaults_ServiceReference
        if isinstance(port, int) and not 1 <= port <= 65535:
            yield error_at(
                (*path, "service", "port"), rule_id, "port is not valid: must be between 1 and 65535, inclusive"
            )
        route = service.get("path")
        if isinstance(route, str) and (why := _service_path_problem(route)):
            yield error_at((*path, "service", "path"), rule_id, f"{shown(route)}: {why}")


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


def _rule(rule: dict[str, Any], path: Path, rule_id: str = "k8s-webhook") -> Iterator[Finding]:
    """validateRuleWithOperations and validateRule: operations, groups, versions and resources
    present, a wildcard alone, resources and subresources without overlap."""
    operations = rule.get("operations")
    if not operations:
        yield error_at((*path, "operations"), rule_id, "Required value: list the operations the rule matches")
    for o, op in enumerate(operations or []):
        if op not in _OPERATIONS:
            yield unsupported((*path, "operations", o), rule_id, op, _OPERATIONS)
    if operations and "*" in operations and len(operations) > 1:
        yield error_at((*path, "operations"), rule_id, "if '*' is present, must not specify other operations")
    for field, words in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = rule.get(field) or []
        if not values:
            yield error_at((*path, field), rule_id, f"Required value: list the {words} the rule matches", _EVERY_GROUP)
        elif "*" in values and len(values) > 1:
            yield error_at((*path, field), rule_id, f"if '*' is present, must not specify other {words}")
    for v, version in enumerate(rule.get("apiVersions") or []):
        if version == "":
            yield error_at((*path, "apiVersions", v), rule_id, "Required value: an API version, or '*'")
    scope = rule.get("scope", "*")  # SetDefaults_Rule
    if scope not in _SCOPES:
        yield unsupported((*path, "scope"), rule_id, scope, _SCOPES)
    yield from _resources(rule.get("resources") or [], (*path, "resources"), rule_id)


def _resources(resources: list[Any], path: Path, rule_id: str) -> Iterator[Finding]:
    """validateResources, in its order: `x/*` or `*/x` before a later `x/y` or `y/x`, `*/*` alone,
    `*` with no resource lacking a subresource (the last one without a slash decides)."""
    if not resources:
        yield error_at(path, rule_id, "Required value: list the resources the rule matches, or '*'")
    wildcard_sub: set[str] = set()
    wildcard_resource: set[str] = set()
    double = single = plain = False
    for i, entry in enumerate(map(str, resources)):
        if not entry:
            yield error_at((*path, i), rule_id, "Required value: a resource")
            continue
        double = double or entry == "*/*"
        single = single or entry == "*"
        if "/" not in entry:
            plain = entry != "*"
            continue
        resource, sub = entry.split("/", 1)
        if resource in wildcard_sub:
            yield error_at((*path, i), rule_id, f"if '{resource}/*' is present, must not specify {entry}")
        if sub in wildcard_resource:
            yield error_at((*path, i), rule_id, f"if '*/{sub}' is present, must not specify {entry}")
        if sub == "*":
            wildcard_sub.add(resource)
        if resource == "*":
            wildcard_resource.add(sub)
    if double and len(resources) > 1:
        yield error_at(path, rule_id, "if '*/*' is present, must not specify other resources")
    if single and plain:
        yield error_at(path, rule_id, "if '*' is present, must not specify other resources without subresources")


def _match_conditions(conditions: list[Any], path: Path, rule_id: str = "k8s-webhook") -> Iterator[Finding]:
    """validateMatchConditions: at most 64, each named (a qualified name, once) with an
    expression that compiles."""
    if len(conditions) > MAX_MATCH_CONDITIONS:
        yield error_at(path, rule_id, f"Too many: {len(conditions)}: must have at most {MAX_MATCH_CONDITIONS} items")
    seen: set[str] = set()
    for m, condition in enumerate(conditions):
        if not isinstance(condition, dict):
            continue
        where = (*path, m)
        name = condition.get("name")
        if not name:
            yield error_at((*where, "name"), rule_id, "Required value: a match condition needs a name")
        elif err := names.qualified_name(str(name)):
            yield error_at((*where, "name"), rule_id, f"{shown(name)}: {err}")
        elif name in seen:
            yield error_at((*where, "name"), rule_id, f"Duplicate value: {shown(name)}")
        if name:
            seen.add(str(name))
        if not condition.get("expression"):
            yield error_at((*where, "expression"), rule_id, "Required value: a match condition needs an expression")
        declared = POLICY_VARIABLES if rule_id == _POLICY else _WEBHOOK_VARIABLES
        yield from _cel(condition.get("expression"), (*where, "expression"), rule_id, _BOOL, declared)
