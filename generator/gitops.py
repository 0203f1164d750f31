"""What Argo CD and Flux do with the objects gen writes, and the annotations that keep a sync
from destroying running work or data.

Argo CD reads `argocd.argoproj.io/sync-options` on each object and `syncPolicy` on its
Application; Flux reads `kustomize.toolkit.fluxcd.io/*` annotations and its Kustomization's
`prune`. Each engine ignores the other's annotations, so gen writes both.
"""

from __future__ import annotations

import difflib
from typing import Any

ARGOCD_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
FLUX_PRUNE = "kustomize.toolkit.fluxcd.io/prune"
FLUX_FORCE = "kustomize.toolkit.fluxcd.io/force"

# Deleting one of these deletes data: a volume, every object of a CRD's kinds, everything in a
# namespace. Removing the policy that wrote one must not delete it.
NEVER_PRUNED = frozenset(
    {
        ("", "Namespace"),
        ("", "PersistentVolumeClaim"),
        ("", "PersistentVolume"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    }
)

# A Job's template is immutable. Flux's force recreates a Job only when kube-apiserver refuses its
# update; Argo CD's `Force=true,Replace=true` would delete and recreate it on every sync, changed
# or not (a running training killed, a finished Job run again), so gen never writes it.
JOB_ANNOTATIONS = {FLUX_FORCE: "enabled"}

# On a pod template: SHA-256 of the ConfigMaps of its target it reads, so a config change rolls
# the Pods a sync would otherwise leave running with the old config.
CONFIG_HASH = "gen.dev/config-hash"

# Argo CD's documented sync options (docs/user-guide/sync-options.md), with the values each takes.
_BOOLEAN = ("true", "false")
ARGOCD_OPTIONS: dict[str, tuple[str, ...]] = {
    "Validate": _BOOLEAN,
    "SkipDryRunOnMissingResource": _BOOLEAN,
    "Prune": ("true", "false", "confirm"),
    "Delete": ("true", "false", "confirm"),
    "PruneLast": _BOOLEAN,
    "Replace": _BOOLEAN,
    "Force": _BOOLEAN,
    "ServerSideApply": _BOOLEAN,
    "ClientSideApplyMigration": _BOOLEAN,
    "FailOnSharedResource": _BOOLEAN,
    "RespectIgnoreDifferences": _BOOLEAN,
    "CreateNamespace": _BOOLEAN,
    "ApplyOutOfSyncOnly": _BOOLEAN,
    "PrunePropagationPolicy": ("foreground", "background", "orphan"),
}
# Options that make Argo CD replace (with Force: delete and recreate) every object on every sync.
REPLACING_OPTIONS = frozenset({"Replace=true", "Force=true"})


def sync_options(value: Any) -> list[str]:
    """An annotation's comma-separated options, blanks trimmed, as Argo CD splits them."""
    return [part.strip() for part in str(value).split(",") if part.strip()] if value else []


def protect(obj: dict[str, Any], group: str, kind: str) -> None:
    """Keep both engines from pruning a kind whose deletion deletes data; an author's own
    Prune option or Flux prune annotation is kept as written."""
    if (group, kind) not in NEVER_PRUNED:
        return
    meta = obj.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if annotations is None:
        annotations = meta["annotations"] = {}
    if not isinstance(annotations, dict):
        return  # reported by validation, as written
    options = sync_options(annotations.get(ARGOCD_SYNC_OPTIONS))
    if not any(option.startswith("Prune=") for option in options):
        annotations[ARGOCD_SYNC_OPTIONS] = ",".join(["Prune=false", *options])
    annotations.setdefault(FLUX_PRUNE, "disabled")


def option_problem(option: str) -> tuple[str, str] | None:
    """What is wrong with one Application sync option, and the hint; None when Argo CD knows it."""
    name, has_value, value = option.partition("=")
    if name not in ARGOCD_OPTIONS:
        close = difflib.get_close_matches(name, sorted(ARGOCD_OPTIONS), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"one of {', '.join(sorted(ARGOCD_OPTIONS))}"
        return f"Argo CD has no sync option {name!r}", hint
    allowed = ARGOCD_OPTIONS[name]
    if not has_value or value not in allowed:
        return (
            f"sync option {option!r} needs a value: {name}={' | '.join(allowed)}",
            "write it as Name=value, e.g. " + f"{name}={allowed[0]}",
        )
    return None


class Engines:
    """The GitOps engines a target's Application / Kustomization sync it with, and whether they
    prune what leaves Git. With none configured gen assumes one that prunes."""

    def __init__(self, gitops: dict[str, Any]) -> None:
        argocd, flux = gitops.get("argocd"), gitops.get("flux")
        self.argocd = argocd is not None
        self.flux = flux is not None
        self.argocd_prunes = bool(argocd.get("prune", True)) if argocd is not None else False
        self.flux_prunes = bool(flux.get("prune", True)) if flux is not None else False
        self.configured = self.argocd or self.flux
        self.argocd_server_side = argocd is not None and "ServerSideApply=true" in sync_options(
            ",".join(map(str, argocd.get("syncOptions") or []))
        )
        self.syncs = bool(gitops)  # the target names a path or an engine: something syncs it

    @property
    def names(self) -> str:
        found = [name for name, on in (("Argo CD", self.argocd), ("Flux", self.flux)) if on]
        return " and ".join(found) or "the GitOps engine"

    def kept_because(self, annotations: dict[str, Any]) -> str | None:
        """Why an object removed from Git stays in the cluster, or None when it is deleted."""
        argo_keeps = "Prune=false" in sync_options(annotations.get(ARGOCD_SYNC_OPTIONS))
        flux_keeps = annotations.get(FLUX_PRUNE) == "disabled"
        reasons = []
        if self.argocd:
            if argo_keeps:
                reasons.append("Argo CD skips it (Prune=false)")
            elif not self.argocd_prunes:
                reasons.append("the Application does not prune")
            else:
                return None
        if self.flux:
            if flux_keeps:
                reasons.append("Flux skips it (prune: disabled)")
            elif not self.flux_prunes:
                reasons.append("the Kustomization does not prune")
            else:
                return None
        if not self.configured:
            if not (argo_keeps and flux_keeps):
                return None
            reasons.append("Argo CD and Flux skip it (Prune=false, prune: disabled)")
        return "; ".join(reasons)

    def applies_client_side(self, annotations: dict[str, Any]) -> bool:
        """Whether an engine applies the object client-side (a three-way merge with the
        last-applied annotation): Argo CD unless the Application or the object says
        ServerSideApply=true, and `kubectl apply` when no engine is configured. Flux always
        applies server-side."""
        if not self.configured:
            return True
        own = "ServerSideApply=true" in sync_options(annotations.get(ARGOCD_SYNC_OPTIONS))
        return self.argocd and not (self.argocd_server_side or own)

    def recreates_refused(self, annotations: dict[str, Any]) -> bool:
        """Whether every engine deletes and recreates the object when its update is refused:
        only Flux, and only with its force annotation."""
        return self.flux and not self.argocd and annotations.get(FLUX_FORCE) == "enabled"
