"""A Pod's volumes as kube-apiserver validates them (pkg/apis/core/validation: ValidateVolumes,
validateVolumeSource and each source's validator), on the object with its core/v1 defaults
filled (defaults.py: a volume with no source is an emptyDir, a fieldRef reads v1, a projected
token lasts an hour, an azureDisk is Shared and ReadWrite). Projected clusterTrustBundle and
podCertificate sources are dropped before validation while their feature gates are off (the
1.35 default), so they are not judged.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator
from typing import Any

from generator.kube import claims, names, quantity
from generator.kube.containers import CONTAINER_RESOURCE_FIELDS, HUGEPAGES_FIELD_PREFIXES
from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.kube.objectmeta import check_template_metadata
from generator.kube.quantity import parse_quantity
from generator.schema_messages import shown

RULE = "k8s-volume"

# validateVolumeSource's order: the first source set is validated, every later one refused
SOURCES = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
)
_SOURCE_NAMES = frozenset(SOURCES)

# the fields each source's validator refuses empty (`len(x) == 0`: absent or "")
_REQUIRED = {
    "hostPath": ("path",),
    "gitRepo": ("repository",),
    "gcePersistentDisk": ("pdName",),
    "awsElasticBlockStore": ("volumeID",),
    "secret": ("secretName",),
    "nfs": ("server", "path"),
    "iscsi": ("targetPortal", "iqn"),
    "glusterfs": ("endpoints", "path"),
    "persistentVolumeClaim": ("claimName",),
    "rbd": ("monitors", "image"),
    "cinder": ("volumeID",),
    "cephfs": ("monitors",),
    "quobyte": ("registry", "volume"),
    "flexVolume": ("driver",),
    "configMap": ("name",),
    "azureFile": ("secretName", "shareName"),
    "vsphereVolume": ("volumePath",),
    "photonPersistentDisk": ("pdID",),
    "portworxVolume": ("volumeID",),
    "azureDisk": ("diskName", "diskURI"),
    "storageos": ("volumeName",),
    "scaleIO": ("gateway", "system", "volumeName"),
    "ephemeral": ("volumeClaimTemplate",),
}

_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
_HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_AZURE_CACHING = ("None", "ReadOnly", "ReadWrite")
_AZURE_KINDS = ("Dedicated", "Managed", "Shared")
# iscsiInitiator*Regex: Go's MatchString, so the iqn form is searched, not anchored at the start
_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI = re.compile(r"^eui.[A-Za-z0-9]{16}\Z")
_NAA = re.compile(r"^naa.[A-Za-z0-9]{32}\Z")
_VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid")


def _error(path: Path, message: str, hint: str = "") -> Finding:
    return error_at(path, RULE, message, hint)


def _under(prefix: Path, findings: Iterable[Finding]) -> Iterator[Finding]:
    """Findings of a check written for a whole object, moved below the field that embeds it."""
    for finding in findings:
        yield dataclasses.replace(finding, path=(*prefix, *finding.path))


# ---- paths and modes ----------------------------------------------------------------------


def _no_backsteps(value: str, path: Path) -> Iterator[Finding]:
    """validatePathNoBacksteps."""
    if names.has_backsteps(value):
        yield _error(path, f"{shown(value)}: must not contain '..'")


def _local_descending(value: str, path: Path) -> Iterator[Finding]:
    """validateLocalDescendingPath: relative, without '..' elements."""
    for why in names.local_descending_path_errors(value):
        yield _error(path, f"{shown(value)}: {why}")


def _local_non_reserved(value: Any, path: Path) -> Iterator[Finding]:
    """ValidateLocalNonReservedPath: a relative path that does not start with '..' (the files
    kubelet writes beside it, such as ..data, start so)."""
    if not isinstance(value, str):
        return
    yield from _local_descending(value, path)
    if value.startswith("..") and not value.startswith("../"):
        yield _error(path, f"{shown(value)}: must not start with '..'")


def _mode(container: dict[str, Any], key: str, path: Path) -> Iterator[Finding]:
    value = container.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= 0o777:
        yield _error((*path, key), f"{value}: {_FILE_MODE}", "an octal mode such as 0644 (YAML 0644 is octal)")


def _key_to_paths(items: Any, path: Path) -> Iterator[Finding]:
    """validateKeyToPath on each item of a secret or configMap source."""
    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        for key in ("key", "path"):
            if not item.get(key):
                yield _error((*path, i, key), "Required value")
        yield from _local_non_reserved(item.get("path"), (*path, i, "path"))
        yield from _mode(item, "mode", (*path, i))


# ---- downward API -------------------------------------------------------------------------


def _object_field_selector(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateObjectFieldSelector with the field paths a volume may read."""
    field_path = ref.get("fieldPath")
    if not field_path or not isinstance(field_path, str):
        yield _error((*path, "fieldPath"), "Required value")
        return
    if why := names.downward_api_field_error(str(ref.get("apiVersion")), field_path):
        yield _error((*path, "fieldPath"), f"{shown(field_path)}: error converting fieldPath: {why}")
        return
    subscripted, subscript = names.split_subscripted_path(field_path)
    if subscripted is not None:
        key = subscript.lower() if subscripted == "metadata.annotations" else subscript
        if err := names.qualified_name(key):
            yield _error(path, f"{shown(subscript)}: {err}")
    elif field_path not in _VOLUME_FIELD_PATHS:
        yield unsupported((*path, "fieldPath"), RULE, field_path, _VOLUME_FIELD_PATHS)


def _resource_field_selector(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateContainerResourceFieldSelector for a volume: a container, a resource it exposes."""
    resource = ref.get("resource")
    if not ref.get("containerName"):
        yield _error(
            (*path, "containerName"), "Required value", "a volume file names the container whose resource it reads"
        )
    elif not resource or not isinstance(resource, str):
        yield _error((*path, "resource"), "Required value")
    elif resource not in CONTAINER_RESOURCE_FIELDS and not resource.startswith(HUGEPAGES_FIELD_PREFIXES):
        yield unsupported((*path, "resource"), RULE, resource, CONTAINER_RESOURCE_FIELDS)
    if isinstance(resource, str) and (why := quantity.divisor_error(resource, ref.get("divisor"))):
        yield _error((*path, "divisor"), f"{shown(ref.get('divisor'))}: {why}")


def _downward_file(item: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateDownwardAPIVolumeFile: a local path, one of fieldRef and resourceFieldRef, a mode."""
    if not item.get("path"):
        yield _error((*path, "path"), "Required value")
    yield from _local_non_reserved(item.get("path"), (*path, "path"))
    field_ref, resource_ref = item.get("fieldRef"), item.get("resourceFieldRef")
    if isinstance(field_ref, dict):
        yield from _object_field_selector(field_ref, (*path, "fieldRef"))
        if resource_ref is not None:
            yield _error(path, "fieldRef and resourceFieldRef can not be specified simultaneously")
    elif isinstance(resource_ref, dict):
        yield from _resource_field_selector(resource_ref, (*path, "resourceFieldRef"))
    else:
        yield _error(path, "Required value: one of fieldRef and resourceFieldRef is required")
    yield from _mode(item, "mode", path)


def _downward_files(items: Any, path: Path) -> Iterator[Finding]:
    for i, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, dict):
            yield from _downward_file(item, (*path, i))


# ---- sources --------------------------------------------------------------------------------


def _host_path(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    value = source.get("path")
    if not value or not isinstance(value, str):
        return  # Required, reported with the other required fields
    yield from _no_backsteps(value, (*path, "path"))
    kind = source.get("type")
    if kind is not None and kind not in _HOST_PATH_TYPES:
        yield unsupported((*path, "type"), RULE, kind, _HOST_PATH_TYPES)


def _git_repo(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    directory = source.get("directory")
    if isinstance(directory, str):
        yield from _local_descending(directory, (*path, "directory"))


def _initiator_error(value: str) -> str | None:
    """The iqn / initiatorName formats validateISCSIVolumeSource accepts."""
    if not value.startswith(("iqn", "eui", "naa")):
        return "must be valid format starting with iqn, eui, or naa"
    form = _IQN if value.startswith("iqn") else _EUI if value.startswith("eui") else _NAA
    return None if form.search(value) else "must be valid format"


def _iscsi(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    iqn = source.get("iqn")
    if isinstance(iqn, str) and iqn and (why := _initiator_error(iqn)):
        yield _error((*path, "iqn"), f"{shown(iqn)}: {why}")
    lun = source.get("lun")
    if isinstance(lun, int) and not 0 <= lun <= 255:
        yield _error((*path, "lun"), f"{lun}: must be between 0 and 255, inclusive")
    if (source.get("chapAuthDiscovery") or source.get("chapAuthSession")) and source.get("secretRef") is None:
        yield _error((*path, "secretRef"), "Required value", "CHAP authentication reads its credentials from a Secret")
    initiator = source.get("initiatorName")
    if isinstance(initiator, str) and (why := _initiator_error(initiator)):
        yield _error((*path, "initiatorName"), f"{shown(initiator)}: {why}")


def _fc(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    wwns, wwids = source.get("targetWWNs"), source.get("wwids")
    if not wwns and not wwids:
        yield _error((*path, "targetWWNs"), "Required value: must specify either targetWWNs or wwids, but not both")
    if wwns and wwids:
        yield _error((*path, "targetWWNs"), "targetWWNs and wwids can not be specified simultaneously")
    if wwns:
        lun = source.get("lun")
        if lun is None:
            yield _error((*path, "lun"), "Required value: lun is required if targetWWNs is specified")
        elif isinstance(lun, int) and not 0 <= lun <= 255:
            yield _error((*path, "lun"), f"{lun}: must be between 0 and 255, inclusive")


def _partition(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateGCEPersistentDiskVolumeSource / validateAWSElasticBlockStoreVolumeSource."""
    partition = source.get("partition")
    if isinstance(partition, int) and not 0 <= partition <= 255:
        yield _error((*path, "partition"), f"{partition}: must be between 1 and 255, inclusive")


def _secret(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateSecretVolumeSource / validateConfigMapVolumeSource beyond the name."""
    yield from _mode(source, "defaultMode", path)
    yield from _key_to_paths(source.get("items"), (*path, "items"))


def _nfs(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    value = source.get("path")
    if not isinstance(value, str) or not value.startswith("/"):
        yield _error((*path, "path"), f"{shown(value)}: must be an absolute path")


def _host_port_error(pair: str) -> bool:
    """net.SplitHostPort failing: no port, or an IPv6 host without brackets."""
    if pair.startswith("["):
        end = pair.find("]")
        return end < 0 or pair[end + 1 : end + 2] != ":" or ":" in pair[end + 2 :] or "[" in pair[1:end]
    return pair.count(":") != 1 or "[" in pair or "]" in pair


def _quobyte(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    registry = source.get("registry")
    if not registry or not isinstance(registry, str):
        return
    tenant = source.get("tenant")
    if isinstance(tenant, str) and len(tenant) >= 65:
        yield _error((*path, "tenant"), "Required value: must be a UUID and may not exceed a length of 64 characters")
    else:
        for pair in registry.split(","):
            if _host_port_error(pair):
                yield _error(
                    (*path, "registry"),
                    f"{shown(registry)}: must be a host:port pair or multiple pairs separated by commas",
                )


def _flocker(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    name, uuid = source.get("datasetName"), source.get("datasetUUID")
    if not name and not uuid:
        yield _error(path, "Required value: one of datasetName and datasetUUID is required")
    if name and uuid:
        yield _error(path, "datasetName and datasetUUID can not be specified simultaneously")
    if isinstance(name, str) and "/" in name:
        yield _error((*path, "datasetName"), f"{shown(name)}: must not contain '/'")


def _cinder(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateCinderVolumeSource / validateStorageOSVolumeSource: a secretRef names its Secret."""
    ref = source.get("secretRef")
    if isinstance(ref, dict) and not ref.get("name"):
        yield _error((*path, "secretRef", "name"), "Required value")


def _flex(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    options = source.get("options")
    for key in options if isinstance(options, dict) else ():
        namespace = str(key).split("/", 1)[0]
        if ("." + namespace.lower()).endswith((".kubernetes.io", ".k8s.io")):
            yield _error((*path, "options", key), f"{shown(key)}: kubernetes.io and k8s.io namespaces are reserved")


def _azure_disk(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateAzureDisk: a blob disk's URI is https://, a managed disk's /subscriptions/."""
    caching, kind = source.get("cachingMode"), source.get("kind")
    if caching is not None and caching not in _AZURE_CACHING:
        yield unsupported((*path, "cachingMode"), RULE, caching, _AZURE_CACHING)
    if kind is not None and kind not in _AZURE_KINDS:
        yield unsupported((*path, "kind"), RULE, kind, _AZURE_KINDS)
    uri = str(source.get("diskURI") or "")
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        yield unsupported(
            (*path, "diskURI"),
            RULE,
            uri,
            ("/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",),
        )
    if kind != "Managed" and not uri.startswith("https://"):
        yield unsupported(
            (*path, "diskURI"),
            RULE,
            uri,
            ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",),
        )


def _storageos(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    for key in ("volumeName", "volumeNamespace"):
        value = source.get(key)
        if isinstance(value, str) and value and (err := names.dns1123_label(value)):
            yield _error((*path, key), f"{shown(value)} {err}")
    yield from _cinder(source, path)


def _csi(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    driver = source.get("driver")
    if isinstance(driver, str) and (err := names.csi_driver_name(driver)):
        yield _error((*path, "driver"), f"{shown(driver)}: {err}")
    ref = source.get("nodePublishSecretRef")
    if isinstance(ref, dict):
        secret = ref.get("name")
        if not secret:
            yield _error((*path, "nodePublishSecretRef", "name"), "Required value")
        elif isinstance(secret, str) and (err := names.dns1123_subdomain(secret)):
            yield _error((*path, "nodePublishSecretRef", "name"), f"{shown(secret)} {err}")


def _downward_api(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    yield from _mode(source, "defaultMode", path)
    yield from _downward_files(source.get("items"), (*path, "items"))


def _projected(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateProjectedVolumeSource / validateProjectionSources: each source one kind, every
    file path once across them."""
    yield from _mode(source, "defaultMode", path)
    paths: set[str] = set()

    def once(value: Any, where: Path) -> Iterator[Finding]:
        if isinstance(value, str) and value:
            if value in paths:
                yield _error(where, f"{shown(value)}: conflicting duplicate paths")
            paths.add(value)

    sources = source.get("sources")
    for i, projection in enumerate(sources if isinstance(sources, list) else []):
        if not isinstance(projection, dict):
            continue
        at = (*path, "sources", i)
        kinds = [
            k for k in ("secret", "configMap", "downwardAPI", "serviceAccountToken") if projection.get(k) is not None
        ]
        for kind in ("secret", "configMap"):
            part = projection.get(kind)
            if isinstance(part, dict):
                if not part.get("name"):
                    yield _error((*at, kind, "name"), "Required value")
                yield from _key_to_paths(part.get("items"), (*at, kind, "items"))
                for j, item in enumerate(part.get("items") or []):
                    yield from once(_path_of(item), (*at, kind, "items", j, "path"))
        downward = projection.get("downwardAPI")
        if isinstance(downward, dict):
            yield from _downward_files(downward.get("items"), (*at, "downwardAPI", "items"))
            for j, item in enumerate(downward.get("items") or []):
                yield from once(_path_of(item), (*at, "downwardAPI", "items", j, "path"))
        token = projection.get("serviceAccountToken")
        if isinstance(token, dict):
            yield from _service_account_token(token, (*at, "serviceAccountToken"))
        if len(kinds) > 1:
            yield _error(at, f"may not specify more than 1 volume type per source: {', '.join(kinds)}")


def _path_of(item: Any) -> Any:
    return item.get("path") if isinstance(item, dict) else None


def _service_account_token(token: dict[str, Any], path: Path) -> Iterator[Finding]:
    seconds = token.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < 600:
        yield _error((*path, "expirationSeconds"), f"{seconds}: may not specify a duration less than 10 minutes")
    if isinstance(seconds, int) and seconds > 2**32:
        yield _error((*path, "expirationSeconds"), f"{seconds}: may not specify a duration larger than 2^32 seconds")
    if not token.get("path"):
        yield _error((*path, "path"), "Required value")
    else:
        yield from _local_non_reserved(token.get("path"), (*path, "path"))


def _ephemeral(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """ValidatePersistentVolumeClaimTemplate: only labels and annotations in its metadata, and a
    claim spec as a PersistentVolumeClaim's."""
    template = source.get("volumeClaimTemplate")
    if not isinstance(template, dict):
        return
    at = (*path, "volumeClaimTemplate")
    yield from check_template_metadata(template.get("metadata"), (*at, "metadata"), RULE)
    yield from _under(at, claims.check_persistent_volume_claim({"spec": template.get("spec") or {}}))


def _image(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    policy = source.get("pullPolicy")
    if policy is not None and policy not in _PULL_POLICIES:
        yield unsupported((*path, "pullPolicy"), RULE, policy, _PULL_POLICIES)


_VALIDATORS = {
    "hostPath": _host_path,
    "gitRepo": _git_repo,
    "gcePersistentDisk": _partition,
    "awsElasticBlockStore": _partition,
    "secret": _secret,
    "configMap": _secret,
    "nfs": _nfs,
    "iscsi": _iscsi,
    "quobyte": _quobyte,
    "flocker": _flocker,
    "cinder": _cinder,
    "fc": _fc,
    "flexVolume": _flex,
    "azureDisk": _azure_disk,
    "storageos": _storageos,
    "csi": _csi,
    "downwardAPI": _downward_api,
    "projected": _projected,
    "ephemeral": _ephemeral,
    "image": _image,
}


def _source(volume: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateVolumeSource: the first source set, in upstream's order, is validated; any other
    is refused."""
    found = volume.keys() & _SOURCE_NAMES  # in C: nearly every volume names one source
    ordered = SOURCES if len(found) > 1 else found
    present = [key for key in ordered if key in found and volume[key] is not None]
    for extra in present[1:]:
        yield _error((*path, extra), f"may not specify more than 1 volume type (found {', '.join(present)})")
    if not present:
        return
    kind = present[0]
    source = volume[kind]
    if not isinstance(source, dict):
        return
    at = (*path, kind)
    if kind == "emptyDir":
        limit = parse_quantity(source.get("sizeLimit"))
        if limit is not None and limit < 0:
            yield _error((*at, "sizeLimit"), "SizeLimit field must be a valid resource quantity")
    if kind == "iscsi" and source.get("initiatorName") is not None:
        name = str(volume.get("name") or "")
        if len(f"{name}:{source.get('targetPortal') or ''}") > 64:
            yield _error(
                (*path, "name"),
                "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.",
            )
    if kind in _REQUIRED or kind in _VALIDATORS:  # an emptyDir has neither
        yield from check_source(kind, source, at)


def check_source(kind: str, source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """One source's own rules: the fields it needs, then its validator. A PersistentVolume's
    sources of the types a Pod's volumes have too are judged by these (core.py)."""
    for key in _REQUIRED.get(kind, ()):
        if not source.get(key):
            yield _error((*path, key), "Required value")
    if validate := _VALIDATORS.get(kind):
        yield from validate(source, path)


def check_volumes(volumes: Any, path: Path) -> Iterator[Finding]:
    """ValidateVolumes: each volume a unique DNS-1123 label name and a valid source."""
    seen: set[str] = set()
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if not isinstance(volume, dict):
            continue
        name = str(volume.get("name") or "")
        if err := names.dns1123_label(name):
            yield error_at((*path, i, "name"), "k8s-name", f"volume name {name!r} {err}")
        elif name in seen:
            yield error_at((*path, i, "name"), "k8s-name", f"Duplicate value: volume {name!r}")
        seen.add(name)
        yield from _source(volume, (*path, i))


def check_pod_volumes(pod: dict[str, Any]) -> Iterator[Finding]:
    """What ValidateVolumes and validateImageVolumeSource check only on a Pod, whose name they
    know: the claim an ephemeral volume creates (<pod>-<volume>) must be a valid name and no
    persistentVolumeClaim volume may name it; an image volume names its image."""
    spec, meta = pod.get("spec"), pod.get("metadata")
    volumes = spec.get("volumes") if isinstance(spec, dict) else None
    if not isinstance(volumes, list):
        return
    pod_name = meta.get("name") if isinstance(meta, dict) else None
    created = {}
    for i, volume in enumerate(volumes):
        if isinstance(volume, dict) and isinstance(pod_name, str) and pod_name and volume.get("ephemeral") is not None:
            created[f"{pod_name}-{volume.get('name') or ''}"] = i
    for i, volume in enumerate(volumes):
        if not isinstance(volume, dict):
            continue
        at = ("spec", "volumes", i)
        claim = volume.get("persistentVolumeClaim")
        claim_name = claim.get("claimName") if isinstance(claim, dict) else None
        if isinstance(claim_name, str) and claim_name in created:
            yield _error(
                (*at, "persistentVolumeClaim", "claimName"),
                f"{shown(claim_name)}: must not reference a PVC that gets created for an ephemeral volume",
                f"mount volume {created[claim_name]} (the ephemeral volume) instead",
            )
        name = volume.get("name")
        if volume.get("ephemeral") is not None and name and isinstance(pod_name, str) and pod_name:
            claim_for = f"{pod_name}-{name}"
            if err := names.dns1123_subdomain(claim_for):
                yield _error(
                    (*at, "name"), f"PVC name {shown(claim_for)}: {err}", "shorten the Pod's or the volume's name"
                )
        image = volume.get("image")
        primary = next((k for k in SOURCES if volume.get(k) is not None), None)
        if primary == "image" and isinstance(image, dict) and not image.get("reference"):
            yield _error((*at, "image", "reference"), "Required value", "the image (or OCI artifact) to mount")
