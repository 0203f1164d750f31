"""What Argo CD and Flux do with the objects gen writes, and the annotations that keep a sync
from destroying running work or data.

Argo CD reads `argocd.argoproj.io/sync-options` on each object and `syncPolicy` and the
finalizers of its Application; Flux reads `kustomize.toolkit.fluxcd.io/*` annotations and its
Kustomization's `prune`. Each engine ignores the other's annotations, so gen writes those of the
engines a target names (both when it names none: gen cannot tell which one syncs it).
"""

from __future__ import annotations

import difflib
from typing import Any

ARGOCD_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
FLUX_PRUNE = "kustomize.toolkit.fluxcd.io/prune"
FLUX_FORCE = "kustomize.toolkit.fluxcd.io/force"

# Deleting one of these deletes data: a volume, every object of a CRD's kinds, everything in a
# namespace. Removing the policy that wrote one must not delete it (Prune=false), nor must
# deleting the Application that synced it (Delete=false: Argo CD's cascade ignores Prune).
NEVER_PRUNED = frozenset(
    {
        ("", "Namespace"),
        ("", "PersistentVolumeClaim"),
        ("", "PersistentVolume"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    }
)

# Argo CD's Application finalizers that make deleting the Application delete its objects
# (pkg/apis/application/v1alpha1 application_defaults.go): the first two delete them with
# foreground propagation, the last with background. Without one, they are left running.
ARGOCD_FINALIZER = "resources-finalizer.argocd.argoproj.io"
ARGOCD_FINALIZERS = (ARGOCD_FINALIZER, f"{ARGOCD_FINALIZER}/foreground", f"{ARGOCD_FINALIZER}/background")
# Argo CD's cascade never deletes an object the Helm chart asked to keep (appcontroller.go shouldBeDeleted).
HELM_RESOURCE_POLICY = "helm.sh/resource-policy"

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


def option_value(options: list[str], name: str) -> str | None:
    """The value of the first option called name, as Argo CD reads it; None when unset."""
    return next((option.partition("=")[2] for option in options if option.partition("=")[0] == name), None)


def protect(obj: dict[str, Any], group: str, kind: str, engines: Engines) -> None:
    """Keep the target's engines from deleting a kind whose deletion deletes data, whether the
    object leaves Git or its Application / Kustomization is deleted; an author's own Prune or
    Delete option or Flux prune annotation is kept as written."""
    if (group, kind) not in NEVER_PRUNED:
        return
    meta = obj.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if annotations is None:
        annotations = meta["annotations"] = {}
    if not isinstance(annotations, dict):
        return  # reported by validation, as written
    if engines.writes_argocd:
        options = sync_options(annotations.get(ARGOCD_SYNC_OPTIONS))
        added = [f"{name}=false" for name in ("Prune", "Delete") if option_value(options, name) is None]
        if added:
            annotations[ARGOCD_SYNC_OPTIONS] = ",".join([*added, *options])
    if engines.writes_flux:
        annotations.setdefault(FLUX_PRUNE, "disabled")


def job_annotations(engines: Engines) -> dict[str, str]:
    """What a Job gen renders carries for the target's engines. A Job's template is immutable.
    Flux's force recreates a Job only when kube-apiserver refuses its update; Argo CD's
    `Force=true,Replace=true` would delete and recreate it on every sync, changed or not (a
    running training killed, a finished Job run again), so gen never writes it."""
    return {FLUX_FORCE: "enabled"} if engines.writes_flux else {}


def application_sync_options(argocd: dict[str, Any], create_namespaces: bool) -> list[str]:
    """The Application's sync options: the team's, and CreateNamespace=true when gen creates no
    Namespaces and the team did not decide."""
    options = list(argocd.get("syncOptions", []))
    if not create_namespaces and option_value(options, "CreateNamespace") is None:
        options.append("CreateNamespace=true")
    return options


def argocd_finalizers(argocd: dict[str, Any]) -> list[str]:
    """The Application's finalizers: the team's choice, else a foreground cascade when the
    Application prunes and none when it does not, so deleting the Application does to its
    objects what removing them from Git would."""
    if "finalizers" in argocd:
        return list(argocd["finalizers"])
    return [ARGOCD_FINALIZER] if argocd.get("prune", True) else []


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
    """The GitOps engines a target's Application / Kustomization sync it with, whether they
    prune what leaves Git, and what deleting the Application / Kustomization deletes. With
    none configured gen assumes one that prunes."""

    def __init__(self, gitops: dict[str, Any]) -> None:
        argocd, flux = gitops.get("argocd"), gitops.get("flux")
        self.argocd = argocd is not None
        self.flux = flux is not None
        self.argocd_prunes = bool(argocd.get("prune", True)) if argocd is not None else False
        self.flux_prunes = bool(flux.get("prune", True)) if flux is not None else False
        self.argocd_options: list[str] = list(argocd.get("syncOptions", [])) if argocd is not None else []
        finalizers = argocd_finalizers(argocd) if argocd is not None else []
        self.argocd_finalizer = next((f for f in finalizers if f in ARGOCD_FINALIZERS), None)
        self.configured = self.argocd or self.flux
        self.syncs = bool(gitops)  # the target names a path or an engine: something syncs it
        # each engine's annotations, on the objects of a target it may sync
        self.writes_argocd = self.argocd or not self.flux
        self.writes_flux = self.flux or not self.argocd

    def argocd_option(self, annotations: dict[str, Any], name: str) -> str | None:
        """An Argo CD sync option as it applies to one object: its annotation's, else the
        Application's (docs/user-guide/sync-options.md: the resource's option always wins)."""
        own = option_value(sync_options(annotations.get(ARGOCD_SYNC_OPTIONS)), name)
        return own if own is not None else option_value(self.argocd_options, name)

    @property
    def names(self) -> str:
        found = [name for name, on in (("Argo CD", self.argocd), ("Flux", self.flux)) if on]
        return " and ".join(found) or "the GitOps engine"

    def kept_because(self, annotations: dict[str, Any]) -> str | None:
        """Why an object removed from Git stays in the cluster, or None when it is deleted."""
        argo_keeps = self.argocd_option(annotations, "Prune") == "false"
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
        last-applied annotation): Argo CD unless ServerSideApply=true (the object's option,
        else the Application's), and `kubectl apply` when no engine is configured. Flux always
        applies server-side."""
        if not self.configured:
            return True
        return self.argocd and self.argocd_option(annotations, "ServerSideApply") != "true"

    def recreates_refused(self, annotations: dict[str, Any]) -> bool:
        """Whether every engine deletes and recreates the object when its update is refused:
        only Flux, and only with its force annotation."""
        return self.flux and not self.argocd and annotations.get(FLUX_FORCE) == "enabled"

    def cascade(self, group: str, kind: str, annotations: dict[str, Any]) -> tuple[bool, str]:
        """What deleting the target's Application / Kustomization does to one of its objects:
        whether it is deleted, and why. Argo CD: appcontroller.go finalizeApplicationDeletion
        and shouldBeDeleted; Flux: kustomization_controller.go finalize (deletionPolicy
        MirrorPrune, the default, follows spec.prune) and deleteObjects."""
        verdicts: list[tuple[bool, str]] = []
        if self.argocd:
            verdicts.append(self._argocd_cascade(group, kind, annotations))
        if self.flux:
            if not self.flux_prunes:
                verdicts.append(
                    (False, "deleting its Kustomization (prune: false) leaves it running, synced by nothing")
                )
            elif annotations.get(FLUX_PRUNE) == "disabled":
                verdicts.append((False, "Flux's garbage collection of its Kustomization skips it (prune: disabled)"))
            else:
                verdicts.append((True, "deleting its Kustomization (prune: true) garbage-collects it"))
        deleted = any(gone for gone, _ in verdicts)
        return deleted, "; ".join(why for gone, why in verdicts if gone == deleted)

    def _argocd_cascade(self, group: str, kind: str, annotations: dict[str, Any]) -> tuple[bool, str]:
        if self.argocd_finalizer is None:
            return False, "deleting its Application (no resources finalizer) leaves it running, synced by nothing"
        if (group, kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
            return False, "Argo CD's cascade never deletes a CustomResourceDefinition"
        if self.argocd_option(annotations, "Delete") == "false":
            return False, "its Application's cascade skips it (Delete=false)"
        if annotations.get(HELM_RESOURCE_POLICY) == "keep":
            return False, f"its Application's cascade skips it ({HELM_RESOURCE_POLICY}: keep)"
        propagation = "background" if self.argocd_finalizer.endswith("/background") else "foreground"
        why = f"deleting its Application ({self.argocd_finalizer}) deletes it, {propagation} propagation"
        if self.argocd_option(annotations, "Prune") == "false":
            why += " (Prune=false does not stop a cascade; Delete=false does)"
        return True, why
