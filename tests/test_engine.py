"""Layer 5 of gen plan: what Argo CD and Flux themselves do around each change.

A small database target (a StatefulSet with its claim template, its Service, a ConfigMap, a
PVC) is rendered and "committed"; each test changes the policies the way a team would and
checks what `gen plan` says the engine does: which objects a failing sync has already applied
or pruned, and what removing the whole target does under each finalizer / prune setting gen
rendered.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.gitops import Engines
from generator.preview import engine
from generator.preview.sync import Change
from tests.conftest import ROOT, edit

DATABASE = """\
apiVersion: gen/v1alpha1
kind: Manifests
metadata: {name: db}
spec:
  namespace: db
  objects:
  - apiVersion: v1
    kind: Namespace
    metadata: {name: db}
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: pg}
    spec:
      serviceName: pg
      replicas: 3
      selector: {matchLabels: {app: pg}}
      template:
        metadata: {labels: {app: pg}}
        spec:
          automountServiceAccountToken: false
          securityContext: {runAsNonRoot: true, runAsUser: 999, seccompProfile: {type: RuntimeDefault}}
          containers:
          - name: pg
            image: postgres:17.2
            securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
            resources: {requests: {cpu: "1", memory: 2Gi}, limits: {memory: 2Gi}}
            volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]
      volumeClaimTemplates:
      - metadata: {name: data}
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
  - apiVersion: v1
    kind: Service
    metadata: {name: pg}
    spec: {clusterIP: None, selector: {app: pg}, ports: [{name: pg, port: 5432}]}
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: pg-settings}
    data: {max_connections: "100"}
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: backups}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}}}
"""

ARGOCD = "    argocd: {repoURL: https://git.example.com/db.git}\n"
FLUX = "    flux: {sourceRef: {name: db}}\n"


def target(engines: str) -> str:
    return f"apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {{name: prod}}\nspec:\n  gitops:\n{engines}"


@pytest.fixture
def repo(gen, tmp_path: Path) -> Path:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "db.yaml").write_text(DATABASE)
    return tmp_path


def commit(gen, repo: Path, engines: str) -> None:
    (repo / "policies" / "target.yaml").write_text(target(engines))
    run = gen("render", repo / "policies", "--out", repo / "deploy")
    assert run.code == 0, run.err


def plan(gen, repo: Path) -> tuple[int, dict[tuple[str, str], dict[str, Any]]]:
    """Exit code and the changes by (kind, name) of target prod and of its GitOps objects."""
    run = gen("plan", repo / "policies", "--out", repo / "deploy", "--format", "json")
    return run.code, {(c["kind"], c["name"]): c for c in json.loads(run.out) if c["target"] in ("prod", "_gitops/prod")}


def refuse_and_rename(repo: Path) -> None:
    """A claim template change (refused) in the same commit as a Service rename."""
    policy = repo / "policies" / "db.yaml"
    edit(policy, "storage: 10Gi}}}", "storage: 20Gi}}}")
    edit(policy, "metadata: {name: pg}\n    spec: {clusterIP", "metadata: {name: postgres}\n    spec: {clusterIP")


# -- a partial sync


def test_argo_cd_has_pruned_the_old_service_when_the_statefulset_is_refused(gen, repo: Path) -> None:
    commit(gen, repo, ARGOCD)
    refuse_and_rename(repo)
    code, changes = plan(gen, repo)
    assert code == 1 and changes[("StatefulSet", "pg")]["action"] == "refused"
    old, new = changes[("Service", "pg")], changes[("Service", "postgres")]
    assert old["action"] == "prune" and new["action"] == "create"
    # one wave: Argo CD prunes it, then applies it kind by kind, the failed StatefulSet last
    assert "Argo CD has already deleted it (it prunes a wave before applying it)" in old["reason"]
    assert "Argo CD applies it before the sync fails on StatefulSet db/pg (same wave)" in new["reason"]


def test_with_prune_last_argo_cd_has_not_pruned_it(gen, repo: Path) -> None:
    commit(gen, repo, ARGOCD.replace("}", ", syncOptions: [PruneLast=true]}"))
    refuse_and_rename(repo)
    old = plan(gen, repo)[1][("Service", "pg")]
    assert "not deleted while StatefulSet db/pg is refused: Argo CD prunes it in a later wave" in old["reason"]
    assert "which the sync never reaches" in old["reason"]


def test_a_later_wave_is_not_applied_after_the_refusal(gen, repo: Path) -> None:
    edit(
        repo / "policies" / "db.yaml",
        "metadata: {name: pg-settings}",
        "metadata: {name: pg-settings, annotations: {argocd.argoproj.io/sync-wave: '1'}}",
    )
    commit(gen, repo, ARGOCD)
    refuse_and_rename(repo)
    edit(repo / "policies" / "db.yaml", 'max_connections: "100"', 'max_connections: "200"')
    settings = plan(gen, repo)[1][("ConfigMap", "pg-settings")]
    assert settings["action"] == "update"
    assert "not applied while StatefulSet db/pg is refused: Argo CD stops at that wave" in settings["reason"]


def test_flux_neither_applies_the_stage_nor_prunes(gen, repo: Path) -> None:
    commit(gen, repo, FLUX)
    refuse_and_rename(repo)
    code, changes = plan(gen, repo)
    assert code == 1 and changes[("StatefulSet", "pg")]["action"] == "refused"
    assert "Flux prunes only after everything applies" in changes[("Service", "pg")]["reason"]
    assert "Flux's dry run of the stage fails before it applies any of it" in changes[("Service", "postgres")]["reason"]


def test_without_a_refusal_nothing_is_said_of_the_engine(gen, repo: Path) -> None:
    commit(gen, repo, ARGOCD)
    edit(
        repo / "policies" / "db.yaml",
        "metadata: {name: pg}\n    spec: {clusterIP",
        "metadata: {name: postgres}\n    spec: {clusterIP",
    )
    changes = plan(gen, repo)[1]
    assert changes[("Service", "pg")]["reason"] == "removed from Git: Argo CD deletes it"


def test_argo_cd_order_phases_waves_kinds() -> None:
    def obj(kind: str, **annotations: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", "annotations": annotations}}

    assert engine.argocd_phase(obj("Job", **{"argocd.argoproj.io/hook": "PreSync"})) == -1
    assert engine.argocd_phase(obj("Job", **{"argocd.argoproj.io/hook": "Skip,PostSync"})) == 1
    assert engine.argocd_phase(obj("Service")) == 0
    assert engine.argocd_wave(obj("Service", **{"argocd.argoproj.io/sync-wave": "-2"})) == -2
    assert engine.argocd_wave(obj("Service", **{"argocd.argoproj.io/sync-wave": "soon"})) == 0
    assert [engine.flux_stage(obj(kind)) for kind in ("Namespace", "StorageClass", "Service")] == [0, 1, 2]


# -- a removed target


CASES = {
    "argo-default": (ARGOCD, "prune", "kept"),
    "argo-none": (ARGOCD.replace("}", ", finalizers: []}"), "kept", "kept"),
    "argo-foreground": (
        ARGOCD.replace("}", ", finalizers: [resources-finalizer.argocd.argoproj.io/foreground]}"),
        "prune",
        "kept",
    ),
    "argo-background": (
        ARGOCD.replace("}", ", finalizers: [resources-finalizer.argocd.argoproj.io/background]}"),
        "prune",
        "kept",
    ),
    "argo-no-prune": (ARGOCD.replace("}", ", prune: false}"), "kept", "kept"),
    "flux-prune": (FLUX, "prune", "kept"),
    "flux-no-prune": (FLUX.replace("}}", "}, prune: false}"), "kept", "kept"),
}
WHY = {
    "argo-default": (
        "deleting its Application (resources-finalizer.argocd.argoproj.io) deletes it, foreground propagation",
        "its Application's cascade skips it (Delete=false)",
    ),
    "argo-none": ("deleting its Application (no resources finalizer) leaves it running, synced by nothing",) * 2,
    "argo-foreground": (
        "(resources-finalizer.argocd.argoproj.io/foreground) deletes it, foreground propagation",
        "Delete=false",
    ),
    "argo-background": (
        "(resources-finalizer.argocd.argoproj.io/background) deletes it, background propagation",
        "Delete=false",
    ),
    "argo-no-prune": ("no resources finalizer",) * 2,
    "flux-prune": ("deleting its Kustomization (prune: true) garbage-collects it", "skips it (prune: disabled)"),
    "flux-no-prune": ("deleting its Kustomization (prune: false) leaves it running, synced by nothing",) * 2,
}


@pytest.mark.parametrize("case", CASES)
def test_a_removed_target_says_what_deleting_its_gitops_object_does(gen, repo: Path, case: str) -> None:
    engines, workload, data = CASES[case]
    commit(gen, repo, engines)
    # prod is gone; another target renders the same policy into its own directory
    (repo / "policies" / "target.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: dev}\n")
    code, changes = plan(gen, repo)
    assert code == 0
    for kind, name in (("StatefulSet", "pg"), ("Service", "pg"), ("ConfigMap", "pg-settings")):
        assert changes[(kind, name)]["action"] == workload, (kind, changes[(kind, name)])
        assert changes[(kind, name)]["reason"].startswith("target removed: ")
        assert WHY[case][0] in changes[(kind, name)]["reason"]
    for kind, name in (("PersistentVolumeClaim", "backups"), ("Namespace", "db")):
        assert changes[(kind, name)]["action"] == data
        assert WHY[case][1] in changes[(kind, name)]["reason"]
    if workload == "prune":
        assert "its 3 Pods stop" in changes[("StatefulSet", "pg")]["reason"]
    gitops_object = changes[("Application" if "argo" in case else "Kustomization", "prod")]
    assert "then the objects it synced go as the lines of prod say" in gitops_object["reason"]


def test_prune_false_alone_does_not_survive_a_cascade() -> None:
    argo = Engines({"argocd": {"repoURL": "r"}})
    deleted, why = argo.cascade("apps", "Deployment", {"argocd.argoproj.io/sync-options": "Prune=false"})
    assert deleted and "Prune=false does not stop a cascade; Delete=false does" in why
    assert argo.cascade("", "ConfigMap", {"argocd.argoproj.io/sync-options": "Delete=false"})[0] is False
    assert argo.cascade("", "ConfigMap", {"helm.sh/resource-policy": "keep"})[0] is False
    # a resource's own option wins over the Application's
    app_keeps = Engines({"argocd": {"repoURL": "r", "syncOptions": ["Delete=false"]}})
    assert app_keeps.cascade("", "ConfigMap", {})[0] is False
    assert app_keeps.cascade("", "ConfigMap", {"argocd.argoproj.io/sync-options": "Delete=true"})[0] is True
    # Argo CD never cascades to a CRD
    assert argo.cascade("apiextensions.k8s.io", "CustomResourceDefinition", {})[0] is False
    both = Engines({"argocd": {"repoURL": "r", "finalizers": []}, "flux": {"sourceRef": {"name": "s"}}})
    assert both.cascade("", "ConfigMap", {}) == (True, "deleting its Kustomization (prune: true) garbage-collects it")


def test_removing_gitops_from_a_target_warns_its_cascade_deletes_what_git_still_holds(gen, repo: Path) -> None:
    commit(gen, repo, ARGOCD)
    (repo / "policies" / "target.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: prod}\n")
    application = plan(gen, repo)[1][("Application", "prod")]
    assert application["action"] == "prune"
    assert (
        "its finalizer resources-finalizer.argocd.argoproj.io deletes every object it synced but those with "
        "Delete=false (to keep them, remove the finalizer first), though they are still in Git"
    ) in application["reason"]


# -- what gen renders for each engine


def rendered(repo: Path, rel: str) -> str:
    return (repo / "deploy" / rel).read_text()


def test_engine_annotations_only_for_the_targets_engine(gen, repo: Path) -> None:
    commit(gen, repo, ARGOCD)
    pvc = rendered(repo, "prod/db/persistentvolumeclaim-backups.yaml")
    assert "argocd.argoproj.io/sync-options: Prune=false,Delete=false" in pvc and "kustomize.toolkit" not in pvc
    commit(gen, repo, FLUX)
    pvc = rendered(repo, "prod/db/persistentvolumeclaim-backups.yaml")
    assert "kustomize.toolkit.fluxcd.io/prune: disabled" in pvc and "argocd.argoproj.io" not in pvc
    commit(gen, repo, ARGOCD + FLUX)
    pvc = rendered(repo, "prod/db/persistentvolumeclaim-backups.yaml")
    assert "Prune=false,Delete=false" in pvc and "prune: disabled" in pvc
    (repo / "policies" / "target.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: prod}\n")
    assert gen("render", repo / "policies", "--out", repo / "deploy").code == 0
    pvc = rendered(repo, "prod/db/persistentvolumeclaim-backups.yaml")  # no engine named: both engines' annotations
    assert "Prune=false,Delete=false" in pvc and "prune: disabled" in pvc


def test_a_gpu_job_carries_flux_force_only_under_flux(gen, tmp_path: Path) -> None:
    shutil.copytree(
        ROOT / "examples" / "whole-stack", tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("deploy")
    )
    targets = tmp_path / "policies" / "targets.yaml"
    edit(
        targets,
        "      destinationServer: https://prod.k8s.example.com\n",
        "      destinationServer: https://prod.k8s.example.com\n" + FLUX,
    )
    edit(
        targets,
        "    argocd:\n      repoURL: https://git.example.com/platform/shop.git\n      revision: main\n      destinationServer: https://staging",
        "    argocd:\n      repoURL: https://git.example.com/platform/shop.git\n      revision: main\n      destinationServer: https://staging",
    )
    assert gen("render", tmp_path / "policies", "--out", tmp_path / "deploy").code == 0
    assert "kustomize.toolkit.fluxcd.io/force: enabled" in rendered(tmp_path, "prod/ml/job-llm-finetune.yaml")
    assert "kustomize.toolkit" not in rendered(tmp_path, "staging/ml/job-llm-finetune.yaml")


def test_an_authors_own_options_are_kept(gen, repo: Path) -> None:
    edit(
        repo / "policies" / "db.yaml",
        "metadata: {name: backups}",
        "metadata: {name: backups, annotations: {argocd.argoproj.io/sync-options: 'Delete=true'}}",
    )
    commit(gen, repo, ARGOCD)
    assert "argocd.argoproj.io/sync-options: Prune=false,Delete=true" in rendered(
        repo, "prod/db/persistentvolumeclaim-backups.yaml"
    )


# -- the Application's fields: each written as Argo CD spells it, and refused when misspelt

FIELDS = {
    "finalizers": (
        "finalizers: [resources-finalizer.argocd.argoproj.io/background]",
        "  finalizers:\n  - resources-finalizer.argocd.argoproj.io/background\n",
        "finalizers: [resources-finalizer.argocd.argoproj.io/orphan]",
    ),
    "ignoreDifferences": (
        "ignoreDifferences: [{group: apps, kind: StatefulSet, jsonPointers: [/spec/replicas]}]",
        "  ignoreDifferences:\n  - group: apps\n    kind: StatefulSet\n    jsonPointers:\n    - /spec/replicas\n",
        "ignoreDifferences: [{group: apps, kind: StatefulSet, jsonPointers: [spec.replicas]}]",
    ),
    "retry": (
        "retry: {limit: 5, backoff: {duration: 5s, factor: 2, maxDuration: 3m}}",
        "    retry:\n      limit: 5\n      backoff:\n        duration: 5s\n        factor: 2\n        maxDuration: 3m\n",
        "retry: {limit: 5, backoff: {duration: five seconds}}",
    ),
    "destinationNamespace": (
        "destinationNamespace: db",
        "  destination:\n    server: https://kubernetes.default.svc\n    namespace: db\n",
        "destinationNamespace: DB",
    ),
    "managedNamespaceMetadata": (
        "syncOptions: [CreateNamespace=true], destinationNamespace: db, managedNamespaceMetadata: {labels: {team: data}}",
        "    managedNamespaceMetadata:\n      labels:\n        team: data\n",
        "syncOptions: [CreateNamespace=true], managedNamespaceMetadata: {labels: {team data: x}}",
    ),
}


@pytest.mark.parametrize("field", FIELDS)
def test_application_fields(gen, repo: Path, field: str) -> None:
    good, written, bad = FIELDS[field]
    commit(gen, repo, ARGOCD.replace("}", f", {good}}}"))
    assert written in rendered(repo, "_gitops/prod/application-prod.yaml")
    (repo / "policies" / "target.yaml").write_text(target(ARGOCD.replace("}", f", {bad}}}")))
    run = gen("lint", repo / "policies")
    assert run.code == 1 and "target.yaml:6:" in run.out and " policy-schema " in run.out, run.out


def test_the_finalizer_follows_prune_unless_chosen(gen, repo: Path) -> None:
    commit(gen, repo, ARGOCD)
    assert "  finalizers:\n  - resources-finalizer.argocd.argoproj.io\n" in rendered(
        repo, "_gitops/prod/application-prod.yaml"
    )
    commit(gen, repo, ARGOCD.replace("}", ", prune: false}"))
    assert "finalizers" not in rendered(repo, "_gitops/prod/application-prod.yaml")
    commit(gen, repo, ARGOCD.replace("}", ", finalizers: []}"))
    assert "finalizers" not in rendered(repo, "_gitops/prod/application-prod.yaml")


def test_managed_namespace_metadata_needs_create_namespace(gen, repo: Path) -> None:
    (repo / "policies" / "target.yaml").write_text(
        target(ARGOCD.replace("}", ", managedNamespaceMetadata: {labels: {team: data}}}"))
    )
    run = gen("lint", repo / "policies")
    assert run.code == 0 and "warning argocd-namespace-metadata managedNamespaceMetadata does nothing" in run.out
    assert "target.yaml:6:" in run.out
    (repo / "policies" / "target.yaml").write_text(
        target(
            ARGOCD.replace(
                "}", ", syncOptions: [CreateNamespace=true], managedNamespaceMetadata: {labels: {team: data}}}"
            )
        )
    )
    assert "argocd-namespace-metadata" not in gen("lint", repo / "policies").out
    # without createNamespaces gen asks Argo CD to create the namespace itself
    (repo / "policies" / "target.yaml").write_text(
        target(ARGOCD.replace("}", ", managedNamespaceMetadata: {labels: {team: data}}}"))
        + "  createNamespaces: false\n"
    )
    assert "argocd-namespace-metadata" not in gen("lint", repo / "policies").out


def test_the_applications_own_prune_option_keeps_what_leaves_git() -> None:
    app_keeps = Engines({"argocd": {"repoURL": "r", "syncOptions": ["Prune=false"]}})
    assert app_keeps.kept_because({}) == "Argo CD skips it (Prune=false)"
    assert app_keeps.kept_because({"argocd.argoproj.io/sync-options": "Prune=true"}) is None


def test_argo_cd_prunes_the_highest_wave_first(tmp_path: Path) -> None:
    """Prune waves are mirrored: of objects pruned from waves 0 and 2, the wave-2 one goes in
    wave 0, before a refusal in wave 1, and the wave-0 one in wave 2, which is never reached."""

    def obj(kind: str, name: str, wave: int) -> dict[str, Any]:
        meta = {"name": name, "namespace": "db", "annotations": {"argocd.argoproj.io/sync-wave": str(wave)}}
        return {"apiVersion": "v1" if kind != "StatefulSet" else "apps/v1", "kind": kind, "metadata": meta}

    for name, wave in (("early", 0), ("late", 2)):
        (tmp_path / f"{name}.yaml").write_text(json.dumps(obj("ConfigMap", name, wave)))
    new = {"sts.yaml": obj("StatefulSet", "pg", 1)}
    changes = [
        Change("prod", "refused", "StatefulSet", "db", "pg", "immutable", rel="sts.yaml"),
        Change("prod", "prune", "ConfigMap", "db", "early", "removed", rel="early.yaml"),
        Change("prod", "prune", "ConfigMap", "db", "late", "removed", rel="late.yaml"),
    ]
    told = {
        c.name: c.reason for c in engine.partial_sync(changes, Engines({"argocd": {"repoURL": "r"}}), tmp_path, new)
    }
    assert "Argo CD has already deleted it" in told["late"]
    assert "not deleted while StatefulSet db/pg is refused" in told["early"]
    assert told["pg"] == "immutable"


def test_what_is_kept_goes_with_a_namespace_the_cascade_deletes(gen, repo: Path) -> None:
    edit(
        repo / "policies" / "db.yaml",
        "    kind: Namespace\n    metadata: {name: db}",
        "    kind: Namespace\n    metadata: {name: db, annotations: {argocd.argoproj.io/sync-options: Delete=true}}",
    )
    commit(gen, repo, ARGOCD)
    (repo / "policies" / "target.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: dev}\n")
    changes = plan(gen, repo)[1]
    assert changes[("Namespace", "db")]["action"] == "prune"
    backups = changes[("PersistentVolumeClaim", "backups")]
    assert backups["action"] == "prune"
    assert backups["reason"] == (
        "target removed: its Application's cascade skips it (Delete=false), "
        "but its Namespace db is deleted, and everything in it"
    )


def test_flux_may_have_deleted_a_forced_job_of_the_refused_stage(gen, repo: Path) -> None:
    job = (
        "  - apiVersion: batch/v1\n    kind: Job\n"
        "    metadata: {name: vacuum, annotations: {kustomize.toolkit.fluxcd.io/force: enabled}}\n"
        "    spec:\n      template:\n        spec:\n          restartPolicy: Never\n"
        "          containers: [{name: vacuum, image: 'postgres:17.2', command: [vacuumdb, --all]}]\n"
    )
    policy = repo / "policies" / "db.yaml"
    policy.write_text(policy.read_text() + job)
    commit(gen, repo, FLUX)
    refuse_and_rename(repo)
    edit(policy, "command: [vacuumdb, --all]", "command: [vacuumdb, --all, --analyze]")
    vacuum = plan(gen, repo)[1][("Job", "vacuum")]
    assert vacuum["action"] == "recreate"
    assert (
        "Flux may delete it before StatefulSet db/pg is refused, and recreates it only once its stage applies"
        in (vacuum["reason"])
    )
