"""kube-apiserver's create-time rules for resource.k8s.io (Dynamic Resource Allocation): claims,
claim templates and device classes, read from pkg/apis/resource/validation/validation.go at 1.35
(ValidateResourceClaim, ValidateResourceClaimTemplate, ValidateDeviceClass and what they call),
on the object as SetDefaults_ExactDeviceRequest and SetDefaults_DeviceSubRequest leave it
(defaults.py). The fields 1.35's feature gates drop before validation (a request's tolerations:
DRADeviceTaints; distinctAttribute and capacity: DRAConsumableCapacity; a class's
extendedResourceName: DRAExtendedResource, all alpha) are not judged, as kube-apiserver never sees
them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable, Iterator
from typing import Any

from generator.kube import names
from generator.kube.admission import cel_error
from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.kube.objectmeta import check_template_metadata
from generator.schema_messages import shown

RULE = "k8s-resource-claim"

# pkg/apis/resource/types.go's limits
_REQUESTS_MAX = 32  # DeviceRequestsMaxSize (= AllocationResultsMaxSize)
_CONSTRAINTS_MAX = 32  # DeviceConstraintsMaxSize
_CONFIG_MAX = 32  # DeviceConfigMaxSize
_SELECTORS_MAX = 32  # DeviceSelectorsMaxSize
_FIRST_AVAILABLE_MAX = 8  # FirstAvailableDeviceRequestMaxSize
_CEL_MAX_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength
_SELECTOR_VARIABLES = frozenset({"device"})  # what the DRA CEL environment declares (dynamic-resource-allocation/cel)
_PARAMETERS_MAX_LENGTH = 10 * 1024  # OpaqueParametersMaxLength
_ID_MAX_LENGTH = 32  # DeviceMaxIDLength
_DRIVER_MAX_LENGTH = 63  # DriverNameMaxLength
_ALLOCATION_MODES = ("All", "ExactCount")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ATTRIBUTE_HINT = "a device attribute as domain/name, e.g. resource.kubernetes.io/pcieRoot"
_REQUEST_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

Validate = Callable[[Any, Path], Iterator[Finding]]


def check_resource_claim(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateResourceClaim, or ValidateResourceClaimTemplate (validateResourceClaimTemplateSpec:
    the template's metadata, then the same claim spec one level down)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    flat = str(obj.get("apiVersion")) == "resource.k8s.io/v1beta1"  # requests without `exactly`
    if obj.get("kind") == "ResourceClaimTemplate":
        yield from check_template_metadata(spec.get("metadata"), ("spec", "metadata"), RULE)
        if isinstance(spec.get("spec"), dict):
            yield from _claim_spec(spec["spec"], ("spec", "spec"), flat)
    else:
        yield from _claim_spec(spec, ("spec",), flat)


def check_device_class(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateDeviceClass (validateDeviceClassSpec): its selectors and its configuration."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from _slice(spec.get("selectors"), _SELECTORS_MAX, _selector, ("spec", "selectors"))
    yield from _slice(spec.get("config"), _CONFIG_MAX, _device_configuration, ("spec", "config"))


def _claim_spec(spec: dict[str, Any], path: Path, flat: bool) -> Iterator[Finding]:
    """validateResourceClaimSpec and validateDeviceClaim: requests by unique name, constraints and
    configuration that name only requests (or request/subrequest) the claim has."""
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return
    path = (*path, "devices")
    requests = devices.get("requests")
    known = _request_names(requests)
    yield from _set(
        requests, _REQUESTS_MAX, lambda r, at: _request(r, at, flat), _name_of, (*path, "requests"), ("name",)
    )
    yield from _slice(
        devices.get("constraints"), _CONSTRAINTS_MAX, lambda c, at: _constraint(c, at, known), (*path, "constraints")
    )
    yield from _slice(devices.get("config"), _CONFIG_MAX, lambda c, at: _claim_config(c, at, known), (*path, "config"))


def _name_of(item: Any) -> Hashable:
    return _plain(item.get("name")) if isinstance(item, dict) else None


def _request_names(requests: Any) -> dict[str, set[str]]:
    """gatherRequestNames: each request's name, with its subrequests' names."""
    known: dict[str, set[str]] = {}
    for request in requests if isinstance(requests, list) else []:
        if isinstance(request, dict):
            subs = request.get("firstAvailable")
            subs = subs if isinstance(subs, list) else []
            known[str(request.get("name") or "")] = {str(s.get("name") or "") for s in subs if isinstance(s, dict)}
    return known


def _request(request: Any, path: Path, flat: bool) -> Iterator[Finding]:
    """validateDeviceRequest: a DNS-label name and exactly one of `exactly` and `firstAvailable`
    (v1beta1's flat request converts to `exactly` when it has no firstAvailable)."""
    if not isinstance(request, dict):
        return
    yield from _request_name(request.get("name"), (*path, "name"))
    first_available = request.get("firstAvailable")
    exactly = request if flat and not first_available else request.get("exactly")
    if not first_available and exactly is None:
        yield error_at(
            path,
            RULE,
            "Required value: exactly one of `exactly` or `firstAvailable` is required",
            "set exactly.deviceClassName, or list alternatives in firstAvailable",
        )
    elif first_available and exactly is not None:
        yield error_at(
            path,
            RULE,
            "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            "keep one: `exactly` asks for one kind of device, firstAvailable for the first of several that fits",
        )
    elif first_available:
        yield from _set(
            first_available, _FIRST_AVAILABLE_MAX, _sub_request, _name_of, (*path, "firstAvailable"), ("name",)
        )
    else:
        yield from _exact_request(exactly, path if flat else (*path, "exactly"))


def _sub_request(sub: Any, path: Path) -> Iterator[Finding]:
    """validateDeviceSubRequest: named, with a class, selectors and an allocation mode."""
    if isinstance(sub, dict):
        yield from _request_name(sub.get("name"), (*path, "name"))
        yield from _exact_request(sub, path)


def _exact_request(request: Any, path: Path) -> Iterator[Finding]:
    """validateExactDeviceRequest: a device class, valid selectors and an allocation mode."""
    if not isinstance(request, dict):
        return
    yield from _device_class(request.get("deviceClassName"), (*path, "deviceClassName"))
    yield from _slice(request.get("selectors"), _SELECTORS_MAX, _selector, (*path, "selectors"))
    yield from _allocation_mode(request.get("allocationMode"), request.get("count"), path)


def _allocation_mode(mode: Any, count: Any, path: Path) -> Iterator[Finding]:
    """validateDeviceAllocationMode, after the defaults (ExactCount, count 1): All takes no count,
    ExactCount a positive one. An unset field is left alone: only a version's default fills it."""
    if mode is None:
        return
    if mode not in _ALLOCATION_MODES:
        yield unsupported(
            (*path, "allocationMode"), RULE, mode, _ALLOCATION_MODES, "ExactCount (the default) with a count, or All"
        )
    elif not isinstance(count, int) or isinstance(count, bool):
        return
    elif mode == "All" and count != 0:
        yield error_at(
            (*path, "count"),
            RULE,
            f"Invalid value: {count}: must not be specified when allocationMode is 'All'",
            "All allocates every matching device: drop count, or use ExactCount",
        )
    elif mode == "ExactCount" and count <= 0:
        yield error_at(
            (*path, "count"), RULE, f"Invalid value: {count}: must be greater than zero", "leave it out for one device"
        )


def _device_class(name: Any, path: Path) -> Iterator[Finding]:
    """validateDeviceClass: a request names its DeviceClass by a DNS subdomain."""
    if not name:
        yield error_at(
            path, RULE, "Required value", "name the DeviceClass (e.g. gpu.nvidia.com) that picks the devices"
        )
    elif isinstance(name, str) and (err := names.dns1123_subdomain(name)):
        yield error_at(path, RULE, f"Invalid value: {shown(name)}: {err}", "a DeviceClass's name, e.g. gpu.nvidia.com")


def _request_name(name: Any, path: Path) -> Iterator[Finding]:
    """validateRequestName (ValidateDNS1123Label): the name containers reference the request by."""
    if isinstance(name, str) and (err := names.dns1123_label(name)):
        yield error_at(path, RULE, f"Invalid value: {shown(name)}: {err}", "lower case, digits and '-', e.g. gpu-0")


def _selector(selector: Any, path: Path) -> Iterator[Finding]:
    """validateSelector: a selector is a CEL expression that compiles and evaluates to bool."""
    if not isinstance(selector, dict):
        return
    cel = selector.get("cel")
    if not isinstance(cel, dict):
        yield error_at((*path, "cel"), RULE, "Required value", "a selector is `cel: {expression: ...}`")
        return
    expression = cel.get("expression")
    if not isinstance(expression, str):
        return
    at = (*path, "cel", "expression")
    if len(expression.encode()) > _CEL_MAX_LENGTH:
        yield error_at(
            at, RULE, f"Too long: may not be more than {_CEL_MAX_LENGTH} bytes", "split it over several selectors"
        )
    elif err := cel_error(expression, ("bool",), _SELECTOR_VARIABLES):
        if err.startswith("must evaluate"):
            from generator.kube import cel as celpy

            message = f"must evaluate to bool or the unknown type, not {celpy.result_type(expression)}"
            hint = "a selector is a condition on `device`, e.g. device.driver == 'gpu.nvidia.com'"
        elif err.startswith("undeclared"):
            message, hint = f"compilation failed: {err}", "a selector reads `device`, the one variable it is given"
        else:
            message, hint = "compilation failed: syntax error", "check the syntax (CEL, as cel-go parses it)"
        yield error_at(at, RULE, f"Invalid value: {shown(expression)}: {message}", hint)


def _constraint(constraint: Any, path: Path, known: dict[str, set[str]]) -> Iterator[Finding]:
    """validateDeviceConstraint: requests the claim has, and a fully qualified matchAttribute
    (distinctAttribute is dropped while DRAConsumableCapacity is off, as in 1.35)."""
    if not isinstance(constraint, dict):
        return
    yield from _set(
        constraint.get("requests"),
        _REQUESTS_MAX,
        lambda n, at: _request_ref(n, at, known),
        _plain,
        (*path, "requests"),
    )
    attribute = constraint.get("matchAttribute")
    if attribute is None:
        yield error_at(
            (*path, "matchAttribute"),
            RULE,
            "Required value",
            "distinctAttribute needs the alpha DRAConsumableCapacity feature, off in 1.35: use matchAttribute"
            if "distinctAttribute" in constraint
            else "name the attribute the devices must share, e.g. resource.kubernetes.io/pcieRoot",
        )
    elif isinstance(attribute, str):
        yield from _fully_qualified_name(attribute, (*path, "matchAttribute"))


def _plain(item: Any) -> Hashable:
    return item if isinstance(item, Hashable) else repr(item)


def _claim_config(config: Any, path: Path, known: dict[str, set[str]]) -> Iterator[Finding]:
    """validateDeviceClaimConfiguration: requests the claim has, and the configuration itself."""
    if not isinstance(config, dict):
        return
    yield from _set(
        config.get("requests"), _REQUESTS_MAX, lambda n, at: _request_ref(n, at, known), _plain, (*path, "requests")
    )
    yield from _device_configuration(config, path)


def _request_ref(name: Any, path: Path, known: dict[str, set[str]]) -> Iterator[Finding]:
    """validateRequestNameRef: `request` or `request/subrequest`, each a DNS label the claim has."""
    if not isinstance(name, str):
        return
    segments = name.split("/")
    if len(segments) > 2:
        yield error_at(path, RULE, f"Invalid value: {shown(name)}: {_REQUEST_REF}", "`request` or `request/subrequest`")
        return
    for segment in segments:
        yield from _request_name(segment, path)
    if segments[0] not in known or (len(segments) == 2 and segments[1] not in known[segments[0]]):
        yield error_at(path, RULE, f"Invalid value: {shown(name)}: {_REQUEST_REF}", "name a request of this claim")


def _device_configuration(config: Any, path: Path) -> Iterator[Finding]:
    """validateDeviceConfiguration and validateOpaqueConfiguration: an opaque configuration for a
    driver (a CSI driver name) with parameters that are a JSON object of at most 10 KiB."""
    if not isinstance(config, dict):
        return
    opaque = config.get("opaque")
    if not isinstance(opaque, dict):
        yield error_at(
            (*path, "opaque"), RULE, "Required value", "opaque: {driver: ..., parameters: {...}} is the only kind"
        )
        return
    driver = opaque.get("driver")
    if driver is None or isinstance(driver, str):
        yield from _driver_name(driver or "", (*path, "opaque", "driver"), "the DRA driver's name, e.g. gpu.nvidia.com")
    parameters = opaque.get("parameters")
    at = (*path, "opaque", "parameters")
    if parameters is None:
        yield error_at(at, RULE, "Required value", "the driver's parameters, as a JSON object")
    elif (
        len(json.dumps(parameters, separators=(",", ":"), ensure_ascii=False, default=str).encode())
        > _PARAMETERS_MAX_LENGTH
    ):
        yield error_at(
            at,
            RULE,
            f"Too long: may not be more than {_PARAMETERS_MAX_LENGTH} bytes",
            "keep large configuration in a ConfigMap the driver reads",
        )


def _driver_name(name: str, path: Path, hint: str) -> Iterator[Finding]:
    """validateDriverName (core's ValidateCSIDriverName): at most 63 bytes, a DNS subdomain once
    lower-cased."""
    if not name:
        yield error_at(path, RULE, "Required value", hint)
    if len(name) > _DRIVER_MAX_LENGTH:
        yield error_at(path, RULE, f"Too long: may not be more than {_DRIVER_MAX_LENGTH} bytes", hint)
    if name and (err := names.dns1123_subdomain(name.lower())):
        yield error_at(path, RULE, f"Invalid value: {shown(name)}: {err}", hint)


def _fully_qualified_name(name: str, path: Path) -> Iterator[Finding]:
    """validateFullyQualifiedName: validateQualifiedName, and a domain there must be."""
    parts = name.split("/")
    if len(parts) == 1:
        yield from _c_identifier(parts[0], path)
    elif len(parts) == 2:  # more slashes pass (upstream's TODO: "a/b/c" is accepted)
        domain, short = parts
        if not domain:
            yield error_at(path, RULE, 'Invalid value: "": the domain must not be empty', _ATTRIBUTE_HINT)
        else:
            yield from _driver_name(domain, path, _ATTRIBUTE_HINT)
        if not short:
            yield error_at(path, RULE, 'Invalid value: "": the name must not be empty', _ATTRIBUTE_HINT)
        else:
            yield from _c_identifier(short, path)
    if "/" not in name:
        yield error_at(
            path,
            RULE,
            f"Invalid value: {shown(name)}: a fully qualified name must be a domain and a name separated by a slash",
            _ATTRIBUTE_HINT,
        )


def _c_identifier(identifier: str, path: Path) -> Iterator[Finding]:
    """validateCIdentifier: at most 32 characters, a C identifier."""
    if len(identifier) > _ID_MAX_LENGTH:
        yield error_at(path, RULE, f"Too long: may not be more than {_ID_MAX_LENGTH} bytes", _ATTRIBUTE_HINT)
    if not _C_IDENTIFIER.match(identifier):
        yield error_at(
            path,
            RULE,
            f"Invalid value: {shown(identifier)}: a valid C identifier must start with alphabetic character or '_', "
            "followed by a string of alphanumeric characters or '_'",
            _ATTRIBUTE_HINT,
        )


def _slice(items: Any, max_size: int, validate: Validate, path: Path) -> Iterator[Finding]:
    """validateSlice: at most max_size entries (then nothing more is judged), each valid."""
    if not isinstance(items, list):
        return
    if len(items) > max_size:
        yield error_at(
            path, RULE, f"Too many: {len(items)}: must have at most {max_size} items", "split it over several claims"
        )
        return
    for i, item in enumerate(items):
        yield from validate(item, (*path, i))


def _set(
    items: Any,
    max_size: int,
    validate: Validate,
    key: Callable[[Any], Hashable],
    path: Path,
    key_field: Path = (),
) -> Iterator[Finding]:
    """validateSet: validateSlice, and no key twice (the duplicate at its entry, or at the field
    the key is, key_field)."""
    yield from _slice(items, max_size, validate, path)
    if not isinstance(items, list) or len(items) > max_size:
        return
    seen: set[Hashable] = set()
    for i, item in enumerate(items):
        value = key(item)
        if value in seen:
            yield error_at((*path, i, *key_field), RULE, f"Duplicate value: {shown(value)}", "each name once")
        seen.add(value)
