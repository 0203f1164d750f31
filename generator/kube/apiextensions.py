"""kube-apiserver's create-time rules for a CustomResourceDefinition that the walk in crds.py
does not make: the names, deprecation warnings, selectable fields, conversion and API approval
of the spec, and, node by node, what ValidateCustomResourceDefinitionOpenAPISchema, the
structural schema checks (apiserver/schema: validation.go, completeness.go) and ValidateDefaults
refuse. Read from apiextensions-apiserver's pkg/apis/apiextensions/validation/validation.go.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from generator.kube import admission, labels, names
from generator.kube.findings import Finding, Path
from generator.problems import Severity
from generator.schema_messages import shown

RULE = "crd-invalid"
MAX_SELECTABLE_FIELDS = 8
MAX_DEPRECATION_WARNING = 256
_APPROVAL = "api-approved.kubernetes.io"
_PROTECTED_GROUP = re.compile(r"(.+\.)?(k8s|kubernetes)\.io")  # apihelpers.IsProtectedCommunityGroup
_REVIEW_VERSIONS = ("v1", "v1beta1")
_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
# allowedFieldsAtRootSchema, as the v1 keys spell them: the rest is refused at the root of a
# schema whose version has the status subresource (status is cut out of it as properties.status)
_ROOT_WITH_STATUS = frozenset(
    {"description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}
    | {"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "required"}
    | {"items", "properties", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields"}
    | {"x-kubernetes-validations"}
)
# specStandardValidatorV3.validate: JSON Schema keywords a CRD schema may not use
_UNSUPPORTED = ("id", "additionalItems", "patternProperties", "definitions", "dependencies", "$ref")
_META = ("metadata", "kind", "apiVersion")
_KINDS = ("kind", "listKind")  # may have mixed case
_LINE_BREAK = re.compile(r"[\n\r]")
_STRING_LITERAL = re.compile(
    r"""[rRbB]{0,2}('''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")""", re.S
)
_OLD_SELF = re.compile(r"(?<![\w.])oldSelf\b")
# Constructs Go's RE2 refuses in a pattern: lookaround and backreferences
_NOT_RE2 = re.compile(r"\(\?<?[=!]|\\[1-9]")


def error(path: Path, message: str, hint: str = "") -> Finding:
    return Finding(path, RULE, Severity.ERROR, message, hint or "kube-apiserver refuses the CRD")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _trimmed(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


# ---- the spec --------------------------------------------------------------------------


def check_names(names_: dict[str, Any]) -> Iterator[Finding]:
    """ValidateCustomResourceDefinitionNames and the spec's required names, after
    SetDefaults_CustomResourceDefinitionSpec fills singular (the kind, lower-cased) and listKind
    (the kind + "List"): plural and singular DNS-1035 labels, kind and listKind too once
    lower-cased and not the same, every short name and category a DNS-1035 label."""
    at: Path = ("spec", "names")
    kind = str(names_.get("kind") or "")
    filled = {
        "plural": names_.get("plural"),
        "singular": names_.get("singular") or kind.lower(),
        "kind": kind,
        "listKind": names_.get("listKind") or (f"{kind}List" if kind else ""),
    }
    for field, value in filled.items():
        if not value:
            yield error((*at, field), "Required value", "the kind's name as kubectl and the API use it")
        elif isinstance(value, str) and (err := names.dns1035_label(value.lower() if field in _KINDS else value)):
            mixed = "may have mixed case, but should otherwise match: " if field in _KINDS else ""
            yield error((*at, field), f"Invalid value: {shown(value)}: {mixed}{err}")
    if kind and filled["listKind"] == kind:
        yield error((*at, "listKind"), f"Invalid value: {shown(kind)}: kind and listKind may not be the same")
    for field in ("shortNames", "categories"):
        for i, value in enumerate(_listed(names_.get(field))):
            if isinstance(value, str) and (err := names.dns1035_label(value)):
                yield error((*at, field, i), f"Invalid value: {shown(value)}: {err}")


def check_version(version: dict[str, Any], at: Path) -> Iterator[Finding]:
    """validateCustomResourceDefinitionVersion: a deprecation warning only on a deprecated
    version, short and printable; selectable fields only with a schema."""
    warning = version.get("deprecationWarning")
    if isinstance(warning, str):
        for why in _deprecation_warning(bool(version.get("deprecated")), warning):
            yield error((*at, "deprecationWarning"), f"Invalid value: {shown(warning)}: {why}")
    fields = _listed(version.get("selectableFields"))
    schema = _mapping(version.get("schema")).get("openAPIV3Schema")
    if fields and not isinstance(schema, dict):
        yield error(
            (*at, "selectableFields"),
            "Invalid value: selectableFields may only be set when version.schema.openAPIV3Schema is not included",
        )
    elif fields and isinstance(schema, dict):
        yield from _selectable_fields(fields, schema, (*at, "selectableFields"))


def _deprecation_warning(deprecated: bool, warning: str) -> Iterator[str]:
    if not deprecated:
        yield "can only be set for deprecated versions"
        return
    if len(warning.encode()) > MAX_DEPRECATION_WARNING:
        yield f"must be <= {MAX_DEPRECATION_WARNING} characters long"
    if not warning:
        yield "must not be an empty string"
    for i, char in enumerate(warning):
        if not char.isprintable():  # Python's printable is Go's unicode.IsPrint
            index = len(warning[:i].encode())
            yield f"must only contain printable UTF-8 characters; non-printable character found at index {index}"
            break


def _selectable_fields(fields: list[Any], schema: dict[str, Any], at: Path) -> Iterator[Finding]:
    """ValidateCustomResourceSelectableFields: each a path to a string, boolean or integer field
    outside metadata, none twice, at most eight."""
    seen: set[str] = set()
    for i, entry in enumerate(fields):
        path = _mapping(entry).get("jsonPath")
        where: Path = (*at, i, "jsonPath")
        if not path:
            yield error(where, "Required value")
            continue
        steps, found, why = field_path(str(path), schema, allow_index=False)
        if why:
            yield error(where, f"Invalid value: {shown(path)}: is an invalid path: {why}")
            continue
        if steps[0] == "metadata":
            yield error(where, f"Invalid value: {shown(path)}: must not point to fields in metadata")
        if _mapping(found).get("type") not in ("string", "boolean", "integer"):
            yield error(
                where,
                f"Invalid value: {shown(path)}: must point to a field of type string, boolean or integer. "
                "Enum string fields and strings with formats are allowed.",
            )
        key = ".".join(steps)
        if key in seen:
            yield error(where, f"Duplicate value: {shown(path)}")
        seen.add(key)
    if len(seen) > MAX_SELECTABLE_FIELDS:
        yield error(at, f"Too many: {len(seen)}: must have at most {MAX_SELECTABLE_FIELDS} items")


_PATH_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]")
_ESCAPED = re.compile(r"\\(.)")


def field_path(path: str, schema: dict[str, Any], allow_index: bool = True) -> tuple[list[str], Any, str]:
    """cel.ValidFieldPath: a path of `.name`, `['name']` (and `[n]` into a list) steps that the
    schema declares; the steps, the schema it reaches, and why it is not one (or "")."""
    steps: list[str] = []
    node: Any = schema
    rest = path
    if not rest.startswith((".", "[")):
        return steps, None, "expected [ or . at the start of the path"
    while rest:
        match = _PATH_STEP.match(rest)
        if not match:
            return steps, None, f"invalid path at {rest!r}"
        name, quoted, index = match.groups()
        rest = rest[match.end() :]
        if index is not None:
            if not allow_index or _mapping(node).get("type") != "array":
                return steps, None, "array notation is not allowed" if not allow_index else "not an array"
            node = _mapping(node).get("items")
            steps.append(index)
            continue
        key = name if name is not None else _ESCAPED.sub(r"\1", quoted)
        here = _mapping(node)
        if here.get("type") == "array":  # a list's field names its items' field
            here = _mapping(here.get("items"))
        props = _mapping(here.get("properties"))
        if key in props:
            node = props[key]
        elif isinstance(here.get("additionalProperties"), dict):
            node = here["additionalProperties"]
        elif here.get("additionalProperties") is True or here.get("x-kubernetes-preserve-unknown-fields") is True:
            return [*steps, key], None, ""  # any field: nothing to refuse
        else:
            return steps, None, f"does not refer to a valid field: {key}"
        steps.append(key)
    return steps, node, ""


def check_conversion(spec: dict[str, Any]) -> Iterator[Finding]:
    """validateCustomResourceConversion (after SetDefaults_CustomResourceConversion: strategy
    None): a webhook with exactly one of url and service and review versions kube-apiserver
    sends, and neither without the Webhook strategy, which pruning (preserveUnknownFields
    false) needs."""
    conversion = _mapping(spec.get("conversion"))
    strategy = conversion.get("strategy") or "None"
    webhook = conversion.get("webhook")
    at: Path = ("spec", "conversion")
    if strategy != "None" and spec.get("preserveUnknownFields") is True:
        yield error(
            (*at, "strategy"), f"Invalid value: {shown(strategy)}: must be None if spec.preserveUnknownFields is true"
        )
    if strategy == "Webhook" and isinstance(webhook, dict):
        client = webhook.get("clientConfig")
        if not isinstance(client, dict):
            yield error((*at, "webhook"), "Required value: required when strategy is set to Webhook")
        else:
            yield from admission.client_config(client, (*at, "webhook", "clientConfig"), RULE)
        yield from _review_versions(
            webhook.get("conversionReviewVersions"), (*at, "webhook", "conversionReviewVersions")
        )
    elif strategy != "Webhook" and isinstance(webhook, dict):
        if webhook.get("clientConfig") is not None:
            yield error(
                (*at, "webhook", "clientConfig"), "Forbidden: should not be set when strategy is not set to Webhook"
            )
        if webhook.get("conversionReviewVersions"):
            yield error(
                (*at, "webhook", "conversionReviewVersions"),
                "Forbidden: should not be set when strategy is not set to Webhook",
            )


def _review_versions(versions: Any, path: Path) -> Iterator[Finding]:
    """validateConversionReviewVersions: listed, DNS-1035 labels, none twice, v1 or v1beta1 among them."""
    if not versions or not isinstance(versions, list):
        yield error(path, "Required value", "list the ConversionReview versions the webhook reads: v1")
        return
    seen: set[str] = set()
    for i, version in enumerate(map(str, versions)):
        if version in seen:
            yield error((*path, i), f"Invalid value: {shown(version)}: duplicate version")
            continue
        seen.add(version)
        if err := names.dns1035_label(version):
            yield error((*path, i), f"Invalid value: {shown(version)}: {err}")
    if not seen & set(_REVIEW_VERSIONS):
        yield error(path, f"Invalid value: must include at least one of {', '.join(_REVIEW_VERSIONS)}")


def check_api_approval(crd: dict[str, Any]) -> Iterator[Finding]:
    """validateAPIApproval: a group under k8s.io or kubernetes.io is the Kubernetes project's, and
    a CRD in it says where its API was approved (a URL) or that it was not ("unapproved...")."""
    group = _mapping(crd.get("spec")).get("group")
    if not isinstance(group, str) or not _PROTECTED_GROUP.fullmatch(group):
        return
    value = _mapping(_mapping(crd.get("metadata")).get("annotations")).get(_APPROVAL)
    path: Path = ("metadata", "annotations", _APPROVAL)
    hint = 'a URL of the approving pull request, or a reason starting with "unapproved"'
    if not value:
        yield error(
            path,
            f"Required value: protected groups must have approval annotation {shown(_APPROVAL)}, "
            "see https://github.com/kubernetes/enhancements/pull/1111",
            hint,
        )
    elif not str(value).startswith("unapproved") and not _request_uri(str(value)):
        yield error(
            path,
            f"Invalid value: {shown(value)}: protected groups must have approval annotation {shown(_APPROVAL)} "
            'with either a URL or a reason starting with "unapproved"',
            hint,
        )


def _request_uri(value: str) -> bool:
    """Whether Go's url.ParseRequestURI reads value: an absolute URL or an absolute path."""
    if value.startswith("/"):
        return True
    return bool(urlsplit(value).scheme)


# ---- the schema, node by node ------------------------------------------------------------


# What a node's schema refuses in its own default (its types, formats and rules): crds.py judges
# values by schemas, and hands its judge in.
JudgeDefault = Callable[[dict[str, Any], Any, Path], Iterator[Finding]]


def check_schema(schema: dict[str, Any], at: Path, status: bool, judge_default: JudgeDefault) -> Iterator[Finding]:
    """The root of a version's schema, then every node below it."""
    if status:
        extra = sorted(
            key
            for key, value in schema.items()
            if key not in _ROOT_WITH_STATUS and value not in (None, False, [], {}, "", 0)
        )
        if extra:
            yield error(
                at,
                f"Invalid value: only {', '.join(sorted(_ROOT_WITH_STATUS))} are allowed at the root of the schema "
                f"if the status subresource is enabled, not {', '.join(extra)}",
            )
    if schema.get("nullable") is True:
        yield error((*at, "nullable"), "Forbidden: nullable cannot be true at the root")
    if isinstance(schema.get("additionalProperties"), (dict, bool)):
        yield error((*at, "additionalProperties"), "Forbidden: must not be used at the root")
    yield from _node(schema, at, root=True, meta="", uncorrelatable=None, judge_default=judge_default)
    yield from _completeness(schema, at)


def _node(
    node: dict[str, Any], at: Path, root: bool, meta: str, uncorrelatable: Path | None, judge_default: JudgeDefault
) -> Iterator[Finding]:
    """ValidateCustomResourceDefinitionOpenAPISchema and validateStructuralInvariants at one
    node of the structural part (properties, items, additionalProperties), then below it; meta
    says whether the node describes a resource's metadata, kind or apiVersion ("meta"), and
    under an additionalProperties there (_META_EXTRA)."""
    yield from _keywords(node, at, meta)
    yield from _type_for_extension(node, at)
    yield from _list_map(node, at)
    yield from _rules(node, at, uncorrelatable)
    yield from _resource_meta(node, at, root)
    yield from _pattern(node, at)
    yield from _default(node, at, meta, judge_default)
    for key in ("allOf", "anyOf", "oneOf"):
        for i, part in enumerate(_listed(node.get(key))):
            if isinstance(part, dict):
                yield from _value_validation(part, (*at, key, i))
    if isinstance(node.get("not"), dict):
        yield from _value_validation(node["not"], (*at, "not"))
    embedded = node.get("x-kubernetes-embedded-resource") is True
    for key, sub in _mapping(node.get("properties")).items():  # granular and atomic maps both correlate
        if isinstance(sub, dict):
            inside_meta = meta or ("meta" if (root or embedded) and key in _META else "")
            yield from _node(
                sub,
                (*at, "properties", key),
                root=False,
                meta=inside_meta,
                uncorrelatable=uncorrelatable,
                judge_default=judge_default,
            )
    items = node.get("items")
    if isinstance(items, dict):
        unkeyed = node.get("x-kubernetes-list-type") != "map"
        yield from _node(
            items,
            (*at, "items"),
            root=False,
            meta=meta,
            uncorrelatable=uncorrelatable or (at if unkeyed else None),
            judge_default=judge_default,
        )
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        inside_meta = _META_EXTRA if meta else ""
        yield from _node(
            extra,
            (*at, "additionalProperties"),
            root=False,
            meta=inside_meta,
            uncorrelatable=uncorrelatable,
            judge_default=judge_default,
        )


_META_EXTRA = "additionalProperties"  # inside metadata, under an additionalProperties (labels, annotations)


def _keywords(node: dict[str, Any], at: Path, meta: str) -> Iterator[Finding]:
    """specStandardValidatorV3.validate: keywords a CRD schema does not support, a default
    where pruning could not tell what it fills, an embedded resource inside metadata."""
    for key in _UNSUPPORTED:
        if node.get(key) not in (None, "", {}, []):
            yield error((*at, key), f"Forbidden: {key} is not supported")
    if isinstance(node.get("items"), list) and node["items"]:
        yield error((*at, "items"), "Forbidden: items must be a schema object and not an array")
    if meta and node.get("x-kubernetes-embedded-resource") is True:
        yield error((*at, "x-kubernetes-embedded-resource"), "Forbidden: must not be used inside of resource meta")
    if meta and node.get("default") is not None:
        if top := _top_level_meta(at):
            yield error((*at, "default"), f"Forbidden: must not be set in top-level {top}")
        elif meta == _META_EXTRA:
            yield error(
                (*at, "default"), "Forbidden: must not be set inside additionalProperties applying to object metadata"
            )


def _top_level_meta(at: Path) -> str:
    """The top-level metadata, kind or apiVersion property a path lies under, or ""."""
    schema = at.index("openAPIV3Schema") if "openAPIV3Schema" in at else -1
    if len(at) > schema + 2 and at[schema + 1] == "properties" and at[schema + 2] in _META:
        return str(at[schema + 2])
    return ""


def _type_for_extension(node: dict[str, Any], at: Path) -> Iterator[Finding]:
    """x-kubernetes-map-type needs type object, x-kubernetes-list-type type array."""
    for key, wanted in (("x-kubernetes-map-type", "object"), ("x-kubernetes-list-type", "array")):
        if node.get(key) is not None and node.get("type") != wanted:
            kind = node.get("type")
            words = f"must be {wanted} if {key} is specified"
            yield error(
                (*at, "type"), f"Required value: {words}" if not kind else f"Invalid value: {shown(kind)}: {words}"
            )


def _list_map(node: dict[str, Any], at: Path) -> Iterator[Finding]:
    """What crds.py's walk leaves of the list-map rules: keys of scalar type, none twice; no
    nullable item of a set or map list, no nullable key."""
    kind = node.get("x-kubernetes-list-type")
    items = _mapping(node.get("items"))
    if kind in ("set", "map") and items.get("nullable") is True:
        yield error((*at, "items", "nullable"), f"Forbidden: cannot be nullable when x-kubernetes-list-type is {kind}")
    keys = node.get("x-kubernetes-list-map-keys")
    if kind != "map" or not isinstance(keys, list) or items.get("type") != "object":
        return
    props = _mapping(items.get("properties"))
    seen: set[str] = set()
    for key in map(str, keys):
        prop = _mapping(props.get(key))
        if prop.get("type") in ("array", "object"):
            yield error(
                (*at, "items", "properties", key, "type"),
                f"Invalid value: {shown(prop['type'])}: must be a scalar type if parent array's x-kubernetes-list-type is map",
            )
        if prop.get("nullable") is True:
            yield error(
                (*at, "items", "properties", key, "nullable"),
                "Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
            )
        if key in seen:
            yield error(
                (*at, "x-kubernetes-list-map-keys"), f"Invalid value: {shown(key)}: must not contain duplicate entries"
            )
        seen.add(key)


def _rules(node: dict[str, Any], at: Path, uncorrelatable: Path | None) -> Iterator[Finding]:
    """x-kubernetes-validations: a rule, a message on one line (needed if the rule spans lines),
    a messageExpression not blank, a known reason, a fieldPath on one line that the schema
    declares; oldSelf only where an old value can be matched to the new one."""
    for i, rule in enumerate(_listed(node.get("x-kubernetes-validations"))):
        if not isinstance(rule, dict):
            continue
        where: Path = (*at, "x-kubernetes-validations", i)
        text, message = _trimmed(rule.get("rule")), rule.get("message")
        if not text:
            yield error((*where, "rule"), "Required value: rule is not specified")
        elif isinstance(message, str) and message and not message.strip():
            yield error((*where, "message"), "Invalid value: message must be non-empty if specified")
        elif isinstance(message, str) and _LINE_BREAK.search(message.strip()):
            yield error((*where, "message"), "Invalid value: message must not contain line breaks")
        elif _LINE_BREAK.search(text) and not _trimmed(message):
            yield error((*where, "message"), "Required value: message must be specified if rule contains line breaks")
        expression = rule.get("messageExpression")
        if isinstance(expression, str) and expression and not expression.strip():
            yield error(
                (*where, "messageExpression"), "Required value: messageExpression must be non-empty if specified"
            )
        reason = rule.get("reason")
        if reason is not None and reason not in _REASONS:
            listed = ", ".join(shown(r) for r in _REASONS)
            yield error((*where, "reason"), f"Unsupported value: {shown(reason)}: supported values: {listed}")
        yield from _rule_field_path(rule.get("fieldPath"), node, (*where, "fieldPath"))
        if text:
            yield from _old_self(rule, text, where, uncorrelatable)


def _rule_field_path(value: Any, node: dict[str, Any], at: Path) -> Iterator[Finding]:
    if not isinstance(value, str) or not value:
        return
    if not value.strip():
        yield error(at, f"Invalid value: {shown(value)}: fieldPath must be non-empty if specified")
    if _LINE_BREAK.search(value):
        yield error(at, f"Invalid value: {shown(value)}: fieldPath must not contain line breaks")
    elif value.strip() and field_path(value, node)[2]:
        yield error(at, f"Invalid value: {shown(value)}: fieldPath must be a valid path")


def _old_self(rule: dict[str, Any], text: str, where: Path, uncorrelatable: Path | None) -> Iterator[Finding]:
    uses = bool(_OLD_SELF.search(_STRING_LITERAL.sub("''", text)))
    if uses and uncorrelatable is not None:
        within = _dotted(uncorrelatable)
        yield error(
            (*where, "rule"),
            f"Invalid value: oldSelf cannot be used on the uncorrelatable portion of the schema within {within}",
            "an item of a list that is not x-kubernetes-list-type: map has no old value to compare",
        )
    elif not uses and rule.get("optionalOldSelf") is not None:
        yield error((*where, "optionalOldSelf"), "Invalid value: may not be set if oldSelf is not used in rule")


def _dotted(path: Path) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).lstrip(".")


def _resource_meta(node: dict[str, Any], at: Path, root: bool) -> Iterator[Finding]:
    """validateStructuralInvariants on a resource (the root, or an embedded one): kind and
    apiVersion strings, metadata an object; no additionalProperties beside an embedded one."""
    embedded = node.get("x-kubernetes-embedded-resource") is True
    if embedded and "additionalProperties" in node:
        yield error(
            (*at, "additionalProperties"), "Forbidden: must not be used if x-kubernetes-embedded-resource is set"
        )
    if not (root or embedded):
        return
    props = _mapping(node.get("properties"))
    for key, wanted in (("kind", "string"), ("apiVersion", "string"), ("metadata", "object")):
        if isinstance(props.get(key), dict) and props[key].get("type") != wanted:
            kind = props[key].get("type", "")
            yield error((*at, "properties", key, "type"), f"Invalid value: {shown(kind)}: must be {wanted}")


def _pattern(node: dict[str, Any], at: Path) -> Iterator[Finding]:
    """validateValueValidation: a pattern Go's regexp compiles (RE2: no lookaround, no
    backreferences; an unbalanced group or a bare repetition fails in both)."""
    pattern = node.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return
    why = "lookaround and backreferences are not RE2" if _NOT_RE2.search(pattern) else _unbalanced(pattern)
    if why:
        yield error(
            (*at, "pattern"), f"Invalid value: {shown(pattern)}: must be a valid regular expression, but isn't: {why}"
        )


# Python's words for the pattern errors RE2 refuses too
_BOTH_REFUSE = (
    "unbalanced parenthesis",
    "missing )",
    "nothing to repeat",
    "multiple repeat",
    "unterminated character set",
)


@cache
def _unbalanced(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as err:
        if any(words in str(err) for words in _BOTH_REFUSE):
            return str(err)
    return ""


def _default(node: dict[str, Any], at: Path, meta: str, judge_default: JudgeDefault) -> Iterator[Finding]:
    """ValidateDefaults: an object default has only the fields its schema declares (pruning
    would drop the rest), and the default passes its own node's schema (outside a resource's
    metadata, whose defaults kube-apiserver coerces as ObjectMeta)."""
    default = node.get("default")
    if default is None:
        return
    if isinstance(default, dict) and (unknown := _unknown_fields(default, node)):
        yield error(
            (*at, "default"), f"Invalid value: must not have unknown fields: {', '.join(unknown)}", "pruning drops them"
        )
    elif not meta and node.get("x-kubernetes-embedded-resource") is True:
        yield from _embedded_default(default, (*at, "default"))
    elif not meta:
        yield from judge_default(node, default, (*at, "default"))


def _embedded_default(default: Any, at: Path) -> Iterator[Finding]:
    """schemaobjectmeta's checks of an embedded resource's default: an object with a non-empty
    apiVersion and kind (a DNS-1035 label once lower-cased), labels that are labels."""
    if not isinstance(default, dict):
        return  # the schema's type (object) refuses it
    for field in ("apiVersion", "kind"):
        value = default.get(field)
        if field not in default:
            yield error(
                (*at, field),
                f"Required value: {field} must not be empty",
                "an embedded resource names its apiVersion and kind",
            )
        elif not isinstance(value, str):
            yield error((*at, field), f"Invalid value: {shown(value)}: must be a string")
        elif not value:
            yield error((*at, field), "Invalid value: must not be empty")
        elif field == "kind" and (err := names.dns1035_label(value.lower())):
            yield error(
                (*at, field), f"Invalid value: {shown(value)}: may have mixed case, but should otherwise match: {err}"
            )
    metadata = default.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        yield error((*at, "metadata"), f"Invalid value: {shown(metadata)}: metadata must be an object")
    elif isinstance(metadata, dict):
        yield from labels.check_labels(metadata.get("labels"), (*at, "metadata", "labels"), RULE)


def _unknown_fields(value: Any, node: dict[str, Any], prefix: str = "") -> list[str]:
    if not isinstance(value, dict) or node.get("x-kubernetes-preserve-unknown-fields") is True:
        return []
    if node.get("x-kubernetes-embedded-resource") is True:
        value = {k: v for k, v in value.items() if k not in _META}
    props, extra = _mapping(node.get("properties")), node.get("additionalProperties")
    found: list[str] = []
    for key, sub in value.items():
        if key in props:
            found += _unknown_fields(sub, _mapping(props[key]), f"{prefix}{key}.")
        elif isinstance(extra, dict):
            found += _unknown_fields(sub, extra, f"{prefix}{key}.")
        elif extra is not True:
            found.append(f"{prefix}{key}")
    return found


def _value_validation(node: dict[str, Any], at: Path) -> Iterator[Finding]:
    """validateNestedValueValidation on what crds.py's walk does not check: no metadata
    property, and a pattern that compiles; then the same below."""
    if "metadata" in _mapping(node.get("properties")):
        yield error((*at, "properties", "metadata"), "Forbidden: must not be specified in a nested context")
    yield from _keywords(node, at, meta="")  # ValidateCustomResourceDefinitionOpenAPISchema recurses here too
    yield from _pattern(node, at)
    for key, sub in _mapping(node.get("properties")).items():
        if isinstance(sub, dict):
            yield from _value_validation(sub, (*at, "properties", key))
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            yield from _value_validation(node[key], (*at, key))
    for key in ("allOf", "anyOf", "oneOf"):
        for i, part in enumerate(_listed(node.get(key))):
            if isinstance(part, dict):
                yield from _value_validation(part, (*at, key, i))


def _completeness(node: dict[str, Any], at: Path) -> Iterator[Finding]:
    """validateStructuralCompleteness: every property and items a value validation (allOf,
    anyOf, oneOf, not) speaks of is also specified in the structural schema beside it."""
    for key in ("allOf", "anyOf", "oneOf"):
        for i, part in enumerate(_listed(node.get(key))):
            if isinstance(part, dict):
                yield from _complete(part, node, at, f"{_dotted(at)}.{key}[{i}]")
    if isinstance(node.get("not"), dict):
        yield from _complete(node["not"], node, at, f"{_dotted(at)}.not")
    for key, sub in _mapping(node.get("properties")).items():
        if isinstance(sub, dict):
            yield from _completeness(sub, (*at, "properties", key))
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from _completeness(node[key], (*at, key))


def _complete(value: dict[str, Any], node: dict[str, Any], at: Path, where: str) -> Iterator[Finding]:
    for key in ("allOf", "anyOf", "oneOf"):
        for i, part in enumerate(_listed(value.get(key))):
            if isinstance(part, dict):
                yield from _complete(part, node, at, f"{where}.{key}[{i}]")
    if isinstance(value.get("not"), dict):
        yield from _complete(value["not"], node, at, f"{where}.not")
    if isinstance(value.get("items"), dict):
        if not isinstance(node.get("items"), dict):
            yield error((*at, "items"), f"Required value: because it is defined in {where}.items")
        else:
            yield from _complete(value["items"], node["items"], (*at, "items"), f"{where}.items")
    props = _mapping(node.get("properties"))
    for key, sub in _mapping(value.get("properties")).items():
        if key not in props:
            yield error((*at, "properties", key), f"Required value: because it is defined in {where}.properties[{key}]")
        elif isinstance(sub, dict) and isinstance(props[key], dict):
            yield from _complete(sub, props[key], (*at, "properties", key), f"{where}.properties[{key}]")
