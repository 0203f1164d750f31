"""What kube-apiserver refuses on update, and the rules that keep a sync from destroying
running work: one refusing and one accepted change per update rule, and a failing and a
passing policy per render rule."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.gitops import Engines
from generator.kube import updates
from generator.preview import sync
from tests.conftest import ROOT, edit


def obj(api: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "x", "namespace": "ns"}, **fields}


POD_SPEC = {"containers": [{"name": "c", "image": "r/app:1", "ports": [{"containerPort": 80}]}]}
TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "x"}}
CLAIM = {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3", "resources": {"requests": {"storage": "10Gi"}}}

# (object, path to change, new value, refused field or None: kube-apiserver accepts the change)
CASES = [
    (
        obj("apps/v1", "Deployment", spec={"selector": SELECTOR, "template": TEMPLATE}),
        ("spec", "selector", "matchLabels", "app"),
        "y",
        ("spec", "selector"),
    ),
    (
        obj("apps/v1", "Deployment", spec={"selector": SELECTOR, "template": TEMPLATE, "replicas": 1}),
        ("spec", "replicas"),
        3,
        None,
    ),
    (
        obj("apps/v1", "DaemonSet", spec={"selector": SELECTOR, "template": TEMPLATE}),
        ("spec", "selector", "matchLabels", "app"),
        "y",
        ("spec", "selector"),
    ),
    (
        obj("apps/v1", "ReplicaSet", spec={"selector": SELECTOR, "template": TEMPLATE}),
        ("spec", "selector", "matchLabels", "app"),
        "y",
        ("spec", "selector"),
    ),
    (
        obj("apps/v1", "StatefulSet", spec={"selector": SELECTOR, "template": TEMPLATE, "serviceName": "s"}),
        ("spec", "serviceName"),
        "t",
        ("spec", "serviceName"),
    ),
    (
        obj(
            "apps/v1",
            "StatefulSet",
            spec={
                "selector": SELECTOR,
                "template": TEMPLATE,
                "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": CLAIM}],
            },
        ),
        ("spec", "volumeClaimTemplates", 0, "spec", "storageClassName"),
        "io2",
        ("spec", "volumeClaimTemplates"),
    ),
    (
        obj("apps/v1", "StatefulSet", spec={"selector": SELECTOR, "template": TEMPLATE}),
        ("spec", "podManagementPolicy"),
        "Parallel",
        ("spec", "podManagementPolicy"),
    ),
    (
        obj("apps/v1", "StatefulSet", spec={"selector": SELECTOR, "template": TEMPLATE, "replicas": 1}),
        ("spec", "template", "spec", "containers", 0, "image"),
        "r/app:2",
        None,
    ),
    (
        obj("batch/v1", "Job", spec={"template": TEMPLATE}),
        ("spec", "template", "spec", "containers", 0, "image"),
        "r/app:2",
        ("spec", "template"),
    ),
    (
        obj("batch/v1", "Job", spec={"template": TEMPLATE}),
        ("spec", "completionMode"),
        "Indexed",
        ("spec", "completionMode"),
    ),
    (
        obj("batch/v1", "Job", spec={"template": TEMPLATE, "completions": 2}),
        ("spec", "completions"),
        3,
        ("spec", "completions"),
    ),
    (
        obj(
            "batch/v1",
            "Job",
            spec={"template": TEMPLATE, "completionMode": "Indexed", "completions": 2, "parallelism": 2},
        ),
        ("spec",),
        {"template": TEMPLATE, "completionMode": "Indexed", "completions": 4, "parallelism": 4},
        None,
    ),
    (
        obj("batch/v1", "Job", spec={"template": TEMPLATE, "activeDeadlineSeconds": 60}),
        ("spec", "activeDeadlineSeconds"),
        120,
        None,
    ),
    (
        obj("v1", "Pod", spec=POD_SPEC),
        ("spec", "containers", 0, "ports", 0, "containerPort"),
        81,
        ("spec", "containers"),
    ),
    (obj("v1", "Pod", spec=POD_SPEC), ("spec", "containers", 0, "image"), "r/app:2", None),
    (
        obj("v1", "Pod", spec={**POD_SPEC, "tolerations": [{"key": "a", "operator": "Exists"}]}),
        ("spec", "tolerations"),
        [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}],
        None,
    ),
    (obj("v1", "PersistentVolumeClaim", spec=CLAIM), ("spec", "storageClassName"), "io2", ("spec", "storageClassName")),
    (
        obj("v1", "PersistentVolumeClaim", spec=CLAIM),
        ("spec", "resources", "requests", "storage"),
        "5Gi",
        ("spec", "resources", "requests", "storage"),
    ),
    (obj("v1", "PersistentVolumeClaim", spec=CLAIM), ("spec", "resources", "requests", "storage"), "20Gi", None),
    (obj("v1", "PersistentVolumeClaim", spec=CLAIM), ("spec", "volumeAttributesClassName"), "fast", None),
    (
        obj("v1", "PersistentVolume", spec={"capacity": {"storage": "1Gi"}, "nfs": {"server": "a", "path": "/"}}),
        ("spec", "nfs", "server"),
        "b",
        ("spec", "nfs"),
    ),
    (
        obj("v1", "PersistentVolume", spec={"capacity": {"storage": "1Gi"}, "nfs": {"server": "a", "path": "/"}}),
        ("spec", "capacity", "storage"),
        "2Gi",
        None,
    ),
    (
        obj("v1", "Service", spec={"clusterIP": "None", "ports": [{"port": 80}]}),
        ("spec", "clusterIP"),
        "10.0.0.9",
        ("spec", "clusterIP"),
    ),
    (obj("v1", "Service", spec={"ports": [{"port": 80}]}), ("spec", "ports", 0, "port"), 81, None),
    (obj("v1", "ConfigMap", immutable=True, data={"a": "1"}), ("data", "a"), "2", ("data",)),
    (obj("v1", "ConfigMap", data={"a": "1"}), ("data", "a"), "2", None),
    (obj("v1", "Secret", type="Opaque"), ("type",), "kubernetes.io/tls", ("type",)),
    (
        obj(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "a"},
        ),
        ("roleRef", "name"),
        "b",
        ("roleRef",),
    ),
    (
        obj(
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            roleRef={"kind": "ClusterRole", "name": "a"},
            subjects=[],
        ),
        ("subjects",),
        [{"kind": "User", "name": "u"}],
        None,
    ),
    (
        obj("storage.k8s.io/v1", "StorageClass", provisioner="ebs.csi.aws.com", parameters={"type": "gp3"}),
        ("parameters", "type"),
        "io2",
        ("parameters",),
    ),
    (
        obj("storage.k8s.io/v1", "StorageClass", provisioner="ebs.csi.aws.com", allowVolumeExpansion=False),
        ("allowVolumeExpansion",),
        True,
        None,
    ),
    (obj("scheduling.k8s.io/v1", "PriorityClass", value=100), ("value",), 200, ("value",)),
    (
        obj("networking.k8s.io/v1", "IngressClass", spec={"controller": "a.io/x"}),
        ("spec", "controller"),
        "b.io/y",
        ("spec", "controller"),
    ),
]


def _changed(base: dict[str, Any], path: tuple, value: Any) -> dict[str, Any]:
    new = copy.deepcopy(base)
    node = new
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return new


@pytest.mark.parametrize(
    ("base", "path", "value", "field"),
    CASES,
    ids=[f"{c[0]['kind']}-{'.'.join(map(str, c[1]))}-{'refused' if c[3] else 'ok'}" for c in CASES],
)
def test_update_rules(base: dict[str, Any], path: tuple, value: Any, field: tuple | None) -> None:
    new = _changed(base, path, value)
    found = updates.refused(updates.defaulted(base), updates.defaulted(new))
    assert (found.field if found else None) == field


def test_spelling_out_a_default_changes_nothing() -> None:
    """kube-apiserver stores defaults: a template that now writes them is the same template."""
    old = obj("apps/v1", "Deployment", spec={"selector": SELECTOR, "template": TEMPLATE})
    new = _changed(old, ("spec", "template", "spec", "containers", 0, "ports", 0, "protocol"), "TCP")
    new["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    new["spec"]["template"]["spec"]["dnsPolicy"] = "ClusterFirst"
    around = sync.Surroundings(Engines({}))
    assert sync.compared("t", around, old, new) is None
    changed = sync.compared("t", around, old, _changed(new, ("spec", "template", "spec", "dnsPolicy"), "None"))
    assert changed is not None and changed.action == "restart"


def test_stored_defaults_that_hang_on_other_fields() -> None:
    """SetDefaults_Job: backoffLimit is MaxInt32 beside backoffLimitPerIndex, else 6; completions
    is 1 only when parallelism is unset too. SetDefaults_StatefulSet: a RollingUpdate partition 0."""
    job = obj("batch/v1", "Job", spec={"template": TEMPLATE, "backoffLimitPerIndex": 1, "completionMode": "Indexed"})
    assert updates.defaulted(job)["spec"]["backoffLimit"] == 2147483647
    assert updates.defaulted(obj("batch/v1", "Job", spec={"template": TEMPLATE}))["spec"]["backoffLimit"] == 6
    assert "completions" not in updates.defaulted(obj("batch/v1", "Job", spec={"parallelism": 3}))["spec"]
    stateful = updates.defaulted(obj("apps/v1", "StatefulSet", spec={"updateStrategy": {"type": "OnDelete"}}))
    assert stateful["spec"]["updateStrategy"] == {"type": "OnDelete"}
    rolling = updates.defaulted(obj("apps/v1", "StatefulSet", spec={}))["spec"]["updateStrategy"]
    assert rolling == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}


def test_engines_decide_prune_and_recreate() -> None:
    protected = {"argocd.argoproj.io/sync-options": "Prune=false", "kustomize.toolkit.fluxcd.io/prune": "disabled"}
    argo, flux = Engines({"argocd": {"repoURL": "r"}}), Engines({"flux": {"sourceRef": {"name": "s"}}})
    assert argo.kept_because(protected) and flux.kept_because(protected) and Engines({}).kept_because(protected)
    assert argo.kept_because({}) is None and flux.kept_because({}) is None
    assert Engines({"argocd": {"repoURL": "r", "prune": False}}).kept_because({}) == "the Application does not prune"
    force = {"kustomize.toolkit.fluxcd.io/force": "enabled"}
    assert flux.recreates_refused(force) and not argo.recreates_refused(force) and not flux.recreates_refused({})


def test_engines_apply_client_side_or_server_side() -> None:
    """Argo CD applies client-side unless its Application or the object says ServerSideApply=true;
    Flux always applies server-side; with no engine, `kubectl apply` (client-side)."""
    argo, flux = Engines({"argocd": {"repoURL": "r"}}), Engines({"flux": {"sourceRef": {"name": "s"}}})
    server_side = Engines({"argocd": {"repoURL": "r", "syncOptions": ["ServerSideApply=true"]}})
    assert argo.applies_client_side({}) and Engines({}).applies_client_side({})
    assert not flux.applies_client_side({}) and not server_side.applies_client_side({})
    assert not argo.applies_client_side({"argocd.argoproj.io/sync-options": "Prune=false,ServerSideApply=true"})


@pytest.mark.parametrize("broken", ["six", 7, None, [1, 2], {"ports": 7, "replicas": "six", "strategy": []}])
@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "DaemonSet", "Job", "Service", "PersistentVolumeClaim"])
def test_a_committed_object_edited_past_its_shape_is_planned_without_a_crash(kind: str, broken: Any) -> None:
    """The committed render is a file anyone can edit: whatever its spec holds, the plan says
    something and never raises."""
    api = {"Job": "batch/v1", "Service": "v1", "PersistentVolumeClaim": "v1"}.get(kind, "apps/v1")
    new = obj(api, kind, spec={"selector": SELECTOR, "template": TEMPLATE, "replicas": 2, "ports": [{"port": 80}]})
    old = {**new, "spec": broken}
    around = sync.Surroundings(Engines({}), scaled_before=frozenset({("ns", kind, "x")}))
    change = sync.compared("t", around, old, new)
    assert change is not None and change.action in sync.ACTIONS
    assert sync.removed("t", Engines({}), old, {}).action == "prune"


# -- render rules, on a copy of the whole-stack example


@pytest.fixture
def stack(tmp_path: Path) -> Path:
    root = tmp_path / "stack"
    shutil.copytree(ROOT / "examples" / "whole-stack", root, ignore=shutil.ignore_patterns("deploy"))
    return root


def _line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def _render(gen, stack: Path):
    return gen("render", stack / "policies", "--out", stack / "deploy")


def test_argocd_sync_options(gen, stack: Path) -> None:
    targets = stack / "policies/targets.yaml"
    edit(
        targets,
        "      revision: main\n      destinationServer: https://prod",
        "      revision: main\n      syncOptions: [ServerSideApply=true, PruneLast=true]\n      destinationServer: https://prod",
    )
    assert gen("lint", stack / "policies").code == 0
    assert _render(gen, stack).code == 0
    app = (stack / "deploy/_gitops/prod/application-prod.yaml").read_text()
    assert "syncOptions:\n    - ServerSideApply=true\n    - PruneLast=true" in app
    edit(targets, "ServerSideApply=true", "ServerSideAply=true")
    bad = gen("lint", stack / "policies")
    assert bad.code == 1 and " argocd-sync-option " in bad.out and "did you mean 'ServerSideApply'?" in bad.out
    assert f"targets.yaml:{_line(targets, 'ServerSideAply')}:21:" in bad.out  # the option's own line
    edit(targets, "ServerSideAply=true", "Replace=true")
    risky = gen("lint", stack / "policies")
    assert risky.code == 0 and "warning argocd-sync-option Replace=true makes Argo CD replace" in risky.out


def test_application_name_and_create_namespace(gen, stack: Path) -> None:
    targets = stack / "policies/targets.yaml"
    edit(
        targets,
        "      revision: main\n      destinationServer: https://prod",
        "      name: shop-prod\n      revision: main\n      destinationServer: https://prod",
    )
    assert _render(gen, stack).code == 0
    assert (stack / "deploy/_gitops/prod/application-shop-prod.yaml").is_file()
    assert "CreateNamespace" not in (stack / "deploy/_gitops/prod/application-shop-prod.yaml").read_text()
    # gen creates no Namespaces: Argo CD is asked to, and the plan says what nothing creates
    edit(targets, '  kubernetesVersion: "1.35"\n', '  kubernetesVersion: "1.35"\n  createNamespaces: false\n')
    shutil.rmtree(stack / "deploy")
    run = _render(gen, stack)
    assert (
        run.code == 0
        and "- CreateNamespace=true" in (stack / "deploy/_gitops/prod/application-shop-prod.yaml").read_text()
    )
    assert " namespace-not-created " in run.err and "namespaces ml, web, which no object creates" in run.err
    assert f"targets.yaml:{_line(targets, 'createNamespaces')}:21:" in run.err  # at createNamespaces


def test_create_namespace_with_one_namespace_sets_the_destination(gen, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "t.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: t}\nspec:\n  createNamespaces: false\n"
        "  gitops: {argocd: {repoURL: https://git.example.com/r.git}}\n---\n"
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata: {name: web}\nspec:\n  namespace: web\n"
        "  image: r/web:1\n  deletionCost: {initial: 0, tier: default}\n"
    )
    run = gen("render", root, "--out", tmp_path / "out")
    assert run.code == 0 and "namespace-not-created" not in run.err
    assert "    namespace: web\n" in (tmp_path / "out/_gitops/t/application-t.yaml").read_text()


def test_job_ttl_resync(gen, stack: Path) -> None:
    training = stack / "policies/training.yaml"
    edit(training, "    backoffLimitPerIndex: 1\n", "    backoffLimitPerIndex: 1\n    ttlSecondsAfterFinished: 3600\n")
    run = gen("lint", stack / "policies")
    assert run.code == 1 and " job-ttl-resync " in run.out and "training.yaml:58:5:" in run.out
    # the nightly CronJob keeps its TTL without a finding: its Jobs are not in Git
    assert "ttlSecondsAfterFinished: 86400" in training.read_text() and run.out.count("job-ttl-resync") == 1


def test_job_ttl_resync_on_a_manifests_job(gen, stack: Path) -> None:
    (stack / "manifests/ml/migrate.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec:\n  ttlSecondsAfterFinished: 60\n"
        "  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: r/m:1}]\n"
    )
    run = gen("lint", stack / "policies")
    assert "manifests/ml/migrate.yaml:5:3: error job-ttl-resync Job migrate is deleted by the TTL controller" in run.out


def test_no_gitops_no_ttl_finding(gen, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    job = (
        "apiVersion: gen/v1alpha1\nkind: GpuWorkload\nmetadata: {name: train}\nspec:\n  namespace: ml\n"
        "  workloadKind: Job\n  restartPolicy: Never\n  ttlSecondsAfterFinished: 60\n  schedulerName: default-scheduler\n"
        "  gpu: {count: 1}\n  container: {image: r/t:1}\n"
    )
    (root / "job.yaml").write_text(job)
    assert " job-ttl-resync " not in gen("lint", root).out
    (root / "t.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: t}\nspec:\n  gitops: {path: deploy/t}\n"
    )
    assert " job-ttl-resync " in gen("lint", root).out


def test_gpu_when_changed(gen, stack: Path) -> None:
    training = stack / "policies/training.yaml"
    edit(training, "  workloadKind: CronJob\n", "  workloadKind: CronJob\n  whenChanged: newName\n")
    run = gen("lint", stack / "policies")
    assert run.code == 1 and " gpu-when-changed " in run.out and "this workload is a CronJob" in run.out
    edit(training, "  workloadKind: CronJob\n  whenChanged: newName\n", "  workloadKind: CronJob\n")
    long_name = "a" * 55
    edit(training, "  name: llm-finetune\n", f"  name: {long_name}\n")
    edit(training, "  workloadKind: Job\n", "  workloadKind: Job\n  whenChanged: newName\n")
    run = gen("lint", stack / "policies")
    assert " gpu-when-changed " in run.out and "shorten metadata.name to at most 54 characters" in run.out


def test_when_changed_renames_the_job_its_pod_group_and_label(gen, tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(ROOT / "policies", root)
    edit(root / "llm-pretrain.yaml", "  workloadKind: Job\n", "  workloadKind: Job\n  whenChanged: newName\n")
    assert gen("render", root, "--out", tmp_path / "out").code == 0
    ml = tmp_path / "out/lab/ml"
    (job,) = ml.glob("job-llm-pretrain-*.yaml")
    name = job.name.removeprefix("job-").removesuffix(".yaml")
    assert (ml / f"podgroup-{name}.yaml").is_file() and (ml / "service-llm-pretrain.yaml").is_file()
    assert f"scheduling.x-k8s.io/pod-group: {name}" in job.read_text()


def test_pod_annotation_reserved(gen, stack: Path) -> None:
    edit(
        stack / "policies/training.yaml",
        "  workloadKind: Job\n",
        "  workloadKind: Job\n  podAnnotations: {gen.dev/config-hash: x}\n",
    )
    run = gen("lint", stack / "policies")
    assert run.code == 1 and " pod-annotation-reserved " in run.out


def test_selector_no_match(gen, stack: Path) -> None:
    assert " selector-no-match " not in _render(gen, stack).err
    edit(stack / "manifests/web/network.yaml", "app: webapi", "app: web-api")
    run = _render(gen, stack)
    assert run.code == 0 and " selector-no-match " in run.err
    assert "carries app=web-api" in run.err and "network.yaml:" in run.err


def test_config_hash_on_a_manifests_workload(gen, stack: Path) -> None:
    (stack / "manifests/web/worker.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: worker}\nspec:\n"
        "  selector: {matchLabels: {app: worker}}\n  template:\n    metadata: {labels: {app: worker}}\n"
        "    spec:\n      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n"
        "      containers:\n      - name: w\n        image: r/w:1\n"
        "        envFrom: [{configMapRef: {name: webapi-settings}}]\n"
        "        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n"
    )
    assert _render(gen, stack).code == 0
    assert "gen.dev/config-hash:" in (stack / "deploy/prod/web/deployment-worker.yaml").read_text()
    # a Job's template is immutable: a ConfigMap it reads does not change it
    assert "config-hash" not in (stack / "deploy/prod/ml/job-llm-finetune.yaml").read_text()
